// SPDX-License-Identifier: GPL-2.0-only
/*
 * libkfdpool's batch API (kfdpool_exportv, _importv, _revokev, _releasev):
 * the same randomised script of valid and invalid elements run over single
 * ioctls, the batch ioctls and io_uring gives the same per-element results
 * and the same pool figures; batches longer than KFDPOOL_BATCH_MAX are
 * sliced; the per-thread ring survives fork and goes with its thread.
 */
#include <dirent.h>
#include <pthread.h>
#include <stdint.h>

#include <kfdpool.h>
#include "kfdpool_util.h"
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
	const int n = KFDPOOL_BATCH_MAX + 904;	/* 5000 */
	static struct kfdpool_export ex[KFDPOOL_BATCH_MAX + 904];
	static struct kfdpool_revoke rv[KFDPOOL_BATCH_MAX + 904];
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
		EXPECT_EQ(n, st.used_bytes);
		for (i = 0; i < n; i++) {
			memset(&rv[i], 0, sizeof(rv[i]));
			rv[i].record = ex[i].record;
		}
		EXPECT_EQ(n, kfdpool_revokev(pool, rv, n));
		ASSERT_EQ(0, kfdpool_pool_stats(pool, 0, &st));
		EXPECT_EQ(0, st.records);
		ksft_print_msg("%s: %d exports and revokes in slices of %d\n",
			       mode_name(modes[m]), n, KFDPOOL_BATCH_MAX);
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
		SKIP(return, "io_uring commands not available");
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
 * Imports longer than KFDPOOL_BATCH_MAX go over io_uring as one vectored
 * command per slice, each completing with the number it processed: every
 * element is processed and written, in order (the first imports, the rest
 * validate, which needs the first done).
 */
TEST_F(uring_entry, import_longer_than_batch_max)
{
	const int n = KFDPOOL_BATCH_MAX + 2;
	static struct kfdpool_import im[KFDPOOL_BATCH_MAX + 2];
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
	const int n = KFDPOOL_BATCH_MAX + 2;
	static struct kfdpool_import im[KFDPOOL_BATCH_MAX + 2];
	const struct {
		int fd, err, count;
		const char *what;
	} cases[] = {
		{ -1, -EBADF, 2, "no descriptor" },
		{ -1, -EBADF, n, "no descriptor, two slices" },
		/* A dma-buf has no io_uring commands. */
		{ self->d, -EOPNOTSUPP, 2, "not a pool" },
		{ self->d, -EOPNOTSUPP, n, "not a pool, two slices" },
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

TEST_HARNESS_MAIN
