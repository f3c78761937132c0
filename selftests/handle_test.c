// SPDX-License-Identifier: GPL-2.0-only
/*
 * Pool handles: a pool shared as 64 bytes between processes that share no
 * fd, the uid/gid/any policies, key rotation, destroyed pools, forged and
 * mutated handles, bad arguments, and the release of every reference.
 *
 * The importer side runs in a freshly exec'd copy of this program
 * ("handle_test --importer ..."), so it inherits no fd of the exporter (all
 * kfdpool and dma-buf fds are O_CLOEXEC; it checks that it holds none),
 * optionally after dropping to another uid and gid.
 */
#include <grp.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <sys/prctl.h>

#include "kselftest_harness.h"
#include "kfdpool_handle_util.h"

#define SZ		(64 * 1024)
#define NOBODY		65534
#define TEST_GID	4242	/* a group nobody is in */
#define N_RANDOM	100000
#define N_MUTATED	100000

/* What the exporter hands the importer: handle, one record, the pattern. */
struct msg {
	struct kfdpool_pool_handle handle;
	struct kfdpool_record rec;
	__u32 entry_size;
	__u32 seed;
};

/* ------------------------------------------------------------------ */
/* The importer (exec'd)                                               */
/* ------------------------------------------------------------------ */

/*
 * handle_test --importer SRC UID GID GROUP EXPECT
 *   SRC: "-" to read the message from stdin (a pipe), else a file path
 *   UID, GID: the ids to switch to, -1 to stay root
 *   GROUP: a supplementary group to keep, -1 for none
 *   EXPECT: the errno the handle import must fail with, 0 for success;
 *     on success the record is imported, its bytes checked, and the whole
 *     buffer rewritten with the pattern of seed + 1 for the exporter to see.
 * Exit status: 0 when everything was as expected, else a code saying what
 * went wrong (printed too).
 */
static int importer(int argc, char **argv)
{
	int uid, gid, group, expect, in, ctl, pfd, fd, ret;
	struct kfdpool_pool_stats st;
	struct kfdpool_import imp;
	struct msg m;

	if (argc != 7)
		return 99;
	uid = atoi(argv[3]);
	gid = atoi(argv[4]);
	group = atoi(argv[5]);
	expect = atoi(argv[6]);

	fd = kfd_find_inherited_fd();
	if (fd >= 0) {
		fprintf(stderr, "importer: inherited fd %d\n", fd);
		return 10;
	}
	in = strcmp(argv[2], "-") ? open(argv[2], O_RDONLY | O_CLOEXEC) : 0;
	if (in < 0 || read(in, &m, sizeof(m)) != sizeof(m))
		return 11;

	if (gid >= 0) {
		gid_t g = group;

		if (setgroups(group >= 0 ? 1 : 0, &g) || setgid(gid))
			return 12;
	}
	if (uid >= 0 && setuid(uid))
		return 13;

	ctl = kfd_open();
	if (ctl < 0) {
		fprintf(stderr, "importer: open: %s\n", strerror(-ctl));
		return 14;
	}
	pfd = kfd_handle_import(ctl, &m.handle);
	close(ctl);
	if (expect) {
		if (pfd == -expect)
			return 0;
		fprintf(stderr, "importer: import gave %d, want %d\n", pfd,
			-expect);
		return 15;
	}
	if (pfd < 0) {
		fprintf(stderr, "importer: import: %s\n", strerror(-pfd));
		return 16;
	}
	if (!kfd_cloexec(pfd))
		return 17;
	if (kfd_stats(pfd, &st) || st.mode != KFDPOOL_MODE_IMPORT ||
	    memcmp(st.id, HND(&m.handle)->pool_id, KFDPOOL_ID_LEN))
		return 18;

	ret = kfd_import(pfd, &m.rec, 0, &imp);
	if (ret) {
		fprintf(stderr, "importer: record: %s\n", strerror(-ret));
		return 19;
	}
	if (kfd_dmabuf_check(imp.fd, m.entry_size, m.seed, imp.offset,
			     imp.size) != 1)
		return 20;
	if (kfd_dmabuf_fill(imp.fd, m.entry_size, m.seed + 1))
		return 21;
	close(imp.fd);
	close(pfd);
	return 0;
}

/*
 * Run the importer in a new process.  @path NULL: the message goes through
 * a pipe; else it is written to the file @path first.  Returns the
 * importer's exit status, or 200 + something when it could not be run.
 */
static int run_importer(const struct msg *m, const char *path, int uid,
			int gid, int group, int expect)
{
	char a_uid[16], a_gid[16], a_group[16], a_expect[16];
	int p[2], status;
	pid_t pid;

	if (path) {
		int f = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
			     0644);

		if (f < 0 || write(f, m, sizeof(*m)) != sizeof(*m))
			return 201;
		close(f);
	}
	if (pipe2(p, O_CLOEXEC))
		return 202;
	snprintf(a_uid, sizeof(a_uid), "%d", uid);
	snprintf(a_gid, sizeof(a_gid), "%d", gid);
	snprintf(a_group, sizeof(a_group), "%d", group);
	snprintf(a_expect, sizeof(a_expect), "%d", expect);

	pid = fork();
	if (pid < 0)
		return 203;
	if (pid == 0) {
		char *argv[] = { "handle_test", "--importer",
				 (char *)(path ? path : "-"), a_uid, a_gid,
				 a_group, a_expect, NULL };

		/* dup2 clears close-on-exec on stdin only. */
		if (dup2(p[0], 0) < 0)
			_exit(204);
		execv("/proc/self/exe", argv);
		_exit(205);
	}
	close(p[0]);
	if (!path && write(p[1], m, sizeof(*m)) != sizeof(*m)) {
		close(p[1]);
		waitpid(pid, &status, 0);
		return 206;
	}
	close(p[1]);
	if (waitpid(pid, &status, 0) != pid)
		return 207;
	if (!WIFEXITED(status))
		return 208;
	return WEXITSTATUS(status);
}

/* ------------------------------------------------------------------ */
/* The fixture: a pool with one filled, pinned and exported buffer     */
/* ------------------------------------------------------------------ */

FIXTURE(handle) {
	int baseline;
	int pools;
	int users;
	int ctl;
	int pool;
	int buf;
	__u8 id[KFDPOOL_ID_LEN];
	struct msg m;
	mode_t dev_mode;
	int any_before;		/* allow_any_handles as found, -1 unknown */
};

FIXTURE_SETUP(handle)
{
	struct kfdpool_query q;
	struct stat sb;
	int ret, entry;

	self->ctl = self->pool = self->buf = -1;
	self->baseline = self->pools = -1;
	self->dev_mode = 0;
	self->any_before = -1;
	ret = kfd_query(&q);
	if (ret)
		SKIP(return, "/dev/kfdpool: %s", strerror(-ret));
	if (!(q.features & KFDPOOL_FEATURE_POOL_HANDLE))
		SKIP(return, "module without KFDPOOL_FEATURE_POOL_HANDLE");
	self->buf = kfd_dmabuf_new(SZ);
	if (self->buf < 0)
		SKIP(return, "no dma-buf exporter: %s", strerror(-self->buf));
	close(self->buf);
	self->buf = -1;
	self->baseline = kfd_dmabuf_count(kfd_dmabuf_count_now());
	if (self->baseline < 0)
		SKIP(return, "no %s: cannot count dma-bufs", KFD_BUFINFO);
	self->pools = kfd_pool_count();
	ASSERT_LE(0, self->pools);
	self->users = kfd_debugfs_lines(KFD_DEBUGFS_USERS);

	/* Let other uids open the device for the policy tests. */
	ASSERT_EQ(0, stat(KFD_DEV, &sb));
	self->dev_mode = sb.st_mode & 07777;
	ASSERT_EQ(0, chmod(KFD_DEV, 0666));
	/* The ANY policy is the administrator's to allow: these tests do. */
	self->any_before = kfd_any_handles(true);
	ASSERT_LE(0, self->any_before);

	self->ctl = kfd_open();
	ASSERT_LE(0, self->ctl);
	self->pool = kfd_pool_create(self->ctl, 0, "handle",
				     KFDPOOL_HANDLE_TYPES_ALL, self->id);
	ASSERT_LE(0, self->pool);
	self->buf = kfd_dmabuf_new(SZ);
	ASSERT_LE(0, self->buf);
	ASSERT_EQ(0, kfd_dmabuf_fill(self->buf, SZ, 1234));
	entry = kfd_pin(self->pool, self->buf, 0);
	ASSERT_LT(0, entry);
	ASSERT_EQ(0, kfd_export(self->pool, entry, 4096, 8192, &self->m.rec));
	self->m.entry_size = SZ;
	self->m.seed = 1234;
	ASSERT_EQ(0, kfd_handle_export(self->pool, KFDPOOL_HANDLE_POLICY_UID, 0,
				       &self->m.handle));
}

FIXTURE_TEARDOWN(handle)
{
	if (self->dev_mode)
		chmod(KFD_DEV, self->dev_mode);
	if (self->any_before >= 0)
		kfd_any_handles(self->any_before);
	if (self->buf >= 0)
		close(self->buf);
	if (self->pool >= 0)
		close(self->pool);
	if (self->ctl >= 0)
		close(self->ctl);
	if (self->baseline >= 0 && self->pools >= 0) {
		EXPECT_EQ(self->baseline, kfd_dmabuf_count(self->baseline));
		EXPECT_EQ(self->pools, kfd_pool_count_wait(self->pools));
		/* Every pool struct was freed: a lookup kept no reference. */
		EXPECT_EQ(self->users,
			  kfd_debugfs_lines_wait(KFD_DEBUGFS_USERS, self->users));
	}
}

/* ------------------------------------------------------------------ */
/* Sharing without fds                                                  */
/* ------------------------------------------------------------------ */

TEST_F(handle, query_feature)
{
	struct kfdpool_query q;

	ASSERT_EQ(0, kfd_query(&q));
	EXPECT_TRUE(q.features & KFDPOOL_FEATURE_POOL_HANDLE);
}

TEST_F(handle, export_fields)
{
	struct kfdpool_pool_handle *h = &self->m.handle;
	struct kfdpool_pool_handle h2;
	static const __u8 zero[16];

	EXPECT_EQ(0, memcmp(HND(h)->pool_id, self->id, KFDPOOL_ID_LEN));
	EXPECT_EQ(KFDPOOL_HANDLE_MAGIC, HND(h)->magic);
	EXPECT_EQ(KFDPOOL_HANDLE_POLICY_UID, HND(h)->policy);
	EXPECT_EQ(0, HND(h)->gid);
	EXPECT_EQ(geteuid(), HND(h)->uid);
	EXPECT_NE(0, memcmp(HND(h)->secret, zero, sizeof(HND(h)->secret)));
	EXPECT_EQ(0, memcmp(HND(h)->pad, zero, sizeof(HND(h)->pad)));
	/* Same key, same fields: the same handle; no state per handle. */
	ASSERT_EQ(0, kfd_handle_export(self->pool, KFDPOOL_HANDLE_POLICY_UID,
				       0, &h2));
	EXPECT_EQ(0, memcmp(h, &h2, sizeof(h2)));
	/* Another policy: another secret. */
	ASSERT_EQ(0, kfd_handle_export(self->pool, KFDPOOL_HANDLE_POLICY_ANY,
				       0, &h2));
	EXPECT_NE(0, memcmp(HND(h)->secret, HND(&h2)->secret, sizeof(HND(&h2)->secret)));
	ASSERT_EQ(0, kfd_handle_export(self->pool, KFDPOOL_HANDLE_POLICY_GID,
				       TEST_GID, &h2));
	EXPECT_EQ(TEST_GID, HND(&h2)->gid);
	EXPECT_EQ(KFDPOOL_HANDLE_POLICY_GID, HND(&h2)->policy);
}

/* The handle and record travel through a pipe to an exec'd process. */
TEST_F(handle, exec_importer_pipe)
{
	ASSERT_EQ(0, run_importer(&self->m, NULL, -1, -1, -1, 0));
	/* The importer rewrote the buffer: we see its bytes. */
	EXPECT_EQ(1, kfd_dmabuf_check(self->buf, SZ, self->m.seed + 1, 0, SZ));
}

/* ... or through a file. */
TEST_F(handle, exec_importer_file)
{
	char path[] = "/tmp/kfdpool-handle-XXXXXX";
	int f = mkstemp(path);

	ASSERT_LE(0, f);
	close(f);
	EXPECT_EQ(0, run_importer(&self->m, path, -1, -1, -1, 0));
	unlink(path);
	EXPECT_EQ(1, kfd_dmabuf_check(self->buf, SZ, self->m.seed + 1, 0, SZ));
}

/* The import fd from a handle is a full import fd; it counts. */
TEST_F(handle, import_fd_properties)
{
	struct kfdpool_pool_stats st;
	struct kfdpool_pool_export pe = {};
	struct kfdpool_handle_export he = {};
	struct kfdpool_handle_rotate hr = {};
	struct kfdpool_import imp;
	int a, b;

	a = kfd_handle_import(self->ctl, &self->m.handle);
	ASSERT_LE(0, a);
	b = kfd_handle_import(self->ctl, &self->m.handle);
	ASSERT_LE(0, b);
	EXPECT_NE(a, b);
	EXPECT_TRUE(kfd_cloexec(a));
	ASSERT_EQ(0, kfd_stats(a, &st));
	EXPECT_EQ(KFDPOOL_MODE_IMPORT, st.mode);
	EXPECT_EQ(0, memcmp(st.id, self->id, KFDPOOL_ID_LEN));
	EXPECT_STREQ("handle", st.name);
	EXPECT_EQ(2, st.import_fds);

	/* Owner-only commands are refused on it. */
	EXPECT_EQ(-1, ioctl(a, KFDPOOL_IOC_HANDLE_EXPORT, &he));
	EXPECT_EQ(EPERM, errno);
	EXPECT_EQ(-1, ioctl(a, KFDPOOL_IOC_HANDLE_ROTATE, &hr));
	EXPECT_EQ(EPERM, errno);
	EXPECT_EQ(-1, ioctl(a, KFDPOOL_IOC_POOL_EXPORT, &pe));
	EXPECT_EQ(EPERM, errno);

	/* It imports the record; the bytes are the exporter's. */
	ASSERT_EQ(0, kfd_import(a, &self->m.rec, 0, &imp));
	EXPECT_EQ(1, kfd_dmabuf_check(imp.fd, SZ, self->m.seed, imp.offset,
				      imp.size));
	close(imp.fd);
	close(a);
	close(b);
	ASSERT_EQ(0, kfd_stats(self->pool, &st));
	EXPECT_EQ(0, st.import_fds);
	EXPECT_EQ(0, st.imported_bytes);
}

/* ------------------------------------------------------------------ */
/* Policies                                                             */
/* ------------------------------------------------------------------ */

TEST_F(handle, uid_policy_refuses_other_uid)
{
	/* nobody, no groups: refused by the default policy. */
	EXPECT_EQ(0, run_importer(&self->m, NULL, NOBODY, NOBODY, -1, EACCES));
	/* Even in the group the pool is shared with under another handle. */
	EXPECT_EQ(0, run_importer(&self->m, NULL, NOBODY, NOBODY, TEST_GID,
				  EACCES));
	/* Another uid, root's groups: still refused (uid, not gid, counts). */
	EXPECT_EQ(0, run_importer(&self->m, NULL, NOBODY, 0, -1, EACCES));
	/* The same uid passes (the control). */
	EXPECT_EQ(0, run_importer(&self->m, NULL, -1, -1, -1, 0));
}

/*
 * The UID policy admits by the effective uid, as every permission check:
 * a set-uid process whose real uid is another's is admitted, one whose
 * effective uid is another's is not.
 */
static int import_as(const struct kfdpool_pool_handle *h, uid_t ruid,
		     uid_t euid)
{
	int ctl, fd;

	if (setresuid(ruid, euid, 0))
		return 100;
	ctl = kfd_open();
	if (ctl < 0)
		return 101;
	fd = kfd_handle_import(ctl, h);
	if (fd >= 0)
		close(fd);
	return fd >= 0 ? 0 : fd == -EACCES ? 1 : 102;
}

TEST_F(handle, uid_policy_counts_the_euid)
{
	int st, i;
	pid_t pid;
	static const uid_t ids[2][2] = { { NOBODY, 0 }, { 0, NOBODY } };

	for (i = 0; i < 2; i++) {
		pid = fork();
		ASSERT_LE(0, pid);
		if (!pid)
			_exit(import_as(&self->m.handle, ids[i][0], ids[i][1]));
		ASSERT_EQ(pid, waitpid(pid, &st, 0));
		ASSERT_TRUE(WIFEXITED(st));
		/* Exported as euid 0: admitted exactly when the euid is 0. */
		EXPECT_EQ(i, WEXITSTATUS(st)) TH_LOG("ruid %u euid %u",
						   ids[i][0], ids[i][1]);
	}
}

TEST_F(handle, gid_policy)
{
	struct msg m = self->m;

	ASSERT_EQ(0, kfd_handle_export(self->pool, KFDPOOL_HANDLE_POLICY_GID,
				       TEST_GID, &m.handle));
	/* A member through a supplementary group is admitted ... */
	EXPECT_EQ(0, run_importer(&m, NULL, NOBODY, NOBODY, TEST_GID, 0));
	EXPECT_EQ(1, kfd_dmabuf_check(self->buf, SZ, m.seed + 1, 0, SZ));
	/* ... so is one whose primary group it is ... */
	m.seed = m.seed + 1;
	EXPECT_EQ(0, run_importer(&m, NULL, NOBODY, TEST_GID, -1, 0));
	EXPECT_EQ(1, kfd_dmabuf_check(self->buf, SZ, m.seed + 1, 0, SZ));
	/* ... a non-member is not, nor is the exporter's uid outside it. */
	EXPECT_EQ(0, run_importer(&m, NULL, NOBODY, NOBODY, -1, EACCES));
	EXPECT_EQ(0, run_importer(&m, NULL, 0, NOBODY, -1, EACCES));
	/* The handle cannot be retargeted at another group. */
	HND(&m.handle)->gid = NOBODY;
	EXPECT_EQ(0, run_importer(&m, NULL, NOBODY, NOBODY, -1, EACCES));
}

TEST_F(handle, any_policy)
{
	struct msg m = self->m;

	ASSERT_EQ(0, kfd_handle_export(self->pool, KFDPOOL_HANDLE_POLICY_ANY,
				       0, &m.handle));
	EXPECT_EQ(0, run_importer(&m, NULL, NOBODY, NOBODY, -1, 0));
	EXPECT_EQ(1, kfd_dmabuf_check(self->buf, SZ, m.seed + 1, 0, SZ));
}

/*
 * ANY handles are bearer tokens: off unless the administrator turns on
 * allow_any_handles.  Off, ANY exports and imports of ANY handles given
 * out before fail with EPERM, while the other policies and the import
 * fds already made work on; on again, the old handles import again.
 */
TEST_F(handle, any_policy_needs_the_administrator)
{
	struct kfdpool_pool_handle any, h2;
	struct msg m = self->m;
	int imp, fd;

	/* The module's default, as loaded for this run. */
	EXPECT_EQ(0, self->any_before);
	ASSERT_EQ(0, kfd_handle_export(self->pool, KFDPOOL_HANDLE_POLICY_ANY,
				       0, &any));
	imp = kfd_handle_import(self->ctl, &any);
	ASSERT_LE(0, imp);

	ASSERT_EQ(1, kfd_any_handles(false));
	EXPECT_EQ(-EPERM, kfd_handle_export(self->pool,
					    KFDPOOL_HANDLE_POLICY_ANY, 0, &h2));
	EXPECT_EQ(-EPERM, kfd_handle_import(self->ctl, &any));
	m.handle = any;
	EXPECT_EQ(0, run_importer(&m, NULL, NOBODY, NOBODY, -1, EPERM));
	/* EPERM comes before the pool lookup: a forged ANY handle too. */
	HND(&any)->pool_id[0] ^= 1;
	EXPECT_EQ(-EPERM, kfd_handle_import(self->ctl, &any));
	HND(&any)->pool_id[0] ^= 1;
	/* The other policies are not affected. */
	fd = kfd_handle_import(self->ctl, &self->m.handle);
	EXPECT_LE(0, fd);
	if (fd >= 0)
		close(fd);
	EXPECT_EQ(0, kfd_handle_export(self->pool, KFDPOOL_HANDLE_POLICY_GID,
				       TEST_GID, &h2));
	/* What was imported stays imported. */
	EXPECT_EQ(0, kfd_import(imp, &self->m.rec, 0, NULL));
	EXPECT_EQ(0, kfd_release(imp, REC(&self->m.rec)->entry_id));
	close(imp);

	ASSERT_EQ(0, kfd_any_handles(true));
	fd = kfd_handle_import(self->ctl, &any);
	EXPECT_LE(0, fd);
	if (fd >= 0)
		close(fd);
}

/* The policy is inside the MAC: a holder cannot widen it. */
TEST_F(handle, policy_cannot_be_widened)
{
	struct kfdpool_pool_handle h = self->m.handle;
	struct msg m = self->m;

	HND(&h)->policy = KFDPOOL_HANDLE_POLICY_ANY;
	EXPECT_EQ(-EACCES, kfd_handle_import(self->ctl, &h));
	m.handle = h;
	EXPECT_EQ(0, run_importer(&m, NULL, NOBODY, NOBODY, -1, EACCES));
	/* Nor claim another uid. */
	h = self->m.handle;
	HND(&h)->uid = NOBODY;
	m.handle = h;
	EXPECT_EQ(0, run_importer(&m, NULL, NOBODY, NOBODY, -1, EACCES));
	/* Nor turn a uid handle into a group handle. */
	h = self->m.handle;
	HND(&h)->policy = KFDPOOL_HANDLE_POLICY_GID;
	HND(&h)->gid = TEST_GID;
	m.handle = h;
	EXPECT_EQ(0, run_importer(&m, NULL, NOBODY, NOBODY, TEST_GID, EACCES));
}

/*
 * In a child: become @outer (a uid, -1 to stay root), enter a new user
 * namespace in which our euid is numbered @inner, and import @h.  0 if it
 * imported, the errno if not, 200 when user namespaces are not available.
 */
static int userns_import(const struct kfdpool_pool_handle *h, int outer,
			 unsigned int inner)
{
	int status;
	pid_t pid;

	pid = fork();
	if (pid < 0)
		return 201;
	if (pid == 0) {
		char map[64];
		int f, n, ctl, fd;

		if (outer >= 0 &&
		    (setgroups(0, NULL) || setgid(outer) || setuid(outer)))
			_exit(202);
		/* setuid() made us undumpable: /proc/self would be root's. */
		prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
		n = snprintf(map, sizeof(map), "%u %u 1\n", inner, geteuid());
		if (unshare(CLONE_NEWUSER))
			_exit(200);
		f = open("/proc/self/uid_map", O_WRONLY | O_CLOEXEC);
		if (f < 0 || write(f, map, n) != n)
			_exit(203);
		close(f);
		if (geteuid() != inner)
			_exit(204);
		ctl = kfd_open();
		if (ctl < 0)
			_exit(205);
		fd = kfd_handle_import(ctl, h);
		_exit(fd >= 0 ? 0 : -fd);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return 206;
	return WEXITSTATUS(status);
}

/*
 * Ids in handles are kernel-wide: the exporter's user under another number
 * in a user namespace is admitted; a container's "root" that is another
 * user of the host is not.
 */
TEST_F(handle, user_namespaces)
{
	struct kfdpool_pool_handle any;
	int ret;

	ret = userns_import(&self->m.handle, -1, 5000);
	if (ret == 200)
		SKIP(return, "no user namespaces");
	EXPECT_EQ(0, ret);
	ret = userns_import(&self->m.handle, 1000, 0);
	if (ret == 200)
		SKIP(return, "no unprivileged user namespaces");
	EXPECT_EQ(EACCES, ret);
	ret = userns_import(&self->m.handle, NOBODY, 0);
	EXPECT_EQ(EACCES, ret);
	ASSERT_EQ(0, kfd_handle_export(self->pool, KFDPOOL_HANDLE_POLICY_ANY,
				       0, &any));
	EXPECT_EQ(0, userns_import(&any, 1000, 0));
}

/*
 * A process in a new user namespace: the maps its parent (root) writes and
 * the ids it takes inside.  Without @uid_map, no namespace: the ids are
 * taken in the initial one.
 */
struct ns_spec {
	const char *uid_map;
	const char *gid_map;
	unsigned int uid, gid;
	int ngroups;
	gid_t groups[2];
};

static int write_map(pid_t pid, const char *file, const char *map)
{
	char path[64];
	int f, ok;

	snprintf(path, sizeof(path), "/proc/%d/%s", pid, file);
	f = open(path, O_WRONLY | O_CLOEXEC);
	if (f < 0)
		return -1;
	ok = write(f, map, strlen(map)) == (ssize_t)strlen(map);
	close(f);
	return ok ? 0 : -1;
}

/*
 * Run @fn(@arg) in a child set up as @ns says.  Returns what @fn returned
 * (0..199), 200 when user namespaces are not available, 201.. when the
 * set-up failed.
 */
static int in_userns(const struct ns_spec *ns, int (*fn)(void *), void *arg)
{
	int ready[2], go[2], status;
	char c = 0;
	pid_t pid;

	if (pipe2(ready, O_CLOEXEC))
		return 201;
	if (pipe2(go, O_CLOEXEC))
		return 202;
	pid = fork();
	if (pid < 0)
		return 203;
	if (pid == 0) {
		close(ready[0]);
		close(go[1]);
		if (ns->uid_map && unshare(CLONE_NEWUSER))
			_exit(200);
		if (write(ready[1], "r", 1) != 1 || read(go[0], &c, 1) != 1)
			_exit(204);
		if (setgroups(ns->ngroups, ns->groups) ||
		    setresgid(ns->gid, ns->gid, ns->gid) ||
		    setresuid(ns->uid, ns->uid, ns->uid))
			_exit(205);
		_exit(fn(arg));
	}
	close(ready[1]);
	close(go[0]);
	if (read(ready[0], &c, 1) == 1) {
		if (ns->uid_map && (write_map(pid, "uid_map", ns->uid_map) ||
				    write_map(pid, "gid_map", ns->gid_map)))
			kill(pid, SIGKILL);
		else if (write(go[1], "g", 1) != 1)
			kill(pid, SIGKILL);
	}
	close(ready[0]);
	close(go[1]);
	if (waitpid(pid, &status, 0) != pid)
		return 206;
	if (!WIFEXITED(status))
		return 207;
	return WEXITSTATUS(status);
}

/* What the exporter in a namespace sends back. */
struct ns_export {
	int sock;
	struct kfdpool_pool_handle uid_h, gid_h;
};

#define NS_GID		2000	/* the exporter's group, as its namespace says */

/* Make a pool, export a UID and a GID handle, send them and the pool fd. */
static int ns_exporter(void *arg)
{
	struct ns_export *x = arg;
	int ctl, pool;

	ctl = kfd_open();
	if (ctl < 0)
		return 10;
	pool = kfd_pool_create(ctl, 0, "userns", KFDPOOL_HANDLE_TYPE_FABRIC,
			       NULL);
	if (pool < 0)
		return 11;
	if (kfd_handle_export(pool, KFDPOOL_HANDLE_POLICY_UID, 0, &x->uid_h) ||
	    kfd_handle_export(pool, KFDPOOL_HANDLE_POLICY_GID, NS_GID,
			      &x->gid_h))
		return 12;
	if (kfd_send(x->sock, pool, x, sizeof(*x)))
		return 13;
	return 0;
}

/* Import the handle @arg: 0, or the errno. */
static int ns_importer(void *arg)
{
	const struct kfdpool_pool_handle *h = arg;
	struct kfdpool_pool_stats st;
	int ctl, fd;

	ctl = kfd_open();
	if (ctl < 0)
		return 100;
	fd = kfd_handle_import(ctl, h);
	if (fd < 0)
		return -fd;
	if (kfd_stats(fd, &st) || st.mode != KFDPOOL_MODE_IMPORT)
		return 101;
	return 0;
}

/*
 * Handles across user namespaces.  The exporter is uid 1000, gid 1000, in
 * group 2000 of a namespace mapping 0..65535 to 100000..165535 on the host:
 * its handles carry those numbers (its own), and admit by host identity:
 * host uid 101000 under any number in any namespace, members of host
 * group 102000 however they are numbered; never the same numbers mapped to
 * other host ids.  Altering a handle's uid, gid or policy fails.
 */
TEST_F(handle, userns_numbering)
{
	static const struct ns_spec exporter = {
		"0 100000 65536\n", "0 100000 65536\n", 1000, 1000, 1,
		{ NS_GID } };
	/* The exporter's user, as uid 7 of another namespace. */
	static const struct ns_spec same_user = {
		"7 101000 1\n", "7 101000 1\n", 7, 7, 0, {} };
	/* Uid 1000 too, but another host user. */
	static const struct ns_spec same_number = {
		"1000 100500 1\n", "1000 100500 1\n", 1000, 1000, 0, {} };
	static const struct ns_spec host_user = {
		NULL, NULL, 101000, 101000, 0, {} };
	/* In host group 102000, which this namespace numbers 3000. */
	static const struct ns_spec member = {
		"0 100999 1\n", "0 100999 1\n3000 102000 1\n", 0, 0, 1,
		{ 3000 } };
	/* In a group numbered 2000 here, another host group. */
	static const struct ns_spec other_group = {
		"0 100999 1\n", "0 100999 1\n2000 102001 1\n", 0, 0, 1,
		{ NS_GID } };
	static const struct ns_spec host_member = {
		NULL, NULL, NOBODY, NOBODY, 1, { 102000 } };
	struct kfdpool_pool_handle h;
	struct ns_export x = {};
	int sv[2], pool = -1, ret;

	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv));
	x.sock = sv[1];
	ret = in_userns(&exporter, ns_exporter, &x);
	if (ret == 200)
		SKIP(return, "no user namespaces");
	ASSERT_EQ(0, ret);
	ASSERT_EQ(0, kfd_recv(sv[0], &pool, &x, sizeof(x)));
	ASSERT_LE(0, pool);
	close(sv[0]);
	close(sv[1]);

	/* The exporter saw its own numbering, not the host's. */
	EXPECT_EQ(1000, HND(&x.uid_h)->uid);
	EXPECT_EQ(0, HND(&x.uid_h)->gid);
	EXPECT_EQ(1000, HND(&x.gid_h)->uid);
	EXPECT_EQ(NS_GID, HND(&x.gid_h)->gid);

	EXPECT_EQ(0, in_userns(&same_user, ns_importer, &x.uid_h));
	EXPECT_EQ(0, in_userns(&host_user, ns_importer, &x.uid_h));
	EXPECT_EQ(EACCES, in_userns(&same_number, ns_importer, &x.uid_h));
	EXPECT_EQ(EACCES, in_userns(&member, ns_importer, &x.uid_h));
	EXPECT_EQ(-EACCES, kfd_handle_import(self->ctl, &x.uid_h));

	EXPECT_EQ(0, in_userns(&member, ns_importer, &x.gid_h));
	EXPECT_EQ(0, in_userns(&host_member, ns_importer, &x.gid_h));
	EXPECT_EQ(EACCES, in_userns(&other_group, ns_importer, &x.gid_h));
	EXPECT_EQ(EACCES, in_userns(&same_user, ns_importer, &x.gid_h));
	EXPECT_EQ(-EACCES, kfd_handle_import(self->ctl, &x.gid_h));

	/* Altered fields, presented by someone the original admits. */
	h = x.uid_h;
	HND(&h)->uid = 1001;
	EXPECT_EQ(EACCES, in_userns(&same_user, ns_importer, &h));
	HND(&h)->uid = 101000;		/* the host's number for the same user */
	EXPECT_EQ(EACCES, in_userns(&same_user, ns_importer, &h));
	h = x.uid_h;
	HND(&h)->policy = KFDPOOL_HANDLE_POLICY_ANY;
	EXPECT_EQ(EACCES, in_userns(&same_user, ns_importer, &h));
	HND(&h)->policy = KFDPOOL_HANDLE_POLICY_GID;
	HND(&h)->gid = NS_GID;
	EXPECT_EQ(EACCES, in_userns(&member, ns_importer, &h));
	h = x.uid_h;
	HND(&h)->gid = NS_GID;		/* a gid under the UID policy: malformed */
	EXPECT_EQ(EINVAL, in_userns(&same_user, ns_importer, &h));
	h = x.gid_h;
	HND(&h)->gid = 3000;		/* the member's own number for the group */
	EXPECT_EQ(EACCES, in_userns(&member, ns_importer, &h));
	HND(&h)->gid = 102000;		/* the host's */
	EXPECT_EQ(EACCES, in_userns(&member, ns_importer, &h));
	h = x.gid_h;
	HND(&h)->uid = 7;
	EXPECT_EQ(EACCES, in_userns(&member, ns_importer, &h));
	h = x.gid_h;
	HND(&h)->policy = KFDPOOL_HANDLE_POLICY_UID;
	HND(&h)->gid = 0;
	EXPECT_EQ(EACCES, in_userns(&same_user, ns_importer, &h));

	close(pool);
}

/* ------------------------------------------------------------------ */
/* Rotation and destruction                                             */
/* ------------------------------------------------------------------ */

TEST_F(handle, rotate)
{
	struct kfdpool_pool_handle any, gid, fresh;
	struct kfdpool_import imp;
	int before, after;

	ASSERT_EQ(0, kfd_handle_export(self->pool, KFDPOOL_HANDLE_POLICY_ANY,
				       0, &any));
	ASSERT_EQ(0, kfd_handle_export(self->pool, KFDPOOL_HANDLE_POLICY_GID,
				       0, &gid));
	before = kfd_handle_import(self->ctl, &self->m.handle);
	ASSERT_LE(0, before);

	ASSERT_EQ(0, kfd_handle_rotate(self->pool));

	/* Every handle given out before is dead, whatever its policy. */
	EXPECT_EQ(-EACCES, kfd_handle_import(self->ctl, &self->m.handle));
	EXPECT_EQ(-EACCES, kfd_handle_import(self->ctl, &any));
	EXPECT_EQ(-EACCES, kfd_handle_import(self->ctl, &gid));
	EXPECT_EQ(0, run_importer(&self->m, NULL, -1, -1, -1, EACCES));

	/* The import fd obtained before keeps working. */
	ASSERT_EQ(0, kfd_import(before, &self->m.rec, 0, &imp));
	EXPECT_EQ(1, kfd_dmabuf_check(imp.fd, SZ, self->m.seed, imp.offset,
				      imp.size));
	close(imp.fd);

	/* A handle of the new key imports, and differs from the old one. */
	ASSERT_EQ(0, kfd_handle_export(self->pool, KFDPOOL_HANDLE_POLICY_UID,
				       0, &fresh));
	EXPECT_NE(0, memcmp(HND(&fresh)->secret, HND(&self->m.handle)->secret,
			    sizeof(HND(&fresh)->secret)));
	after = kfd_handle_import(self->ctl, &fresh);
	EXPECT_LE(0, after);
	if (after >= 0)
		close(after);
	close(before);

	/* Rotating twice: the fresh handle dies as well. */
	ASSERT_EQ(0, kfd_handle_rotate(self->pool));
	EXPECT_EQ(-EACCES, kfd_handle_import(self->ctl, &fresh));
}

TEST_F(handle, destroyed_pool)
{
	struct kfdpool_pool_handle any;
	int imp, ret;

	ASSERT_EQ(0, kfd_handle_export(self->pool, KFDPOOL_HANDLE_POLICY_ANY,
				       0, &any));
	imp = kfd_handle_import(self->ctl, &self->m.handle);
	ASSERT_LE(0, imp);

	/* The owner's fd is gone: the pool ended, import fd or not. */
	close(self->pool);
	self->pool = -1;
	EXPECT_EQ(self->pools, kfd_pool_count_wait(self->pools));
	ret = kfd_handle_import(self->ctl, &any);
	EXPECT_EQ(-ENOENT, ret);
	if (ret >= 0)
		close(ret);
	close(imp);
	EXPECT_EQ(-ENOENT, kfd_handle_import(self->ctl, &self->m.handle));
	EXPECT_EQ(-ENOENT, kfd_handle_import(self->ctl, &any));
	EXPECT_EQ(0, run_importer(&self->m, NULL, -1, -1, -1, ENOENT));
}

/*
 * Imports racing with the pool's last close: once an import saw -ENOENT,
 * the pool is gone for good; none succeeds after.  Each round a thread
 * imports the handle in a loop, closing each fd at once, while this thread
 * closes the last other fd.
 */
struct race {
	int ctl;
	struct kfdpool_pool_handle h;
	int ok_after_enoent;
	int other;
	long imports;
};

static void *race_importer(void *arg)
{
	struct race *r = arg;
	bool gone = false;

	for (;;) {
		int fd = kfd_handle_import(r->ctl, &r->h);

		if (fd >= 0) {
			r->imports++;
			if (gone)
				r->ok_after_enoent++;
			close(fd);
			continue;
		}
		if (fd != -ENOENT) {
			r->other++;
			return NULL;
		}
		if (gone)
			return NULL;
		gone = true;
	}
}

TEST_F(handle, import_races_last_close)
{
	long total = 0;
	int round;

	for (round = 0; round < 200; round++) {
		struct race r = { .ctl = self->ctl };
		pthread_t t;
		int pool;

		pool = kfd_pool_create(self->ctl, 0, "race",
				       KFDPOOL_HANDLE_TYPE_FABRIC, NULL);
		ASSERT_LE(0, pool);
		ASSERT_EQ(0, kfd_handle_export(pool, KFDPOOL_HANDLE_POLICY_UID,
					       0, &r.h));
		ASSERT_EQ(0, pthread_create(&t, NULL, race_importer, &r));
		if (round & 1)
			usleep(round);
		close(pool);
		ASSERT_EQ(0, pthread_join(t, NULL));
		EXPECT_EQ(0, r.ok_after_enoent);
		EXPECT_EQ(0, r.other);
		total += r.imports;
		EXPECT_EQ(-ENOENT, kfd_handle_import(self->ctl, &r.h));
	}
	TH_LOG("200 rounds, %ld imports won the race", total);
}

/* ------------------------------------------------------------------ */
/* Forged handles                                                       */
/* ------------------------------------------------------------------ */

/* Import @h, which must fail with exactly @want; closes a stray fd. */
static int try_forged(int ctl, const struct kfdpool_pool_handle *h, int want)
{
	int fd = kfd_handle_import(ctl, h);

	if (fd >= 0) {
		close(fd);
		return 1;	/* imported: the worst outcome */
	}
	return fd == want ? 0 : 2;
}

TEST_F(handle, random_handles)
{
	uint64_t seed = 0x6b66706f6f6c0001ULL;
	long imported = 0, wrong = 0, by_errno[3] = {};
	int i, j;

	for (i = 0; i < N_RANDOM; i++) {
		struct kfdpool_pool_handle h;
		__u8 *b = (__u8 *)&h;
		int want, ret;

		for (j = 0; j < (int)sizeof(h); j += 8) {
			uint64_t r = kfd_rand(&seed);

			memcpy(b + j, &r, 8);
		}
		switch (i % 4) {
		case 0:		/* all 64 bytes random */
			break;
		case 3:		/* the real pool, our uid: a guessed secret */
			HND(&h)->uid = geteuid();
			/* fall through */
		case 2:		/* the real pool */
			memcpy(HND(&h)->pool_id, self->id, KFDPOOL_ID_LEN);
			/* fall through */
		case 1:		/* well-formed, random pool id and secret */
			HND(&h)->magic = KFDPOOL_HANDLE_MAGIC;
			HND(&h)->policy %= 3;
			if (HND(&h)->policy != KFDPOOL_HANDLE_POLICY_GID)
				HND(&h)->gid = 0;
			memset(HND(&h)->pad, 0, sizeof(HND(&h)->pad));
			break;
		}
		want = kfd_handle_expect(&h, &self->m.handle, true);
		ret = try_forged(self->ctl, &h, want);
		imported += ret == 1;
		wrong += ret == 2;
		by_errno[want == -EINVAL ? 0 : want == -ENOENT ? 1 : 2]++;
	}
	EXPECT_EQ(0, imported);
	EXPECT_EQ(0, wrong);
	EXPECT_NE(0, by_errno[2]);
	TH_LOG("%d random handles: %ld EINVAL, %ld ENOENT, %ld EACCES, %ld imported",
	       N_RANDOM, by_errno[0], by_errno[1], by_errno[2], imported);
}

TEST_F(handle, mutated_handles)
{
	struct kfdpool_pool_handle valid[3];
	uint64_t seed = 0x6b66706f6f6c0002ULL;
	long imported = 0, wrong = 0, by_errno[3] = {};
	int i, fd;

	ASSERT_EQ(0, kfd_handle_export(self->pool, KFDPOOL_HANDLE_POLICY_UID,
				       0, &valid[0]));
	ASSERT_EQ(0, kfd_handle_export(self->pool, KFDPOOL_HANDLE_POLICY_GID,
				       TEST_GID, &valid[1]));
	ASSERT_EQ(0, kfd_handle_export(self->pool, KFDPOOL_HANDLE_POLICY_ANY,
				       0, &valid[2]));
	/* The controls: each valid handle imports (we are root, in no group
	 * 4242: the GID one is refused by policy, not by its secret).
	 */
	for (i = 0; i < 3; i += 2) {
		fd = kfd_handle_import(self->ctl, &valid[i]);
		ASSERT_LE(0, fd);
		close(fd);
	}
	EXPECT_EQ(-EACCES, kfd_handle_import(self->ctl, &valid[1]));

	for (i = 0; i < N_MUTATED; i++) {
		const struct kfdpool_pool_handle *v = &valid[i % 3];
		struct kfdpool_pool_handle h = *v;
		__u8 *b = (__u8 *)&h;
		int want, ret, n;

		/* Byte (i / 3) % 64 always (every byte of each of the three
		 * handles gets its turns), plus up
		 * to three random ones every other time.
		 */
		b[(i / 3) % 64] ^= 1 + kfd_rand(&seed) % 255;
		for (n = (i & 1) ? kfd_rand(&seed) % 4 : 0; n > 0; n--)
			b[kfd_rand(&seed) % 64] ^= kfd_rand(&seed);
		if (!memcmp(&h, v, sizeof(h)))
			b[(i / 3) % 64] ^= 0x80;
		want = kfd_handle_expect(&h, &self->m.handle, true);
		ret = try_forged(self->ctl, &h, want);
		imported += ret == 1;
		wrong += ret == 2;
		by_errno[want == -EINVAL ? 0 : want == -ENOENT ? 1 : 2]++;
	}
	EXPECT_EQ(0, imported);
	EXPECT_EQ(0, wrong);
	TH_LOG("%d mutated handles: %ld EINVAL, %ld ENOENT, %ld EACCES, %ld imported",
	       N_MUTATED, by_errno[0], by_errno[1], by_errno[2], imported);
}

/* ------------------------------------------------------------------ */
/* Bad values of every field                                            */
/* ------------------------------------------------------------------ */

static int export_raw(int fd, struct kfdpool_handle_export *e)
{
	return ioctl(fd, KFDPOOL_IOC_HANDLE_EXPORT, e) ? -errno : 0;
}

TEST_F(handle, export_bad_args)
{
	struct kfdpool_handle_export e;
	int bit, imp, other;

	memset(&e, 0, sizeof(e));
	e.policy = 3;
	EXPECT_EQ(-EINVAL, export_raw(self->pool, &e));
	e.policy = 0xffffffff;
	EXPECT_EQ(-EINVAL, export_raw(self->pool, &e));
	/* A gid under another policy than GID. */
	memset(&e, 0, sizeof(e));
	e.gid = TEST_GID;
	EXPECT_EQ(-EINVAL, export_raw(self->pool, &e));
	e.policy = KFDPOOL_HANDLE_POLICY_ANY;
	EXPECT_EQ(-EINVAL, export_raw(self->pool, &e));
	/* A gid that maps to no group. */
	e.policy = KFDPOOL_HANDLE_POLICY_GID;
	e.gid = (__u32)-1;
	EXPECT_EQ(-EINVAL, export_raw(self->pool, &e));
	for (bit = 0; bit < 32; bit++) {
		memset(&e, 0, sizeof(e));
		e.flags = 1u << bit;
		/* An owner handle of a pool that does not persist. */
		EXPECT_EQ(e.flags == KFDPOOL_HANDLE_EXPORT_OWNER ? -EOPNOTSUPP :
			  -EINVAL, export_raw(self->pool, &e));
		memset(&e, 0, sizeof(e));
		e.pad = 1u << bit;
		EXPECT_EQ(-EINVAL, export_raw(self->pool, &e));
	}
	/* The output handle's input bytes are ignored (it is out only). */
	memset(&e, 0xa5, sizeof(e));
	e.policy = 0;
	e.gid = 0;
	e.flags = 0;
	e.pad = 0;
	EXPECT_EQ(0, export_raw(self->pool, &e));
	EXPECT_EQ(0, memcmp(&e.handle, &self->m.handle, sizeof(e.handle)));

	/* Not from an import fd. */
	imp = kfd_pool_export(self->pool);
	ASSERT_LE(0, imp);
	memset(&e, 0, sizeof(e));
	EXPECT_EQ(-EPERM, export_raw(imp, &e));
	close(imp);

	/* Not from a pool without the fabric handle type. */
	other = kfd_pool_create(self->ctl, 0, "fd-only",
				KFDPOOL_HANDLE_TYPE_FD, NULL);
	ASSERT_LE(0, other);
	EXPECT_EQ(-EOPNOTSUPP, export_raw(other, &e));
	close(other);
	other = kfd_pool_create(self->ctl, 0, "private", 0, NULL);
	ASSERT_LE(0, other);
	EXPECT_EQ(-EOPNOTSUPP, export_raw(other, &e));
	close(other);

	/* Not on the control device; a bad pointer. */
	EXPECT_EQ(-1, ioctl(self->ctl, KFDPOOL_IOC_HANDLE_EXPORT, &e));
	EXPECT_EQ(ENOTTY, errno);
	/* A struct too short for the handle: served, the handle not told. */
	memset(&e, 0xee, sizeof(e));
	memset(&e, 0, offsetof(struct kfdpool_handle_export, handle));
	EXPECT_EQ(0, ioctl(self->pool,
			   _IOWR(KFDPOOL_IOC_MAGIC, 0x1c, struct kfdpool_pool_export),
			   &e));
	EXPECT_EQ(0xee, e.handle.data[0]);
	EXPECT_EQ(-1, ioctl(self->pool, KFDPOOL_IOC_HANDLE_EXPORT, NULL));
	EXPECT_EQ(EFAULT, errno);
}

TEST_F(handle, rotate_bad_args)
{
	struct kfdpool_handle_rotate r;
	int bit, imp, other, fd;

	for (bit = 0; bit < 32; bit++) {
		memset(&r, 0, sizeof(r));
		r.flags = 1u << bit;
		EXPECT_EQ(-1, ioctl(self->pool, KFDPOOL_IOC_HANDLE_ROTATE, &r));
		EXPECT_EQ(EINVAL, errno);
		memset(&r, 0, sizeof(r));
		r.pad = 1u << bit;
		EXPECT_EQ(-1, ioctl(self->pool, KFDPOOL_IOC_HANDLE_ROTATE, &r));
		EXPECT_EQ(EINVAL, errno);
	}
	/* None of the refused calls rotated: the handle still imports. */
	fd = kfd_handle_import(self->ctl, &self->m.handle);
	EXPECT_LE(0, fd);
	if (fd >= 0)
		close(fd);

	imp = kfd_handle_import(self->ctl, &self->m.handle);
	ASSERT_LE(0, imp);
	EXPECT_EQ(-EPERM, kfd_handle_rotate(imp));
	close(imp);
	imp = kfd_pool_export(self->pool);
	ASSERT_LE(0, imp);
	EXPECT_EQ(-EPERM, kfd_handle_rotate(imp));
	close(imp);
	fd = kfd_handle_import(self->ctl, &self->m.handle);
	EXPECT_LE(0, fd);
	if (fd >= 0)
		close(fd);

	other = kfd_pool_create(self->ctl, 0, "fd-only",
				KFDPOOL_HANDLE_TYPE_FD, NULL);
	ASSERT_LE(0, other);
	EXPECT_EQ(-EOPNOTSUPP, kfd_handle_rotate(other));
	close(other);

	memset(&r, 0, sizeof(r));
	EXPECT_EQ(-1, ioctl(self->ctl, KFDPOOL_IOC_HANDLE_ROTATE, &r));
	EXPECT_EQ(ENOTTY, errno);
	EXPECT_EQ(-1, ioctl(self->pool, KFDPOOL_IOC_HANDLE_ROTATE, NULL));
	EXPECT_EQ(EFAULT, errno);
}

static int import_raw(int fd, struct kfdpool_pool_import_handle *i)
{
	return ioctl(fd, KFDPOOL_IOC_POOL_IMPORT_HANDLE, i) ? -errno : 0;
}

TEST_F(handle, import_bad_args)
{
	struct kfdpool_pool_import_handle i;
	struct kfdpool_pool_handle forged;
	__u8 other_id[KFDPOOL_ID_LEN];
	int bit, j, other;

	/* The control: the unmodified struct imports. */
	memset(&i, 0, sizeof(i));
	i.handle = self->m.handle;
	ASSERT_EQ(0, import_raw(self->ctl, &i));
	EXPECT_LE(0, i.fd);
	close(i.fd);

	for (bit = 0; bit < 32; bit++) {
		memset(&i, 0, sizeof(i));
		i.handle = self->m.handle;
		i.flags = 1u << bit;
		EXPECT_EQ(-EINVAL, import_raw(self->ctl, &i));
	}
	/* @fd is out only: whatever it holds on input is ignored. */
	memset(&i, 0, sizeof(i));
	i.handle = self->m.handle;
	i.fd = 12345;
	ASSERT_EQ(0, import_raw(self->ctl, &i));
	EXPECT_NE(12345, i.fd);
	close(i.fd);

	/* Magic: zero, a record's, one bit off. */
	{
		__u32 bad[] = { 0, KFDPOOL_RECORD_MAGIC,
				KFDPOOL_HANDLE_MAGIC ^ 1, 0xffffffff };

		for (j = 0; j < 4; j++) {
			memset(&i, 0, sizeof(i));
			i.handle = self->m.handle;
			HND(&i.handle)->magic = bad[j];
			EXPECT_EQ(-EINVAL, import_raw(self->ctl, &i));
		}
	}
	/* Policy out of range; a gid under the uid or any policy. */
	{
		__u32 bad[] = { 3, 4, 0x80000000, 0xffffffff };

		for (j = 0; j < 4; j++) {
			memset(&i, 0, sizeof(i));
			i.handle = self->m.handle;
			HND(&i.handle)->policy = bad[j];
			EXPECT_EQ(-EINVAL, import_raw(self->ctl, &i));
		}
	}
	memset(&i, 0, sizeof(i));
	i.handle = self->m.handle;
	HND(&i.handle)->gid = 1;
	EXPECT_EQ(-EINVAL, import_raw(self->ctl, &i));
	HND(&i.handle)->policy = KFDPOOL_HANDLE_POLICY_ANY;
	EXPECT_EQ(-EINVAL, import_raw(self->ctl, &i));
	/* Every pad byte. */
	for (j = 0; j < (int)sizeof(HND(&i.handle)->pad); j++) {
		memset(&i, 0, sizeof(i));
		i.handle = self->m.handle;
		HND(&i.handle)->pad[j] = 1;
		EXPECT_EQ(-EINVAL, import_raw(self->ctl, &i));
	}
	/*
	 * A pool id nobody has: another serial (the id's first bytes, where
	 * the kernel looks), or the pool's serial with another id.
	 */
	memset(&i, 0, sizeof(i));
	i.handle = self->m.handle;
	HND(&i.handle)->pool_id[0] ^= 1;
	EXPECT_EQ(-ENOENT, import_raw(self->ctl, &i));
	i.handle = self->m.handle;
	HND(&i.handle)->pool_id[15] ^= 1;
	EXPECT_EQ(-ENOENT, import_raw(self->ctl, &i));

	/* A pool without the fabric type never made a handle: forged. */
	other = kfd_pool_create(self->ctl, 0, "fd-only",
				KFDPOOL_HANDLE_TYPE_FD, other_id);
	ASSERT_LE(0, other);
	forged = self->m.handle;
	memcpy(HND(&forged)->pool_id, other_id, KFDPOOL_ID_LEN);
	EXPECT_EQ(-EACCES, kfd_handle_import(self->ctl, &forged));
	close(other);

	/* On a pool fd it is not a command; a short struct; bad pointer. */
	memset(&i, 0, sizeof(i));
	i.handle = self->m.handle;
	EXPECT_EQ(-ENOTTY, import_raw(self->pool, &i));
	EXPECT_EQ(-1, ioctl(self->ctl,
			    _IOWR(KFDPOOL_IOC_MAGIC, 0x02, struct kfdpool_pool_handle),
			    &i));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, ioctl(self->ctl, KFDPOOL_IOC_POOL_IMPORT_HANDLE, NULL));
	EXPECT_EQ(EFAULT, errno);
}

/* A failed copy back installs no fd and leaks no pool reference. */
TEST_F(handle, import_copy_back_fails)
{
	struct kfdpool_pool_import_handle *i;
	struct kfdpool_pool_stats st;
	long page = kfd_page_size();
	char *p;

	/* The struct ends read-only: copy in works, copy back faults. */
	p = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, p);
	i = (void *)(p + page - offsetof(struct kfdpool_pool_import_handle, fd));
	memset(i, 0, page - ((char *)i - p));
	i->handle = self->m.handle;
	ASSERT_EQ(0, mprotect(p, page, PROT_READ));
	EXPECT_EQ(-1, ioctl(self->ctl, KFDPOOL_IOC_POOL_IMPORT_HANDLE, i));
	EXPECT_EQ(EFAULT, errno);
	ASSERT_EQ(0, kfd_stats(self->pool, &st));
	EXPECT_EQ(0, st.import_fds);
	munmap(p, 2 * page);
}

static int real_main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "--importer"))
		return importer(argc, argv);
	return test_harness_run(argc, argv);
}

int main(int argc, char **argv)
{
	return real_main(argc, argv);
}
