// SPDX-License-Identifier: GPL-2.0-only
/*
 * Scale: pool handles imported among thousands of pools, and teardowns of
 * an entry with 2^20 records and of a pool with many entries and records,
 * which must not hold a lock (or the CPU) for their whole length.
 *
 * The teardown tests print how long the teardown took and the longest wait
 * of another thread for the pool's lock meanwhile, and check no duration.
 * While a teardown runs, the kernel's soft-lockup and hung-task detectors
 * are made sensitive (2 s each): the VM runner fails a test on their
 * reports.  Debian's kernels have both; the debug kernel (tinyconfig) has
 * neither, and its RCU stall detector does not fire either (a tick that
 * finds preempt_count 0 is a quiescent state), so there the teardowns are
 * checked by KASAN, lockdep and kmemleak only.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <sys/resource.h>
#include <time.h>

#include "kselftest_harness.h"
#include "kfdpool_handle_util.h"

#define NR_POOLS	4096
#define BATCH		KFD_BATCH_MAX

/*
 * Records of the teardown tests: the per-pool cap, 2^20, or
 * $KFDPOOL_SCALE_RECORDS.  The debug kernel (KASAN, kmemleak, lockdep under
 * TCG) frees a record in about a millisecond: 2^13 there, still 32 lock
 * holds' worth and seconds of work.
 */
static unsigned int nr_records(void)
{
	const char *n = getenv("KFDPOOL_SCALE_RECORDS");
	const char *k = getenv("KFDPOOL_KERNEL");

	if (n && atoi(n) > 0 && atoi(n) <= KFD_MAX_RECORDS)
		return atoi(n);
	return k && !strcmp(k, "debug") ? KFD_MAX_RECORDS / 128 :
	       KFD_MAX_RECORDS;
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/*
 * Export @n records of entry @e (@size bytes): the whole entry, and interior
 * pointers at every page to its end, alternately.  0 or -errno.
 */
static int export_many(int pool, __u32 e, __u64 size, unsigned int n)
{
	struct kfdpool_export *ex;
	__u64 pages = size / 4096;
	unsigned int i, k;
	int ret = 0;

	ex = calloc(BATCH, sizeof(*ex));
	if (!ex)
		return -ENOMEM;
	for (i = 0; i < n && !ret; i += k) {
		unsigned int cnt = n - i < BATCH ? n - i : BATCH;

		for (k = 0; k < cnt; k++) {
			__u64 off = (i + k) & 1 ? (i + k) / 2 % pages * 4096 : 0;

			memset(&ex[k], 0, sizeof(ex[k]));
			ex[k].entry_id = e;
			ex[k].offset = off;
			ex[k].size = size - off;
		}
		ret = kfd_batch(pool, KFDPOOL_IOC_EXPORT_BATCH, ex, cnt,
				sizeof(*ex));
		if (ret >= 0 && ret != (int)cnt)
			ret = -EIO;
		for (k = 0; ret >= 0 && k < cnt; k++)
			if (ex[k].status)
				ret = ex[k].status;
		if (ret > 0)
			ret = 0;
		k = cnt;
	}
	free(ex);
	return ret;
}

/* Write @val to @path, saving what was there in @old (if not NULL). */
static int sysctl_set(const char *path, const char *val, char *old,
		      size_t len)
{
	FILE *f;

	if (old) {
		f = fopen(path, "re");
		if (!f || !fgets(old, len, f)) {
			if (f)
				fclose(f);
			return -1;
		}
		fclose(f);
	}
	f = fopen(path, "we");
	if (!f)
		return -1;
	fputs(val, f);
	return fclose(f) ? -1 : 0;
}

#define WATCHDOG_THRESH	"/proc/sys/kernel/watchdog_thresh"
#define HUNG_TIMEOUT	"/proc/sys/kernel/hung_task_timeout_secs"

/*
 * Sensitive lockup detectors while a test runs, where the kernel has them:
 * 6 s, far below the defaults (20 s, 120 s) and far above what these
 * commands take, yet not so tight that an emulated CPU the busy host left
 * unscheduled for a few seconds (TCG keeps host time) reads as a lockup.
 */
struct detectors {
	char thresh[32], hung[32];
	bool have_thresh, have_hung;
};

static void detectors_on(struct detectors *d)
{
	d->have_thresh = !sysctl_set(WATCHDOG_THRESH, "3", d->thresh,
				     sizeof(d->thresh));
	d->have_hung = !sysctl_set(HUNG_TIMEOUT, "6", d->hung,
				   sizeof(d->hung));
	ksft_print_msg("detectors: soft lockup %s, hung task %s\n",
		       d->have_thresh ? "6 s" : "none", d->have_hung ? "6 s" : "none");
}

static void detectors_off(struct detectors *d)
{
	if (d->have_thresh)
		sysctl_set(WATCHDOG_THRESH, d->thresh, NULL, 0);
	if (d->have_hung)
		sysctl_set(HUNG_TIMEOUT, d->hung, NULL, 0);
}

/*
 * A thread that keeps calling STATS on a pool fd (which takes the pool's
 * lock) and notes the longest call.
 */
struct prober {
	int fd;
	atomic_int stop;
	double longest;
	unsigned long calls;
};

static void *probe(void *arg)
{
	struct prober *p = arg;
	struct kfdpool_pool_stats st;

	while (!p->stop) {
		double t0 = now_ms(), t1;

		kfd_stats(p->fd, &st);
		t1 = now_ms();
		if (t1 - t0 > p->longest)
			p->longest = t1 - t0;
		p->calls++;
	}
	return NULL;
}

FIXTURE(scale) {
	int ctl;
	int baseline;
	struct rlimit nofile;
};

FIXTURE_SETUP(scale)
{
	struct rlimit rl;

	self->baseline = kfd_dmabuf_count_now();
	self->ctl = kfd_open();
	if (self->ctl < 0)
		SKIP(return, "no %s: %s", KFD_DEV, strerror(-self->ctl));
	ASSERT_EQ(0, getrlimit(RLIMIT_NOFILE, &self->nofile));
	rl.rlim_cur = rl.rlim_max = 3 * NR_POOLS + 256;
	if (rl.rlim_max < self->nofile.rlim_max)
		rl.rlim_max = self->nofile.rlim_max;
	ASSERT_EQ(0, setrlimit(RLIMIT_NOFILE, &rl));
}

FIXTURE_TEARDOWN(scale)
{
	if (self->ctl >= 0)
		close(self->ctl);
	setrlimit(RLIMIT_NOFILE, &self->nofile);
	if (self->baseline >= 0)
		EXPECT_EQ(self->baseline, kfd_dmabuf_count(self->baseline));
}

/*
 * Thousands of pools, each exported as a handle: every handle imports its
 * own pool, a destroyed pool's handle finds none, and the cost of one
 * import is printed with few and with many pools (a lookup by id, not a
 * scan of every pool).
 */
TEST_F_TIMEOUT(scale, handle_import_many_pools, 900)
{
	struct kfdpool_pool_handle *h;
	struct kfdpool_pool_stats st;
	__u8 (*id)[KFDPOOL_ID_LEN];
	double t, few, many;
	int *pool, i, fd, n0;

	n0 = kfd_pool_count();
	pool = calloc(NR_POOLS, sizeof(*pool));
	h = calloc(NR_POOLS, sizeof(*h));
	id = calloc(NR_POOLS, sizeof(*id));
	ASSERT_TRUE(pool && h && id);

	/* The cost with few pools: 8 of them, each imported 64 times. */
	for (i = 0; i < 8; i++) {
		pool[i] = kfd_pool_create(self->ctl, 0, "few",
					  KFDPOOL_HANDLE_TYPE_FABRIC, id[i]);
		ASSERT_LE(0, pool[i]);
		ASSERT_EQ(0, kfd_handle_export(pool[i],
					       KFDPOOL_HANDLE_POLICY_UID, 0,
					       &h[i]));
	}
	t = now_ms();
	for (i = 0; i < 8 * 64; i++) {
		fd = kfd_handle_import(self->ctl, &h[i % 8]);
		ASSERT_LE(0, fd);
		close(fd);
	}
	few = (now_ms() - t) / (8 * 64);

	for (i = 8; i < NR_POOLS; i++) {
		pool[i] = kfd_pool_create(self->ctl, 0, "many",
					  KFDPOOL_HANDLE_TYPE_FABRIC, id[i]);
		ASSERT_LE(0, pool[i]) TH_LOG("pool %d", i);
		ASSERT_EQ(0, kfd_handle_export(pool[i],
					       KFDPOOL_HANDLE_POLICY_UID, 0,
					       &h[i]));
	}
	/* Each handle opens its own pool: the id in its stats is its own. */
	t = now_ms();
	for (i = 0; i < NR_POOLS; i++) {
		fd = kfd_handle_import(self->ctl, &h[i]);
		ASSERT_LE(0, fd) TH_LOG("pool %d", i);
		ASSERT_EQ(0, kfd_stats(fd, &st));
		EXPECT_EQ(0, memcmp(st.id, id[i], KFDPOOL_ID_LEN));
		EXPECT_EQ(KFDPOOL_MODE_IMPORT, st.mode);
		close(fd);
	}
	many = (now_ms() - t) / NR_POOLS;
	ksft_print_msg("handle import: %.3f ms each among 8 pools, %.3f ms each (with a STATS) among %d pools\n",
		       few, many, NR_POOLS);

	/* Destroyed pools: their handles find nothing, the others still do. */
	for (i = 0; i < NR_POOLS; i += 2) {
		close(pool[i]);
		pool[i] = -1;
	}
	for (i = 0; i < NR_POOLS; i++) {
		fd = kfd_handle_import(self->ctl, &h[i]);
		if (i % 2 == 0) {
			EXPECT_EQ(-ENOENT, fd) TH_LOG("pool %d", i);
			continue;
		}
		ASSERT_LE(0, fd) TH_LOG("pool %d", i);
		ASSERT_EQ(0, kfd_stats(fd, &st));
		EXPECT_EQ(0, memcmp(st.id, id[i], KFDPOOL_ID_LEN));
		close(fd);
	}
	for (i = 1; i < NR_POOLS; i += 2)
		close(pool[i]);
	if (n0 >= 0)
		EXPECT_EQ(n0, kfd_pool_count_wait(n0));
	free(pool);
	free(h);
	free(id);
}

/*
 * Handles imported while other threads create and destroy pools: the
 * lookup runs without the global lock and must never see a pool being
 * freed (KASAN on the debug kernel).
 */
struct churn {
	int ctl;
	atomic_int stop;
	atomic_int bad;
};

static void *churn_pools(void *arg)
{
	struct churn *c = arg;
	struct kfdpool_pool_handle h;
	int p, fd;

	while (!c->stop) {
		p = kfd_pool_create(c->ctl, 0, "churn",
				    KFDPOOL_HANDLE_TYPE_FABRIC, NULL);
		if (p < 0) {
			c->bad++;
			break;
		}
		if (kfd_handle_export(p, KFDPOOL_HANDLE_POLICY_UID, 0, &h))
			c->bad++;
		/* Import it while it lives, then again once it is gone. */
		fd = kfd_handle_import(c->ctl, &h);
		if (fd < 0)
			c->bad++;
		else
			close(fd);
		close(p);
		fd = kfd_handle_import(c->ctl, &h);
		if (fd != -ENOENT) {
			c->bad++;
			if (fd >= 0)
				close(fd);
		}
	}
	return NULL;
}

TEST_F_TIMEOUT(scale, handle_import_while_pools_churn, 300)
{
	struct churn c = { .ctl = self->ctl };
	pthread_t th[4];
	int i;

	for (i = 0; i < 4; i++)
		ASSERT_EQ(0, pthread_create(&th[i], NULL, churn_pools, &c));
	sleep(3);
	c.stop = 1;
	for (i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	EXPECT_EQ(0, c.bad);
}

/*
 * A big dma-buf: vgem makes one of 1 GiB without allocating its pages;
 * elsewhere 16 MiB.  Returns the fd; *size is set.
 */
static int big_dmabuf(size_t *size)
{
	int fd;

	*size = 1UL << 30;
	fd = kfd_dmabuf_vgem(*size);
	if (fd >= 0)
		return fd;
	*size = 16UL << 20;
	return kfd_dmabuf_new(*size);
}

/*
 * UNPIN of an entry with KFD_MAX_RECORDS records (see nr_records()), all
 * overlapping one another: used bytes are the entry's size, not 2^20 times
 * it.  The records are freed in batches, the lock dropped between them.
 */
TEST_F_TIMEOUT(scale, unpin_entry_with_max_records, 1800)
{
	struct kfdpool_pool_stats st;
	struct prober *p;
	struct detectors d;
	double t0, t1, t;
	unsigned int nrec = nr_records();
	pthread_t th;
	size_t size;
	__u32 draining = 9;
	int pool, buf, e;

	pool = kfd_pool_create(self->ctl, 0, "max-records",
			       KFDPOOL_HANDLE_TYPE_FD, NULL);
	ASSERT_LE(0, pool);
	buf = big_dmabuf(&size);
	if (buf < 0)
		SKIP(return, "no dma-buf exporter: %s", strerror(-buf));
	e = kfd_pin(pool, buf, 0);
	ASSERT_LT(0, e);
	close(buf);

	t = now_ms();
	ASSERT_EQ(0, export_many(pool, e, size, nrec));
	ksft_print_msg("%u records of one %zu-byte entry exported in %.0f ms\n",
		       nrec, size, now_ms() - t);
	ASSERT_EQ(0, kfd_stats(pool, &st));
	EXPECT_EQ(nrec, st.records);
	EXPECT_EQ(size, st.used_bytes);
	EXPECT_EQ(size, st.used_high);

	p = calloc(1, sizeof(*p));
	ASSERT_NE(NULL, p);
	p->fd = pool;
	detectors_on(&d);
	ASSERT_EQ(0, pthread_create(&th, NULL, probe, p));
	usleep(100000);
	t0 = now_ms();
	EXPECT_EQ(0, kfd_unpin(pool, e, &draining));
	t1 = now_ms();
	usleep(100000);
	p->stop = 1;
	pthread_join(th, NULL);
	detectors_off(&d);
	EXPECT_EQ(0, draining);
	ksft_print_msg("UNPIN of %u records: %.0f ms; longest STATS of another thread meanwhile: %.1f ms (%lu calls)\n",
		       nrec, t1 - t0, p->longest, p->calls);
	ASSERT_EQ(0, kfd_stats(pool, &st));
	EXPECT_EQ(0, st.records);
	EXPECT_EQ(0, st.used_bytes);
	EXPECT_EQ(0, st.entries);
	free(p);
	close(pool);
}

/*
 * The last close of a pool with many entries and records: the release
 * frees them in batches, yielding the CPU, and the global pool list stays
 * available (debugfs reads it).
 */
TEST_F_TIMEOUT(scale, release_pool_with_many_entries, 1800)
{
	unsigned int i, nrec = nr_records(), nent = nrec / 1024;
	struct detectors d;
	double t0, t1;
	int pool, buf, e;

	pool = kfd_pool_create(self->ctl, 0, "many-entries",
			       KFDPOOL_HANDLE_TYPE_FD, NULL);
	ASSERT_LE(0, pool);
	for (i = 0; i < nent; i++) {
		buf = kfd_dmabuf_new(4 * 4096);
		if (buf < 0 && i == 0)
			SKIP(return, "no dma-buf exporter: %s",
			     strerror(-buf));
		ASSERT_LE(0, buf);
		e = kfd_pin(pool, buf, i);
		ASSERT_LT(0, e);
		close(buf);
		ASSERT_EQ(0, export_many(pool, e, 4 * 4096, nrec / nent));
	}
	detectors_on(&d);
	t0 = now_ms();
	close(pool);
	t1 = now_ms();
	detectors_off(&d);
	ksft_print_msg("release of a pool with %u entries and %u records: %.0f ms\n",
		       nent, nrec, t1 - t0);
}

TEST_HARNESS_MAIN
