// SPDX-License-Identifier: GPL-2.0-only
/*
 * libkfdpool's batch API (kfdpool_exportv, _importv, _revokev, _releasev):
 * the same randomised script of valid and invalid elements run over single
 * ioctls, the batch ioctls and io_uring gives the same per-element results
 * and the same pool figures; batches longer than KFD_BATCH_MAX are
 * sliced; the per-thread ring survives fork and goes with its thread.
 */
#include <dirent.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/wait.h>

#include <kfdpool.h>
#include "kfdpool_util.h"
#include "kfdpool_uring_util.h"
#include "lib_hip_util.h"
#include "kselftest_harness.h"

#define NENT 4
#define ENT_SIZE (1u << 20)
#define NOPS 600

struct outcome {
	int32_t exp_status[NOPS];
	int32_t imp_status[NOPS];
	uint64_t imp_offset[NOPS];
	uint32_t imp_entry[NOPS];
	int32_t rev_status[NOPS];
	int32_t rel_status[NENT + 2];
	struct kfdpool_pool_stats st_after_export, st_after_import, st_end;
	int ret[4];
};

static const char *mode_name(enum kfdpool_batch_mode m)
{
	return m == KFDPOOL_BATCH_URING ? "io_uring" :
	       m == KFDPOOL_BATCH_IOCTL ? "batch ioctl" : "single ioctls";
}

/* The script: identical for every transport (same seed). */
static int run_script(enum kfdpool_batch_mode mode, struct outcome *o)
{
	static struct kfdpool_export ex[NOPS];
	static struct kfdpool_import im[NOPS];
	static struct kfdpool_revoke rv[NOPS];
	struct kfdpool_release rl[NENT + 2];
	uint32_t entry[NENT];
	uint64_t seed = 42;
	int ctl, pool, ifd, i, ret = -1;

	memset(o, 0, sizeof(*o));
	kfdpool_set_batch_mode(mode);
	ctl = kfdpool_open();
	if (ctl < 0)
		return ctl;
	pool = kfdpool_pool_create(ctl, 0, KFDPOOL_HANDLE_TYPE_FD, "batch", NULL);
	if (pool < 0)
		goto out_ctl;
	for (i = 0; i < NENT; i++) {
		int d = kfd_dmabuf_new(ENT_SIZE);

		if (d < 0 || kfdpool_pin(pool, d, i, NULL, &entry[i]))
			goto out_pool;
		close(d);
	}
	/* Exports: mostly valid, some bad in each way the kernel checks. */
	for (i = 0; i < NOPS; i++) {
		uint64_t r = lh_rand(&seed);

		memset(&ex[i], 0, sizeof(ex[i]));
		ex[i].entry_id = entry[r % NENT];
		ex[i].offset = (r >> 8) % ENT_SIZE & ~4095ull;
		ex[i].size = 1 + (r >> 32) % (ENT_SIZE - ex[i].offset);
		switch ((r >> 56) % 16) {
		case 0:
			ex[i].entry_id = 999;		/* no such entry */
			break;
		case 1:
			ex[i].size = 0;			/* empty */
			break;
		case 2:
			ex[i].size = ENT_SIZE;		/* past the end */
			ex[i].offset = 4096;
			break;
		case 3:
			ex[i].flags = 1;		/* unknown flag */
			break;
		}
	}
	o->ret[0] = kfdpool_exportv(pool, ex, NOPS);
	if (kfdpool_last_batch_mode() != mode)
		goto out_pool;
	for (i = 0; i < NOPS; i++)
		o->exp_status[i] = ex[i].status;
	kfdpool_pool_stats(pool, 0, &o->st_after_export);

	/* Imports on an import fd: the first of an entry imports, later
	 * ones validate; failed exports give garbage records. */
	ifd = kfdpool_pool_export(pool);
	if (ifd < 0)
		goto out_pool;
	for (i = 0; i < NOPS; i++) {
		int j, first = 1;

		memset(&im[i], 0, sizeof(im[i]));
		im[i].record = ex[i].record;
		for (j = 0; j < i; j++)
			if (!ex[j].status && ex[j].entry_id == ex[i].entry_id)
				first = 0;
		im[i].flags = first ? 0 : KFDPOOL_IMPORT_VALIDATE;
	}
	o->ret[1] = kfdpool_importv(ifd, im, NOPS);
	for (i = 0; i < NOPS; i++) {
		o->imp_status[i] = im[i].status;
		o->imp_offset[i] = im[i].offset;
		o->imp_entry[i] = im[i].entry_id;
		if (!im[i].status && !im[i].flags) {
			if (!kfd_cloexec(im[i].fd))
				o->imp_status[i] = -1000;	/* flagged */
			close(im[i].fd);
		}
	}
	kfdpool_pool_stats(ifd, 0, &o->st_after_import);

	/* Revoke every other record (the failed ones fail again). */
	for (i = 0; i < NOPS; i++) {
		memset(&rv[i], 0, sizeof(rv[i]));
		rv[i].record = ex[i].record;
	}
	o->ret[2] = kfdpool_revokev(pool, rv, NOPS / 2);
	for (i = 0; i < NOPS / 2; i++)
		o->rev_status[i] = rv[i].status;
	/* Release each entry once, plus two that are not held. */
	for (i = 0; i < NENT + 2; i++) {
		memset(&rl[i], 0, sizeof(rl[i]));
		rl[i].entry_id = i < NENT ? entry[i] : 999;
	}
	o->ret[3] = kfdpool_releasev(ifd, rl, NENT + 2);
	for (i = 0; i < NENT + 2; i++)
		o->rel_status[i] = rl[i].status;
	kfdpool_pool_stats(pool, 0, &o->st_end);
	close(ifd);
	ret = 0;
out_pool:
	close(pool);
out_ctl:
	close(ctl);
	kfdpool_set_batch_mode(KFDPOOL_BATCH_AUTO);
	return ret;
}

static void compare(struct __test_metadata *_metadata, const struct outcome *a,
		    const struct outcome *b, const char *what)
{
	int i;

	for (i = 0; i < 4; i++)
		EXPECT_EQ(a->ret[i], b->ret[i]) TH_LOG("%s: ret %d", what, i);
	for (i = 0; i < NOPS; i++) {
		EXPECT_EQ(a->exp_status[i], b->exp_status[i]) TH_LOG("%s: export %d", what, i);
		EXPECT_EQ(a->imp_status[i], b->imp_status[i]) TH_LOG("%s: import %d", what, i);
		EXPECT_EQ(a->imp_offset[i], b->imp_offset[i]) TH_LOG("%s: import %d", what, i);
		EXPECT_EQ(a->imp_entry[i], b->imp_entry[i]) TH_LOG("%s: import %d", what, i);
	}
	for (i = 0; i < NOPS / 2; i++)
		EXPECT_EQ(a->rev_status[i], b->rev_status[i]) TH_LOG("%s: revoke %d", what, i);
	for (i = 0; i < NENT + 2; i++)
		EXPECT_EQ(a->rel_status[i], b->rel_status[i]) TH_LOG("%s: release %d", what, i);
#define SAME(f) EXPECT_EQ(a->f, b->f) TH_LOG("%s: %s", what, #f)
	SAME(st_after_export.records);
	SAME(st_after_export.used_bytes);
	SAME(st_after_import.fd_imports);
	SAME(st_after_import.imported_bytes);
	SAME(st_end.records);
	SAME(st_end.used_bytes);
	SAME(st_end.used_high);
	SAME(st_end.imported_bytes);
}

TEST(same_results_every_transport)
{
	static struct outcome single, ioctl_, uring;
	struct kfdpool_query q;
	int ctl, i, ok = 0, bad = 0;

	ctl = kfdpool_open();
	if (ctl < 0)
		SKIP(return, "/dev/kfdpool: %s", strerror(-ctl));
	ASSERT_EQ(0, kfdpool_query(ctl, &q));
	close(ctl);
	{
		int d = kfd_dmabuf_new(4096);

		if (d < 0)
			SKIP(return, "no dma-buf exporter");
		close(d);
	}
	ASSERT_EQ(0, run_script(KFDPOOL_BATCH_SINGLE, &single));
	for (i = 0; i < NOPS; i++)
		single.exp_status[i] ? bad++ : ok++;
	ksft_print_msg("%d exports ok, %d refused; %d of %d processed\n", ok,
		       bad, single.ret[0], NOPS);
	EXPECT_EQ(NOPS, single.ret[0]);
	EXPECT_LT(0, bad);
	EXPECT_LT(0, ok);
	EXPECT_EQ(NENT, single.st_after_import.fd_imports);
	EXPECT_EQ((uint64_t)ok, single.st_after_export.records);
	EXPECT_EQ(0, single.st_end.imported_bytes);
	EXPECT_EQ(-ENOENT, single.rel_status[NENT]);
	if (q.features & KFDPOOL_FEATURE_BATCH) {
		ASSERT_EQ(0, run_script(KFDPOOL_BATCH_IOCTL, &ioctl_));
		compare(_metadata, &single, &ioctl_, mode_name(KFDPOOL_BATCH_IOCTL));
	} else {
		ksft_print_msg("no batch ioctls in this module\n");
	}
	if (q.features & KFDPOOL_FEATURE_URING_CMD) {
		ASSERT_EQ(0, run_script(KFDPOOL_BATCH_URING, &uring));
		compare(_metadata, &single, &uring, mode_name(KFDPOOL_BATCH_URING));
	} else {
		ksft_print_msg("no io_uring commands in this module\n");
	}
}

/* A fixture for the timeout alone: bounded by counts, this test outran the
 * harness's 30 s default on the debug kernel (KASAN, lockdep) of a busy
 * machine. */
FIXTURE(slices) {};
FIXTURE_SETUP(slices) {}
FIXTURE_TEARDOWN(slices) {}

TEST_F_TIMEOUT(slices, longer_than_batch_max, 600)
{
	const int n = KFD_BATCH_MAX + 904;	/* 5000 */
	static struct kfdpool_export ex[KFD_BATCH_MAX + 904];
	static struct kfdpool_revoke rv[KFD_BATCH_MAX + 904];
	enum kfdpool_batch_mode modes[] = { KFDPOOL_BATCH_IOCTL,
					    KFDPOOL_BATCH_URING };
	struct kfdpool_pool_stats st;
	uint32_t entry;
	int ctl, pool, d, i, m;

	ctl = kfdpool_open();
	if (ctl < 0)
		SKIP(return, "/dev/kfdpool: %s", strerror(-ctl));
	d = kfd_dmabuf_new(ENT_SIZE);
	if (d < 0)
		SKIP(return, "no dma-buf exporter");
	for (m = 0; m < 2; m++) {
		int ret;

		pool = kfdpool_pool_create(ctl, 0, KFDPOOL_HANDLE_TYPE_FD, "long", NULL);
		ASSERT_LE(0, pool);
		ASSERT_EQ(0, kfdpool_pin(pool, d, 0, NULL, &entry));
		for (i = 0; i < n; i++) {
			memset(&ex[i], 0, sizeof(ex[i]));
			ex[i].entry_id = entry;
			ex[i].offset = i;
			ex[i].size = 1;
		}
		kfdpool_set_batch_mode(modes[m]);
		ret = kfdpool_exportv(pool, ex, n);
		if (ret == -EOPNOTSUPP) {
			ksft_print_msg("%s: not available\n", mode_name(modes[m]));
			close(pool);
			continue;
		}
		EXPECT_EQ(n, ret) TH_LOG("%s", mode_name(modes[m]));
		for (i = 0; i < n; i++)
			ASSERT_EQ(0, ex[i].status) TH_LOG("%s %d", mode_name(modes[m]), i);
		ASSERT_EQ(0, kfdpool_pool_stats(pool, 0, &st));
		EXPECT_EQ(n, st.records);
		EXPECT_EQ(ENT_SIZE, st.used_bytes);
		for (i = 0; i < n; i++) {
			memset(&rv[i], 0, sizeof(rv[i]));
			rv[i].record = ex[i].record;
		}
		EXPECT_EQ(n, kfdpool_revokev(pool, rv, n));
		ASSERT_EQ(0, kfdpool_pool_stats(pool, 0, &st));
		EXPECT_EQ(0, st.records);
		ksft_print_msg("%s: %d exports and revokes in slices of %d\n",
			       mode_name(modes[m]), n, KFD_BATCH_MAX);
		close(pool);
	}
	kfdpool_set_batch_mode(KFDPOOL_BATCH_AUTO);
	close(d);
	close(ctl);
}

/*
 * A pool with one pinned entry, io_uring forced (the automatic mode sends
 * single elements as plain ioctls) and this thread's ring made by one
 * export, @ex.
 */
FIXTURE(uring_entry) {
	int ctl, d, pool;
	uint32_t entry;
	struct kfdpool_export ex;
};

FIXTURE_SETUP(uring_entry)
{
	self->ctl = kfdpool_open();
	if (self->ctl < 0)
		SKIP(return, "/dev/kfdpool: %s", strerror(-self->ctl));
	self->d = kfd_dmabuf_new(ENT_SIZE);
	if (self->d < 0)
		SKIP(return, "no dma-buf exporter");
	self->pool = kfdpool_pool_create(self->ctl, 0, KFDPOOL_HANDLE_TYPE_FD,
					 "uring", NULL);
	ASSERT_LE(0, self->pool);
	ASSERT_EQ(0, kfdpool_pin(self->pool, self->d, 0, NULL, &self->entry));
	self->ex = (struct kfdpool_export){ .entry_id = self->entry,
					    .size = 4096 };
	kfdpool_set_batch_mode(KFDPOOL_BATCH_URING);
	if (kfdpool_exportv(self->pool, &self->ex, 1) == -EOPNOTSUPP)
		SKIP(return, "%s",
		     kfd_uring_missing() ?: "the module reports no io_uring commands");
	ASSERT_EQ(0, self->ex.status);
	ASSERT_EQ(KFDPOOL_BATCH_URING, kfdpool_last_batch_mode());
}

FIXTURE_TEARDOWN(uring_entry)
{
	kfdpool_set_batch_mode(KFDPOOL_BATCH_AUTO);
	close(self->pool);
	close(self->d);
	close(self->ctl);
}

/* The parent's ring exists before the fork; the child makes its own. */
TEST_F(uring_entry, ring_after_fork)
{
	int status, k;
	pid_t pid;

	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		struct kfdpool_export c = { .entry_id = self->entry,
					    .size = 4096 };
		int r = 0;

		for (k = 0; k < 100 && !r; k++)
			r = kfdpool_exportv(self->pool, &c, 1) != 1 ||
			    c.status ||
			    kfdpool_last_batch_mode() != KFDPOOL_BATCH_URING;
		_exit(r);
	}
	/* Parent and child use their rings at the same time. */
	for (k = 0; k < 100; k++) {
		ASSERT_EQ(1, kfdpool_exportv(self->pool, &self->ex, 1));
		ASSERT_EQ(0, self->ex.status);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status));
	EXPECT_EQ(KFDPOOL_BATCH_URING, kfdpool_last_batch_mode());
}

/*
 * Imports longer than KFD_BATCH_MAX go over io_uring as one vectored
 * command per slice, each completing with the number it processed: every
 * element is processed and written, in order (the first imports, the rest
 * validate, which needs the first done).
 */
TEST_F(uring_entry, import_longer_than_batch_max)
{
	const int n = KFD_BATCH_MAX + 2;
	static struct kfdpool_import im[KFD_BATCH_MAX + 2];
	struct kfdpool_pool_stats st;
	int ifd, i;

	ifd = kfdpool_pool_export(self->pool);
	ASSERT_LE(0, ifd);
	for (i = 0; i < n; i++) {
		memset(&im[i], 0, sizeof(im[i]));
		im[i].record = self->ex.record;
		im[i].flags = i ? KFDPOOL_IMPORT_VALIDATE : 0;
	}
	EXPECT_EQ(n, kfdpool_importv(ifd, im, n));
	EXPECT_EQ(KFDPOOL_BATCH_URING, kfdpool_last_batch_mode());
	for (i = 0; i < n; i++) {
		ASSERT_EQ(0, im[i].status) TH_LOG("element %d", i);
		ASSERT_EQ(self->entry, im[i].entry_id) TH_LOG("element %d", i);
		ASSERT_EQ(4096, im[i].size) TH_LOG("element %d", i);
		if (i)
			ASSERT_EQ(-1, im[i].fd) TH_LOG("element %d", i);
	}
	ASSERT_LE(0, im[0].fd);
	EXPECT_TRUE(kfd_cloexec(im[0].fd));
	ASSERT_EQ(0, kfdpool_pool_stats(ifd, 0, &st));
	EXPECT_EQ(1, st.fd_imports);
	close(im[0].fd);
	close(ifd);
}

/*
 * A vectored import the kernel refuses as a whole (its CQE's res is
 * -errno, not a count) processed none: the call returns that errno, in one
 * slice or several, and no element is written.
 */
TEST_F(uring_entry, import_refused_whole)
{
	const int n = KFD_BATCH_MAX + 2;
	static struct kfdpool_import im[KFD_BATCH_MAX + 2];
	const struct {
		int fd, err, count;
		const char *what;
	} cases[] = {
		{ -1, -EBADF, 2, "no descriptor" },
		{ -1, -EBADF, n, "no descriptor, two slices" },
		/* Not a pool: what the batch ioctl says of it. */
		{ self->d, -ENOTTY, 2, "not a pool" },
		{ self->d, -ENOTTY, n, "not a pool, two slices" },
	};
	unsigned int c;
	int i;

	for (c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		for (i = 0; i < cases[c].count; i++) {
			memset(&im[i], 0, sizeof(im[i]));
			im[i].record = self->ex.record;
		}
		EXPECT_EQ(cases[c].err, kfdpool_importv(cases[c].fd, im,
							cases[c].count))
			TH_LOG("%s", cases[c].what);
		EXPECT_EQ(KFDPOOL_BATCH_URING, kfdpool_last_batch_mode());
		for (i = 0; i < cases[c].count; i++) {
			ASSERT_EQ(0, im[i].status) TH_LOG("%s: %d", cases[c].what, i);
			ASSERT_EQ(0, im[i].entry_id) TH_LOG("%s: %d", cases[c].what, i);
		}
	}
}

/* Rings of this process (their fds), from one read of /proc/self/fd. */
static int nrings(void)
{
	DIR *d = opendir("/proc/self/fd");
	char link[64];
	struct dirent *e;
	ssize_t len;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		len = readlinkat(dirfd(d), e->d_name, link, sizeof(link) - 1);
		if (len <= 0)
			continue;
		link[len] = 0;
		n += !strcmp(link, "anon_inode:[io_uring]");
	}
	closedir(d);
	return n;
}

struct ring_thread {
	int pool;
	uint32_t entry;
	int ret, rings;
};

static void *export_in_thread(void *arg)
{
	struct ring_thread *t = arg;
	struct kfdpool_export ex = { .entry_id = t->entry, .size = 4096 };

	t->ret = kfdpool_exportv(t->pool, &ex, 1) == 1 && !ex.status &&
		 kfdpool_last_batch_mode() == KFDPOOL_BATCH_URING ? 0 : -1;
	t->rings = nrings();
	return NULL;
}

/* Each thread's ring is its own, and goes when the thread ends. */
TEST_F(uring_entry, a_threads_ring_goes_with_it)
{
	struct ring_thread t = { .pool = self->pool, .entry = self->entry };
	int before, i;
	pthread_t th;

	before = nrings();
	ASSERT_LE(1, before);	/* this thread's */
	for (i = 0; i < 3; i++) {
		ASSERT_EQ(0, pthread_create(&th, NULL, export_in_thread, &t));
		ASSERT_EQ(0, pthread_join(th, NULL));
		EXPECT_EQ(0, t.ret);
		EXPECT_EQ(before + 1, t.rings);
		EXPECT_EQ(before, nrings());
	}
}

/* ---- what the four calls say of their descriptor, on every transport ---- */

static const enum kfdpool_batch_mode all_modes[] = {
	KFDPOOL_BATCH_SINGLE, KFDPOOL_BATCH_IOCTL, KFDPOOL_BATCH_URING,
};

static const char *const op_names[] = { "export", "revoke", "import",
					"release" };

/* Run @op on @count elements of @el (zeroed here first). */
static int vcall(int op, int fd, void *el, size_t count)
{
	switch (op) {
	case 0:
		memset(el, 0, count * sizeof(struct kfdpool_export));
		return kfdpool_exportv(fd, el, count);
	case 1:
		memset(el, 0, count * sizeof(struct kfdpool_revoke));
		return kfdpool_revokev(fd, el, count);
	case 2:
		memset(el, 0, count * sizeof(struct kfdpool_import));
		return kfdpool_importv(fd, el, count);
	default:
		memset(el, 0, count * sizeof(struct kfdpool_release));
		return kfdpool_releasev(fd, el, count);
	}
}

/* Element @i of @el is as the call found it: all zero. */
static bool untouched(int op, const void *el, size_t i)
{
	static const size_t sz[] = { sizeof(struct kfdpool_export),
				     sizeof(struct kfdpool_revoke),
				     sizeof(struct kfdpool_import),
				     sizeof(struct kfdpool_release) };
	const char *p = (const char *)el + i * sz[op];
	size_t k;

	for (k = 0; k < sz[op]; k++)
		if (p[k])
			return false;
	return true;
}

/*
 * A descriptor that is not open, not a pool, or an import descriptor for
 * an owner-only call is refused as a whole, with the same errno, whichever
 * transport runs the call (the batch ioctl's rule), and no element is
 * written.  70 elements: two rounds of a 64-entry ring.
 */
TEST(descriptor_refused_every_transport)
{
	static struct kfdpool_import el[70];	/* the largest element */
	const size_t counts[] = { 1, 3, 70 };
	struct kfdpool_query q;
	int ctl, pool, ifd, d, closed, m, op, c, k;

	ctl = kfdpool_open();
	if (ctl < 0)
		SKIP(return, "/dev/kfdpool: %s", strerror(-ctl));
	ASSERT_EQ(0, kfdpool_query(ctl, &q));
	d = kfd_dmabuf_new(4096);
	if (d < 0)
		SKIP(return, "no dma-buf exporter");
	pool = kfdpool_pool_create(ctl, 0, KFDPOOL_HANDLE_TYPE_FD, "refused",
				   NULL);
	ASSERT_LE(0, pool);
	ifd = kfdpool_pool_export(pool);
	ASSERT_LE(0, ifd);
	/* A number that is not open, high enough that the library's own
	 * fds (its control fd, rings) do not take it. */
	closed = dup2(d, 900);
	ASSERT_EQ(900, closed);
	close(closed);
	for (m = 0; m < 3; m++) {
		if ((all_modes[m] == KFDPOOL_BATCH_IOCTL &&
		     !(q.features & KFDPOOL_FEATURE_BATCH)) ||
		    (all_modes[m] == KFDPOOL_BATCH_URING &&
		     !(q.features & KFDPOOL_FEATURE_URING_CMD))) {
			ksft_print_msg("%s: not available\n",
				       mode_name(all_modes[m]));
			continue;
		}
		kfdpool_set_batch_mode(all_modes[m]);
		for (op = 0; op < 4; op++) {
			const struct {
				int fd, err;
				const char *what;
			} cases[] = {
				{ -1, -EBADF, "-1" },
				{ closed, -EBADF, "a closed number" },
				{ d, -ENOTTY, "a dma-buf" },
				{ ctl, -ENOTTY, "the control device" },
				/* Export and revoke are the owner's. */
				{ ifd, op < 2 ? -EPERM : 0, "an import fd" },
			};

			for (c = 0; c < 5; c++) {
				for (k = 0; k < 3; k++) {
					size_t i, n = counts[k];
					int ret;

					if (!cases[c].err)
						continue;
					ret = vcall(op, cases[c].fd, el, n);
					EXPECT_EQ(cases[c].err, ret)
						TH_LOG("%s %s of %zu on %s",
						       mode_name(all_modes[m]),
						       op_names[op], n,
						       cases[c].what);
					for (i = 0; i < n; i++)
						if (!untouched(op, el, i))
							break;
					EXPECT_EQ(n, i)
						TH_LOG("%s %s of %zu on %s: element %zu written",
						       mode_name(all_modes[m]),
						       op_names[op], n,
						       cases[c].what, i);
				}
			}
		}
	}
	kfdpool_set_batch_mode(KFDPOOL_BATCH_AUTO);
	close(ifd);
	close(pool);
	close(d);
	close(ctl);
}

/*
 * A count of 0 is nothing to do: 0, on every transport and descriptor,
 * with or without an array, and nothing is written.
 */
TEST(zero_count_is_zero)
{
	const enum kfdpool_batch_mode modes[] = {
		KFDPOOL_BATCH_AUTO, KFDPOOL_BATCH_SINGLE, KFDPOOL_BATCH_IOCTL,
		KFDPOOL_BATCH_URING,
	};
	struct kfdpool_export ex = { .status = 77 };
	struct kfdpool_revoke rv = { .status = 77 };
	struct kfdpool_import im = { .status = 77, .fd = 77 };
	struct kfdpool_release rl = { .status = 77 };
	int ctl, pool, m, k;

	ctl = kfdpool_open();
	if (ctl < 0)
		SKIP(return, "/dev/kfdpool: %s", strerror(-ctl));
	pool = kfdpool_pool_create(ctl, 0, KFDPOOL_HANDLE_TYPE_FD, "zero",
				   NULL);
	ASSERT_LE(0, pool);
	for (m = 0; m < 4; m++) {
		const int fds[] = { pool, -1 };

		kfdpool_set_batch_mode(modes[m]);
		for (k = 0; k < 2; k++) {
			EXPECT_EQ(0, kfdpool_exportv(fds[k], NULL, 0));
			EXPECT_EQ(0, kfdpool_revokev(fds[k], NULL, 0));
			EXPECT_EQ(0, kfdpool_importv(fds[k], NULL, 0));
			EXPECT_EQ(0, kfdpool_releasev(fds[k], NULL, 0));
			EXPECT_EQ(0, kfdpool_exportv(fds[k], &ex, 0));
			EXPECT_EQ(0, kfdpool_revokev(fds[k], &rv, 0));
			EXPECT_EQ(0, kfdpool_importv(fds[k], &im, 0));
			EXPECT_EQ(0, kfdpool_releasev(fds[k], &rl, 0));
		}
	}
	EXPECT_EQ(77, ex.status);
	EXPECT_EQ(77, rv.status);
	EXPECT_EQ(77, im.status);
	EXPECT_EQ(77, im.fd);
	EXPECT_EQ(77, rl.status);
	kfdpool_set_batch_mode(KFDPOOL_BATCH_AUTO);
	close(pool);
	close(ctl);
}

/* ---- the io_uring transport when the kernel fails an allocation or copy ---- */

/*
 * With fail-nth (/proc/thread-self/fail-nth, the debug kernel's
 * FAULT_INJECTION with FAILSLAB and FAULT_INJECTION_USERCOPY): the n-th
 * fault point (a slab allocation or a user copy) of one call fails, for
 * each n in turn.  Each attempt runs in a child of its own, which makes
 * its own ring (an empty one: its first command allocates), under an alarm
 * so that a call that never returns fails the test instead of hanging it.
 * Whatever fails, the call must return how many leading elements it
 * processed (or -errno with none), write no element past them, and leave
 * exactly the fds and imports it reports.
 */
#define FI_FAILSLAB "/sys/kernel/debug/failslab/"
#define FI_USERCOPY "/sys/kernel/debug/fail_usercopy/"
#define FI_MEASURE (1u << 30)
#define FI_ALARM 120
#define FI_IMPORTS (KFD_BATCH_MAX + 4)
#define FI_EXPORTS 3

static const char *const fi_knobs[] = {
	FI_FAILSLAB "ignore-gfp-wait", FI_FAILSLAB "verbose",
	FI_USERCOPY "verbose",
};

#define FI_NKNOBS (sizeof(fi_knobs) / sizeof(fi_knobs[0]))

static int fi_rw(const char *path, char *buf, size_t len, bool wr)
{
	int fd = open(path, (wr ? O_WRONLY : O_RDONLY) | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = wr ? write(fd, buf, strlen(buf)) : read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -errno;
	if (!wr)
		buf[n] = 0;
	return 0;
}

/* Fds of this process but its rings (the child makes its own in the
 * call). */
static int nfds(void)
{
	return lh_nfds() - nrings();
}

struct fi_result {
	int ret;		/* the call's */
	int injected;		/* the n-th point was reached and failed */
	unsigned int points;	/* fault points of the call (n = 0) */
	int bad;		/* an element or figure was wrong (printed) */
};

FIXTURE(uring_faults) {
	int ctl, d[2], pool;
	uint32_t entry[2];
	struct kfdpool_record rec[2];
	char saved[FI_NKNOBS][32];
	bool have_saved[FI_NKNOBS];
};

FIXTURE_SETUP(uring_faults)
{
	struct kfdpool_query q;
	unsigned int i;
	int nth, k;

	memset(self->have_saved, 0, sizeof(self->have_saved));
	self->ctl = self->pool = self->d[0] = self->d[1] = -1;
	if (access(FI_FAILSLAB "probability", W_OK))
		SKIP(return, "no failslab in debugfs (the debug kernel's)");
	nth = open("/proc/thread-self/fail-nth", O_RDWR | O_CLOEXEC);
	if (nth < 0)
		SKIP(return, "/proc/thread-self/fail-nth: %s", strerror(errno));
	close(nth);
	/* The library's control fd: never closed. */
	ASSERT_LE(0, kfdpool_ctl(&q));
	if (!(q.features & KFDPOOL_FEATURE_URING_CMD))
		SKIP(return, "%s",
		     kfd_uring_missing() ?: "the module reports no io_uring commands");
	self->ctl = kfdpool_open();
	ASSERT_LE(0, self->ctl);
	self->pool = kfdpool_pool_create(self->ctl, 0, KFDPOOL_HANDLE_TYPE_FD,
					 "faults", NULL);
	ASSERT_LE(0, self->pool);
	for (k = 0; k < 2; k++) {
		self->d[k] = kfd_dmabuf_new(ENT_SIZE);
		ASSERT_LE(0, self->d[k]);
		ASSERT_EQ(0, kfdpool_pin(self->pool, self->d[k], k, NULL,
					 &self->entry[k]));
		ASSERT_EQ(0, kfdpool_export(self->pool, self->entry[k], 0,
					    4096, &self->rec[k]));
	}
	for (i = 0; i < FI_NKNOBS; i++)
		self->have_saved[i] = !fi_rw(fi_knobs[i], self->saved[i],
					     sizeof(self->saved[i]), false);
	/* Sleeping allocations fail too (the module's are GFP_KERNEL);
	 * quietly: a stack dump per failure would read as a kernel report. */
	ASSERT_EQ(0, fi_rw(FI_FAILSLAB "ignore-gfp-wait", "N", 0, true));
	ASSERT_EQ(0, fi_rw(FI_FAILSLAB "verbose", "0", 0, true));
	fi_rw(FI_USERCOPY "verbose", "0", 0, true);
	kfdpool_set_batch_mode(KFDPOOL_BATCH_URING);
}

FIXTURE_TEARDOWN(uring_faults)
{
	unsigned int i;
	int k;

	for (i = 0; i < FI_NKNOBS; i++)
		if (self->have_saved[i])
			fi_rw(fi_knobs[i], self->saved[i], 0, true);
	kfdpool_set_batch_mode(KFDPOOL_BATCH_AUTO);
	for (k = 0; k < 2; k++)
		if (self->d[k] >= 0)
			close(self->d[k]);
	if (self->pool >= 0)
		close(self->pool);
	if (self->ctl >= 0)
		close(self->ctl);
}

/* Fail the @n-th fault point from now on (@n 0: count them, fail none). */
static void fi_nth_set(int nth, unsigned int n)
{
	char buf[16];
	int len = snprintf(buf, sizeof(buf), "%u", n ? n : FI_MEASURE);

	if (pwrite(nth, buf, len, 0) != len)
		_exit(90);
}

/* Stop counting; return what was left of the count (0: one failed). */
static unsigned int fi_nth_end(int nth)
{
	char buf[16] = "1";
	ssize_t r = pread(nth, buf, sizeof(buf) - 1, 0);

	if (r > 0)
		buf[r] = 0;
	if (pwrite(nth, "0", 1, 0) != 1 && pwrite(nth, "0", 1, 0) != 1)
		_exit(91);
	return r > 0 ? strtoul(buf, NULL, 10) : 1;
}

/* In a child function: its @n names the attempt. */
#define FI_BAD(r, fmt, ...) do { \
		fprintf(stderr, "# n=%u: " fmt "\n", n, ##__VA_ARGS__); \
		(r)->bad = 1; \
	} while (0)

/*
 * Note in @r what attempt @n of a call of @count elements did: it
 * answered @ret with @left of fail-nth's count left.  Return: the
 * elements it processed.
 */
static int fi_note(struct fi_result *r, unsigned int n, int ret,
		   unsigned int left, int count)
{
	r->ret = ret;
	r->injected = n && !left;
	r->points = n ? 0 : FI_MEASURE - left;
	if (ret > count)
		FI_BAD(r, "returned %d of %d", ret, count);
	return ret < 0 ? 0 : ret;
}

/*
 * Two slices of imports on a fresh import fd: each slice's first element
 * imports an entry of its own (a new fd), the others validate it.
 */
static void fi_import_child(FIXTURE_DATA(uring_faults) *self, int ifd,
			    unsigned int n, struct fi_result *r)
{
	static struct kfdpool_import im[FI_IMPORTS];
	struct kfdpool_pool_stats st;
	int nth, base, held = 0, i, done, ret;

	nth = open("/proc/thread-self/fail-nth", O_RDWR | O_CLOEXEC);
	if (nth < 0)
		_exit(92);
	for (i = 0; i < FI_IMPORTS; i++) {
		memset(&im[i], 0, sizeof(im[i]));
		im[i].record = self->rec[i >= KFD_BATCH_MAX];
		im[i].flags = i % KFD_BATCH_MAX ? KFDPOOL_IMPORT_VALIDATE : 0;
	}
	base = nfds();
	fi_nth_set(nth, n);
	ret = kfdpool_importv(ifd, im, FI_IMPORTS);
	done = fi_note(r, n, ret, fi_nth_end(nth), FI_IMPORTS);
	for (i = 0; i < FI_IMPORTS; i++) {
		struct kfdpool_import *m = &im[i];

		if (i >= done) {
			if (m->status || m->fd || m->entry_id || m->size) {
				FI_BAD(r, "returned %d, element %d written: status %d fd %d",
				       r->ret, i, m->status, m->fd);
				break;
			}
			continue;
		}
		if (m->status)
			continue;
		if (m->entry_id != self->entry[i >= KFD_BATCH_MAX])
			FI_BAD(r, "element %d: entry %u", i, m->entry_id);
		else if (!m->flags && m->fd < 0)
			FI_BAD(r, "element %d: imported without an fd", i);
		else if (!m->flags)
			held++;
	}
	if (nfds() != base + held)
		FI_BAD(r, "returned %d: %d fds more, %d reported",
		       r->ret, nfds() - base, held);
	if (kfdpool_pool_stats(ifd, 0, &st) || st.fd_imports != (uint32_t)held)
		FI_BAD(r, "returned %d: the fd holds %u imports, %d reported",
		       r->ret, st.fd_imports, held);
	for (i = 0; i < done; i++)
		if (!im[i].status && !im[i].flags)
			close(im[i].fd);
}

/* A few exports, one SQE each: one round of the ring. */
static void fi_export_child(FIXTURE_DATA(uring_faults) *self, int ifd,
			    unsigned int n, struct fi_result *r)
{
	static const struct kfdpool_record zero;
	struct kfdpool_export ex[FI_EXPORTS];
	struct kfdpool_pool_stats st0, st;
	int nth, ok = 0, i, done, ret;

	nth = open("/proc/thread-self/fail-nth", O_RDWR | O_CLOEXEC);
	if (nth < 0)
		_exit(92);
	memset(ex, 0, sizeof(ex));
	for (i = 0; i < FI_EXPORTS; i++) {
		ex[i].entry_id = self->entry[0];
		ex[i].offset = 4096 * (i + 1);
		ex[i].size = 4096;
	}
	if (kfdpool_pool_stats(self->pool, 0, &st0))
		_exit(93);
	fi_nth_set(nth, n);
	ret = kfdpool_exportv(self->pool, ex, FI_EXPORTS);
	done = fi_note(r, n, ret, fi_nth_end(nth), FI_EXPORTS);
	for (i = 0; i < FI_EXPORTS; i++) {
		if (i >= done) {
			if (ex[i].status || memcmp(&ex[i].record, &zero,
						   sizeof(zero)))
				FI_BAD(r, "returned %d, element %d written",
				       r->ret, i);
		} else if (!ex[i].status) {
			ok++;
		}
	}
	if (kfdpool_pool_stats(self->pool, 0, &st) ||
	    st.records != st0.records + ok)
		FI_BAD(r, "returned %d: %llu records more, %d reported",
		       r->ret, (unsigned long long)(st.records - st0.records),
		       ok);
	for (i = 0; i < done; i++)
		if (!ex[i].status && kfdpool_revoke(self->pool, &ex[i].record))
			FI_BAD(r, "element %d: its record does not revoke", i);
}

typedef void (*fi_child_fn)(FIXTURE_DATA(uring_faults) *self, int ifd,
			    unsigned int n, struct fi_result *r);

/* One attempt in a child; r->bad 2: the child hung or died. */
static void fi_attempt(FIXTURE_DATA(uring_faults) *self, fi_child_fn fn,
		       unsigned int n, struct fi_result *r)
{
	int p[2], ifd, status;
	pid_t pid;

	memset(r, 0, sizeof(*r));
	ifd = kfdpool_pool_export(self->pool);
	if (ifd < 0 || pipe(p)) {
		r->bad = 3;
		return;
	}
	pid = fork();
	if (!pid) {
		close(p[0]);
		alarm(FI_ALARM);
		fn(self, ifd, n, r);
		_exit(write(p[1], r, sizeof(*r)) == sizeof(*r) ? 0 : 94);
	}
	close(p[1]);
	if (pid < 0 || read(p[0], r, sizeof(*r)) != sizeof(*r))
		r->bad = 2;
	if (pid > 0 && (waitpid(pid, &status, 0) != pid ||
			!WIFEXITED(status) || WEXITSTATUS(status)))
		r->bad = 2;
	if (r->bad == 2)
		fprintf(stderr, "# n=%u: the child %s\n", n,
			pid > 0 && WIFSIGNALED(status) &&
			WTERMSIG(status) == SIGALRM ?
			"hung (no answer in 120 s)" :
			"died");
	close(p[0]);
	close(ifd);
}

/*
 * An import of two slices (two vectored commands) with a fault at each
 * point of the calling thread in turn.  The module runs a vectored command
 * from io-wq (its inline issue, IO_URING_F_NONBLOCK, answers -EAGAIN), so
 * the thread's faults are in the library, the ring and the submission, not
 * in the elements: whatever fails, the count returned covers only the
 * elements made, every fd reported is there and no other.  Faults inside
 * the elements are injected through the batch ioctl by faultinject_test.
 */
TEST_F_TIMEOUT(uring_faults, import_slices_report_what_they_made, 3600)
{
	unsigned int n, points, injected = 0, failed = 0;
	struct fi_result r;

	fi_attempt(self, fi_import_child, 0, &r);
	ASSERT_EQ(0, r.bad);
	ASSERT_EQ(FI_IMPORTS, r.ret);
	points = r.points;
	ASSERT_LT(0, points);
	for (n = 1; n <= points; n++) {
		fi_attempt(self, fi_import_child, n, &r);
		ASSERT_EQ(0, r.bad) TH_LOG("fault point %u of %u", n, points);
		injected += r.injected;
		failed += r.injected && r.ret < FI_IMPORTS;
	}
	ksft_print_msg("%u fault points in the call, %u injected, %u of them cut the import short\n",
		       points, injected, failed);
	EXPECT_LT(0, injected);
}

/*
 * A round of several SQEs whose first command cannot get its memory in
 * io_uring (a fresh ring has none cached): io_uring_enter() takes that SQE
 * (its CQE says -ENOMEM) and leaves the rest unsubmitted.  The call
 * submits them again and completes: every fault point in turn.
 */
TEST_F_TIMEOUT(uring_faults, short_submission, 1800)
{
	unsigned int n, points, injected = 0, all = 0;
	struct fi_result r;

	fi_attempt(self, fi_export_child, 0, &r);
	ASSERT_EQ(0, r.bad);
	ASSERT_EQ(FI_EXPORTS, r.ret);
	points = r.points;
	for (n = 1; n <= points; n++) {
		fi_attempt(self, fi_export_child, n, &r);
		ASSERT_EQ(0, r.bad) TH_LOG("fault point %u of %u", n, points);
		injected += r.injected;
		all += r.ret == FI_EXPORTS;
	}
	ksft_print_msg("%u fault points in the call, %u failed, every element processed %u times\n",
		       points, injected, all);
	EXPECT_LT(0, injected);
}

TEST_HARNESS_MAIN
