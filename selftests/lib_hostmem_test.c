// SPDX-License-Identifier: GPL-2.0-only
/*
 * Host pools through libkfdpool's HIP API with the module backend:
 *  - a render user (uid and gid not 0, in group render only, no access to
 *    the dma heap, udmabuf or a DRM card; /dev/kfdpool root:render 0660 as
 *    the packaged udev rule makes it) creates a host pool, and another
 *    render user imports it, checks and answers the bytes, and registers
 *    and vmsplices the imported memory (ordinary pages);
 *  - clean failures: larger than memory, over the per-user limit, over
 *    udmabuf's and vgem's size limits (hipErrorOutOfMemory), no OOM killer;
 *  - the other host backends stay selectable; bad KFDPOOL_FABRIC_POLICY.
 */
#include <grp.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <linux/io_uring.h>

#include "kselftest_harness.h"
#include "lib_hip_util.h"
#include "hostmem_util.h"
#include "kfdpool_state.h"

#define RENDER_GID	105	/* the VM's /etc/group, Debian's usual */
#define USER_A		1000
#define USER_B		1001

/*
 * Within the default RLIMIT_MEMLOCK (8 MiB), which charges a render user
 * for ALLOC's pages and for io_uring's registered buffers alike.
 */
static const size_t sizes[] = { 4096, 1 << 20, 4 << 20 };
#define NPTRS (sizeof(sizes) / sizeof(sizes[0]))

struct share_msg {
	hipMemPoolPtrExportData data[NPTRS];
};

/* Become a render user: gid render, no other group, uid @uid. */
static int become_render_user(uid_t uid)
{
	/*
	 * What a user may lock by default from 5.16 on (and under systemd);
	 * older kernels start init with 64 KiB, less than gup_ok() registers.
	 */
	struct rlimit memlock = { 8 << 20, 8 << 20 };
	gid_t g = RENDER_GID;

	if (setrlimit(RLIMIT_MEMLOCK, &memlock) || setgroups(1, &g) ||
	    setresgid(g, g, g) || setresuid(uid, uid, uid))
		return -errno;
	return 0;
}

/* 0 if every device other backends need is closed to us, else 1. */
static int others_closed(void)
{
	static const char *const devs[] = {
		"/dev/dma_heap/system", "/dev/udmabuf", "/dev/dri/card0",
		"/dev/dri/card1",
	};
	unsigned int i;
	int fd;

	for (i = 0; i < sizeof(devs) / sizeof(devs[0]); i++) {
		fd = open(devs[i], O_RDWR | O_CLOEXEC);
		if (fd >= 0) {
			fprintf(stderr, "%s opens for a render user\n",
				devs[i]);
			close(fd);
			return 1;
		}
		if (errno != EACCES && errno != ENOENT)
			return 1;
	}
	return 0;
}

/*
 * io_uring fixed buffer (where the kernel's io_uring takes file mappings:
 * else process_vm_readv), and vmsplice on @p: what get_user_pages() takes.
 * At most 1 MiB is registered, and unregistered before the ring goes (its
 * teardown is asynchronous): a render user's pins count against
 * RLIMIT_MEMLOCK (8 MiB).
 */
static int gup_ok(void *p, size_t len)
{
	struct io_uring_params prm = {};
	struct iovec iov = { p, len < (1 << 20) ? len : 1 << 20 };
	int ring, pfd[2], ret = 0;
	char c, back[4096];

	ring = syscall(__NR_io_uring_setup, 2, &prm);
	if (ring < 0)
		return -errno;
	if (syscall(__NR_io_uring_register, ring, IORING_REGISTER_BUFFERS,
		    &iov, 1))
		ret = -errno;
	else if (syscall(__NR_io_uring_register, ring,
			 IORING_UNREGISTER_BUFFERS, NULL, 0))
		ret = -errno;
	close(ring);
	if (ret == -EOPNOTSUPP && hm_uring_refuses_file_maps()) {
		ret = hm_vm_rw(p, back, sizeof(back), false);
		if (!ret && memcmp(back, p, sizeof(back)))
			ret = -EILSEQ;
	}
	if (ret)
		return ret;
	if (pipe(pfd))
		return -errno;
	iov.iov_len = 4096;
	if (vmsplice(pfd[1], &iov, 1, 0) != 4096)
		ret = -errno;
	else if (read(pfd[0], &c, 1) != 1 || c != *(char *)p)
		ret = -EILSEQ;
	close(pfd[0]);
	close(pfd[1]);
	return ret;
}

static int exporter(int sock)
{
	hipMemPoolProps p = lh_props(hipMemHandleTypePosixFileDescriptor, 0);
	struct share_msg m;
	hipMemPool_t pool;
	void *ptr[NPTRS];
	unsigned int i;
	char c;
	int fd;

	if (become_render_user(USER_A) || others_closed())
		return 10;
	if (hipMemPoolCreate(&pool, &p) != hipSuccess)
		return 11;
	if (strcmp(kfdpoolMemPoolBackend(pool), "module"))
		return 12;
	for (i = 0; i < NPTRS; i++) {
		if (hipMallocFromPoolAsync(&ptr[i], sizes[i], pool, NULL))
			return 13;
		lh_fill(ptr[i], sizes[i], i, 0xabc);
		if (hipMemPoolExportPointer(&m.data[i], ptr[i]))
			return 14;
	}
	if (gup_ok(ptr[1], sizes[1]))
		return 15;
	if (hipMemPoolExportToShareableHandle(&fd, pool,
			hipMemHandleTypePosixFileDescriptor, 0) ||
	    lh_send_fd(sock, fd) || lh_write_all(sock, &m, sizeof(m)))
		return 16;
	close(fd);
	/* The importer answered in place. */
	if (lh_read_all(sock, &c, 1) || c != 'd')
		return 17;
	for (i = 0; i < NPTRS; i++)
		if (lh_check(ptr[i], sizes[i], i, 0xdef) >= 0)
			return 18;
	for (i = 0; i < NPTRS; i++)
		if (hipFree(ptr[i]))
			return 19;
	return hipMemPoolDestroy(pool) ? 20 : 0;
}

static int importer(int sock)
{
	struct share_msg m;
	hipMemPool_t pool;
	void *ptr[NPTRS];
	unsigned int i;
	int fd;

	if (become_render_user(USER_B) || others_closed())
		return 30;
	fd = lh_recv_fd(sock);
	if (fd < 0 || lh_read_all(sock, &m, sizeof(m)))
		return 31;
	if (hipMemPoolImportFromShareableHandle(&pool, (void *)(intptr_t)fd,
			hipMemHandleTypePosixFileDescriptor, 0))
		return 32;
	close(fd);
	for (i = 0; i < NPTRS; i++) {
		if (hipMemPoolImportPointer(&ptr[i], pool, &m.data[i]))
			return 33;
		if (lh_check(ptr[i], sizes[i], i, 0xabc) >= 0)
			return 34;
		if (gup_ok(ptr[i], sizes[i]))
			return 35;
		lh_fill(ptr[i], sizes[i], i, 0xdef);
	}
	if (lh_write_all(sock, "d", 1))
		return 36;
	for (i = 0; i < NPTRS; i++)
		if (hipFree(ptr[i]))
			return 37;
	return hipMemPoolDestroy(pool) ? 38 : 0;
}

/* Set /dev/kfdpool as the packaged rule does; restore it in teardown. */
FIXTURE(render) {
	struct stat saved;
	bool changed;
	int baseline, oom;
};

FIXTURE_SETUP(render)
{
	kfd_state_restore();
	self->changed = false;
	if (getuid())
		SKIP(return, "needs root to become a render user");
	if (stat(KFD_DEV, &self->saved))
		SKIP(return, "no %s", KFD_DEV);
	if (!hm_supported())
		SKIP(return, "no KFDPOOL_IOC_ALLOC");
	ASSERT_EQ(0, chown(KFD_DEV, 0, RENDER_GID));
	ASSERT_EQ(0, chmod(KFD_DEV, 0660));
	self->changed = true;
	self->baseline = lh_dmabufs(-1);
	self->oom = hm_oom_lines();
}

FIXTURE_TEARDOWN(render)
{
	if (self->changed) {
		chown(KFD_DEV, self->saved.st_uid, self->saved.st_gid);
		chmod(KFD_DEV, self->saved.st_mode & 07777);
	}
	if (self->baseline >= 0)
		EXPECT_EQ(self->baseline, lh_dmabufs(self->baseline));
	if (self->oom >= 0)
		EXPECT_EQ(self->oom, hm_oom_lines());
}

TEST_F(render, creates_shares_and_imports_host_pools)
{
	int sv[2], st;
	pid_t e, i;

	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv));
	e = fork();
	ASSERT_LE(0, e);
	if (!e) {
		close(sv[1]);
		_exit(exporter(sv[0]));
	}
	i = fork();
	ASSERT_LE(0, i);
	if (!i) {
		close(sv[0]);
		_exit(importer(sv[1]));
	}
	close(sv[0]);
	close(sv[1]);
	ASSERT_EQ(e, waitpid(e, &st, 0));
	EXPECT_TRUE(WIFEXITED(st) && !WEXITSTATUS(st))
		TH_LOG("exporter: exit %d", WEXITSTATUS(st));
	ASSERT_EQ(i, waitpid(i, &st, 0));
	EXPECT_TRUE(WIFEXITED(st) && !WEXITSTATUS(st))
		TH_LOG("importer: exit %d", WEXITSTATUS(st));
}

/* The same user without the module backend gets no host pool. */
TEST_F(render, other_backends_need_other_devices)
{
	static const char *const names[] = { "dmaheap", "udmabuf", "vgem" };
	unsigned int n;

	for (n = 0; n < 3; n++) {
		pid_t pid = fork();
		int st;

		ASSERT_LE(0, pid);
		if (!pid) {
			hipMemPoolProps p = lh_props(0, 0);
			hipMemPool_t pool;

			if (become_render_user(USER_A))
				_exit(100);
			setenv("KFDPOOL_BACKEND", names[n], 1);
			_exit(hipMemPoolCreate(&pool, &p));
		}
		ASSERT_EQ(pid, waitpid(pid, &st, 0));
		/* Its device is closed to the user (or missing): no device. */
		EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == hipErrorNoDevice)
			TH_LOG("%s: exit %d", names[n], WEXITSTATUS(st));
	}
}

FIXTURE(fail) {
	int baseline, oom;
};

FIXTURE_SETUP(fail)
{
	kfd_state_restore();
	if (!hm_supported())
		SKIP(return, "no /dev/kfdpool with KFDPOOL_IOC_ALLOC");
	self->baseline = lh_dmabufs(-1);
	self->oom = hm_oom_lines();
}

FIXTURE_TEARDOWN(fail)
{
	if (self->baseline >= 0)
		EXPECT_EQ(self->baseline, lh_dmabufs(self->baseline));
	if (self->oom >= 0)
		EXPECT_EQ(self->oom, hm_oom_lines());
}

TEST_F(fail, larger_than_memory)
{
	size_t big = (size_t)(hm_total_ram() * 3 / 2);
	hipMemPool_t pool;
	void *p;

	ASSERT_EQ(hipSuccess, lh_pool(&pool, hipMemHandleTypePosixFileDescriptor,
				      0));
	EXPECT_STREQ("module", kfdpoolMemPoolBackend(pool));
	EXPECT_EQ(hipErrorOutOfMemory, hipMallocFromPoolAsync(&p, big, pool,
							       NULL));
	EXPECT_EQ(hipErrorOutOfMemory,
		  hipMallocFromPoolAsync(&p, (size_t)1 << 50, pool, NULL));
	/* Still usable. */
	ASSERT_EQ(hipSuccess, hipMallocFromPoolAsync(&p, 4096, pool, NULL));
	EXPECT_EQ(hipSuccess, hipFree(p));
	EXPECT_EQ(hipSuccess, hipMemPoolDestroy(pool));
}

TEST_F(fail, over_the_pool_max_size)
{
	hipMemPool_t pool;
	void *p;

	ASSERT_EQ(hipSuccess, lh_pool(&pool, hipMemHandleTypePosixFileDescriptor,
				      8 << 20));
	EXPECT_EQ(hipErrorOutOfMemory,
		  hipMallocFromPoolAsync(&p, 16 << 20, pool, NULL));
	/* More than the machine: the limit answers first. */
	EXPECT_EQ(hipErrorOutOfMemory,
		  hipMallocFromPoolAsync(&p, (size_t)hm_total_ram() * 2, pool,
					 NULL));
	ASSERT_EQ(hipSuccess, hipMallocFromPoolAsync(&p, 4 << 20, pool, NULL));
	EXPECT_EQ(hipSuccess, hipFree(p));
	EXPECT_EQ(hipSuccess, hipMemPoolDestroy(pool));
}

/* udmabuf answers EINVAL over size_limit_mb (64 MiB): out of memory. */
TEST_F(fail, udmabuf_size_limit)
{
	hipMemPool_t pool;
	void *p;

	if (access("/dev/udmabuf", W_OK))
		SKIP(return, "no udmabuf");
	setenv("KFDPOOL_BACKEND", "udmabuf", 1);
	ASSERT_EQ(hipSuccess, lh_pool(&pool, 0, 0));
	EXPECT_STREQ("udmabuf", kfdpoolMemPoolBackend(pool));
	EXPECT_EQ(hipErrorOutOfMemory,
		  hipMallocFromPoolAsync(&p, 65 << 20, pool, NULL));
	ASSERT_EQ(hipSuccess, hipMallocFromPoolAsync(&p, 1 << 20, pool, NULL));
	EXPECT_EQ(hipSuccess, hipFree(p));
	EXPECT_EQ(hipSuccess, hipMemPoolDestroy(pool));
}

/* vgem's dumb buffers stop short of 4 GiB. */
TEST_F(fail, vgem_size_limit)
{
	hipMemPool_t pool;
	void *p;

	setenv("KFDPOOL_BACKEND", "vgem", 1);
	if (lh_pool(&pool, 0, 0) != hipSuccess)
		SKIP(return, "no vgem");
	EXPECT_EQ(hipErrorOutOfMemory,
		  hipMallocFromPoolAsync(&p, (size_t)5 << 30, pool, NULL));
	EXPECT_EQ(hipSuccess, hipMemPoolDestroy(pool));
}

/* Each host backend can still be chosen, and serves. */
TEST_F(fail, backends_selectable)
{
	static const char *const names[] = { "module", "dmaheap", "udmabuf",
					     "vgem" };
	unsigned int n;

	for (n = 0; n < 4; n++) {
		hipMemPool_t pool;
		void *p;

		setenv("KFDPOOL_BACKEND", names[n], 1);
		if (lh_pool(&pool, hipMemHandleTypePosixFileDescriptor, 0)) {
			ksft_print_msg("%s: not on this kernel\n", names[n]);
			continue;
		}
		EXPECT_STREQ(names[n], kfdpoolMemPoolBackend(pool));
		ASSERT_EQ(hipSuccess, hipMallocFromPoolAsync(&p, 8192, pool,
							     NULL));
		memset(p, 0x5a, 8192);
		EXPECT_EQ(hipSuccess, hipFree(p));
		EXPECT_EQ(hipSuccess, hipMemPoolDestroy(pool));
	}
}

/* A refused KFDPOOL_FABRIC_POLICY: one line on stderr, InvalidValue. */
TEST_F(fail, bad_fabric_policy)
{
	struct kfdpool_query q;
	hipMemFabricHandle_t h;
	hipMemPool_t pool;
	char err[512] = "";
	int pfd[2], saved;
	ssize_t n;

	ASSERT_EQ(0, kfd_query(&q));
	if (!(q.features & KFDPOOL_FEATURE_POOL_HANDLE))
		SKIP(return, "no pool handles");
	ASSERT_EQ(hipSuccess, lh_pool(&pool, hipMemHandleTypeFabric, 0));
	setenv("KFDPOOL_FABRIC_POLICY", "gid:x", 1);
	ASSERT_EQ(0, pipe2(pfd, O_NONBLOCK));
	saved = dup(2);
	dup2(pfd[1], 2);
	EXPECT_EQ(hipErrorInvalidValue,
		  hipMemPoolExportToShareableHandle(&h, pool,
						    hipMemHandleTypeFabric, 0));
	dup2(saved, 2);
	close(saved);
	n = read(pfd[0], err, sizeof(err) - 1);
	err[n > 0 ? n : 0] = 0;
	EXPECT_TRUE(strstr(err, "KFDPOOL_FABRIC_POLICY=\"gid:x\"") &&
		    strstr(err, "uid, any, gid:N")) TH_LOG("stderr: %s", err);
	close(pfd[0]);
	close(pfd[1]);
	unsetenv("KFDPOOL_FABRIC_POLICY");
	EXPECT_EQ(hipSuccess, hipMemPoolDestroy(pool));
}

TEST_HARNESS_MAIN
