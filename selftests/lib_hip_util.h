/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Helpers for the libkfdpool (HIP API) selftests: a host pool, patterns,
 * an exporter/importer socket pair with fd passing, dma-buf counting.
 */
#ifndef LIB_HIP_UTIL_H
#define LIB_HIP_UTIL_H

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <kfdpool_hip.h>
#include "kfdpool_format.h"

#define LH_BUFINFO "/sys/kernel/debug/dma_buf/bufinfo"

static inline hipMemPoolProps lh_props(unsigned int handle_types,
				       size_t max_size)
{
	hipMemPoolProps p;

	memset(&p, 0, sizeof(p));
	p.allocType = hipMemAllocationTypePinned;
	p.handleTypes = (hipMemAllocationHandleType)handle_types;
	p.location.type = hipMemLocationTypeHost;
	/* maxSize, which HIP 5's own headers (lib_hiprt.h) still call
	 * reserved[0..7]: the 8 bytes after the security attributes. */
	memcpy((char *)&p.win32SecurityAttributes +
	       sizeof(p.win32SecurityAttributes), &max_size, sizeof(max_size));
	return p;
}

/* hipSuccess, or why the pool could not be made (for SKIP). */
static inline hipError_t lh_pool(hipMemPool_t *pool, unsigned int types,
				 size_t max_size)
{
	hipMemPoolProps p = lh_props(types, max_size);

	return hipMemPoolCreate(pool, &p);
}

/* The byte pattern of allocation @i with @tag: one 64-bit word at a time. */
static inline uint64_t lh_word(uint64_t i, uint64_t w, uint64_t tag)
{
	return (i << 40) ^ (w * 0x9E3779B97F4A7C15ULL) ^ tag;
}

static inline void lh_fill(void *p, size_t size, uint64_t i, uint64_t tag)
{
	uint64_t *q = p;
	size_t w;

	for (w = 0; w < size / 8; w++)
		q[w] = lh_word(i, w, tag);
}

/* Index of the first wrong word, or -1. */
static inline long lh_check(const void *p, size_t size, uint64_t i,
			    uint64_t tag)
{
	const uint64_t *q = p;
	size_t w;

	for (w = 0; w < size / 8; w++)
		if (q[w] != lh_word(i, w, tag))
			return (long)w;
	return -1;
}

static inline int lh_write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= n;
	}
	return 0;
}

static inline int lh_read_all(int fd, void *buf, size_t len)
{
	char *p = buf;

	while (len) {
		ssize_t n = read(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= n;
	}
	return 0;
}

/* One byte and an fd over a unix socket (SCM_RIGHTS). */
static inline int lh_send_fd(int sock, int fd)
{
	char cbuf[CMSG_SPACE(sizeof(int))];
	char b = 'F';
	struct iovec iov = { &b, 1 };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1,
			      .msg_control = cbuf,
			      .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *cm;

	memset(cbuf, 0, sizeof(cbuf));
	cm = CMSG_FIRSTHDR(&msg);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	return sendmsg(sock, &msg, 0) == 1 ? 0 : -1;
}

static inline int lh_recv_fd(int sock)
{
	char cbuf[CMSG_SPACE(sizeof(int))];
	char b;
	struct iovec iov = { &b, 1 };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1,
			      .msg_control = cbuf,
			      .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *cm;
	int fd = -1;

	if (recvmsg(sock, &msg, MSG_CMSG_CLOEXEC) != 1)
		return -1;
	cm = CMSG_FIRSTHDR(&msg);
	if (cm && cm->cmsg_type == SCM_RIGHTS)
		memcpy(&fd, CMSG_DATA(cm), sizeof(int));
	return fd;
}

/* dma-bufs alive now ("Total N objects" of bufinfo), -1 without debugfs;
 * waits a little for a count to settle at @want (delayed fput). */
static inline int lh_dmabufs(int want)
{
	char line[256];
	int i, n = -1;

	for (i = 0; i < 200; i++) {
		FILE *f = fopen(LH_BUFINFO, "re");

		n = -1;
		if (!f)
			return -1;
		while (fgets(line, sizeof(line), f))
			if (sscanf(line, "Total %d objects", &n) == 1)
				break;
		fclose(f);
		if (want < 0 || n == want)
			break;
		usleep(10000);
	}
	return n;
}

/* Open fds of this process (one read of /proc/self/fd, not a system
 * call per possible fd: the debug kernel makes those slow). */
static inline int lh_nfds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n - 1;	/* the directory's own */
}

/* This process's fds that are kfdpool pools (owner or import). */
static inline int lh_pool_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	char target[64];
	struct dirent *e;
	ssize_t len;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		len = readlinkat(dirfd(d), e->d_name, target,
				 sizeof(target) - 1);
		if (len < 0)
			continue;
		target[len] = 0;
		n += !strcmp(target, "anon_inode:kfdpool");
	}
	closedir(d);
	return n;
}

/*
 * Run this program again as "--@role" in a child with @name set to @value
 * (e.g. a runtime stand-in's setting, read once per process): its exit
 * status, or -1.
 */
static inline int lh_exec_self(const char *role, const char *name,
			       const char *value)
{
	char arg[64];
	pid_t pid;
	int st;

	snprintf(arg, sizeof(arg), "--%s", role);
	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid) {
		setenv(name, value, 1);
		execl("/proc/self/exe", role, arg, (char *)NULL);
		_exit(127);
	}
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
		return -1;
	return WEXITSTATUS(st);
}

static inline uint64_t lh_attr(hipMemPool_t pool, hipMemPoolAttr a)
{
	uint64_t v = ~0ULL;

	if (hipMemPoolGetAttribute(pool, a, &v) != hipSuccess)
		return ~0ULL;
	return v;
}

static inline uint64_t lh_rand(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 2685821657736338717ULL;
}

/*
 * FIXTURE_SETUP's body for a fixture with members hipMemPool_t pool and
 * int base_dmabufs: a host pool of at most @max_size bytes that shares
 * through POSIX fds, and the dma-bufs alive before it.  Skips without the
 * module or without a host dma-buf exporter.
 */
#define LH_FD_POOL_SETUP(max_size)					\
	do {								\
		hipError_t e_;						\
									\
		self->pool = NULL;					\
		if (access("/dev/kfdpool", F_OK))			\
			SKIP(return,					\
			     "/dev/kfdpool missing (module not loaded)"); \
		self->base_dmabufs = lh_dmabufs(-1);			\
		e_ = lh_pool(&self->pool,				\
			     hipMemHandleTypePosixFileDescriptor,	\
			     max_size);					\
		if (e_ == hipErrorNoDevice)				\
			SKIP(return,					\
			     "no host dma-buf exporter (dma heap, udmabuf, vgem)"); \
		ASSERT_EQ(hipSuccess, e_)				\
			TH_LOG("%s", hipGetErrorName(e_));		\
		ksft_print_msg("host pool backend: %s\n",		\
			       kfdpoolMemPoolBackend(self->pool));	\
	} while (0)

/*
 * FIXTURE_TEARDOWN's body: the pool destroyed, and with every chunk and
 * import gone the dma-bufs are back to where they were.
 */
#define LH_FD_POOL_TEARDOWN()						\
	do {								\
		if (self->pool)						\
			EXPECT_EQ(hipSuccess,				\
				  hipMemPoolDestroy(self->pool));	\
		if (self->pool && self->base_dmabufs >= 0)		\
			EXPECT_EQ(self->base_dmabufs,			\
				  lh_dmabufs(self->base_dmabufs));	\
	} while (0)

#endif /* LIB_HIP_UTIL_H */
