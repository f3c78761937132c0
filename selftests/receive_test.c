// SPDX-License-Identifier: GPL-2.0-only
/*
 * Every fd the module hands out (dma-buf fds of imports by ioctl, batch and
 * io_uring; pool fds of create, export and handle import) goes through the
 * kernel's receive path, receive_fd(), so that security modules see each
 * file (security_file_receive()) as they do files passed by SCM_RIGHTS.
 * Counted with a kprobe event on security_file_receive through tracefs;
 * on a kernel without security modules (CONFIG_SECURITY off, where that
 * hook is an empty inline) on receive_fd() itself.  Skipped where the
 * kernel has no kprobe events, or no receive_fd() for modules.  And the
 * capabilities the module asks of any caller to decide what it does, not
 * whether it may (CAP_IPC_LOCK at ALLOC, CAP_SYS_ADMIN at
 * POOL_LIST), are asked without an audit record (kprobe on cap_capable()).
 */
#include <ctype.h>
#include <liburing.h>
#include <sys/mount.h>

#include "kselftest_harness.h"
#include "kfdpool_handle_util.h"
#include "kfdpool_uring_util.h"

#define SZ		(64 * 1024)
#define N		16
#define GROUP		"kfdpool_selftest"
#define NAME		"kfdpool_recv"
#define EVENT		GROUP "/" NAME
#define CMD_PAYLOAD	80

static const char *const tracefs_dirs[] = {
	"/sys/kernel/tracing", "/sys/kernel/debug/tracing",
};

/* Write @s to @dir/@file (appending when @append); 0 or -errno. */
static int tfs_write(const char *dir, const char *file, const char *s,
		     bool append)
{
	char path[256];
	int fd, ret = 0;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	fd = open(path, O_WRONLY | O_CLOEXEC | (append ? O_APPEND : O_TRUNC));
	if (fd < 0)
		return -errno;
	if (write(fd, s, strlen(s)) != (ssize_t)strlen(s))
		ret = -errno;
	close(fd);
	return ret;
}

#define NO_RECEIVE_FD \
	"the kernel does not export receive_fd() to modules (fds are installed as dma_buf_fd() does)"

/*
 * Whether the kernel has receive_fd() for modules.  Where it does not, it
 * is an inline around the unexported __receive_fd(), no function of its
 * own among the kernel's global symbols, and the module installs its fds
 * without the receive path.
 */
static bool kernel_exports_receive_fd(void)
{
	bool found = false;
	char line[256];
	FILE *f;

	f = fopen("/proc/kallsyms", "re");
	if (!f)
		return true;	/* cannot tell: count and see */
	while (!found && fgets(line, sizeof(line), f))
		found = strstr(line, " T receive_fd\n") != NULL;
	fclose(f);
	return found;
}

/* A tracefs directory with kprobe events, mounting it if need be. */
static const char *tracefs(void)
{
	char path[256];
	unsigned int i;

	for (i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "%s/kprobe_events",
			 tracefs_dirs[i]);
		if (!access(path, W_OK))
			return tracefs_dirs[i];
		if (!i && !mount("tracefs", tracefs_dirs[0], "tracefs", 0, NULL) &&
		    !access(path, W_OK))
			return tracefs_dirs[0];
	}
	return NULL;
}

/* Hits of our kprobe so far (kprobe_profile), or -1. */
static long long hits(const char *dir)
{
	char path[256], line[256], name[128];
	long long n = -1, h, m;
	FILE *f;

	snprintf(path, sizeof(path), "%s/kprobe_profile", dir);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		/* Kernels print the event's name, some with its group. */
		if (sscanf(line, "%127s %lld %lld", name, &h, &m) == 3 &&
		    (!strcmp(name, NAME) || !strcmp(name, EVENT)))
			n = h;
	fclose(f);
	return n;
}

FIXTURE(recv) {
	struct kfd_set s;
	const char *dir;
	bool probe;
	struct kfdpool_record rec;
	struct io_uring ring;
	bool ring_ok;
	int ring_err;
};

FIXTURE_SETUP(recv)
{
	int ret;

	self->probe = false;
	self->ring_ok = false;
	KFD_SET_SETUP("receive_test", 1, SZ, -1, 0x40);
	ASSERT_EQ(0, kfd_export(self->s.pool, self->s.entry[0], 0, 4096,
				&self->rec));
	if (!kernel_exports_receive_fd())
		SKIP(return, "%s", NO_RECEIVE_FD);
	self->dir = tracefs();
	if (!self->dir)
		SKIP(return, "no tracefs with kprobe events");
	ret = tfs_write(self->dir, "kprobe_events",
			"p:" EVENT " security_file_receive\n", true);
	if (ret) {
		/* No LSM hook to see: the receive path is receive_fd(). */
		TH_LOG("no kprobe on security_file_receive (%s): counting receive_fd()",
		       strerror(-ret));
		ret = tfs_write(self->dir, "kprobe_events",
				"p:" EVENT " receive_fd\n", true);
	}
	if (ret)
		SKIP(return, "kprobe on receive_fd: %s", strerror(-ret));
	self->probe = true;
	ASSERT_EQ(0, tfs_write(self->dir, "events/" EVENT "/enable", "1",
			       false));
	ASSERT_LE(0, hits(self->dir));
	self->ring_err = io_uring_queue_init(N + 1, &self->ring,
					     IORING_SETUP_SQE128);
	self->ring_ok = !self->ring_err;
}

FIXTURE_TEARDOWN(recv)
{
	if (self->ring_ok)
		io_uring_queue_exit(&self->ring);
	if (self->probe) {
		tfs_write(self->dir, "events/" EVENT "/enable", "0", false);
		tfs_write(self->dir, "kprobe_events", "-:" EVENT "\n", true);
	}
	KFD_SET_TEARDOWN();
}

/*
 * Run @body, which hands out @want fds: the probe must count at least that
 * many receives.  A body handing out none (@want 0, the control) must
 * count fewer than N: the count is the kernel's, for every task.
 */
#define RECEIVES(want, body)						\
	do {								\
		long long before_ = hits(self->dir), got_;		\
									\
		body;							\
		got_ = hits(self->dir) - before_;			\
		TH_LOG("%lld receives: %s", got_, #body);		\
		if (want) {						\
			EXPECT_LE(want, got_);				\
		} else {						\
			EXPECT_GT(N, got_);				\
		}							\
	} while (0)

static void ioctl_imports(struct __test_metadata *_metadata, int imp,
			  const struct kfdpool_record *rec, __u32 flags)
{
	struct kfdpool_import im;
	int i;

	for (i = 0; i < N; i++) {
		ASSERT_EQ(0, kfd_import(imp, rec, flags, &im));
		if (im.fd >= 0)
			close(im.fd);
	}
}

TEST_F(recv, ioctl_import)
{
	/* The control: validations hand out no fd. */
	ioctl_imports(_metadata, self->s.imp, &self->rec, 0);
	RECEIVES(0, ioctl_imports(_metadata, self->s.imp, &self->rec,
				  KFDPOOL_IMPORT_VALIDATE));
	RECEIVES(N, ioctl_imports(_metadata, self->s.imp, &self->rec, 0));
}

static void batch_import(struct __test_metadata *_metadata,
			 struct io_uring *ring, int imp,
			 const struct kfdpool_record *rec)
{
	struct kfdpool_import im[N];
	struct kfdpool_batch b = {};
	int i;

	memset(im, 0, sizeof(im));
	for (i = 0; i < N; i++) {
		im[i].record = *rec;
		im[i].fd = -1;
	}
	b.ops = (uintptr_t)im;
	b.count = N;
	b.elem_size = sizeof(im[0]);
	if (!ring) {
		ASSERT_EQ(N, ioctl(imp, KFDPOOL_IOC_IMPORT_BATCH, &b));
	} else {
		struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
		struct io_uring_cqe *cqe;

		io_uring_prep_rw(IORING_OP_URING_CMD, sqe, imp, NULL, 0, 0);
		sqe->cmd_op = KFDPOOL_IOC_IMPORT_BATCH;
		memset(sqe->cmd, 0, CMD_PAYLOAD);
		memcpy(sqe->cmd, &b, sizeof(b));
		ASSERT_EQ(1, io_uring_submit(ring));
		ASSERT_EQ(0, io_uring_wait_cqe(ring, &cqe));
		EXPECT_EQ(N, cqe->res);
		io_uring_cqe_seen(ring, cqe);
	}
	for (i = 0; i < N; i++) {
		EXPECT_EQ(0, im[i].status);
		EXPECT_LE(0, im[i].fd);
		if (im[i].fd >= 0)
			close(im[i].fd);
	}
}

TEST_F(recv, batch_import)
{
	RECEIVES(N, batch_import(_metadata, NULL, self->s.imp, &self->rec));
}

static void uring_imports(struct __test_metadata *_metadata,
			  struct io_uring *ring, int imp,
			  const struct kfdpool_record *rec)
{
	struct kfdpool_uring_record ur = {};
	struct io_uring_cqe *cqe;
	int i;

	ur.record = *rec;
	for (i = 0; i < N; i++) {
		struct io_uring_sqe *sqe = io_uring_get_sqe(ring);

		io_uring_prep_rw(IORING_OP_URING_CMD, sqe, imp, NULL, 0, 0);
		sqe->cmd_op = KFDPOOL_URING_IMPORT;
		memset(sqe->cmd, 0, CMD_PAYLOAD);
		memcpy(sqe->cmd, &ur, sizeof(ur));
		if (i & 1)
			sqe->flags |= IOSQE_ASYNC;
	}
	ASSERT_EQ(N, io_uring_submit(ring));
	for (i = 0; i < N; i++) {
		ASSERT_EQ(0, io_uring_wait_cqe(ring, &cqe));
		EXPECT_LE(0, cqe->res);
		if (cqe->res >= 0)
			close(cqe->res);
		io_uring_cqe_seen(ring, cqe);
	}
}

TEST_F(recv, uring_import)
{
	if (!self->ring_ok)
		SKIP(return, "%s", kfd_uring_skip_reason(self->ring_err));
	RECEIVES(N, uring_imports(_metadata, &self->ring, self->s.imp,
				  &self->rec));
	RECEIVES(N, batch_import(_metadata, &self->ring, self->s.imp,
				 &self->rec));
}

static void pool_fds(struct __test_metadata *_metadata, int ctl, int pool,
		     const struct kfdpool_pool_handle *h, int kind)
{
	int i, fd;

	for (i = 0; i < N; i++) {
		if (kind == 0)
			fd = kfd_pool_create(ctl, 0, "recv", 0, NULL);
		else if (kind == 1)
			fd = kfd_pool_export(pool);
		else
			fd = kfd_handle_import(ctl, h);
		ASSERT_LE(0, fd);
		EXPECT_TRUE(kfd_cloexec(fd));
		close(fd);
	}
}

TEST_F(recv, pool_fds)
{
	struct kfdpool_pool_handle h;
	int ctl = kfd_open();

	ASSERT_LE(0, ctl);
	ASSERT_EQ(0, kfd_handle_export(self->s.pool, KFDPOOL_HANDLE_POLICY_UID,
				       0, &h));
	RECEIVES(N, pool_fds(_metadata, ctl, self->s.pool, &h, 0));
	RECEIVES(N, pool_fds(_metadata, ctl, self->s.pool, &h, 1));
	RECEIVES(N, pool_fds(_metadata, ctl, self->s.pool, &h, 2));
	close(ctl);
}

#define CAP_NAME	"kfdpool_cap"
#define CAP_EVENT	GROUP "/" CAP_NAME
#define CAP_IPC_LOCK_NR	14
#define CAP_SYS_ADMIN_NR	21
#define CAP_OPT_NOAUDIT_BIT	0x2

/* The pid of a trace line ("comm-PID [CPU] ..."), or -1. */
static int trace_pid(const char *line)
{
	const char *q = strstr(line, " [");

	if (!q)
		return -1;
	while (q > line && q[-1] == ' ')
		q--;
	while (q > line && isdigit((unsigned char)q[-1]))
		q--;
	return q > line && q[-1] == '-' ? atoi(q) : -1;
}

/*
 * Every capability check the kernel makes for a task reaches cap_capable()
 * with its options, security modules or not: count those of @cap by @pid
 * in the trace, and how many of them security modules may audit.  -1 if
 * the trace cannot be read.
 */
static int cap_checks(const char *dir, pid_t pid, unsigned int cap,
		      int *audited)
{
	char path[256], line[512], *p;
	unsigned int c, opts;
	int n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/trace", dir);
	f = fopen(path, "re");
	if (!f)
		return -1;
	*audited = 0;
	while (fgets(line, sizeof(line), f)) {
		p = strstr(line, " " CAP_NAME ":");
		p = p ? strstr(p, " cap=") : NULL;
		if (!p || sscanf(p, " cap=%u opts=%u", &c, &opts) != 2 ||
		    c != cap || trace_pid(line) != pid)
			continue;
		n++;
		*audited += !(opts & CAP_OPT_NOAUDIT_BIT);
	}
	fclose(f);
	return n;
}

/*
 * What the module asks of every caller is asked unaudited, as io_uring asks
 * CAP_IPC_LOCK: an unprivileged user allocating host memory (whether it is
 * charged to its RLIMIT_MEMLOCK) or listing pools (its own, or all) must
 * not make a security module log a denial each time, of a capability it
 * neither asked for nor needs.
 */
TEST(alloc_and_list_ask_capabilities_unaudited)
{
	struct kfdpool_alloc a = { .size = 4096 };
	struct kfdpool_pool_info info[4];
	int ctl, pool, status, n, audited;
	const char *dir = tracefs();
	__u64 cursor = 0;
	pid_t pid;

	if (!dir)
		SKIP(return, "no tracefs with kprobe events");
	if (tfs_write(dir, "kprobe_events",
		      "p:" CAP_EVENT " cap_capable cap=%dx:s32 opts=%cx:u32\n",
		      true))
		SKIP(return, "no kprobe on cap_capable");
	ASSERT_EQ(0, tfs_write(dir, "trace", "", false));
	ASSERT_EQ(0, tfs_write(dir, "events/" CAP_EVENT "/enable", "1", false));

	ctl = kfd_open();
	pid = fork();
	if (!pid) {
		/* No capability left, and the device already open. */
		if (ctl < 0 || setresgid(4242, 4242, 4242) ||
		    setresuid(4242, 4242, 4242))
			_exit(90);
		pool = kfd_pool_create(ctl, 0, "recv-cap", 0, NULL);
		if (pool < 0)
			_exit(91);
		if (ioctl(pool, KFDPOOL_IOC_ALLOC, &a))
			_exit(93);
		_exit(kfd_list_page(ctl, info, 4, &cursor) < 0 ? 92 : 0);
	}
	ASSERT_LE(0, pid);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	tfs_write(dir, "events/" CAP_EVENT "/enable", "0", false);
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(0, WEXITSTATUS(status));

	/* The module asks each (ALLOC's charge, the listing's scope)... */
	n = cap_checks(dir, pid, CAP_IPC_LOCK_NR, &audited);
	EXPECT_LE(1, n);
	/* ...and none of its asking may be audited. */
	EXPECT_EQ(0, audited) TH_LOG("CAP_IPC_LOCK: %d of %d audited",
				     audited, n);
	n = cap_checks(dir, pid, CAP_SYS_ADMIN_NR, &audited);
	EXPECT_LE(1, n);
	EXPECT_EQ(0, audited) TH_LOG("CAP_SYS_ADMIN: %d of %d audited",
				     audited, n);
	tfs_write(dir, "kprobe_events", "-:" CAP_EVENT "\n", true);
	close(ctl);
}

TEST_HARNESS_MAIN
