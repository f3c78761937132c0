// SPDX-License-Identifier: GPL-2.0-only
/*
 * Accounting: a dma-buf pinned in many pools, or by two users, is charged
 * once to the global figure and once per user; users of a user namespace
 * are charged to its owner too, so a namespace gives no fresh quota;
 * default_pool_limit is a cap; memory importers keep after the pool let go
 * stays visible and charged (held); used bytes count overlapping records
 * once; live records are capped per user.  Memory ALLOC made goes the same
 * way: charged once, held while an fd or a mapping keeps it, uncharged
 * exactly once.
 */
#include <grp.h>
#include <sched.h>
#include <sys/stat.h>

#include "kselftest_harness.h"
#include "kfdpool_util.h"
#include "hostmem_util.h"

#define SZ		(64 * 1024)
#define UID_A		4242
#define UID_B		4343
#define KFD_USERS	"/sys/kernel/debug/kfdpool/users"

static const char *const params[] = {
	"global_limit", "user_limit", "default_pool_limit", "max_user_records",
};
#define NPARAMS	(sizeof(params) / sizeof(params[0]))

FIXTURE(acct) {
	struct kfd_set s;
	long long param[NPARAMS];
	mode_t devmode;
	struct kfdpool_query q0;
};

FIXTURE_SETUP(acct)
{
	struct stat sb;
	unsigned int i;

	for (i = 0; i < NPARAMS; i++)
		self->param[i] = -1;
	KFD_SET_SETUP("acct_test", 4, SZ, -1, 0);
	for (i = 0; i < NPARAMS; i++) {
		self->param[i] = kfd_param_get(params[i]);
		if (self->param[i] < 0)
			SKIP(return, "no module parameter %s", params[i]);
	}
	/* Other uids open the device (its mode may be 0600). */
	ASSERT_EQ(0, stat(KFD_DEV, &sb));
	self->devmode = sb.st_mode & 07777;
	ASSERT_EQ(0, chmod(KFD_DEV, 0666));
	ASSERT_EQ(0, kfd_query(&self->q0));
}

FIXTURE_TEARDOWN(acct)
{
	unsigned int i;

	for (i = 0; i < NPARAMS; i++)
		if (self->param[i] >= 0)
			kfd_param_set(params[i], self->param[i]);
	if (self->devmode)
		chmod(KFD_DEV, self->devmode);
	KFD_SET_TEARDOWN();
}

static void drop_to(uid_t uid)
{
	if (setgroups(0, NULL) || setresgid(uid, uid, uid) ||
	    setresuid(uid, uid, uid))
		_exit(90);
}

/* A new pool created by @uid (a child that exits), or -errno. */
static int pool_as(uid_t uid, const char *name)
{
	int sv[2], fd = -1, st;
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
		return -errno;
	pid = fork();
	if (pid < 0)
		return -errno;
	if (!pid) {
		int p;

		drop_to(uid);
		p = kfd_pool_new(name);
		if (p < 0 || kfd_send(sv[1], p, &p, sizeof(p)))
			_exit(1);
		_exit(0);
	}
	close(sv[1]);
	if (kfd_recv(sv[0], &fd, &st, sizeof(st)))
		fd = -EIO;
	close(sv[0]);
	waitpid(pid, &st, 0);
	return fd;
}

/* QUERY as @uid; 0 or -errno. */
static int query_as(uid_t uid, struct kfdpool_query *q)
{
	int p[2], st;
	pid_t pid;

	if (pipe2(p, O_CLOEXEC))
		return -errno;
	pid = fork();
	if (pid < 0)
		return -errno;
	if (!pid) {
		drop_to(uid);
		if (kfd_query(q) || write(p[1], q, sizeof(*q)) != sizeof(*q))
			_exit(1);
		_exit(0);
	}
	close(p[1]);
	st = read(p[0], q, sizeof(*q)) == sizeof(*q) ? 0 : -EIO;
	close(p[0]);
	waitpid(pid, NULL, 0);
	return st;
}

/*
 * A user's line in debugfs "users" at namespace level @level: pinned bytes
 * (@col 0) or records (@col 1); -1 when the user has no line.
 */
static long long user_figure(int level, unsigned int uid, int col)
{
	unsigned long long pinned;
	unsigned int ns, u, owner;
	char line[256];
	long long v = -1;
	long records;
	int lvl;
	FILE *f;

	f = fopen(KFD_USERS, "re");
	if (!f)
		return -2;
	while (fgets(line, sizeof(line), f)) {
		if (line[0] == '#' ||
		    sscanf(line, "%u %d %u %u %llu %ld", &ns, &lvl, &u, &owner,
			   &pinned, &records) != 6)
			continue;
		if (lvl == level && u == uid) {
			v = col ? records : (long long)pinned;
			break;
		}
	}
	fclose(f);
	return v;
}

/* One dma-buf pinned in many pools counts once, globally and per user. */
TEST_F(acct, dmabuf_in_many_pools_charged_once)
{
	struct kfdpool_pool_stats st;
	struct kfdpool_query q;
	int pools[16], e[16], i;

	for (i = 0; i < 8; i++) {
		pools[i] = kfd_pool_new("many");
		ASSERT_LE(0, pools[i]);
		e[i] = kfd_pin(pools[i], self->s.buf[0], i);
		ASSERT_LT(0, e[i]);
		ASSERT_EQ(0, kfd_query(&q));
		EXPECT_EQ(self->q0.global_pinned + SZ, q.global_pinned);
		EXPECT_EQ(self->q0.user_pinned + SZ, q.user_pinned);
		/* A pool's own figure counts its own entries. */
		ASSERT_EQ(0, kfd_stats(pools[i], &st));
		EXPECT_EQ(SZ, st.reserved_bytes);
	}
	/* Room for one buffer: pinning it again anywhere still fits. */
	ASSERT_EQ(0, kfd_param_set("global_limit",
				   self->q0.global_pinned + SZ));
	for (i = 8; i < 16; i++) {
		pools[i] = kfd_pool_new("many");
		ASSERT_LE(0, pools[i]);
		e[i] = kfd_pin(pools[i], self->s.buf[0], i);
		EXPECT_LT(0, e[i]);
	}
	EXPECT_EQ(-ENOSPC, kfd_pin(pools[0], self->s.buf[1], 0));
	ASSERT_EQ(0, kfd_query(&q));
	EXPECT_EQ(self->q0.global_pinned + SZ, q.global_pinned);

	/* The charge stays until the last entry goes. */
	for (i = 0; i < 15; i++) {
		if (i & 1)
			EXPECT_EQ(0, kfd_unpin(pools[i], e[i], NULL));
		close(pools[i]);
	}
	ASSERT_EQ(0, kfd_query(&q));
	EXPECT_EQ(self->q0.global_pinned + SZ, q.global_pinned);
	EXPECT_EQ(self->q0.user_pinned + SZ, q.user_pinned);
	close(pools[15]);
	ASSERT_EQ(0, kfd_query(&q));
	EXPECT_EQ(self->q0.global_pinned, q.global_pinned);
	EXPECT_EQ(self->q0.user_pinned, q.user_pinned);
}

/* Two users pinning one dma-buf: each is charged once, globally once. */
TEST_F(acct, two_users_one_dmabuf)
{
	struct kfdpool_query q;
	int pa, pa2, pb, ea, eb;

	pa = pool_as(UID_A, "a");
	pa2 = pool_as(UID_A, "a2");
	pb = pool_as(UID_B, "b");
	ASSERT_LE(0, pa);
	ASSERT_LE(0, pa2);
	ASSERT_LE(0, pb);
	/* The pools' creators are charged, whoever pins through the fd. */
	ea = kfd_pin(pa, self->s.buf[0], 0);
	ASSERT_LT(0, ea);
	ASSERT_LT(0, kfd_pin(pa2, self->s.buf[0], 0));
	eb = kfd_pin(pb, self->s.buf[0], 0);
	ASSERT_LT(0, eb);

	ASSERT_EQ(0, kfd_query(&q));
	EXPECT_EQ(self->q0.global_pinned + SZ, q.global_pinned);
	EXPECT_EQ(self->q0.user_pinned, q.user_pinned);
	ASSERT_EQ(0, query_as(UID_A, &q));
	EXPECT_EQ(SZ, q.user_pinned);
	ASSERT_EQ(0, query_as(UID_B, &q));
	EXPECT_EQ(SZ, q.user_pinned);
	if (user_figure(0, 0, 0) != -2) {
		EXPECT_EQ(SZ, user_figure(0, UID_A, 0));
		EXPECT_EQ(SZ, user_figure(0, UID_B, 0));
	}

	/* Each user's limit sees its own charge. */
	ASSERT_EQ(0, kfd_param_set("user_limit", SZ));
	EXPECT_EQ(-EDQUOT, kfd_pin(pa, self->s.buf[1], 0));
	EXPECT_EQ(-EDQUOT, kfd_pin(pb, self->s.buf[1], 0));
	ASSERT_EQ(0, kfd_param_set("user_limit", 0));

	/* B lets go: A stays charged, the buffer still counts once. */
	ASSERT_EQ(0, kfd_unpin(pb, eb, NULL));
	ASSERT_EQ(0, query_as(UID_B, &q));
	EXPECT_EQ(0, q.user_pinned);
	ASSERT_EQ(0, query_as(UID_A, &q));
	EXPECT_EQ(SZ, q.user_pinned);
	EXPECT_EQ(self->q0.global_pinned + SZ, q.global_pinned);
	close(pa);
	close(pa2);
	close(pb);
	ASSERT_EQ(0, query_as(UID_A, &q));
	EXPECT_EQ(0, q.user_pinned);
	EXPECT_EQ(self->q0.global_pinned, q.global_pinned);
	EXPECT_EQ(-1, user_figure(0, UID_A, 0));
}

/*
 * A user who creates a user namespace and becomes root of it (another
 * kernel uid) gets no fresh quota: the namespace's users are charged to
 * its owner as well, for bytes and for records.
 */
TEST_F(acct, userns_gives_no_fresh_quota)
{
	int ready[2], go[2], status;
	char path[64], c;
	pid_t pid;
	FILE *f;

	/* Debian kernels can refuse unprivileged namespaces by sysctl. */
	f = fopen("/proc/sys/kernel/unprivileged_userns_clone", "we");
	if (f) {
		fputs("1", f);
		fclose(f);
	}
	ASSERT_EQ(0, kfd_param_set("user_limit", SZ));
	ASSERT_EQ(0, kfd_param_set("max_user_records", 4));
	ASSERT_EQ(0, pipe2(ready, O_CLOEXEC));
	ASSERT_EQ(0, pipe2(go, O_CLOEXEC));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		struct kfdpool_record r;
		struct kfdpool_query q;
		int p1, p2, e1, e2, i;

		drop_to(UID_A);
		p1 = kfd_pool_new("outer");
		if (p1 < 0)
			_exit(10);
		e1 = kfd_pin(p1, self->s.buf[0], 0);
		if (e1 <= 0)
			_exit(11);
		for (i = 0; i < 3; i++)
			if (kfd_export(p1, e1, 0, 4096, &r))
				_exit(12);
		if (unshare(CLONE_NEWUSER))
			_exit(errno == EPERM || errno == EINVAL ||
			      errno == ENOSPC || errno == EUSERS ? 4 : 13);
		if (write(ready[1], "r", 1) != 1 || read(go[0], &c, 1) != 1)
			_exit(14);
		/* Root of the namespace: kernel uid 100000, not UID_A. */
		if (setresuid(0, 0, 0))
			_exit(15);
		if (kfd_query(&q) || q.user_pinned || q.user_records)
			_exit(16);
		p2 = kfd_pool_new("inner");
		if (p2 < 0)
			_exit(17);
		/* Its owner's level is full: no new bytes... */
		if (kfd_pin(p2, self->s.buf[1], 0) != -EDQUOT)
			_exit(18);
		/* ...but what the owner pins already costs it nothing more. */
		e2 = kfd_pin(p2, self->s.buf[0], 0);
		if (e2 <= 0)
			_exit(19);
		/* Records: the owner's three and one here reach the cap of 4. */
		if (kfd_export(p2, e2, 0, 4096, &r))
			_exit(20);
		if (kfd_export(p2, e2, 0, 4096, &r) != -EDQUOT)
			_exit(21);
		if (kfd_query(&q) || q.user_pinned != SZ ||
		    q.user_records != 1 || q.max_user_records != 4)
			_exit(22);
		_exit(0);
	}
	close(ready[1]);
	close(go[0]);
	if (read(ready[0], &c, 1) == 1) {
		snprintf(path, sizeof(path), "/proc/%d/uid_map", pid);
		f = fopen(path, "we");
		ASSERT_NE(NULL, f);
		fputs("0 100000 1000\n", f);
		ASSERT_EQ(0, fclose(f));
		ASSERT_EQ(1, write(go[1], "g", 1));
	}
	close(go[1]);
	close(ready[0]);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	if (WEXITSTATUS(status) == 4)
		SKIP(return, "no unprivileged user namespaces");
	EXPECT_EQ(0, WEXITSTATUS(status)) TH_LOG("child step %d failed",
						 WEXITSTATUS(status));
}

/* default_pool_limit: the limit of a pool that asks none, and a cap. */
TEST_F(acct, default_pool_limit_is_a_cap)
{
	struct kfdpool_pool_stats st;
	struct kfdpool_query q;
	int ctl, p, i, extra;

	ctl = kfd_open();
	ASSERT_LE(0, ctl);
	ASSERT_EQ(0, kfd_param_set("default_pool_limit", 4 * SZ));
	ASSERT_EQ(0, kfd_query(&q));
	EXPECT_EQ(4 * SZ, q.default_pool_limit);

	EXPECT_EQ(-EDQUOT, kfd_pool_create(ctl, 4 * SZ + 1, "over", 1, NULL));
	EXPECT_EQ(-EDQUOT, kfd_pool_create(ctl, ~0ULL, "over", 1, NULL));
	p = kfd_pool_create(ctl, 2 * SZ, "under", 1, NULL);
	ASSERT_LE(0, p);
	ASSERT_EQ(0, kfd_stats(p, &st));
	EXPECT_EQ(2 * SZ, st.limit);
	close(p);
	p = kfd_pool_create(ctl, 4 * SZ, "at", 1, NULL);
	ASSERT_LE(0, p);
	close(p);

	/* Limit 0 gets the cap, and the cap holds. */
	p = kfd_pool_create(ctl, 0, "default", 1, NULL);
	ASSERT_LE(0, p);
	ASSERT_EQ(0, kfd_stats(p, &st));
	EXPECT_EQ(4 * SZ, st.limit);
	for (i = 0; i < 4; i++)
		EXPECT_LT(0, kfd_pin(p, self->s.buf[i], 0));
	extra = kfd_dmabuf_new(SZ);
	ASSERT_LE(0, extra);
	EXPECT_EQ(-ENOSPC, kfd_pin(p, extra, 0));
	close(extra);
	close(p);

	/* No cap: any limit. */
	ASSERT_EQ(0, kfd_param_set("default_pool_limit", 0));
	p = kfd_pool_create(ctl, ~0ULL, "any", 1, NULL);
	EXPECT_LE(0, p);
	close(p);
	close(ctl);
}

/*
 * An importer that released its import but kept the fd: once the owner
 * unpins, the entry is held, visible and charged, and counts against the
 * pool's limit until the importer's fd goes.
 */
TEST_F(acct, held_after_release)
{
	struct kfdpool_pool_stats st;
	struct kfdpool_record rec;
	struct kfdpool_import imp;
	struct kfdpool_query q;
	int ctl, p, ip, e, e1;
	__u32 draining = 0;

	ctl = kfd_open();
	ASSERT_LE(0, ctl);
	p = kfd_pool_create(ctl, 2 * SZ, "held", KFDPOOL_HANDLE_TYPE_FD, NULL);
	close(ctl);
	ASSERT_LE(0, p);
	ip = kfd_pool_export(p);
	ASSERT_LE(0, ip);
	e = kfd_pin(p, self->s.buf[0], 0);
	ASSERT_LT(0, e);
	ASSERT_EQ(0, kfd_export(p, e, 0, SZ, &rec));
	ASSERT_EQ(0, kfd_import(ip, &rec, 0, &imp));
	ASSERT_EQ(0, kfd_release(ip, e));
	/* The exporter lets go of its own fd: only the importer's is left. */
	close(self->s.buf[0]);
	self->s.buf[0] = -1;

	ASSERT_EQ(0, kfd_unpin(p, e, &draining));
	EXPECT_EQ(1, draining);
	ASSERT_EQ(0, kfd_stats(p, &st));
	EXPECT_EQ(1, st.held_entries);
	EXPECT_EQ(SZ, st.held_bytes);
	EXPECT_EQ(SZ, st.draining_bytes);
	EXPECT_EQ(1, st.draining_entries);
	EXPECT_EQ(SZ, st.reserved_bytes);
	EXPECT_EQ(1, st.entries);
	EXPECT_EQ(0, st.imported_bytes);
	EXPECT_EQ(SZ, kfd_fdinfo_num(p, "kfdpool-held"));
	EXPECT_EQ(1, kfd_fdinfo_num(ip, "kfdpool-held-entries"));
	ASSERT_EQ(0, kfd_query(&q));
	EXPECT_EQ(self->q0.global_pinned + SZ, q.global_pinned);
	EXPECT_EQ(self->q0.user_pinned + SZ, q.user_pinned);

	/* The owner's bound: held bytes count against the pool's limit. */
	e1 = kfd_pin(p, self->s.buf[1], 0);
	EXPECT_LT(0, e1);
	EXPECT_EQ(-ENOSPC, kfd_pin(p, self->s.buf[2], 0));

	/* The importer's fd goes: the next look frees the entry. */
	close(imp.fd);
	ASSERT_EQ(0, kfd_stats(p, &st));
	EXPECT_EQ(0, st.held_entries);
	EXPECT_EQ(0, st.held_bytes);
	EXPECT_EQ(0, st.draining_bytes);
	EXPECT_EQ(SZ, st.reserved_bytes);
	EXPECT_LT(0, kfd_pin(p, self->s.buf[2], 0));
	ASSERT_EQ(0, kfd_query(&q));
	EXPECT_EQ(self->q0.global_pinned + 2 * SZ, q.global_pinned);
	close(ip);
	close(p);
}

/*
 * An importer that never released: closing every pool fd leaves the pool
 * as a zombie holding the entry, charged to its owner, until the
 * importer's fd goes; then the reaper frees it without anyone asking.
 */
TEST_F(acct, held_by_importer_after_pool_closed)
{
	char hex[2 * KFDPOOL_ID_LEN + 1], line[512];
	__u8 id[KFDPOOL_ID_LEN];
	struct kfdpool_record rec;
	struct kfdpool_import imp;
	struct kfdpool_query q;
	int ctl, p, ip, e, found;
	unsigned long long held;
	FILE *f;

	ctl = kfd_open();
	ASSERT_LE(0, ctl);
	p = kfd_pool_create(ctl, 0, "zombie", KFDPOOL_HANDLE_TYPE_FD, id);
	close(ctl);
	ASSERT_LE(0, p);
	kfd_hex(id, KFDPOOL_ID_LEN, hex);
	ip = kfd_pool_export(p);
	e = kfd_pin(p, self->s.buf[0], 0);
	ASSERT_LT(0, e);
	ASSERT_EQ(0, kfd_export(p, e, 0, SZ, &rec));
	ASSERT_EQ(0, kfd_import(ip, &rec, 0, &imp));
	close(self->s.buf[0]);
	self->s.buf[0] = -1;
	close(ip);
	close(p);

	ASSERT_EQ(0, kfd_query(&q));
	EXPECT_EQ(self->q0.global_pinned + SZ, q.global_pinned);
	EXPECT_EQ(self->q0.user_pinned + SZ, q.user_pinned);
	f = fopen(KFD_DEBUGFS, "re");
	if (f) {
		found = 0;
		while (fgets(line, sizeof(line), f)) {
			if (strncmp(line, hex, strlen(hex)))
				continue;
			found = sscanf(line, "%*s %*s %*d %*u %*u %*u %*u %*u %*u %*u %*u %*u %*u %*u %llu",
				       &held);
		}
		fclose(f);
		EXPECT_EQ(1, found);
		EXPECT_EQ(SZ, held);
	}

	close(imp.fd);
	/* Nobody looks: the reaper frees the buffer on its own. */
	if (self->s.baseline >= 0)
		EXPECT_EQ(self->s.baseline + 3,
			  kfd_dmabuf_count(self->s.baseline + 3));
	ASSERT_EQ(0, kfd_query(&q));
	EXPECT_EQ(self->q0.global_pinned, q.global_pinned);
	EXPECT_EQ(self->q0.user_pinned, q.user_pinned);
}

#define SWAP(a, b) do { __typeof__(a) t_ = (a); (a) = (b); (b) = t_; } while (0)

/* Bytes covered by the union of intervals [off[i], off[i] + len[i]). */
static __u64 union_bytes(const __u64 *off, const __u64 *len, int n)
{
	__u64 total = 0, end = 0, start;
	int i, j, best;
	bool *done = calloc(n, sizeof(*done));

	/* n is small: pick the lowest start each time. */
	for (i = 0; i < n; i++) {
		best = -1;
		for (j = 0; j < n; j++)
			if (!done[j] && (best < 0 || off[j] < off[best]))
				best = j;
		done[best] = true;
		start = off[best] > end ? off[best] : end;
		if (off[best] + len[best] > start)
			total += off[best] + len[best] - start;
		if (off[best] + len[best] > end)
			end = off[best] + len[best];
	}
	free(done);
	return total;
}

/*
 * A random record of an entry of @big bytes: 1 to @n 64ths of it long,
 * page-aligned mostly (so that ends coincide), clamped to the entry.
 */
static void rand_range(uint64_t *seed, __u64 big, unsigned int n, __u64 *off,
		       __u64 *len)
{
	__u64 a = kfd_rand(seed) % 64 * (big / 64);
	__u64 l = (kfd_rand(seed) % n + 1) * (big / 64);

	if (kfd_rand(seed) % 4 == 0)
		a += kfd_rand(seed) % 4096;
	if (a >= big)
		a = big - 1;
	if (l > big - a)
		l = big - a;
	*off = a;
	*len = l;
}

/* Used bytes are bytes: records that overlap count once. */
TEST_F(acct, used_bytes_count_overlaps_once)
{
	enum { BIG = 1 << 20, NLIVE = 64 };
	struct kfdpool_record rec[NLIVE], whole, in;
	__u64 off[NLIVE], len[NLIVE], high = 0, want;
	struct kfdpool_pool_stats st;
	uint64_t seed = 0x5eed;
	int p, buf, e, i, n = 0, k;

	p = kfd_pool_new("used");
	ASSERT_LE(0, p);
	buf = kfd_dmabuf_new(BIG);
	ASSERT_LE(0, buf);
	e = kfd_pin(p, buf, 0);
	ASSERT_LT(0, e);
	close(buf);

	/* An allocation, its interior pointers and itself again. */
	ASSERT_EQ(0, kfd_export(p, e, 0, BIG, &whole));
	for (i = 1; i < 100; i++)
		ASSERT_EQ(0, kfd_export(p, e, i * 4096 + i, BIG - i * 4096 - i,
					&in));
	for (i = 0; i < 100; i++)
		ASSERT_EQ(0, kfd_export(p, e, 0, BIG, &in));
	ASSERT_EQ(0, kfd_stats(p, &st));
	EXPECT_EQ(200, st.records);
	EXPECT_EQ(BIG, st.used_bytes);
	EXPECT_EQ(BIG, st.used_high);
	ASSERT_EQ(0, kfd_unpin(p, e, NULL));

	/* Random records against a model of their union. */
	buf = kfd_dmabuf_new(BIG);
	ASSERT_LE(0, buf);
	e = kfd_pin(p, buf, 0);
	ASSERT_LT(0, e);
	close(buf);
	memset(&st, 0, sizeof(st));
	st.flags = KFDPOOL_STATS_RESET_USED_HIGH;
	ASSERT_EQ(0, kfd_ioctl(p, KFDPOOL_IOC_POOL_STATS, &st));
	for (i = 0; i < 3000; i++) {
		if (n < NLIVE && (n == 0 || kfd_rand(&seed) % 3)) {
			rand_range(&seed, BIG, 16, &off[n], &len[n]);
			ASSERT_EQ(0, kfd_export(p, e, off[n], len[n], &rec[n]));
			n++;
		} else {
			k = kfd_rand(&seed) % n;
			ASSERT_EQ(0, kfd_revoke(p, &rec[k]));
			n--;
			rec[k] = rec[n];
			off[k] = off[n];
			len[k] = len[n];
		}
		want = union_bytes(off, len, n);
		if (want > high)
			high = want;
		ASSERT_EQ(0, kfd_stats(p, &st));
		ASSERT_EQ(want, st.used_bytes) TH_LOG("step %d, %d records", i,
						      n);
		ASSERT_EQ(high, st.used_high) TH_LOG("step %d", i);
	}
	close(p);
}

/*
 * The same through the batch ioctls, whose chunks recompute the coverage
 * once per lock hold (kmod/cover.c): batches of exports and of revokes of
 * random records over three entries, used bytes and their high-water mark
 * against the model after each batch.
 */
TEST_F(acct, used_bytes_count_overlaps_once_in_batches)
{
	enum { BIG = 1 << 20, NE = 3, NLIVE = 96, MAXB = 40 };
	struct kfdpool_export ex[MAXB];
	struct kfdpool_revoke rv[MAXB];
	struct kfdpool_record rec[NLIVE];
	__u64 off[NLIVE], len[NLIVE], eoff[NLIVE], elen[NLIVE];
	int ent[NLIVE], eid[NE], p, buf, i, j, k, m, n = 0, step;
	struct kfdpool_pool_stats st;
	struct kfdpool_batch b;
	uint64_t seed = 0xba7c4;
	__u64 want, high = 0;

	p = kfd_pool_new("used-batch");
	ASSERT_LE(0, p);
	for (i = 0; i < NE; i++) {
		buf = kfd_dmabuf_new(BIG);
		ASSERT_LE(0, buf);
		eid[i] = kfd_pin(p, buf, 0);
		ASSERT_LT(0, eid[i]);
		close(buf);
	}
	for (step = 0; step < 200; step++) {
		memset(&b, 0, sizeof(b));
		if (n < NLIVE / 2 || (n < NLIVE - MAXB && kfd_rand(&seed) % 2)) {
			m = kfd_rand(&seed) % MAXB + 1;
			for (i = 0; i < m; i++) {
				rand_range(&seed, BIG, 8, &off[n + i], &len[n + i]);
				k = kfd_rand(&seed) % NE;
				ex[i] = (struct kfdpool_export){
					.entry_id = eid[k], .offset = off[n + i],
					.size = len[n + i] };
				ent[n + i] = k;
			}
			b.ops = (uintptr_t)ex;
			b.count = m;
			b.elem_size = sizeof(ex[0]);
			ASSERT_EQ(m, ioctl(p, KFDPOOL_IOC_EXPORT_BATCH, &b));
			for (i = 0; i < m; i++) {
				ASSERT_EQ(0, ex[i].status);
				rec[n + i] = ex[i].record;
			}
			n += m;
		} else {
			m = kfd_rand(&seed) % (n < MAXB ? n : MAXB) + 1;
			/* m distinct live records, moved to the end. */
			for (i = 0; i < m; i++) {
				k = kfd_rand(&seed) % (n - i);
				j = n - 1 - i;
				SWAP(rec[k], rec[j]);
				SWAP(off[k], off[j]);
				SWAP(len[k], len[j]);
				SWAP(ent[k], ent[j]);
				rv[i] = (struct kfdpool_revoke){ .record = rec[j] };
			}
			b.ops = (uintptr_t)rv;
			b.count = m;
			b.elem_size = sizeof(rv[0]);
			ASSERT_EQ(m, ioctl(p, KFDPOOL_IOC_REVOKE_BATCH, &b));
			for (i = 0; i < m; i++)
				ASSERT_EQ(0, rv[i].status);
			n -= m;
		}
		want = 0;
		for (k = 0; k < NE; k++) {
			for (i = 0, j = 0; i < n; i++) {
				if (ent[i] != k)
					continue;
				eoff[j] = off[i];
				elen[j++] = len[i];
			}
			want += union_bytes(eoff, elen, j);
		}
		if (want > high)
			high = want;
		ASSERT_EQ(0, kfd_stats(p, &st));
		ASSERT_EQ(n, st.records);
		ASSERT_EQ(want, st.used_bytes) TH_LOG("step %d, %d records",
						      step, n);
		ASSERT_EQ(high, st.used_high) TH_LOG("step %d", step);
	}
	close(p);
}

/* Live records are capped per user, across the user's pools. */
TEST_F(acct, records_capped_per_user)
{
	struct kfdpool_export ex[3];
	struct kfdpool_batch b = {};
	struct kfdpool_record r, first;
	struct kfdpool_query q;
	int pa, pb, pc, ea, eb, ec, i;

	ASSERT_EQ(0, kfd_param_set("max_user_records",
				   self->q0.user_records + 100));
	ASSERT_EQ(0, kfd_query(&q));
	EXPECT_EQ(self->q0.user_records + 100, q.max_user_records);
	pa = kfd_pool_new("rec-a");
	pb = kfd_pool_new("rec-b");
	ASSERT_LE(0, pa);
	ASSERT_LE(0, pb);
	ea = kfd_pin(pa, self->s.buf[0], 0);
	eb = kfd_pin(pb, self->s.buf[1], 0);
	ASSERT_LT(0, ea);
	ASSERT_LT(0, eb);
	for (i = 0; i < 60; i++)
		ASSERT_EQ(0, kfd_export(pa, ea, 0, SZ, i ? &r : &first));
	for (i = 0; i < 40; i++)
		ASSERT_EQ(0, kfd_export(pb, eb, 0, SZ, &r));
	EXPECT_EQ(-EDQUOT, kfd_export(pb, eb, 0, SZ, &r));
	EXPECT_EQ(-EDQUOT, kfd_export(pa, ea, 0, SZ, &r));
	ASSERT_EQ(0, kfd_query(&q));
	EXPECT_EQ(self->q0.user_records + 100, q.user_records);

	/* Per element in a batch. */
	memset(ex, 0, sizeof(ex));
	for (i = 0; i < 3; i++) {
		ex[i].entry_id = eb;
		ex[i].size = SZ;
	}
	b.ops = (uintptr_t)ex;
	b.count = 3;
	b.elem_size = sizeof(ex[0]);
	ASSERT_EQ(3, ioctl(pb, KFDPOOL_IOC_EXPORT_BATCH, &b));
	for (i = 0; i < 3; i++)
		EXPECT_EQ(-EDQUOT, ex[i].status);

	/* Revoking or unpinning gives records back. */
	ASSERT_EQ(0, kfd_revoke(pa, &first));
	EXPECT_EQ(0, kfd_export(pb, eb, 0, SZ, &r));
	ASSERT_EQ(0, kfd_unpin(pa, ea, NULL));
	ASSERT_EQ(0, kfd_query(&q));
	EXPECT_EQ(self->q0.user_records + 41, q.user_records);
	for (i = 0; i < 59; i++)
		ASSERT_EQ(0, kfd_export(pb, eb, 0, SZ, &r));
	EXPECT_EQ(-EDQUOT, kfd_export(pb, eb, 0, SZ, &r));

	/* Another user has a cap of its own. */
	pc = pool_as(UID_A, "rec-c");
	ASSERT_LE(0, pc);
	ec = kfd_pin(pc, self->s.buf[2], 0);
	ASSERT_LT(0, ec);
	ASSERT_EQ(0, kfd_param_set("max_user_records", 5));
	for (i = 0; i < 5; i++)
		ASSERT_EQ(0, kfd_export(pc, ec, 0, SZ, &r));
	EXPECT_EQ(-EDQUOT, kfd_export(pc, ec, 0, SZ, &r));
	ASSERT_EQ(0, query_as(UID_A, &q));
	EXPECT_EQ(5, q.user_records);

	/* 0: no cap. */
	ASSERT_EQ(0, kfd_param_set("max_user_records", 0));
	EXPECT_EQ(0, kfd_export(pc, ec, 0, SZ, &r));
	EXPECT_EQ(0, kfd_export(pb, eb, 0, SZ, &r));
	close(pa);
	close(pb);
	close(pc);
	ASSERT_EQ(0, kfd_query(&q));
	EXPECT_EQ(self->q0.user_records, q.user_records);
}

/* A new pool of the caller's, no limit of its own, fd handles. */
static int acct_pool(const char *name)
{
	int ctl, p;

	ctl = kfd_open();
	if (ctl < 0)
		return ctl;
	p = kfd_pool_create(ctl, 0, name, KFDPOOL_HANDLE_TYPE_FD, NULL);
	close(ctl);
	return p;
}

/*
 * ALLOC's memory is charged as a pin is: once, however many pools of the
 * user pin it; the global and per-user limits refuse it as they refuse a
 * pin.
 */
TEST_F(acct, alloc_charged_once)
{
	struct kfdpool_query q;
	int pa, pb, fd, eb;
	__u32 ea;

	if (!hm_supported())
		SKIP(return, "no KFDPOOL_IOC_ALLOC");
	pa = acct_pool("alloc-a");
	pb = acct_pool("alloc-b");
	ASSERT_LE(0, pa);
	ASSERT_LE(0, pb);
	fd = hm_alloc(pa, SZ, 0, &ea);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, kfd_query(&q));
	EXPECT_EQ(self->q0.global_pinned + SZ, q.global_pinned);
	EXPECT_EQ(self->q0.user_pinned + SZ, q.user_pinned);

	/* Pinned in a second pool: nothing more globally or for the user. */
	eb = kfd_pin(pb, fd, 0);
	ASSERT_LT(0, eb);
	ASSERT_EQ(0, kfd_query(&q));
	EXPECT_EQ(self->q0.global_pinned + SZ, q.global_pinned);
	EXPECT_EQ(self->q0.user_pinned + SZ, q.user_pinned);

	/* The limits count ALLOC's bytes with the pins'. */
	ASSERT_EQ(0, kfd_param_set("user_limit", q.user_pinned + SZ));
	EXPECT_EQ(-EDQUOT, hm_alloc(pa, 2 * SZ, 0, NULL));
	ASSERT_EQ(0, kfd_param_set("user_limit", 0));
	ASSERT_EQ(0, kfd_param_set("global_limit", q.global_pinned + SZ));
	EXPECT_EQ(-ENOSPC, hm_alloc(pa, 2 * SZ, 0, NULL));
	ASSERT_EQ(0, kfd_param_set("global_limit", 0));

	close(fd);
	ASSERT_EQ(0, kfd_unpin(pa, ea, NULL));
	ASSERT_EQ(0, kfd_query(&q));
	EXPECT_EQ(self->q0.global_pinned + SZ, q.global_pinned);
	ASSERT_EQ(0, kfd_unpin(pb, eb, NULL));
	ASSERT_EQ(0, kfd_query(&q));
	EXPECT_EQ(self->q0.global_pinned, q.global_pinned);
	EXPECT_EQ(self->q0.user_pinned, q.user_pinned);
	close(pa);
	close(pb);
}

/*
 * ALLOC's memory kept after UNPIN by the fd ALLOC returned stays charged
 * and held; closing the fd uncharges it once.  A mapping alone does not
 * hold it: it keeps the pages, not the dma-buf (nor the module).
 */
TEST_F(acct, alloc_held_by_fd_not_by_mapping)
{
	struct kfdpool_pool_stats st;
	struct kfdpool_query q;
	__u32 e, draining = 0;
	int p, fd;
	char *m;

	if (!hm_supported())
		SKIP(return, "no KFDPOOL_IOC_ALLOC");
	p = acct_pool("alloc-held");
	ASSERT_LE(0, p);
	fd = hm_alloc(p, SZ, 0, &e);
	ASSERT_LE(0, fd);
	m = mmap(NULL, SZ, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	ASSERT_NE(MAP_FAILED, m);
	m[0] = 1;

	ASSERT_EQ(0, kfd_unpin(p, e, &draining));
	EXPECT_EQ(1, draining);
	ASSERT_EQ(0, kfd_stats(p, &st));
	EXPECT_EQ(SZ, st.held_bytes);
	EXPECT_EQ(1, st.held_entries);
	EXPECT_EQ(SZ, st.reserved_bytes);
	ASSERT_EQ(0, kfd_query(&q));
	EXPECT_EQ(self->q0.global_pinned + SZ, q.global_pinned);
	EXPECT_EQ(self->q0.user_pinned + SZ, q.user_pinned);

	/* The fd goes: uncharged once, the mapping still valid. */
	close(fd);
	ASSERT_EQ(0, kfd_stats(p, &st));
	EXPECT_EQ(0, st.held_bytes);
	EXPECT_EQ(0, st.reserved_bytes);
	EXPECT_EQ(0, st.entries);
	ASSERT_EQ(0, kfd_query(&q));
	EXPECT_EQ(self->q0.global_pinned, q.global_pinned);
	EXPECT_EQ(self->q0.user_pinned, q.user_pinned);
	EXPECT_EQ(1, m[0]);
	munmap(m, SZ);
	close(p);
}

/*
 * An importer of ALLOC's memory that released it and kept its fd: after
 * the owner closed its fd and the pool, the pool is a zombie holding the
 * entry, still charged; the importer's close uncharges it once.
 */
TEST_F(acct, alloc_held_by_importer)
{
	struct kfdpool_record rec;
	struct kfdpool_import imp;
	struct kfdpool_query q;
	int p, ip, fd;
	char *m;
	__u32 e;

	if (!hm_supported())
		SKIP(return, "no KFDPOOL_IOC_ALLOC");
	p = acct_pool("alloc-imp");
	ASSERT_LE(0, p);
	ip = kfd_pool_export(p);
	ASSERT_LE(0, ip);
	fd = hm_alloc(p, SZ, 0, &e);
	ASSERT_LE(0, fd);
	m = mmap(NULL, SZ, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	ASSERT_NE(MAP_FAILED, m);
	m[0] = 7;
	munmap(m, SZ);
	ASSERT_EQ(0, kfd_export(p, e, 0, SZ, &rec));
	ASSERT_EQ(0, kfd_import(ip, &rec, 0, &imp));
	ASSERT_EQ(0, kfd_release(ip, e));
	close(fd);
	close(ip);
	close(p);

	ASSERT_EQ(0, kfd_query(&q));
	EXPECT_EQ(self->q0.global_pinned + SZ, q.global_pinned);
	EXPECT_EQ(self->q0.user_pinned + SZ, q.user_pinned);
	m = mmap(NULL, SZ, PROT_READ, MAP_SHARED, imp.fd, 0);
	ASSERT_NE(MAP_FAILED, m);
	EXPECT_EQ(7, m[0]);
	munmap(m, SZ);

	close(imp.fd);
	ASSERT_EQ(0, kfd_query(&q));
	EXPECT_EQ(self->q0.global_pinned, q.global_pinned);
	EXPECT_EQ(self->q0.user_pinned, q.user_pinned);
}

TEST_HARNESS_MAIN
