// SPDX-License-Identifier: GPL-2.0-only
/*
 * Accounting: default_pool_limit is a cap; an entry stops counting against
 * its pool when it is unpinned and a pool ends with its last owner fd; used
 * bytes count the entries that have records; live records are capped per
 * user, and users of a user namespace are charged to its owner too, so a
 * namespace gives no fresh quota.  Bytes themselves are bounded by the
 * kernel's limits (hostmem tests: RLIMIT_MEMLOCK, memcg).
 */
#include <grp.h>
#include <sched.h>
#include <sys/stat.h>

#include "kselftest_harness.h"
#include "kfdpool_util.h"
#include "hostmem_util.h"
#include "kfdpool_handle_util.h"
#include "kfdpool_state.h"

#define SZ		(64 * 1024)
#define UID_A		4242
#define UID_B		4343
#define KFD_USERS	"/sys/kernel/debug/kfdpool/users"

static const char *const params[] = {
	"default_pool_limit", "max_user_records",
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

	kfd_state_restore();
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

/* A user's live records in debugfs "users" at namespace level @level. */
static long long user_records(int level, unsigned int uid)
{
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
		    sscanf(line, "%u %d %u %u %ld", &ns, &lvl, &u, &owner,
			   &records) != 5)
			continue;
		if (lvl == level && u == uid) {
			v = records;
			break;
		}
	}
	fclose(f);
	return v;
}

/*
 * A user who creates a user namespace and becomes root of it (another
 * kernel uid) gets no fresh quota: the namespace's users' records are
 * charged to its owner as well.
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
		if (kfd_query(&q) || q.user_records)
			_exit(16);
		p2 = kfd_pool_new("inner");
		if (p2 < 0)
			_exit(17);
		e2 = kfd_pin(p2, self->s.buf[1], 0);
		if (e2 <= 0)
			_exit(19);
		/* Records: the owner's three and one here reach the cap of 4. */
		if (kfd_export(p2, e2, 0, 4096, &r))
			_exit(20);
		if (kfd_export(p2, e2, 0, 4096, &r) != -EDQUOT)
			_exit(21);
		if (kfd_query(&q) || q.user_records != 1 ||
		    q.max_user_records != 4)
			_exit(22);
		/* The refusal at the owner's level undid it there too. */
		if (kfd_revoke(p2, &r) || kfd_export(p2, e2, 0, 4096, &r))
			_exit(23);
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
 * An importer that released its import but kept the dma-buf fd: UNPIN
 * frees the entry at once, whatever fds of it are open: the pool's limit
 * is charged no longer, and the importer's memory stays valid.
 */
TEST_F(acct, unpinned_entry_freed_at_once)
{
	struct kfdpool_pool_stats st;
	struct kfdpool_record rec;
	struct kfdpool_import imp;
	int ctl, p, ip, e;
	__u32 draining = 1;

	ctl = kfd_open();
	ASSERT_LE(0, ctl);
	p = kfd_pool_create(ctl, SZ, "freed", KFDPOOL_HANDLE_TYPE_FD, NULL);
	close(ctl);
	ASSERT_LE(0, p);
	ip = kfd_pool_export(p);
	ASSERT_LE(0, ip);
	e = kfd_pin(p, self->s.buf[0], 0);
	ASSERT_LT(0, e);
	ASSERT_EQ(0, kfd_export(p, e, 0, SZ, &rec));
	ASSERT_EQ(0, kfd_import(ip, &rec, 0, &imp));
	ASSERT_EQ(0, kfd_release(ip, e));
	ASSERT_EQ(0, kfd_dmabuf_fill(self->s.buf[0], SZ, 11));
	close(self->s.buf[0]);
	self->s.buf[0] = -1;

	ASSERT_EQ(0, kfd_unpin(p, e, &draining));
	EXPECT_EQ(0, draining);
	ASSERT_EQ(0, kfd_stats(p, &st));
	EXPECT_EQ(0, st.entries);
	EXPECT_EQ(0, st.reserved_bytes);
	EXPECT_EQ(0, st.draining_bytes);
	/* The pool's limit is free again. */
	EXPECT_LT(0, kfd_pin(p, self->s.buf[1], 0));
	/* What the importer holds is its own. */
	EXPECT_EQ(1, kfd_dmabuf_check(imp.fd, SZ, 11, 0, SZ));
	close(imp.fd);
	close(ip);
	close(p);
}

/*
 * The pool ends when its last owner fd closes, import fds or not: its
 * entries are unpinned and uncharged, it is listed nowhere, its handles
 * and records stop working, and calls on a left-over import fd fail with
 * ENODEV.  Memory an importer holds stays valid.
 */
TEST_F(acct, pool_ends_with_last_owner_fd)
{
	struct kfdpool_pool_handle h;
	struct kfdpool_pool_info info;
	struct kfdpool_pool_stats st;
	__u8 id[KFDPOOL_ID_LEN];
	struct kfdpool_record rec;
	struct kfdpool_import imp;
	struct kfdpool_query q;
	int ctl, p, ip, e;
	char state[16];

	ctl = kfd_open();
	ASSERT_LE(0, ctl);
	p = kfd_pool_create(ctl, 0, "ends", KFDPOOL_HANDLE_TYPES_ALL, id);
	ASSERT_LE(0, p);
	ip = kfd_pool_export(p);
	ASSERT_LE(0, ip);
	e = kfd_pin(p, self->s.buf[0], 0);
	ASSERT_LT(0, e);
	ASSERT_EQ(0, kfd_export(p, e, 0, SZ, &rec));
	ASSERT_EQ(0, kfd_import(ip, &rec, 0, &imp));
	ASSERT_EQ(0, kfd_handle_export(p, KFDPOOL_HANDLE_POLICY_UID, 0, &h));
	ASSERT_EQ(0, kfd_dmabuf_fill(self->s.buf[0], SZ, 12));
	close(self->s.buf[0]);
	self->s.buf[0] = -1;
	ASSERT_EQ(0, kfd_query(&q));
	EXPECT_EQ(self->q0.user_records + 1, q.user_records);

	close(p);
	ASSERT_EQ(0, kfd_query(&q));
	EXPECT_EQ(self->q0.user_records, q.user_records);
	EXPECT_EQ(-ENODEV, kfd_stats(ip, &st));
	EXPECT_EQ(-ENODEV, kfd_import(ip, &rec, KFDPOOL_IMPORT_VALIDATE, NULL));
	EXPECT_EQ(-ENODEV, kfd_release(ip, e));
	EXPECT_EQ(-ENOENT, kfd_handle_import(ctl, &h));
	ASSERT_EQ(0, kfd_fdinfo(ip, "kfdpool-state", state, sizeof(state)));
	EXPECT_STREQ("ended", state);
	EXPECT_EQ(0, kfd_fdinfo_num(ip, "kfdpool-entries"));
	EXPECT_EQ(0, kfd_pool_find(id, &info));	/* listed nowhere */
	/* The importer's memory is its own. */
	EXPECT_EQ(1, kfd_dmabuf_check(imp.fd, SZ, 12, 0, SZ));
	close(imp.fd);
	close(ip);
	close(ctl);
}

/*
 * Used bytes are the bytes of the entries that have a live record: a
 * counter, whatever the records cover or how they overlap.
 */
TEST_F(acct, used_bytes_count_entries_with_records)
{
	struct kfdpool_record r0[3], r1;
	struct kfdpool_pool_stats st;
	int p, e0, e1, e2, i;

	p = kfd_pool_new("used");
	ASSERT_LE(0, p);
	e0 = kfd_pin(p, self->s.buf[0], 0);
	e1 = kfd_pin(p, self->s.buf[1], 0);
	e2 = kfd_pin(p, self->s.buf[2], 0);
	ASSERT_LT(0, e2);
	for (i = 0; i < 3; i++)
		ASSERT_EQ(0, kfd_export(p, e0, i * 4096, 4096 + i, &r0[i]));
	ASSERT_EQ(0, kfd_export(p, e1, 100, 1, &r1));
	ASSERT_EQ(0, kfd_stats(p, &st));
	EXPECT_EQ(4, st.records);
	EXPECT_EQ(2 * SZ, st.used_bytes);
	EXPECT_EQ(2 * SZ, st.used_high);
	/* An entry counts until its last record goes. */
	ASSERT_EQ(0, kfd_revoke(p, &r0[0]));
	ASSERT_EQ(0, kfd_revoke(p, &r0[1]));
	ASSERT_EQ(0, kfd_stats(p, &st));
	EXPECT_EQ(2 * SZ, st.used_bytes);
	ASSERT_EQ(0, kfd_revoke(p, &r0[2]));
	ASSERT_EQ(0, kfd_stats(p, &st));
	EXPECT_EQ(SZ, st.used_bytes);
	EXPECT_EQ(2 * SZ, st.used_high);
	/* UNPIN revokes. */
	ASSERT_EQ(0, kfd_unpin(p, e1, NULL));
	ASSERT_EQ(0, kfd_stats(p, &st));
	EXPECT_EQ(0, st.used_bytes);
	memset(&st, 0, sizeof(st));
	st.flags = KFDPOOL_STATS_RESET_USED_HIGH;
	ASSERT_EQ(0, kfd_ioctl(p, KFDPOOL_IOC_POOL_STATS, &st));
	EXPECT_EQ(0, st.used_high);
	ASSERT_EQ(0, kfd_export(p, e2, 0, SZ, &r1));
	ASSERT_EQ(0, kfd_stats(p, &st));
	EXPECT_EQ(SZ, st.used_bytes);
	EXPECT_EQ(SZ, st.used_high);
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
	if (user_records(0, getuid()) != -2)
		EXPECT_EQ(q.user_records, user_records(0, getuid()));

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

/*
 * A live record keeps its page of the record table (73 records): records
 * alone would let a user who exports a page and revokes all but one, pool
 * after pool, hold a page per record.  The pages are capped per user too,
 * at twice what max_user_records full records need.
 */
#define RPP	73

TEST_F(acct, record_pages_capped_per_user)
{
	struct kfdpool_record r[RPP], more;
	struct kfdpool_query q;
	int pools[5], e[5], i, j;

	ASSERT_EQ(0, kfd_query(&q));
	if (q.user_records)
		SKIP(return, "records of this user live elsewhere");
	/* Two pages' worth of records: four pages. */
	ASSERT_EQ(0, kfd_param_set("max_user_records", 2 * RPP));
	for (i = 0; i < 5; i++) {
		pools[i] = kfd_pool_new("rec-pages");
		ASSERT_LE(0, pools[i]);
		e[i] = kfd_pin(pools[i], self->s.buf[0], 0);
		ASSERT_LT(0, e[i]);
	}
	for (i = 0; i < 4; i++) {
		for (j = 0; j < RPP; j++)
			ASSERT_EQ(0, kfd_export(pools[i], e[i], 0, SZ, &r[j]))
				TH_LOG("pool %d record %d", i, j);
		/* One record left alive keeps the page. */
		for (j = 1; j < RPP; j++)
			ASSERT_EQ(0, kfd_revoke(pools[i], &r[j]));
	}
	ASSERT_EQ(0, kfd_query(&q));
	EXPECT_EQ(4, q.user_records);
	/* A fifth page is refused, though records are far from their cap. */
	EXPECT_EQ(-EDQUOT, kfd_export(pools[4], e[4], 0, SZ, &more));
	/* A page with room still takes records. */
	EXPECT_EQ(0, kfd_export(pools[0], e[0], 0, SZ, &more));
	/* A pool's end gives its pages back. */
	close(pools[0]);
	EXPECT_EQ(0, kfd_export(pools[4], e[4], 0, SZ, &more));
	for (i = 1; i < 5; i++)
		close(pools[i]);
	ASSERT_EQ(0, kfd_query(&q));
	EXPECT_EQ(0, q.user_records);
}

TEST_HARNESS_MAIN
