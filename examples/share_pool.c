// SPDX-License-Identifier: MIT
/*
 * share_pool: two processes share a memory pool through HIP's mempool IPC
 * API, as a HIP program would.  Built four ways (make examples):
 *   share_pool          kfdpool's own HIP declarations, -lkfdpool-hip
 *   share_pool-hiphdr   HIP's headers, -lkfdpool-hip (no HIP runtime)
 *   share_pool-hiprt    HIP's headers, -lkfdpool-hip -lamdhip64: kfdpool
 *                       first, HIP's runtime beside it
 *   share_pool-preload  HIP's headers, -lamdhip64 alone: run it with
 *                       LD_PRELOAD=libkfdpool-hip.so.1
 * The last two (SHARE_POOL_WITH_RUNTIME) also ask the runtime for its
 * devices and say where the mempool calls go.
 *
 * The exporter creates a host pool that may be shared as a POSIX fd,
 * allocates a few buffers of different sizes, writes a message and a
 * pattern into them and exports the pool (an fd, sent over a unix socket
 * with SCM_RIGHTS) and each pointer (64 bytes of export data).  The
 * importer imports the pool and the pointers, checks every byte, answers
 * into the same memory, and both print the pool's accounting as HIP's
 * attributes report it.
 *
 *   share_pool [N]   N buffers (default 8)
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <kfdpool_hip.h>

/* kfdpool's extensions, where the process has them: not linked into
 * share_pool-preload, which gets them from the preloaded library. */
#pragma weak kfdpoolMemPoolGetStats
#pragma weak kfdpoolMemPoolBackend

#define CHECK(call) do { \
	hipError_t e_ = (call); \
	if (e_ != hipSuccess) { \
		fprintf(stderr, "%s: %s failed: %s (%s)\n", who, #call, \
			hipGetErrorName(e_), hipGetErrorString(e_)); \
		exit(1); \
	} \
} while (0)

static const char *who = "exporter";

static void send_all(int s, const void *p, size_t n)
{
	while (n) {
		ssize_t k = write(s, p, n);

		if (k <= 0) {
			perror("write");
			exit(1);
		}
		p = (const char *)p + k;
		n -= k;
	}
}

static void recv_all(int s, void *p, size_t n)
{
	while (n) {
		ssize_t k = read(s, p, n);

		if (k <= 0) {
			fprintf(stderr, "%s: peer went away\n", who);
			exit(1);
		}
		p = (char *)p + k;
		n -= k;
	}
}

static void send_fd(int s, int fd)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = { 0 };
	char b = 0;
	struct iovec iov = { &b, 1 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1,
			    .msg_control = cbuf, .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *c = CMSG_FIRSTHDR(&m);

	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
	if (sendmsg(s, &m, 0) != 1) {
		perror("sendmsg");
		exit(1);
	}
}

static int recv_fd(int s)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = { 0 };
	char b;
	struct iovec iov = { &b, 1 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1,
			    .msg_control = cbuf, .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *c;
	int fd = -1;

	if (recvmsg(s, &m, MSG_CMSG_CLOEXEC) != 1)
		return -1;
	c = CMSG_FIRSTHDR(&m);
	if (c && c->cmsg_type == SCM_RIGHTS)
		memcpy(&fd, CMSG_DATA(c), sizeof(int));
	return fd;
}

static size_t buf_size(int i)
{
	/*
	 * 4 KiB to 2 MiB, 4.4 MiB in all: within what an unprivileged user
	 * may lock by default (RLIMIT_MEMLOCK, 8 MiB), which host memory from
	 * kfdpool.ko counts against.
	 */
	static const size_t sizes[] = { 4096, 65536, 1 << 20, 2 << 20,
					12288, 256 << 10, 1 << 20, 40960 };

	return sizes[i % 8];
}

static unsigned char pattern(int i, size_t off, int reply)
{
	return (unsigned char)(i * 31 + off * 7 + (off >> 12) + reply * 101);
}

static void mib(const char *label, uint64_t v)
{
	printf("    %-28s %10llu bytes (%.2f MiB)\n", label,
	       (unsigned long long)v, v / 1048576.0);
}

static void print_accounting(hipMemPool_t pool)
{
	static const struct { hipMemPoolAttr a; const char *name; } attrs[] = {
		{ hipMemPoolAttrReservedMemCurrent, "ReservedMemCurrent" },
		{ hipMemPoolAttrReservedMemHigh, "ReservedMemHigh" },
		{ hipMemPoolAttrUsedMemCurrent, "UsedMemCurrent" },
		{ hipMemPoolAttrUsedMemHigh, "UsedMemHigh" },
	};
	struct kfdpool_pool_stats st;
	unsigned int i;

	printf("  [%s] pool accounting (hipMemPoolGetAttribute):\n", who);
	for (i = 0; i < sizeof(attrs) / sizeof(attrs[0]); i++) {
		uint64_t v = 0;

		CHECK(hipMemPoolGetAttribute(pool, attrs[i].a, &v));
		mib(attrs[i].name, v);
	}
	if (!kfdpoolMemPoolGetStats)
		return;
	CHECK(kfdpoolMemPoolGetStats(pool, &st));
	printf("  [%s] kernel's view of pool \"%s\" (this fd is %s):\n", who,
	       st.name, st.mode == KFDPOOL_MODE_OWNER ? "the owner" : "an import");
	printf("    %-28s %10u\n", "chunks (entries)", st.entries);
	printf("    %-28s %10u\n", "exported pointers (records)", st.records);
	printf("    %-28s %10u\n", "importer fds open", st.import_fds);
	printf("    %-28s %10u\n", "chunks this fd imported", st.fd_imports);
	mib("bytes this fd imported", st.fd_imported_bytes);
}

static int importer(int s, int n)
{
	hipMemPoolPtrExportData *data = calloc(n, sizeof(*data));
	size_t *sizes = calloc(n, sizeof(*sizes));
	hipMemPool_t pool;
	char msg[64];
	int i, fd;

	who = "importer";
	fd = recv_fd(s);
	if (fd < 0) {
		fprintf(stderr, "importer: no pool fd received\n");
		return 1;
	}
	/* HIP's convention: the fd value itself is the handle. */
	CHECK(hipMemPoolImportFromShareableHandle(&pool, (void *)(intptr_t)fd,
			hipMemHandleTypePosixFileDescriptor, 0));
	close(fd);
	recv_all(s, sizes, n * sizeof(*sizes));
	recv_all(s, data, n * sizeof(*data));
	printf("  [importer] pid %d imported the pool and %d pointers:\n",
	       (int)getpid(), n);
	for (i = 0; i < n; i++) {
		unsigned char *p;
		size_t off, bad = 0;

		CHECK(hipMemPoolImportPointer((void **)&p, pool, &data[i]));
		memcpy(msg, p, sizeof(msg));
		msg[sizeof(msg) - 1] = 0;
		for (off = sizeof(msg); off < sizes[i]; off++)
			bad += p[off] != pattern(i, off, 0);
		printf("    #%d %8zu bytes at %p: \"%s\", %zu bytes %s\n", i,
		       sizes[i], (void *)p, msg, sizes[i] - sizeof(msg),
		       bad ? "WRONG" : "checked");
		if (bad)
			return 1;
		/* Answer in place: the exporter checks it. */
		for (off = sizeof(msg); off < sizes[i]; off++)
			p[off] = pattern(i, off, 1);
		snprintf((char *)p, sizeof(msg), "importer %d was here",
			 (int)getpid());
	}
	print_accounting(pool);
	send_all(s, "R", 1);
	recv_all(s, msg, 1);
	/* hipFree of an imported pointer drops the import; the last one of
	 * a chunk unmaps it.  Re-import to free each once. */
	for (i = 0; i < n; i++) {
		void *p;

		CHECK(hipMemPoolImportPointer(&p, pool, &data[i]));
		CHECK(hipFree(p));	/* this import */
		CHECK(hipFree(p));	/* the first one */
	}
	CHECK(hipMemPoolDestroy(pool));
	send_all(s, "F", 1);
	free(data);
	free(sizes);
	return 0;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 8;
	hipMemPoolPtrExportData *data;
	hipMemPoolProps props;
	hipMemPool_t pool;
	size_t *sizes;
	void **ptrs;
	int sv[2], fd, i, status;
	pid_t pid;
	char c;

	if (n < 1 || n > 4096) {
		fprintf(stderr, "usage: %s [1..4096]\n", argv[0]);
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
#ifdef SHARE_POOL_WITH_RUNTIME
	{
		/* What a HIP program does first: ask the runtime. */
		hipError_t e = hipGetDeviceCount(&i);
		Dl_info rt, mp;

		if (!dladdr((void *)hipGetDeviceCount, &rt))
			rt.dli_fname = "?";
		if (!dladdr((void *)hipMemPoolCreate, &mp))
			mp.dli_fname = "?";
		printf("  HIP runtime %s: hipGetDeviceCount: %s (%d GPUs)\n",
		       rt.dli_fname, hipGetErrorName(e), e ? 0 : i);
		printf("  hipMemPool* calls go to %s\n", mp.dli_fname);
	}
#endif
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv)) {
		perror("socketpair");
		return 1;
	}
	pid = fork();
	if (pid < 0) {
		perror("fork");
		return 1;
	}
	if (!pid) {
		close(sv[0]);
		_exit(importer(sv[1], n));
	}
	close(sv[1]);

	memset(&props, 0, sizeof(props));
	props.allocType = hipMemAllocationTypePinned;
	props.handleTypes = hipMemHandleTypePosixFileDescriptor;
	props.location.type = hipMemLocationTypeHost;
	props.location.id = 0;
	CHECK(hipMemPoolCreate(&pool, &props));
	printf("  [exporter] pid %d created a host pool (chunks from %s)\n",
	       (int)getpid(), kfdpoolMemPoolBackend ?
	       kfdpoolMemPoolBackend(pool) : "?");

	data = calloc(n, sizeof(*data));
	sizes = calloc(n, sizeof(*sizes));
	ptrs = calloc(n, sizeof(*ptrs));
	for (i = 0; i < n; i++) {
		size_t off;

		sizes[i] = buf_size(i);
		CHECK(hipMallocFromPoolAsync(&ptrs[i], sizes[i], pool, NULL));
		snprintf(ptrs[i], 64, "buffer %d from exporter %d", i,
			 (int)getpid());
		for (off = 64; off < sizes[i]; off++)
			((unsigned char *)ptrs[i])[off] = pattern(i, off, 0);
		CHECK(hipMemPoolExportPointer(&data[i], ptrs[i]));
	}
	printf("  [exporter] allocated, filled and exported %d buffers\n", n);
	CHECK(hipMemPoolExportToShareableHandle(&fd, pool,
			hipMemHandleTypePosixFileDescriptor, 0));
	send_fd(sv[0], fd);
	close(fd);
	send_all(sv[0], sizes, n * sizeof(*sizes));
	send_all(sv[0], data, n * sizeof(*data));

	recv_all(sv[0], &c, 1);
	for (i = 0; i < n; i++) {
		size_t off, bad = 0;

		for (off = 64; off < sizes[i]; off++)
			bad += ((unsigned char *)ptrs[i])[off] != pattern(i, off, 1);
		if (bad || strncmp(ptrs[i], "importer ", 9)) {
			printf("  [exporter] buffer %d: the importer's answer is WRONG\n", i);
			return 1;
		}
	}
	printf("  [exporter] read the importer's answer in all %d buffers: \"%s\"\n",
	       n, (char *)ptrs[0]);
	print_accounting(pool);
	send_all(sv[0], "G", 1);
	recv_all(sv[0], &c, 1);
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status)) {
		printf("  [exporter] importer failed\n");
		return 1;
	}
	for (i = 0; i < n; i++)
		CHECK(hipFreeAsync(ptrs[i], NULL));
	printf("  [exporter] freed everything (records revoked, chunks given back):\n");
	print_accounting(pool);
	CHECK(hipMemPoolDestroy(pool));
	free(data);
	free(sizes);
	free(ptrs);
	printf("share_pool: OK\n");
	return 0;
}
