// SPDX-License-Identifier: GPL-2.0-only
/*
 * gpu_pool: a device pool shared by two processes through the real HIP
 * runtime, for AMD GPU nodes (tools/gpu-check runs it; it needs a GPU and
 * cannot run in the project's VMs).  Written against HIP's own headers and
 * linked as users link: -lkfdpool-hip -lamdhip64.
 *
 *   1. the exporter creates a device pool (PosixFileDescriptor) on its
 *      device 0, allocates 1 MiB, fills it with hipMemset, exports the
 *      pool and the pointer;
 *   2. the importer (another process, started by exec, never a fork of a
 *      process that initialised HIP) imports both, reads the bytes back
 *      with hipMemcpy, writes others with hipMemset;
 *   3. the exporter reads the importer's bytes with hipMemcpy, frees its
 *      pointer and exits first;
 *   4. the importer, alone now, still reads and writes the memory through
 *      the runtime, then frees its import and ends its pool.
 *
 * KTAP output: each process's steps as "# ok"/"# not ok" lines, then one
 * result per process; exit 0 when both passed, 4 (kselftest's skip) when
 * the runtime has no device or cannot share device memory (ROCm older
 * than 5.6: the library said which version it needs), 1 otherwise.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef __HIP_PLATFORM_AMD__
#define __HIP_PLATFORM_AMD__
#endif
#include <hip/hip_runtime_api.h>
#include <kfdpool_hip.h>

#define SIZE (1 << 20)
#define SKIP 4

static int nstep;

static int step(int ok, const char *what, hipError_t e)
{
	printf("# %sok %d - %s", ok ? "" : "not ", ++nstep, what);
	if (e)
		printf(" (%s)", hipGetErrorName(e));
	printf("\n");
	fflush(stdout);
	return ok;
}

static int all_bytes(const unsigned char *b, unsigned char v)
{
	size_t i;

	for (i = 0; i < SIZE && b[i] == v; i++)
		;
	return i == SIZE;
}

static int xfer(int sock, void *buf, size_t len, int out)
{
	char *p = buf;
	ssize_t n;

	while (len) {
		n = out ? write(sock, p, len) : read(sock, p, len);
		if (n <= 0)
			return -1;
		p += n;
		len -= n;
	}
	return 0;
}

static int send_fd(int sock, int fd)
{
	char c = 0, ctl[CMSG_SPACE(sizeof(int))] = { 0 };
	struct iovec iov = { &c, 1 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1,
			    .msg_control = ctl, .msg_controllen = sizeof(ctl) };
	struct cmsghdr *cm = CMSG_FIRSTHDR(&m);

	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	return sendmsg(sock, &m, 0) == 1 ? 0 : -1;
}

static int recv_fd(int sock)
{
	char c, ctl[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { &c, 1 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1,
			    .msg_control = ctl, .msg_controllen = sizeof(ctl) };
	struct cmsghdr *cm;
	int fd;

	if (recvmsg(sock, &m, MSG_CMSG_CLOEXEC) != 1)
		return -1;
	cm = CMSG_FIRSTHDR(&m);
	if (!cm || cm->cmsg_type != SCM_RIGHTS)
		return -1;
	memcpy(&fd, CMSG_DATA(cm), sizeof(int));
	return fd;
}

/* The exporter: 0, SKIP or 1. */
static int exporter(int sock)
{
	hipMemPoolProps props = { 0 };
	hipMemPoolPtrExportData d;
	unsigned char *buf = malloc(SIZE);
	hipMemPool_t pool;
	hipError_t e;
	void *p;
	int fd, n = 0;
	char c = 0;

	e = hipGetDeviceCount(&n);
	if (e || !n) {
		printf("# exporter: no device (%s)\n", hipGetErrorName(e));
		xfer(sock, "S", 1, 1);
		return SKIP;
	}
	props.allocType = hipMemAllocationTypePinned;
	props.handleTypes = hipMemHandleTypePosixFileDescriptor;
	props.location.type = hipMemLocationTypeDevice;
	props.location.id = 0;
	e = hipMemPoolCreate(&pool, &props);
	if (e == hipErrorNotSupported) {
		printf("# exporter: this runtime cannot share device memory "
		       "(see the line above for the ROCm version it needs)\n");
		xfer(sock, "S", 1, 1);
		return SKIP;
	}
	if (!step(!e, "exporter: hipMemPoolCreate (device 0, PosixFileDescriptor)", e))
		goto fail;
	printf("# exporter: pool backend %s\n", kfdpoolMemPoolBackend(pool));
	e = hipMallocFromPoolAsync(&p, SIZE, pool, NULL);
	if (!step(!e, "exporter: hipMallocFromPoolAsync 1 MiB", e))
		goto fail;
	e = hipMemset(p, 0x5a, SIZE);
	if (!e)
		e = hipDeviceSynchronize();
	if (!step(!e, "exporter: hipMemset 0x5a", e))
		goto fail;
	e = hipMemPoolExportToShareableHandle(&fd, pool,
			hipMemHandleTypePosixFileDescriptor, 0);
	if (!e)
		e = hipMemPoolExportPointer(&d, p);
	if (!step(!e, "exporter: pool and pointer exported", e))
		goto fail;
	if (xfer(sock, "G", 1, 1) || send_fd(sock, fd) ||
	    xfer(sock, &d, sizeof(d), 1))
		goto fail;
	close(fd);
	/* The importer read 0x5a and wrote 0xa5. */
	if (xfer(sock, &c, 1, 0) || c != 'W') {
		step(0, "exporter: the importer's answer", hipSuccess);
		goto fail;
	}
	e = hipMemcpy(buf, p, SIZE, hipMemcpyDeviceToHost);
	if (!step(!e && all_bytes(buf, 0xa5),
		  "exporter: hipMemcpy reads the importer's 0xa5", e))
		goto fail;
	e = hipFree(p);
	if (!e)
		e = hipMemPoolDestroy(pool);
	if (!step(!e, "exporter: freed its pointer, ended its pool, exits first", e))
		goto fail;
	free(buf);
	return 0;
fail:
	free(buf);
	return 1;
}

/* The importer: 0, SKIP or 1. */
static int importer(int sock)
{
	unsigned char *buf = malloc(SIZE);
	hipMemPoolPtrExportData d;
	hipMemPool_t pool;
	hipError_t e;
	char c = 0;
	void *q;
	int fd;

	if (xfer(sock, &c, 1, 0) || c == 'S')
		return SKIP;
	fd = recv_fd(sock);
	if (fd < 0 || xfer(sock, &d, sizeof(d), 0))
		return 1;
	e = hipMemPoolImportFromShareableHandle(&pool, (void *)(intptr_t)fd,
			hipMemHandleTypePosixFileDescriptor, 0);
	if (!e)
		e = hipMemPoolImportPointer(&q, pool, &d);
	if (!step(!e, "importer: pool and pointer imported", e))
		return 1;
	e = hipMemcpy(buf, q, SIZE, hipMemcpyDeviceToHost);
	if (!step(!e && all_bytes(buf, 0x5a),
		  "importer: hipMemcpy reads the exporter's 0x5a", e))
		return 1;
	e = hipMemset(q, 0xa5, SIZE);
	if (!e)
		e = hipDeviceSynchronize();
	if (!step(!e, "importer: hipMemset 0xa5", e))
		return 1;
	if (xfer(sock, "W", 1, 1))
		return 1;
	/* The exporter ends: its end of the socket closes when it exits. */
	if (read(sock, &c, 1) != 0)
		return 1;
	memset(buf, 0, SIZE);
	e = hipMemcpy(buf, q, SIZE, hipMemcpyDeviceToHost);
	if (!step(!e && all_bytes(buf, 0xa5),
		  "importer: the memory outlives its exporter (hipMemcpy)", e))
		return 1;
	e = hipMemset(q, 0x3c, SIZE);
	if (!e)
		e = hipMemcpy(buf, q, SIZE, hipMemcpyDeviceToHost);
	if (!step(!e && all_bytes(buf, 0x3c),
		  "importer: and takes writes (hipMemset, hipMemcpy)", e))
		return 1;
	e = hipFree(q);
	if (!e)
		e = hipMemPoolDestroy(pool);
	close(fd);
	free(buf);
	return step(!e, "importer: freed its import, ended its pool", e) ? 0 : 1;
}

/* Start @role on @sock; the other end, @other, stays out of it (the
 * importer learns that the exporter exited from its end closing). */
static pid_t spawn(const char *self, const char *role, int sock, int other)
{
	char arg[16];
	pid_t pid = fork();

	if (pid)
		return pid;
	close(other);
	snprintf(arg, sizeof(arg), "%d", sock);
	execl(self, "gpu_pool", role, arg, (char *)NULL);
	_exit(127);
}

int main(int argc, char **argv)
{
	int sv[2], st_e = 0, st_i = 0, re, ri;
	pid_t pe, pi;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 3 && !strcmp(argv[1], "--exporter"))
		return exporter(atoi(argv[2]));
	if (argc == 3 && !strcmp(argv[1], "--importer"))
		return importer(atoi(argv[2]));
	/* This process touches no HIP: the two roles are exec'd. */
	printf("TAP version 13\n1..2\n# gpu_pool: a device pool shared by "
	       "two processes through the HIP runtime\n");
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv))
		return 1;
	pe = spawn("/proc/self/exe", "--exporter", sv[0], sv[1]);
	pi = spawn("/proc/self/exe", "--importer", sv[1], sv[0]);
	close(sv[0]);
	close(sv[1]);
	if (pe < 0 || pi < 0)
		return 1;
	waitpid(pe, &st_e, 0);
	waitpid(pi, &st_i, 0);
	re = WIFEXITED(st_e) ? WEXITSTATUS(st_e) : 1;
	ri = WIFEXITED(st_i) ? WEXITSTATUS(st_i) : 1;
	if (re == SKIP && ri == SKIP) {
		printf("ok 1 exporter # SKIP no device pool through this runtime\n"
		       "ok 2 importer # SKIP no device pool through this runtime\n");
		return SKIP;
	}
	printf("%sok 1 exporter\n%sok 2 importer\n", re ? "not " : "",
	       ri ? "not " : "");
	return re || ri;
}
