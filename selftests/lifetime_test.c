// SPDX-License-Identifier: GPL-2.0-only
/*
 * Lifetimes across processes: draining entries after the exporter unpins
 * and exits, SIGKILL, the last close, and the module's own reference.
 */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>

#include "kselftest_harness.h"
#include "kfdpool_util.h"

#define SZ	(128 * 1024)

/* What the exporter tells the importer. */
struct msg {
	struct kfdpool_record rec[2];
	__u32 entry[2];
};

FIXTURE(life) {
	int baseline;
};

FIXTURE_SETUP(life)
{
	int ctl = kfd_open(), b;

	if (ctl < 0)
		SKIP(return, "/dev/kfdpool: %s", strerror(-ctl));
	close(ctl);
	b = kfd_dmabuf_new(4096);
	if (b < 0)
		SKIP(return, "no dma-buf exporter: %s", strerror(-b));
	close(b);
	self->baseline = kfd_dmabuf_count(kfd_dmabuf_count_now());
	if (self->baseline < 0)
		SKIP(return, "no %s: cannot count dma-bufs", KFD_BUFINFO);
}

FIXTURE_TEARDOWN(life)
{
	EXPECT_EQ(self->baseline, kfd_dmabuf_count(self->baseline));
}

/*
 * The exporter (a child) pins two buffers, exports a record of each and
 * sends an import fd with the records; the importer (this process) imports
 * entry 0 and maps it; the exporter unpins entry 0 and exits, which ends
 * the pool.  The importer still reads entry 0's bytes; its import fd
 * answers ENODEV; after the last close every dma-buf is gone.
 */
/*
 * Whether the mapping at @p holds the dma-buf it maps, i.e. is a mapping of
 * the dma-buf's file; an exporter may hand the vma to a file of its own.
 */
static bool mapping_holds_dmabuf(const void *p)
{
	unsigned long lo, hi, a = (unsigned long)p;
	bool holds = true;
	char line[512];
	FILE *f;

	f = fopen("/proc/self/maps", "re");
	if (!f)
		return true;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx", &lo, &hi) != 2 || a < lo || a >= hi)
			continue;
		holds = strstr(line, "dmabuf") != NULL;
		ksft_print_msg("mapping: %s", line);
		break;
	}
	fclose(f);
	return holds;
}

TEST_F(life, exporter_unpins_and_exits)
{
	struct kfdpool_pool_stats st;
	struct kfdpool_import imp0;
	int sv[2], imp_fd, status;
	struct msg m;
	char go = 0;
	uint32_t *map;
	size_t k, bad = 0;
	int held;
	pid_t pid;

	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		int pool, buf[2], i, imp;

		close(sv[0]);
		pool = kfd_pool_new("exporter");
		if (pool < 0)
			_exit(10);
		for (i = 0; i < 2; i++) {
			buf[i] = kfd_dmabuf_new(SZ);
			if (buf[i] < 0 || kfd_dmabuf_fill(buf[i], SZ, 7 + i))
				_exit(11);
			m.entry[i] = kfd_pin(pool, buf[i], i);
			if ((int)m.entry[i] <= 0)
				_exit(12);
			close(buf[i]);
			if (kfd_export(pool, m.entry[i], 4096, 8192,
				       &m.rec[i]))
				_exit(13);
		}
		imp = kfd_pool_export(pool);
		if (imp < 0 || kfd_send(sv[1], imp, &m, sizeof(m)))
			_exit(14);
		close(imp);
		/* Wait until the importer mapped entry 0. */
		if (read(sv[1], &go, 1) != 1)
			_exit(15);
		if (kfd_unpin(pool, m.entry[0], (__u32 *)&i) || i != 1)
			_exit(16);
		_exit(0);	/* closes the owner fd */
	}
	close(sv[1]);
	ASSERT_EQ(0, kfd_recv(sv[0], &imp_fd, &m, sizeof(m)));
	ASSERT_LE(0, imp_fd);

	ASSERT_EQ(0, kfd_import(imp_fd, &m.rec[0], 0, &imp0));
	EXPECT_EQ(4096, imp0.offset);
	EXPECT_EQ(8192, imp0.size);
	map = mmap(NULL, SZ, PROT_READ, MAP_SHARED, imp0.fd, 0);
	ASSERT_NE(MAP_FAILED, map);
	/* Only the mapping keeps the buffer now: close the fd. */
	close(imp0.fd);
	ASSERT_EQ(1, write(sv[0], &go, 1));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(0, WEXITSTATUS(status));
	close(sv[0]);

	/*
	 * The exporter is gone, and with its owner fd the pool: the import fd
	 * is left over, entry 1's buffer went with the pool, and what the
	 * importer mapped of entry 0 is the importer's own (the mapping holds
	 * the dma-buf, unless the exporter gave the vma a file of its own, as
	 * vgem does on older kernels).
	 */
	EXPECT_EQ(-ENODEV, kfd_stats(imp_fd, &st));
	EXPECT_EQ(-ENODEV, kfd_import(imp_fd, &m.rec[1], 0, NULL));
	EXPECT_EQ(-ENODEV, kfd_release(imp_fd, m.entry[0]));
	EXPECT_EQ(0, kfd_fdinfo_num(imp_fd, "kfdpool-entries"));
	held = mapping_holds_dmabuf(map);
	EXPECT_EQ(self->baseline + held, kfd_dmabuf_count(self->baseline + held));
	for (k = 4096 / 4; k < (4096 + 8192) / 4; k++)
		bad += map[k] != 7 * 2654435761u + k;
	EXPECT_EQ(0, bad);
	munmap(map, SZ);
	close(imp_fd);
}

/* The last close of an importing fd frees a draining entry too. */
TEST_F(life, close_frees_draining)
{
	struct kfdpool_record r;
	struct kfdpool_pool_stats st;
	int pool, imp, buf, e, e2;
	__u32 draining = 0;

	pool = kfd_pool_new("close");
	ASSERT_LE(0, pool);
	imp = kfd_pool_export(pool);
	buf = kfd_dmabuf_new(SZ);
	ASSERT_LE(0, buf);
	e = kfd_pin(pool, buf, 0);
	ASSERT_LT(0, e);
	ASSERT_EQ(0, kfd_export(pool, e, 0, SZ, &r));
	ASSERT_EQ(0, kfd_import(imp, &r, 0, NULL));
	ASSERT_EQ(0, kfd_import(imp, &r, 0, NULL));
	ASSERT_EQ(0, kfd_unpin(pool, e, &draining));
	EXPECT_EQ(1, draining);
	/* Draining: cannot be unpinned again nor exported. */
	EXPECT_EQ(-ENOENT, kfd_unpin(pool, e, NULL));
	EXPECT_EQ(-ENOENT, kfd_export(pool, e, 0, 1, &r));
	/* The same dma-buf may be pinned again, as a new entry. */
	e2 = kfd_pin(pool, buf, 0);
	EXPECT_LT(0, e2);
	EXPECT_NE(e, e2);
	EXPECT_EQ(-EEXIST, kfd_pin(pool, buf, 0));
	/* A draining entry counts as draining only, and holds no reference. */
	ASSERT_EQ(0, kfd_stats(pool, &st));
	EXPECT_EQ(SZ, st.reserved_bytes);
	EXPECT_EQ(SZ, st.draining_bytes);
	EXPECT_EQ(2, st.entries);
	EXPECT_EQ(0, kfd_unpin(pool, e2, &draining));
	EXPECT_EQ(0, draining);
	close(buf);
	EXPECT_EQ(self->baseline, kfd_dmabuf_count(self->baseline));
	close(imp);
	ASSERT_EQ(0, kfd_stats(pool, &st));
	EXPECT_EQ(0, st.entries);
	EXPECT_EQ(0, st.draining_entries);
	EXPECT_EQ(0, st.reserved_bytes);
	EXPECT_EQ(0, st.import_fds);
	EXPECT_EQ(0, st.imported_bytes);
	EXPECT_EQ(self->baseline, kfd_dmabuf_count(self->baseline));
	close(pool);
}

/* A process killed with pools, entries, records and imports leaks nothing. */
TEST_F_TIMEOUT(life, sigkill, 300)
{
	int sv[2], status, i;
	char c;
	pid_t pid;

	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		for (i = 0; i < 4; i++) {
			struct kfdpool_record r;
			int pool = kfd_pool_new("killed");
			int imp = kfd_pool_export(pool);
			int buf = kfd_dmabuf_new(SZ);
			int e = kfd_pin(pool, buf, 0);

			if (e <= 0 || kfd_export(pool, e, 0, SZ, &r) ||
			    kfd_import(imp, &r, 0, NULL) ||
			    kfd_import(pool, &r, 0, NULL))
				_exit(1);
			if (i & 1)
				kfd_unpin(pool, e, NULL);	/* draining */
		}
		c = 'r';
		if (write(sv[1], &c, 1) != 1)
			_exit(2);
		pause();
		_exit(3);
	}
	close(sv[1]);
	ASSERT_EQ(1, read(sv[0], &c, 1));
	EXPECT_EQ(self->baseline + 4, kfd_dmabuf_count_now());
	ASSERT_EQ(0, kill(pid, SIGKILL));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	close(sv[0]);
}

/* Import fds passed on and closed in any order. */
TEST_F(life, close_orders)
{
	int order;

	for (order = 0; order < 6; order++) {
		struct kfdpool_record r;
		int fds[3], buf, e, i;
		static const int perm[6][3] = {
			{ 0, 1, 2 }, { 0, 2, 1 }, { 1, 0, 2 },
			{ 1, 2, 0 }, { 2, 0, 1 }, { 2, 1, 0 },
		};

		fds[0] = kfd_pool_new("order");
		ASSERT_LE(0, fds[0]);
		fds[1] = kfd_pool_export(fds[0]);
		fds[2] = kfd_pool_export(fds[0]);
		buf = kfd_dmabuf_new(SZ);
		e = kfd_pin(fds[0], buf, 0);
		close(buf);
		ASSERT_LT(0, e);
		ASSERT_EQ(0, kfd_export(fds[0], e, 0, SZ, &r));
		ASSERT_EQ(0, kfd_import(fds[1], &r, 0, NULL));
		ASSERT_EQ(0, kfd_import(fds[2], &r, 0, NULL));
		if (order & 1)
			ASSERT_EQ(0, kfd_unpin(fds[0], e, NULL));
		for (i = 0; i < 3; i++)
			close(fds[perm[order][i]]);
		EXPECT_EQ(self->baseline, kfd_dmabuf_count(self->baseline));
	}
}

/*
 * More imports on one file, and more entries in one pool, than the module
 * frees per hold of the pool's lock: closing the import fd drops its
 * imports (and frees the draining entries among them) a batch at a time,
 * and the pool's end frees its entries a batch at a time.  Everything is
 * given back all the same.
 */
#define MANY	600

TEST_F(life, many_imports_many_entries)
{
	struct kfdpool_pool_stats st;
	struct kfdpool_record r;
	int pool, imp, buf, i;
	__u32 e[MANY];

	pool = kfd_pool_new("many");
	ASSERT_LE(0, pool);
	imp = kfd_pool_export(pool);
	ASSERT_LE(0, imp);
	for (i = 0; i < MANY; i++) {
		buf = kfd_dmabuf_new(4096);
		ASSERT_LE(0, buf);
		e[i] = kfd_pin(pool, buf, i);
		close(buf);
		ASSERT_LT(0, (int)e[i]);
		ASSERT_EQ(0, kfd_export(pool, e[i], 0, 4096, &r));
		ASSERT_EQ(0, kfd_import(imp, &r, 0, NULL));
	}
	/* Half of them unpinned: kept, draining, by the import fd alone. */
	for (i = 0; i < MANY / 2; i++)
		ASSERT_EQ(0, kfd_unpin(pool, e[i], NULL));
	ASSERT_EQ(0, kfd_stats(imp, &st));
	EXPECT_EQ(MANY, st.fd_imports);
	EXPECT_EQ(MANY, st.entries);
	EXPECT_EQ(MANY / 2, st.draining_entries);

	close(imp);
	ASSERT_EQ(0, kfd_stats(pool, &st));
	EXPECT_EQ(0, st.import_fds);
	EXPECT_EQ(0, st.imported_bytes);
	EXPECT_EQ(MANY - MANY / 2, st.entries);
	EXPECT_EQ(0, st.draining_entries);
	EXPECT_EQ((MANY - MANY / 2) * 4096ULL, st.reserved_bytes);

	close(pool);
	EXPECT_EQ(self->baseline, kfd_dmabuf_count(self->baseline));
}

/*
 * Threads import, validate and release on two import fds while another
 * exports and revokes and another unpins and pins again, then one import
 * fd is closed while the others still run.  Errors are expected (records
 * die under the importers); crashes, lockdep reports and leaks are not.
 */
#define STRESS_BUFS	4
#define STRESS_ITERS	3000

struct stress {
	int pool, imp[2];
	int buf[STRESS_BUFS];
	_Atomic __u32 entry[STRESS_BUFS];
	struct kfdpool_record rec[64];
	pthread_mutex_t rec_lock;
	atomic_int stop;
	atomic_int imports, unexpected;
};

static void *stress_importer(void *arg)
{
	struct stress *st = arg;
	uint64_t seed = (uintptr_t)&seed;
	int i;

	for (i = 0; i < STRESS_ITERS && !st->stop; i++) {
		struct kfdpool_record r;
		struct kfdpool_import im;
		int fd = st->imp[i & 1], ret;

		pthread_mutex_lock(&st->rec_lock);
		r = st->rec[kfd_rand(&seed) % 64];
		pthread_mutex_unlock(&st->rec_lock);
		ret = kfd_import(fd, &r, i % 3 ? 0 : KFDPOOL_IMPORT_VALIDATE,
				 &im);
		if (!ret && im.fd >= 0) {
			atomic_fetch_add(&st->imports, 1);
			close(im.fd);
			ret = kfd_release(fd, im.entry_id);
			if (ret)
				atomic_fetch_add(&st->unexpected, 1);
		} else if (ret && ret != -ENOENT && ret != -ESTALE &&
			   ret != -ENXIO && ret != -EINVAL) {
			atomic_fetch_add(&st->unexpected, 1);
		}
	}
	return NULL;
}

static void *stress_exporter(void *arg)
{
	struct stress *st = arg;
	uint64_t seed = 77;
	int i;

	for (i = 0; i < STRESS_ITERS && !st->stop; i++) {
		struct kfdpool_record r, old;
		int slot = kfd_rand(&seed) % 64;
		__u32 e = st->entry[kfd_rand(&seed) % STRESS_BUFS];

		if (kfd_export(st->pool, e, 0, 4096, &r))
			continue;	/* entry being re-pinned */
		pthread_mutex_lock(&st->rec_lock);
		old = st->rec[slot];
		st->rec[slot] = r;
		pthread_mutex_unlock(&st->rec_lock);
		if (REC(&old)->magic)
			kfd_revoke(st->pool, &old);
	}
	return NULL;
}

static void *stress_repinner(void *arg)
{
	struct stress *st = arg;
	int i;

	for (i = 0; i < STRESS_ITERS / 10 && !st->stop; i++) {
		int b = i % STRESS_BUFS, e;

		if (kfd_unpin(st->pool, st->entry[b], NULL)) {
			atomic_fetch_add(&st->unexpected, 1);
			continue;
		}
		e = kfd_pin(st->pool, st->buf[b], b);
		if (e <= 0) {
			atomic_fetch_add(&st->unexpected, 1);
			break;
		}
		st->entry[b] = e;
	}
	return NULL;
}

TEST_F_TIMEOUT(life, concurrent, 600)
{
	struct kfdpool_pool_stats ps;
	pthread_t th[6];
	struct stress *st;
	int i;

	st = calloc(1, sizeof(*st));
	ASSERT_NE(NULL, st);
	pthread_mutex_init(&st->rec_lock, NULL);
	st->pool = kfd_pool_new("stress");
	ASSERT_LE(0, st->pool);
	st->imp[0] = kfd_pool_export(st->pool);
	st->imp[1] = kfd_pool_export(st->pool);
	for (i = 0; i < STRESS_BUFS; i++) {
		st->buf[i] = kfd_dmabuf_new(SZ);
		ASSERT_LE(0, st->buf[i]);
		st->entry[i] = kfd_pin(st->pool, st->buf[i], i);
		ASSERT_LT(0, (int)st->entry[i]);
	}
	for (i = 0; i < 64; i++)
		ASSERT_EQ(0, kfd_export(st->pool, st->entry[i % STRESS_BUFS],
					0, 4096, &st->rec[i]));
	for (i = 0; i < 4; i++)
		ASSERT_EQ(0, pthread_create(&th[i], NULL, stress_importer, st));
	ASSERT_EQ(0, pthread_create(&th[4], NULL, stress_exporter, st));
	ASSERT_EQ(0, pthread_create(&th[5], NULL, stress_repinner, st));
	for (i = 0; i < 6; i++)
		pthread_join(th[i], NULL);
	EXPECT_EQ(0, st->unexpected);
	EXPECT_LT(0, st->imports);
	TH_LOG("%d imports under churn", st->imports);

	/* Every import was released: nothing is draining. */
	for (i = 0; i < STRESS_BUFS; i++)
		close(st->buf[i]);
	ASSERT_EQ(0, kfd_stats(st->imp[0], &ps));
	EXPECT_EQ(0, ps.imported_bytes);
	EXPECT_EQ(0, ps.draining_entries);
	EXPECT_EQ(STRESS_BUFS, ps.entries);
	EXPECT_EQ(STRESS_BUFS * SZ, ps.reserved_bytes);
	close(st->imp[0]);
	close(st->imp[1]);
	close(st->pool);
	free(st);
}

TEST_HARNESS_MAIN
