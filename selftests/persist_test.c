// SPDX-License-Identifier: GPL-2.0-only
/*
 * Persistent pools (KFDPOOL_POOL_PERSIST): none unless the operator enables
 * them (max_user_persistent, 0 by default); a pool that stays when its last
 * fd closes, its producer killed included, keeps its entries and records
 * for importers that come later; its owner handle comes from the creating
 * call; the next producer of the same user adopts it with that handle or
 * by id (another user is refused and sees nothing), and the user can end
 * it by id, whenever the producer was killed; an administrator lists,
 * adopts and destroys any; the per-user count and byte limits refuse with
 * -EDQUOT and leave nothing behind; a DESTROY racing an UNPIN, or a
 * creation, frees each thing once; every new field, flag and fd is fed
 * bad values.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <time.h>
#include <sys/resource.h>
#include <grp.h>

#include "kselftest_harness.h"
#include "kfdpool_persist_util.h"
#include "hostmem_util.h"
#include "kfdpool_state.h"

#define PREFIX		"pt-"
#define USER		4242
#define OTHER		4243
#define BUF		(64 * 1024)
#define NBUF		3

static const char *const params[] = {
	"max_user_persistent", "max_user_persistent_bytes",
};
#define NPARAMS (sizeof(params) / sizeof(params[0]))

/* What a producer hands to the processes after it: bytes, no fd. */
struct shared {
	__u8 id[KFDPOOL_ID_LEN];
	struct kfdpool_pool_handle owner;
	struct kfdpool_pool_handle import;
	struct kfdpool_record rec[NBUF];
};

FIXTURE(persist) {
	long long param[NPARAMS];
	mode_t devmode;
	int baseline;
	long refcnt;
};

FIXTURE_SETUP(persist)
{
	struct kfdpool_query q;
	struct stat sb;
	unsigned int i;

	/* Whatever a failed test left, its teardown skipped (kfdpool_state.h). */
	kfd_persist_sweep(PREFIX);
	kfd_state_restore();
	for (i = 0; i < NPARAMS; i++)
		self->param[i] = -1;
	if (kfd_query(&q))
		SKIP(return, "no /dev/kfdpool");
	if (!(q.features & KFDPOOL_FEATURE_PERSIST))
		SKIP(return, "no persistent pools in this module");
	for (i = 0; i < NPARAMS; i++) {
		self->param[i] = kfd_param_get(params[i]);
		ASSERT_LE(0, self->param[i]);
	}
	/* The operator's choice; the default is tested on its own. */
	ASSERT_EQ(0, kfd_param_set("max_user_persistent", 4));
	/* Other uids open the device (its mode may be 0600). */
	ASSERT_EQ(0, stat(KFD_DEV, &sb));
	self->devmode = sb.st_mode & 07777;
	ASSERT_EQ(0, chmod(KFD_DEV, 0666));
	self->baseline = kfd_dmabuf_count_now();
	self->refcnt = kfd_module_refcnt();
}

FIXTURE_TEARDOWN(persist)
{
	unsigned int i;

	/* Whatever a failed test left: its pools go, and with them all. */
	kfd_persist_sweep(PREFIX);
	for (i = 0; i < NPARAMS; i++)
		if (self->param[i] >= 0)
			kfd_param_set(params[i], self->param[i]);
	if (self->devmode)
		chmod(KFD_DEV, self->devmode);
	if (self->baseline >= 0)
		EXPECT_EQ(self->baseline, kfd_dmabuf_count(self->baseline));
	if (self->refcnt >= 0)
		EXPECT_EQ(self->refcnt, kfd_module_refcnt());
}

/*
 * Become @uid with today's default RLIMIT_MEMLOCK (8 MiB): kernels before
 * 5.16 default to 64 KiB, less than the producers here ALLOC.
 */
static void drop_to(uid_t uid)
{
	struct rlimit rl = { 8 << 20, 8 << 20 };

	if (setrlimit(RLIMIT_MEMLOCK, &rl) || setgroups(0, NULL) ||
	    setresgid(uid, uid, uid) || setresuid(uid, uid, uid))
		_exit(90);
}

/*
 * Fill a persistent pool @name as a producer would: NBUF buffers of ALLOC
 * memory, each filled from seed @seed + i and exported; the handles and
 * records go to @sh.  Returns the owner fd, or -errno.
 */
static int produce(const char *name, __u32 seed, struct shared *sh)
{
	int pool, fd, i, ret;
	__u32 e = 0;

	memset(sh, 0, sizeof(*sh));
	pool = kfd_persist_new(name, sh->id);
	if (pool < 0)
		return pool;
	for (i = 0; i < NBUF; i++) {
		fd = hm_alloc(pool, BUF, i, &e);
		if (fd < 0) {
			ret = fd;
			goto fail;
		}
		ret = kfd_dmabuf_fill(fd, BUF, seed + i);
		close(fd);
		if (!ret)
			ret = kfd_export(pool, e, 0, BUF, &sh->rec[i]);
		if (ret)
			goto fail;
	}
	ret = kfd_owner_handle(pool, &sh->owner) ?:
	      kfd_import_handle(pool, &sh->import);
	if (!ret)
		return pool;
fail:
	close(pool);
	return ret;
}

/*
 * A consumer: import the pool by its handle and every record, and check
 * the bytes are those of seed @seed + i, buffer 0's those of @seed0 when
 * not 0.  0, or a code saying what failed.
 */
static int consume_first(const struct shared *sh, __u32 seed, __u32 seed0)
{
	struct kfdpool_import im;
	int ctl = kfd_open(), imp, i, ok;

	if (ctl < 0)
		return 10;
	imp = kfd_handle_import(ctl, &sh->import);
	close(ctl);
	if (imp < 0)
		return 11;
	for (i = 0; i < NBUF; i++) {
		if (kfd_import(imp, &sh->rec[i], 0, &im))
			return 12;
		ok = kfd_dmabuf_check(im.fd, BUF, i || !seed0 ? seed + i : seed0,
				      0, BUF);
		close(im.fd);
		if (ok != 1)
			return 13;
	}
	close(imp);
	return 0;
}

static int consume(const struct shared *sh, __u32 seed)
{
	return consume_first(sh, seed, 0);
}

static int as_user(uid_t uid, int (*fn)(struct shared *sh), struct shared *sh);

/* Wait for @pid: its exit code, or 100 + signal. */
static int reap(pid_t pid)
{
	int st;

	if (waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 100 + WTERMSIG(st);
}

TEST_F(persist, query_reports_limits)
{
	struct kfdpool_query q;

	ASSERT_EQ(0, kfd_query(&q));
	EXPECT_EQ(4, q.max_user_persistent);
	EXPECT_EQ(self->param[1], q.max_user_persistent_bytes);
	EXPECT_LT(0, q.max_user_persistent_bytes);
	EXPECT_EQ(0, q.user_persistent);
	EXPECT_EQ(0, q.user_persistent_bytes);
}

/* With the module's defaults nobody, root included, keeps a pool. */
static int none_by_default(struct shared *sh)
{
	int ctl = kfd_open(), pools = kfd_list_count(), p;

	if (ctl < 0)
		return 10;
	p = kfd_persist_create(ctl, PREFIX "off", KFDPOOL_HANDLE_TYPES_ALL,
			       NULL, NULL);
	if (p != -EDQUOT)
		return 11;
	if (kfd_list_count() != pools)
		return 12;
	close(ctl);
	return 0;
}

TEST_F(persist, off_by_default)
{
	long refs = kfd_module_refcnt();

	/* The parameter as the module came up, before the setup enabled it. */
	EXPECT_EQ(0, self->param[0]);
	ASSERT_EQ(0, kfd_param_set("max_user_persistent", self->param[0]));
	EXPECT_EQ(0, none_by_default(NULL));
	EXPECT_EQ(0, as_user(USER, none_by_default, NULL));
	EXPECT_EQ(refs, kfd_module_refcnt());
}

TEST_F(persist, stays_after_last_close)
{
	struct kfdpool_pool_info info;
	struct kfdpool_query q;
	struct shared sh;
	int pool;

	pool = produce(PREFIX "stay", 10, &sh);
	ASSERT_LE(0, pool);
	EXPECT_EQ(1, kfd_fdinfo_num(pool, "kfdpool-persistent"));
	ASSERT_EQ(0, kfd_query(&q));
	EXPECT_EQ(1, q.user_persistent);
	EXPECT_EQ(NBUF * BUF, q.user_persistent_bytes);
	close(pool);

	ASSERT_EQ(1, kfd_list_find(sh.id, &info));
	EXPECT_EQ(KFDPOOL_POOL_PERSIST, info.flags);
	EXPECT_EQ(0, info.owner_fds);
	EXPECT_EQ(NBUF, info.entries);
	EXPECT_EQ(NBUF, info.records);
	EXPECT_EQ(NBUF * BUF, info.reserved_bytes);
	EXPECT_EQ(0, info.uid);
	EXPECT_LT(0, info.age_ns);
	/* Importers come after the last owner fd closed. */
	EXPECT_EQ(0, consume(&sh, 10));
	EXPECT_EQ(0, consume(&sh, 10));
	ASSERT_EQ(1, kfd_list_find(sh.id, &info));
	EXPECT_EQ(0, info.import_fds);

	ASSERT_EQ(0, kfd_destroy_id(sh.id));
	EXPECT_EQ(0, kfd_list_find(sh.id, NULL));
	ASSERT_EQ(0, kfd_query(&q));
	EXPECT_EQ(0, q.user_persistent);
	EXPECT_EQ(0, q.user_persistent_bytes);
}

/* A non-persistent pool ends as before: nothing listed after its close. */
TEST_F(persist, default_pool_still_ends)
{
	__u8 id[KFDPOOL_ID_LEN];
	int ctl = kfd_open(), pool;

	ASSERT_LE(0, ctl);
	pool = kfd_pool_create_flags(ctl, 0, 0, PREFIX "live",
				     KFDPOOL_HANDLE_TYPES_ALL, id);
	ASSERT_LE(0, pool);
	EXPECT_EQ(0, kfd_fdinfo_num(pool, "kfdpool-persistent"));
	EXPECT_EQ(1, kfd_list_find(id, NULL));
	close(pool);
	EXPECT_EQ(0, kfd_list_find(id, NULL));
	close(ctl);
}

/*
 * The producer is SIGKILLed once it filled the pool; consumers started
 * afterwards, as another process each, import every buffer and find the
 * bytes it wrote.
 */
TEST_F(persist, producer_sigkilled)
{
	struct kfdpool_pool_info info;
	struct shared sh;
	int p[2], i;
	pid_t pid, c[2];

	ASSERT_EQ(0, pipe2(p, O_CLOEXEC));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		int pool = produce(PREFIX "killed", 20, &sh);

		if (pool < 0 || write(p[1], &sh, sizeof(sh)) != sizeof(sh))
			_exit(1);
		for (;;)
			pause();
	}
	close(p[1]);
	ASSERT_EQ(sizeof(sh), read(p[0], &sh, sizeof(sh)));
	close(p[0]);
	ASSERT_EQ(0, kill(pid, SIGKILL));
	ASSERT_EQ(100 + SIGKILL, reap(pid));

	ASSERT_EQ(1, kfd_list_find(sh.id, &info));
	EXPECT_EQ(0, info.owner_fds);
	EXPECT_EQ(0, info.owner_pid);
	EXPECT_EQ(NBUF, info.records);
	for (i = 0; i < 2; i++) {
		c[i] = fork();
		ASSERT_LE(0, c[i]);
		if (!c[i])
			_exit(consume(&sh, 20));
	}
	for (i = 0; i < 2; i++)
		EXPECT_EQ(0, reap(c[i]));
	ASSERT_EQ(0, kfd_destroy_id(sh.id));
}

/* Run @fn(@sh) as @uid in a child: its exit code. */
static int as_user(uid_t uid, int (*fn)(struct shared *sh), struct shared *sh)
{
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (!pid) {
		drop_to(uid);
		_exit(fn(sh));
	}
	return reap(pid);
}

/* The same, the child writing *@sh back through a pipe. */
static int as_user_out(uid_t uid, int (*fn)(struct shared *sh),
		       struct shared *sh)
{
	int p[2], ret;
	pid_t pid;

	if (pipe2(p, O_CLOEXEC))
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid) {
		drop_to(uid);
		ret = fn(sh);
		if (write(p[1], sh, sizeof(*sh)) != sizeof(*sh))
			ret = 99;
		_exit(ret);
	}
	close(p[1]);
	if (read(p[0], sh, sizeof(*sh)) != sizeof(*sh))
		memset(sh, 0, sizeof(*sh));
	close(p[0]);
	return reap(pid);
}

static int user_produces(struct shared *sh)
{
	return produce(PREFIX "user", 30, sh) < 0;
}

/* The same user adopts, replaces buffer 0 and leaves. */
static int user_adopts(struct shared *sh)
{
	struct kfdpool_record old = sh->rec[0];
	int pool, fd;
	__u32 e = 0;

	pool = kfd_adopt_open(&sh->owner, NULL);
	if (pool < 0)
		return 10;
	/* Exclusive: a second adopter waits for this one to go. */
	if (kfd_adopt_open(&sh->owner, NULL) != -EBUSY)
		return 11;
	fd = hm_alloc(pool, BUF, 0, &e);
	if (fd < 0 || kfd_dmabuf_fill(fd, BUF, 300))
		return 12;
	close(fd);
	if (kfd_export(pool, e, 0, BUF, &sh->rec[0]))
		return 13;
	/* The old record is revoked and its entry unpinned. */
	if (kfd_revoke(pool, &old) || kfd_unpin(pool, REC(&old)->entry_id, NULL))
		return 14;
	if (kfd_import(pool, &old, 0, NULL) != -ENOENT)
		return 15;
	close(pool);
	return 0;
}

/* Buffer 0 is the new one (seed 300); the others are as made. */
static int user_checks(struct shared *sh)
{
	return consume_first(sh, 30, 300);
}

/* The record the adopter revoked is refused to importers. */
static int user_old_refused(struct shared *sh)
{
	int ctl = kfd_open(), imp, ret;

	imp = ctl < 0 ? -1 : kfd_handle_import(ctl, &sh->import);
	if (imp < 0)
		return 10;
	ret = kfd_import(imp, &sh->rec[0], 0, NULL);
	return ret == -ENOENT || ret == -ESTALE ? 0 : 11;
}

static int other_adopts(struct shared *sh)
{
	int ctl = kfd_open();

	if (ctl < 0)
		return 10;
	if (kfd_adopt(ctl, &sh->owner, NULL) != -EACCES)
		return 11;
	/* Nor by id, which names no pool of its; nor import the pool. */
	if (kfd_adopt(ctl, NULL, sh->id) != -ENOENT)
		return 12;
	if (kfd_handle_import(ctl, &sh->import) != -EACCES)
		return 13;
	if (kfd_destroy_id(sh->id) != -ENOENT)
		return 14;
	if (kfd_list_find(sh->id, NULL) != 0)
		return 15;
	return 0;
}

TEST_F(persist, adopt_same_uid_other_uid_refused)
{
	struct kfdpool_pool_info info;
	struct shared sh = {}, was;
	struct kfdpool_pool_handle h;
	struct kfdpool_record old;
	int pool;

	ASSERT_EQ(0, as_user_out(USER, user_produces, &sh));
	old = sh.rec[0];
	ASSERT_EQ(1, kfd_list_find(sh.id, &info));
	EXPECT_EQ(USER, info.uid);
	EXPECT_EQ(0, info.owner_fds);

	EXPECT_EQ(0, as_user(OTHER, other_adopts, &sh));
	/* Root is another user too: its owner handle is not root's. */
	EXPECT_EQ(-EACCES, kfd_adopt_open(&sh.owner, NULL));

	ASSERT_EQ(0, as_user_out(USER, user_adopts, &sh));
	EXPECT_NE(0, memcmp(&old, &sh.rec[0], sizeof(old)));
	was = sh;
	was.rec[0] = old;
	EXPECT_EQ(0, as_user(USER, user_old_refused, &was));
	/* The adopter left: the pool stays, with what it made. */
	ASSERT_EQ(1, kfd_list_find(sh.id, &info));
	EXPECT_EQ(0, info.owner_fds);
	EXPECT_EQ(NBUF, info.records);
	EXPECT_EQ(NBUF, info.entries);
	EXPECT_EQ(0, as_user(USER, user_checks, &sh));

	/* An administrator adopts by id; the owner handle waits meanwhile. */
	pool = kfd_adopt_open(NULL, sh.id);
	ASSERT_LE(0, pool);
	ASSERT_EQ(1, kfd_list_find(sh.id, &info));
	EXPECT_EQ(1, info.owner_fds);
	EXPECT_EQ(getpid(), info.owner_pid);
	EXPECT_EQ(-EBUSY, kfd_adopt_open(NULL, sh.id));
	/* Owner handles admit the pool's user: root may not make one. */
	EXPECT_EQ(-EPERM, kfd_owner_handle(pool, &h));
	close(pool);
	ASSERT_EQ(0, as_user(USER, user_checks, &sh));
	ASSERT_EQ(0, kfd_destroy_id(sh.id));
}

/* A new handle key kills the owner handles given out. */
TEST_F(persist, rotate_kills_owner_handles)
{
	struct kfdpool_handle_rotate r = {};
	struct kfdpool_pool_handle h, h2;
	struct kfdpool_pool_stats st;
	__u8 id[KFDPOOL_ID_LEN];
	int ctl = kfd_open(), pool, a;

	ASSERT_LE(0, ctl);
	/* No handle type: still an owner handle, and rotation. */
	pool = kfd_pool_create_flags(ctl, 0, KFDPOOL_POOL_PERSIST,
				     PREFIX "rotate", 0, id);
	ASSERT_LE(0, pool);
	ASSERT_EQ(0, kfd_owner_handle(pool, &h));
	EXPECT_EQ(-EOPNOTSUPP, kfd_import_handle(pool, &h2));
	ASSERT_EQ(0, kfd_ioctl(pool, KFDPOOL_IOC_HANDLE_ROTATE, &r));
	ASSERT_EQ(0, kfd_owner_handle(pool, &h2));
	close(pool);
	EXPECT_EQ(-EACCES, kfd_adopt(ctl, &h, NULL));
	a = kfd_adopt(ctl, &h2, NULL);
	EXPECT_LE(0, a);
	ASSERT_EQ(0, kfd_stats(a, &st));
	EXPECT_EQ(KFDPOOL_MODE_OWNER, st.mode);
	EXPECT_EQ(0, kfd_destroy(a));
	close(a);
	EXPECT_EQ(-ENOENT, kfd_adopt(ctl, &h2, NULL));
	close(ctl);
}

/* Owner and import handles are told apart: neither does the other's job. */
TEST_F(persist, owner_and_import_handles_do_not_mix)
{
	struct kfdpool_pool_handle o, i;
	__u8 id[KFDPOOL_ID_LEN] = {};
	int ctl = kfd_open(), pool;

	ASSERT_LE(0, ctl);
	pool = kfd_persist_new(PREFIX "mix", id);
	ASSERT_LE(0, pool);
	ASSERT_EQ(0, kfd_owner_handle(pool, &o));
	ASSERT_EQ(0, kfd_import_handle(pool, &i));
	EXPECT_EQ(KFDPOOL_OWNER_HANDLE_MAGIC, HND(&o)->magic);
	close(pool);
	EXPECT_EQ(-EINVAL, kfd_handle_import(ctl, &o));
	EXPECT_EQ(-EINVAL, kfd_adopt(ctl, &i, NULL));
	/* Made an owner handle by its magic alone: its MAC says no. */
	HND(&i)->magic = KFDPOOL_OWNER_HANDLE_MAGIC;
	EXPECT_EQ(-EACCES, kfd_adopt(ctl, &i, NULL));
	/* Nor an import handle from an owner handle. */
	HND(&o)->magic = KFDPOOL_HANDLE_MAGIC;
	EXPECT_EQ(-EACCES, kfd_handle_import(ctl, &o));
	EXPECT_EQ(0, kfd_destroy_id(id));
	close(ctl);
}

/* Counts against max_user_persistent, as uid USER. */
static int count_limit(struct shared *sh)
{
	int ctl = kfd_open(), a, b, c, live;
	struct kfdpool_query q = {};

	if (ctl < 0)
		return 10;
	a = kfd_pool_create_flags(ctl, 0, KFDPOOL_POOL_PERSIST, PREFIX "a", 0,
				  NULL);
	b = kfd_pool_create_flags(ctl, 0, KFDPOOL_POOL_PERSIST, PREFIX "b", 0,
				  NULL);
	if (a < 0 || b < 0)
		return 11;
	c = kfd_pool_create_flags(ctl, 0, KFDPOOL_POOL_PERSIST, PREFIX "c", 0,
				  NULL);
	if (c != -EDQUOT)
		return 12;
	/* Pools that do not persist are not counted. */
	live = kfd_pool_create_flags(ctl, 0, 0, PREFIX "live", 0, NULL);
	if (live < 0)
		return 13;
	close(live);
	if (kfd_ioctl(ctl, KFDPOOL_IOC_QUERY, &q) || q.user_persistent != 2)
		return 14;
	/* One destroyed makes room. */
	if (kfd_destroy(a))
		return 15;
	close(a);
	c = kfd_pool_create_flags(ctl, 0, KFDPOOL_POOL_PERSIST, PREFIX "c", 0,
				  NULL);
	if (c < 0)
		return 16;
	close(b);
	close(c);
	return 0;
}

TEST_F(persist, count_limit_edquot_leaves_nothing)
{
	int pools = kfd_list_count(), ctl;
	long dmabufs = kfd_dmabuf_count_now(), refs = kfd_module_refcnt();

	ASSERT_EQ(0, kfd_param_set("max_user_persistent", 2));
	EXPECT_EQ(0, as_user(USER, count_limit, NULL));
	/* Two persistent pools of USER are left, nothing else. */
	EXPECT_EQ(pools + 2, kfd_list_count());
	EXPECT_EQ(dmabufs, kfd_dmabuf_count(dmabufs));
	EXPECT_EQ(refs + 2, kfd_module_refcnt());
	kfd_persist_sweep(PREFIX);
	EXPECT_EQ(pools, kfd_list_count());
	EXPECT_EQ(refs, kfd_module_refcnt());

	/* 0: no persistent pool at all. */
	ASSERT_EQ(0, kfd_param_set("max_user_persistent", 0));
	ctl = kfd_open();
	ASSERT_LE(0, ctl);
	EXPECT_EQ(-EDQUOT, kfd_pool_create_flags(ctl, 0, KFDPOOL_POOL_PERSIST,
						 PREFIX "none", 0, NULL));
	close(ctl);
	EXPECT_EQ(pools, kfd_list_count());
	EXPECT_EQ(refs, kfd_module_refcnt());
}

/*
 * Bytes against max_user_persistent_bytes: ALLOC and PIN are refused past
 * it with no figure moved; unpinning gives them back.
 */
TEST_F(persist, bytes_limit_edquot_leaves_nothing)
{
	long page = kfd_page_size();
	struct kfdpool_query q0, q;
	__u8 id[KFDPOOL_ID_LEN];
	struct kfdpool_pool_stats st;
	int pool, a, b, buf, live;
	__u32 ea = 0;

	ASSERT_EQ(0, kfd_param_set("max_user_persistent_bytes", 3 * page));
	pool = kfd_persist_new(PREFIX "bytes", id);
	ASSERT_LE(0, pool);
	ASSERT_EQ(0, kfd_query(&q0));
	a = hm_alloc(pool, 2 * page, 0, &ea);
	ASSERT_LE(0, a);
	EXPECT_EQ(-EDQUOT, hm_alloc(pool, 2 * page, 0, NULL));
	buf = kfd_dmabuf_new(2 * page);
	if (buf >= 0) {
		EXPECT_EQ(-EDQUOT, kfd_pin(pool, buf, 0));
		close(buf);
	}
	ASSERT_EQ(0, kfd_query(&q));
	EXPECT_EQ(q0.user_persistent_bytes + 2 * page, q.user_persistent_bytes);
	ASSERT_EQ(0, kfd_stats(pool, &st));
	EXPECT_EQ(2 * page, st.reserved_bytes);
	EXPECT_EQ(1, st.entries);
	/* Exactly the cap fits. */
	b = hm_alloc(pool, page, 0, NULL);
	EXPECT_LE(0, b);
	ASSERT_EQ(0, kfd_query(&q));
	EXPECT_EQ(3 * page, q.user_persistent_bytes);
	/* A pool that does not persist is not bound by it. */
	live = kfd_pool_new(PREFIX "live");
	ASSERT_LE(0, live);
	buf = hm_alloc(live, 4 * page, 0, NULL);
	EXPECT_LE(0, buf);
	if (buf >= 0)
		close(buf);
	close(live);
	/* Unpinning returns the bytes. */
	ASSERT_EQ(0, kfd_unpin(pool, ea, NULL));
	close(a);
	ASSERT_EQ(0, kfd_query(&q));
	EXPECT_EQ(page, q.user_persistent_bytes);
	close(b);
	ASSERT_EQ(0, kfd_destroy(pool));
	close(pool);
	ASSERT_EQ(0, kfd_query(&q));
	EXPECT_EQ(0, q.user_persistent_bytes);
	EXPECT_EQ(0, q.user_persistent);
}

/*
 * The creating call returns the owner handle of a persistent pool (none
 * of a pool that does not persist): a producer killed right after it
 * leaves nothing its user cannot adopt.
 */
TEST_F(persist, create_returns_owner_handle)
{
	struct kfdpool_pool_handle h, zero = {};
	__u8 id[KFDPOOL_ID_LEN] = {};
	int ctl = kfd_open(), pool, a;
	struct kfdpool_pool_create c;

	ASSERT_LE(0, ctl);
	pool = kfd_persist_create(ctl, PREFIX "own", 0, id, &h);
	ASSERT_LE(0, pool);
	EXPECT_EQ(KFDPOOL_OWNER_HANDLE_MAGIC, HND(&h)->magic);
	EXPECT_EQ(0, memcmp(HND(&h)->pool_id, id, KFDPOOL_ID_LEN));
	close(pool);
	a = kfd_adopt(ctl, &h, NULL);
	ASSERT_LE(0, a);
	EXPECT_EQ(0, kfd_destroy(a));
	close(a);

	memset(&c, 0xee, sizeof(c));
	memset(&c, 0, offsetof(struct kfdpool_pool_create, owner_handle));
	strcpy(c.name, PREFIX "plain");
	ASSERT_EQ(0, ioctl(ctl, KFDPOOL_IOC_POOL_CREATE, &c));
	EXPECT_EQ(0, memcmp(&c.owner_handle, &zero, sizeof(zero)));
	close(c.fd);
	close(ctl);
}

/* As uid USER: create a persistent pool, hand its id on, and exit. */
static int user_leaves_pool(struct shared *sh)
{
	int ctl = kfd_open(), pool;

	if (ctl < 0)
		return 10;
	pool = kfd_persist_create(ctl, PREFIX "left", 0, sh->id, &sh->owner);
	return pool < 0 ? 11 : 0;
}

/* As uid USER, with only the id: adopt the pool, then end it by id. */
static int user_ends_by_id(struct shared *sh)
{
	int ctl = kfd_open(), a;

	if (ctl < 0)
		return 10;
	a = kfd_adopt(ctl, NULL, sh->id);
	if (a < 0)
		return 11;
	if (kfd_adopt(ctl, NULL, sh->id) != -EBUSY)
		return 12;
	close(a);
	if (kfd_destroy_id(sh->id))
		return 13;
	if (kfd_destroy_id(sh->id) != -ENOENT)
		return 14;
	return 0;
}

/* Another uid, with the id: no pool of its own by that id. */
static int other_by_id(struct shared *sh)
{
	int ctl = kfd_open();

	if (ctl < 0)
		return 10;
	if (kfd_adopt(ctl, NULL, sh->id) != -ENOENT)
		return 11;
	if (kfd_destroy_id(sh->id) != -ENOENT)
		return 12;
	return kfd_list_find(sh->id, NULL) ? 13 : 0;
}

/* As ipcrm for SysV shm: the pool's own uid ends or adopts it by id. */
TEST_F(persist, own_uid_adopts_and_ends_by_id)
{
	struct shared sh = {};

	ASSERT_EQ(0, as_user_out(USER, user_leaves_pool, &sh));
	ASSERT_EQ(1, kfd_list_find(sh.id, NULL));
	EXPECT_EQ(0, as_user(OTHER, other_by_id, &sh));
	EXPECT_EQ(0, as_user(USER, user_ends_by_id, &sh));
	EXPECT_EQ(0, kfd_list_find(sh.id, NULL));
}

static int end_own(const struct kfdpool_pool_info *p, void *arg)
{
	int *left = arg;

	if (!(p->flags & KFDPOOL_POOL_PERSIST) ||
	    strncmp(p->name, PREFIX "kill", strlen(PREFIX "kill")))
		return 0;
	if (p->uid != USER || kfd_destroy_id(p->id))
		++*left;
	return 0;
}

/* As uid USER: end every persistent pool of ours by id; how many could not. */
static int user_sweeps(struct shared *sh)
{
	int left = 0, ret = kfd_list_each(end_own, &left);

	return ret < 0 ? 100 : left;
}

/*
 * A producer SIGKILLed at any point of making and filling a persistent
 * pool leaves nothing its user cannot end: each round kills one later.
 */
TEST_F(persist, producer_killed_anywhere_user_ends_all)
{
	long refs = kfd_module_refcnt();
	int pools = kfd_list_count(), round;
	struct shared sh;
	pid_t pid;

	ASSERT_EQ(0, kfd_param_set("max_user_persistent", 64));
	for (round = 0; round < 24; round++) {
		pid = fork();
		ASSERT_LE(0, pid);
		if (!pid) {
			drop_to(USER);
			produce(PREFIX "kill", 50, &sh);
			_exit(0);
		}
		usleep(round * 250);
		kill(pid, SIGKILL);
		reap(pid);
	}
	EXPECT_EQ(0, as_user(USER, user_sweeps, NULL));
	EXPECT_EQ(pools, kfd_list_count());
	EXPECT_EQ(refs, kfd_module_refcnt());
}

/*
 * A PIN or ALLOC into a persistent pool that its pool limit or max_entries
 * refuses leaves the user's persistent bytes as they were.
 */
TEST_F(persist, refused_entries_leave_persistent_bytes)
{
	long page = kfd_page_size();
	long long entries = kfd_param_get("max_entries");
	struct kfdpool_query q0, q;
	int ctl = kfd_open(), pool, buf, fd;

	ASSERT_LE(0, ctl);
	ASSERT_LE(0, entries);
	ASSERT_EQ(0, kfd_query(&q0));
	pool = kfd_pool_create_flags(ctl, 2 * page, KFDPOOL_POOL_PERSIST,
				     PREFIX "refused", 0, NULL);
	ASSERT_LE(0, pool);
	EXPECT_EQ(-ENOSPC, hm_alloc(pool, 3 * page, 0, NULL));
	buf = kfd_dmabuf_new(3 * page);
	if (buf >= 0)
		EXPECT_EQ(-ENOSPC, kfd_pin(pool, buf, 0));
	ASSERT_EQ(0, kfd_query(&q));
	EXPECT_EQ(q0.user_persistent_bytes, q.user_persistent_bytes);
	/* One entry allowed: the second is refused, its bytes not kept. */
	ASSERT_EQ(0, kfd_param_set("max_entries", 1));
	fd = hm_alloc(pool, page, 0, NULL);
	EXPECT_LE(0, fd);
	EXPECT_EQ(-ENOSPC, hm_alloc(pool, page, 0, NULL));
	ASSERT_EQ(0, kfd_param_set("max_entries", entries));
	ASSERT_EQ(0, kfd_query(&q));
	EXPECT_EQ(q0.user_persistent_bytes + page, q.user_persistent_bytes);
	if (fd >= 0)
		close(fd);
	if (buf >= 0)
		close(buf);
	EXPECT_EQ(0, kfd_destroy(pool));
	close(pool);
	close(ctl);
	ASSERT_EQ(0, kfd_query(&q));
	EXPECT_EQ(q0.user_persistent_bytes, q.user_persistent_bytes);
}

/*
 * ALLOC's memory of a persistent pool stays charged to its creator's
 * RLIMIT_MEMLOCK when the creator is gone: the next process of the user
 * has only the rest, until the pool is destroyed.
 */
#define LOCK_STEP	(4u << 20)

static int memlock_limit(void)
{
	struct rlimit rl = { 2 * LOCK_STEP, 2 * LOCK_STEP };

	return setrlimit(RLIMIT_MEMLOCK, &rl);
}

static int memlock_producer(struct shared *sh)
{
	int pool, fd;

	if (memlock_limit())
		return 10;
	pool = kfd_persist_new(PREFIX "memlock", sh->id);
	if (pool < 0)
		return 11;
	fd = hm_alloc(pool, LOCK_STEP, 0, NULL);
	return fd < 0 ? 12 : 0;
}

/* How many LOCK_STEP ALLOCs a new process of the user gets (at most 2). */
static int memlock_next(struct shared *sh)
{
	int pool, fd[2], i, n = 0;

	if (memlock_limit())
		return 10;
	pool = kfd_pool_new(PREFIX "next");
	if (pool < 0)
		return 11;
	for (i = 0; i < 2; i++) {
		fd[i] = hm_alloc(pool, LOCK_STEP, 0, NULL);
		if (fd[i] >= 0)
			n++;
		else if (fd[i] != -ENOMEM)
			return 12;
	}
	return 20 + n;
}

TEST_F(persist, memlock_charge_stays_with_user)
{
	struct shared sh = {};

	ASSERT_EQ(0, as_user_out(USER, memlock_producer, &sh));
	EXPECT_EQ(21, as_user(USER, memlock_next, &sh));
	ASSERT_EQ(0, kfd_destroy_id(sh.id));
	EXPECT_EQ(22, as_user(USER, memlock_next, &sh));
}

/*
 * An importer of USER holds a buffer of USER's persistent pool; root lists
 * the pool with its figures, nobody else sees it, and root destroys it:
 * the importer keeps its bytes, the records and the handle stop.  The
 * importer says "imported" on @up and waits for "destroyed" on @down.
 */
static int holder(struct shared *sh, int up, int down)
{
	struct kfdpool_import im;
	int ctl = kfd_open(), imp;
	char c;

	if (ctl < 0)
		return 10;
	imp = kfd_handle_import(ctl, &sh->import);
	if (imp < 0 || kfd_import(imp, &sh->rec[0], 0, &im))
		return 11;
	/* Tell the parent, and wait for the destruction. */
	if (write(up, "i", 1) != 1 || read(down, &c, 1) != 1)
		return 12;
	if (kfd_dmabuf_check(im.fd, BUF, 30, 0, BUF) != 1)
		return 13;
	if (kfd_import(imp, &sh->rec[1], 0, NULL) != -ENODEV)
		return 14;
	if (kfd_handle_import(ctl, &sh->import) != -ENOENT)
		return 15;
	return 0;
}

static int nobody_looks(struct shared *sh)
{
	return kfd_list_find(sh->id, NULL) == 0 ? 0 : 10;
}

TEST_F(persist, admin_lists_and_destroys_other_users_pool)
{
	struct kfdpool_pool_info info;
	struct shared sh = {};
	int up[2], down[2];
	pid_t pid;
	char c;

	ASSERT_EQ(0, as_user_out(USER, user_produces, &sh));
	ASSERT_EQ(0, pipe(up));
	ASSERT_EQ(0, pipe(down));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		drop_to(USER);
		_exit(holder(&sh, up[1], down[0]));
	}
	ASSERT_EQ(1, read(up[0], &c, 1));

	ASSERT_EQ(1, kfd_list_find(sh.id, &info));
	EXPECT_EQ(USER, info.uid);
	EXPECT_EQ(KFDPOOL_POOL_PERSIST, info.flags);
	EXPECT_EQ(0, info.owner_fds);
	EXPECT_EQ(NBUF, info.records);
	EXPECT_EQ(NBUF * BUF, info.reserved_bytes);
	EXPECT_EQ(1, info.import_fds);
	EXPECT_EQ(BUF, info.imported_bytes);
	EXPECT_STREQ(PREFIX "user", info.name);
	EXPECT_EQ(0, as_user(65534, nobody_looks, &sh));

	ASSERT_EQ(0, kfd_destroy_id(sh.id));
	EXPECT_EQ(0, kfd_list_find(sh.id, NULL));
	EXPECT_EQ(-ENOENT, kfd_destroy_id(sh.id));
	ASSERT_EQ(1, write(down[1], "d", 1));
	EXPECT_EQ(0, reap(pid));
}

/* DESTROY on an owner fd ends the pool now, whatever fds are open. */
TEST_F(persist, destroy_on_owner_fd)
{
	struct kfdpool_pool_stats st;
	struct kfdpool_pool_handle h;
	struct kfdpool_import im;
	struct shared sh;
	int pool, dup_fd, imp;

	pool = produce(PREFIX "destroy", 40, &sh);
	ASSERT_LE(0, pool);
	dup_fd = dup(pool);
	imp = kfd_pool_export(pool);
	ASSERT_LE(0, imp);
	ASSERT_EQ(0, kfd_import(imp, &sh.rec[2], 0, &im));
	EXPECT_EQ(-EPERM, kfd_destroy(imp));

	ASSERT_EQ(0, kfd_destroy(pool));
	EXPECT_EQ(-ENODEV, kfd_stats(dup_fd, &st));
	EXPECT_EQ(-ENODEV, kfd_import(imp, &sh.rec[1], 0, NULL));
	EXPECT_EQ(-ENODEV, kfd_destroy(pool));
	/* Every owner command of a left-over owner fd, not only some. */
	EXPECT_EQ(-ENODEV, kfd_pool_export(pool));
	EXPECT_EQ(-ENODEV, kfd_import_handle(pool, &h));
	EXPECT_EQ(-ENODEV, kfd_owner_handle(pool, &h));
	EXPECT_EQ(-ENODEV, kfd_handle_rotate(pool));
	EXPECT_EQ(0, kfd_list_find(sh.id, NULL));
	/* What the importer holds stays. */
	EXPECT_EQ(1, kfd_dmabuf_check(im.fd, BUF, 42, 0, BUF));
	close(im.fd);
	close(imp);
	close(dup_fd);
	close(pool);

	/* A pool that does not persist is destroyed the same way. */
	pool = kfd_pool_new(PREFIX "plain");
	ASSERT_LE(0, pool);
	imp = kfd_pool_export(pool);
	ASSERT_EQ(0, kfd_destroy(pool));
	EXPECT_EQ(-ENODEV, kfd_stats(imp, &st));
	close(imp);
	close(pool);
}

/* One UNPIN and one DESTROY of the same pool, the DESTROY @delay_ns late. */
struct unpin_race {
	int pool;
	__u32 entry;
	long long delay_ns;
	volatile int go;
	int unpin;
	int destroy;
};

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void *race_destroy(void *arg)
{
	struct unpin_race *r = arg;
	long long until;

	while (!r->go)
		;
	until = now_ns() + r->delay_ns;
	while (now_ns() < until)
		;
	r->destroy = kfd_destroy(r->pool);
	return NULL;
}

/* A pool with one entry of @nrec records: its owner fd, the entry in *@e. */
static int pool_with_records(struct kfdpool_export *ex, unsigned int nrec,
			     __u32 *e)
{
	unsigned int i, n;
	int pool, buf, ret;

	pool = kfd_pool_new(PREFIX "unpin-race");
	if (pool < 0)
		return pool;
	buf = kfd_dmabuf_new(4096);
	if (buf < 0)
		return buf;
	ret = kfd_pin(pool, buf, 0);
	close(buf);
	if (ret < 0)
		return ret;
	*e = ret;
	memset(ex, 0, nrec * sizeof(*ex));
	for (i = 0; i < nrec; i++) {
		ex[i].entry_id = *e;
		ex[i].size = 1;
	}
	for (i = 0; i < nrec; i += n) {
		n = nrec - i < 4096 ? nrec - i : 4096;
		if (kfd_batch(pool, KFDPOOL_IOC_EXPORT_BATCH, ex + i, n,
			      sizeof(*ex)) != (int)n || ex[i + n - 1].status)
			return -EIO;
	}
	return pool;
}

/*
 * UNPIN of an entry with many records frees them with the pool's lock
 * dropped now and then; a DESTROY in one of those gaps ends the pool,
 * freeing the entry and the record table under the UNPIN.  The UNPIN must
 * stop there, not go on in freed memory (KASAN on the debug kernel; a
 * double free of the entry and its charges elsewhere): every figure and
 * dma-buf comes back.  Both run on one CPU, where the UNPIN's
 * cond_resched() lets the woken DESTROY take the lock; the DESTROY is
 * sent later each round, across the UNPIN's length measured in the first.
 */
TEST_F_TIMEOUT(persist, destroy_while_unpinning, 300)
{
	const unsigned int nrec = 65536, rounds = 12;
	struct kfdpool_query q0, q1;
	struct kfdpool_export *ex;
	struct unpin_race r;
	long long t, span = 0;
	unsigned int round, ended = 0;
	cpu_set_t cpu;
	pthread_t th;

	CPU_ZERO(&cpu);
	CPU_SET(sched_getcpu(), &cpu);
	ASSERT_EQ(0, sched_setaffinity(0, sizeof(cpu), &cpu));
	ex = calloc(nrec, sizeof(*ex));
	ASSERT_NE(NULL, ex);
	ASSERT_EQ(0, kfd_query(&q0));
	for (round = 0; round <= rounds; round++) {
		memset(&r, 0, sizeof(r));
		r.pool = pool_with_records(ex, nrec, &r.entry);
		ASSERT_LE(0, r.pool);
		if (!round) {
			t = now_ns();
			ASSERT_EQ(0, kfd_unpin(r.pool, r.entry, NULL));
			span = now_ns() - t;
			close(r.pool);
			continue;
		}
		r.delay_ns = span * (round - 1) / (2 * (rounds - 1));
		ASSERT_EQ(0, pthread_create(&th, NULL, race_destroy, &r));
		r.go = 1;
		r.unpin = kfd_unpin(r.pool, r.entry, NULL);
		ASSERT_EQ(0, pthread_join(th, NULL));
		/* Done before the end, or refused after it. */
		EXPECT_TRUE(r.unpin == 0 || r.unpin == -ENODEV)
			TH_LOG("round %u: UNPIN %d", round, r.unpin);
		EXPECT_EQ(0, r.destroy);
		ended += r.unpin == -ENODEV;
		close(r.pool);
	}
	TH_LOG("UNPIN of %u records: %lld ns; %u of %u rounds ended first",
	       nrec, span, ended, rounds);
	free(ex);
	ASSERT_EQ(0, kfd_query(&q1));
	EXPECT_EQ(q0.user_records, q1.user_records);
}

static void *sweeper(void *arg)
{
	volatile int *stop = arg;

	while (!*stop)
		kfd_persist_sweep(PREFIX "race");
	return NULL;
}

/*
 * An administrator destroying pools by id as soon as they are listed meets
 * persistent pools in the middle of their creation: listed already, not
 * yet holding themselves.  A pool ended then must not start holding itself
 * after its end: no module reference, pool or persistent-pool charge may
 * stay behind (the fixture checks the module's references).
 */
/*
 * An administrator finds a pool by id among many pools, for
 * POOL_DESTROY_ID and for POOL_ADOPT by id.
 */
TEST_F(persist, admin_finds_past_many_pools)
{
	struct kfdpool_pool_info info;
	int fds[300], pool, a, i;
	__u8 id[KFDPOOL_ID_LEN];

	for (i = 0; i < 300; i++) {
		fds[i] = kfd_pool_new(PREFIX "crowd");
		ASSERT_LE(0, fds[i]);
	}
	pool = kfd_persist_new(PREFIX "last", id);
	ASSERT_LE(0, pool);
	close(pool);
	a = kfd_adopt_open(NULL, id);
	EXPECT_LE(0, a);
	if (a >= 0)
		close(a);
	EXPECT_EQ(0, kfd_destroy_id(id));
	EXPECT_EQ(0, kfd_list_find(id, &info));
	for (i = 0; i < 300; i++)
		close(fds[i]);
}

TEST_F_TIMEOUT(persist, admin_destroy_races_create, 300)
{
	volatile int stop = 0;
	struct kfdpool_query q;
	__u8 id[KFDPOOL_ID_LEN];
	int i, fd, made = 0;
	pthread_t th;

	ASSERT_EQ(0, pthread_create(&th, NULL, sweeper, (void *)&stop));
	for (i = 0; i < 3000; i++) {
		fd = kfd_persist_new(PREFIX "race", id);
		if (fd < 0)
			continue;
		made++;
		kfd_destroy(fd);	/* ENODEV when the sweeper was first */
		close(fd);
	}
	stop = 1;
	ASSERT_EQ(0, pthread_join(th, NULL));
	kfd_persist_sweep(PREFIX "race");
	TH_LOG("%d of %d creations returned a pool", made, i);
	ASSERT_EQ(0, kfd_query(&q));
	EXPECT_EQ(0, q.user_persistent);
	EXPECT_EQ(self->refcnt, kfd_module_refcnt());
}

/*
 * A persistent pool whose creator cannot be told of it (the copy back
 * faults) does not stay: no pool, module reference or charge is left, and
 * an adoption whose copy back faults leaves the pool as it was.
 */
TEST_F(persist, copy_back_faults_undo)
{
	struct kfdpool_pool_create *c;
	struct kfdpool_pool_adopt *a;
	struct kfdpool_pool_info info;
	struct kfdpool_pool_handle h;
	struct kfdpool_query q;
	__u8 id[KFDPOOL_ID_LEN];
	int ctl = kfd_open(), pools = kfd_list_count(), pool;
	long refs = kfd_module_refcnt();
	char *page;

	ASSERT_LE(0, ctl);
	page = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, page);
	c = (void *)page;
	memset(c, 0, sizeof(*c));
	c->flags = KFDPOOL_POOL_PERSIST;
	strcpy(c->name, PREFIX "fault");
	ASSERT_EQ(0, mprotect(page, 4096, PROT_READ));
	EXPECT_EQ(-EFAULT, kfd_ioctl(ctl, KFDPOOL_IOC_POOL_CREATE, c));
	EXPECT_EQ(pools, kfd_list_count());
	EXPECT_EQ(refs, kfd_module_refcnt());
	ASSERT_EQ(0, kfd_query(&q));
	EXPECT_EQ(0, q.user_persistent);

	pool = kfd_persist_new(PREFIX "fault", id);
	ASSERT_LE(0, pool);
	ASSERT_EQ(0, kfd_owner_handle(pool, &h));
	close(pool);
	ASSERT_EQ(0, mprotect(page, 4096, PROT_READ | PROT_WRITE));
	a = (void *)page;
	memset(a, 0, sizeof(*a));
	a->handle = h;
	ASSERT_EQ(0, mprotect(page, 4096, PROT_READ));
	EXPECT_EQ(-EFAULT, kfd_ioctl(ctl, KFDPOOL_IOC_POOL_ADOPT, a));
	ASSERT_EQ(1, kfd_list_find(id, &info));
	EXPECT_EQ(0, info.owner_fds);
	pool = kfd_adopt(ctl, &h, NULL);
	EXPECT_LE(0, pool);
	EXPECT_EQ(0, kfd_destroy(pool));
	close(pool);
	munmap(page, 4096);
	close(ctl);
}

/* Every new field, flag and fd, fed a bad value. */
TEST_F(persist, bad_args)
{
	struct kfdpool_pool_create c = { .flags = 0x2 };
	struct kfdpool_handle_export he = {};
	struct kfdpool_pool_adopt a = {};
	struct kfdpool_pool_destroy d = {};
	struct kfdpool_pool_destroy_id di = {};
	struct kfdpool_pool_handle h;
	struct kfdpool_pool_list l = {};
	struct kfdpool_pool_info info[1], pi;
	struct kfdpool_pool_stats st;
	__u8 id[KFDPOOL_ID_LEN], other[KFDPOOL_ID_LEN];
	int ctl = kfd_open(), pool, imp, plain, nul;

	ASSERT_LE(0, ctl);
	/* POOL_CREATE: an unknown flag. */
	EXPECT_EQ(-EINVAL, kfd_ioctl(ctl, KFDPOOL_IOC_POOL_CREATE, &c));
	c.flags = KFDPOOL_POOL_PERSIST | 0x80000000u;
	EXPECT_EQ(-EINVAL, kfd_ioctl(ctl, KFDPOOL_IOC_POOL_CREATE, &c));
	pool = kfd_persist_new(PREFIX "bad", id);
	ASSERT_LE(0, pool);
	imp = kfd_pool_export(pool);
	ASSERT_LE(0, imp);
	plain = kfd_pool_new(PREFIX "plain");
	ASSERT_LE(0, plain);

	/* HANDLE_EXPORT: the owner flag with another policy, a gid, an
	 * unknown flag, a pool that does not persist, an import fd. */
	he.flags = KFDPOOL_HANDLE_EXPORT_OWNER;
	he.policy = KFDPOOL_HANDLE_POLICY_GID;
	EXPECT_EQ(-EINVAL, kfd_ioctl(pool, KFDPOOL_IOC_HANDLE_EXPORT, &he));
	he.policy = KFDPOOL_HANDLE_POLICY_ANY;
	EXPECT_EQ(-EINVAL, kfd_ioctl(pool, KFDPOOL_IOC_HANDLE_EXPORT, &he));
	he.policy = KFDPOOL_HANDLE_POLICY_UID;
	he.gid = 1;
	EXPECT_EQ(-EINVAL, kfd_ioctl(pool, KFDPOOL_IOC_HANDLE_EXPORT, &he));
	he.gid = 0;
	he.flags = 0x2;
	EXPECT_EQ(-EINVAL, kfd_ioctl(pool, KFDPOOL_IOC_HANDLE_EXPORT, &he));
	EXPECT_EQ(-EOPNOTSUPP, kfd_owner_handle(plain, &h));
	EXPECT_EQ(-EPERM, kfd_owner_handle(imp, &h));
	ASSERT_EQ(0, kfd_owner_handle(pool, &h));

	/* POOL_ADOPT: unknown flags, a handle with BY_ID, an id without,
	 * bytes that are no handle, an unknown id, an open owner. */
	a.handle = h;
	a.flags = 0x2;
	EXPECT_EQ(-EINVAL, kfd_ioctl(ctl, KFDPOOL_IOC_POOL_ADOPT, &a));
	a.flags = KFDPOOL_ADOPT_BY_ID;
	memcpy(a.id, id, sizeof(a.id));
	EXPECT_EQ(-EINVAL, kfd_ioctl(ctl, KFDPOOL_IOC_POOL_ADOPT, &a));
	a.flags = 0;
	EXPECT_EQ(-EINVAL, kfd_ioctl(ctl, KFDPOOL_IOC_POOL_ADOPT, &a));
	memset(&a, 0, sizeof(a));
	EXPECT_EQ(-EINVAL, kfd_ioctl(ctl, KFDPOOL_IOC_POOL_ADOPT, &a));
	a.handle = h;
	HND(&a.handle)->pad[3] = 1;
	EXPECT_EQ(-EINVAL, kfd_ioctl(ctl, KFDPOOL_IOC_POOL_ADOPT, &a));
	a.handle = h;
	HND(&a.handle)->policy = KFDPOOL_HANDLE_POLICY_GID;
	EXPECT_EQ(-EINVAL, kfd_ioctl(ctl, KFDPOOL_IOC_POOL_ADOPT, &a));
	a.handle = h;
	HND(&a.handle)->secret[0] ^= 1;
	EXPECT_EQ(-EACCES, kfd_ioctl(ctl, KFDPOOL_IOC_POOL_ADOPT, &a));
	a.handle = h;
	HND(&a.handle)->pool_id[0] ^= 1;
	EXPECT_EQ(-ENOENT, kfd_ioctl(ctl, KFDPOOL_IOC_POOL_ADOPT, &a));
	memcpy(other, id, sizeof(other));
	other[15] ^= 0x80;
	EXPECT_EQ(-ENOENT, kfd_adopt(ctl, NULL, other));
	EXPECT_EQ(-EBUSY, kfd_adopt(ctl, &h, NULL));
	EXPECT_EQ(-EBUSY, kfd_adopt(ctl, NULL, id));
	/* A pool that does not persist is never adopted. */
	ASSERT_EQ(0, kfd_stats(plain, &st));
	EXPECT_EQ(-EOPNOTSUPP, kfd_adopt(ctl, NULL, st.id));
	/* The wrong fd: ADOPT on a pool fd, DESTROY on the device. */
	a.handle = h;
	a.flags = 0;
	EXPECT_EQ(-ENOTTY, kfd_ioctl(pool, KFDPOOL_IOC_POOL_ADOPT, &a));
	EXPECT_EQ(-ENOTTY, kfd_ioctl(ctl, KFDPOOL_IOC_POOL_DESTROY, &d));
	EXPECT_EQ(-ENOTTY, kfd_ioctl(pool, KFDPOOL_IOC_POOL_DESTROY_ID, &di));
	nul = open("/dev/null", O_RDONLY | O_CLOEXEC);
	EXPECT_EQ(-ENOTTY, kfd_ioctl(nul, KFDPOOL_IOC_POOL_ADOPT, &a));
	close(nul);
	EXPECT_EQ(-EBADF, kfd_ioctl(nul, KFDPOOL_IOC_POOL_DESTROY, &d));

	/* POOL_DESTROY: flags, pad, an import fd. */
	d.flags = 1;
	EXPECT_EQ(-EINVAL, kfd_ioctl(pool, KFDPOOL_IOC_POOL_DESTROY, &d));
	d.flags = 0;
	d.pad = 1;
	EXPECT_EQ(-EINVAL, kfd_ioctl(pool, KFDPOOL_IOC_POOL_DESTROY, &d));
	d.pad = 0;
	EXPECT_EQ(-EPERM, kfd_ioctl(imp, KFDPOOL_IOC_POOL_DESTROY, &d));

	/* POOL_DESTROY_ID: flags, pad, an unknown id. */
	memcpy(di.id, id, sizeof(di.id));
	di.flags = 1;
	EXPECT_EQ(-EINVAL, kfd_ioctl(ctl, KFDPOOL_IOC_POOL_DESTROY_ID, &di));
	di.flags = 0;
	di.pad = 1;
	EXPECT_EQ(-EINVAL, kfd_ioctl(ctl, KFDPOOL_IOC_POOL_DESTROY_ID, &di));
	di.pad = 0;
	di.id[0] ^= 1;
	EXPECT_EQ(-ENOENT, kfd_ioctl(ctl, KFDPOOL_IOC_POOL_DESTROY_ID, &di));

	/* POOL_LIST: an element of the first ABI 2 size is too small now. */
	l.pools = (uintptr_t)info;
	l.count = 1;
	l.info_size = offsetof(struct kfdpool_pool_info, flags);
	EXPECT_EQ(-EINVAL, kfd_ioctl(ctl, KFDPOOL_IOC_POOL_LIST, &l));

	/* Everything refused changed nothing. */
	ASSERT_EQ(1, kfd_list_find(id, &pi));
	EXPECT_EQ(1, pi.owner_fds);
	EXPECT_EQ(KFDPOOL_POOL_PERSIST, pi.flags);
	close(plain);
	close(imp);
	EXPECT_EQ(0, kfd_destroy(pool));
	close(pool);
	close(ctl);
}

TEST_HARNESS_MAIN
