// SPDX-License-Identifier: GPL-2.0-only
/*
 * gpu_pool: the checks of tools/gpu-check that need a GPU, against the
 * real HIP runtime (they cannot run in the project's VMs).  Written
 * against HIP's own headers and linked as users link: -lkfdpool-hip
 * -lamdhip64 (with -lkfdpool for the native import the dma-buf checks
 * use).
 *
 *   gpu_pool --info          the runtime's version, the virtual memory
 *                            attribute, KFD's ioctl version, the path
 *                            libkfdpool-hip chooses (its stderr line)
 *   gpu_pool --list          the checks' names
 *   gpu_pool --check NAME    one check: exit 0 passed, 1 failed, 4 not run
 *                            (the last line says why)
 *
 * The checks (what each shows is in its comment below): share, dmabuf-size,
 * canary, free-while-mapped, stream-order, last-error, new-chunk-timing,
 * other-device-free, many-chunks, capture, set-mem-pool, kernel-access,
 * device1-attributes, memory-back, earlier-error, stream-sync-alone,
 * big-allocation, exporter-killed, hsa-export, peer-access, spin-clock.
 * The path is the one KFDPOOL_RT_PATH forces, or libkfdpool-hip's choice;
 * tools/gpu-check runs the path-dependent checks on both paths, and the
 * dma-buf checks a second time with HSA_DISABLE_FRAGMENT_ALLOCATOR=1 as a
 * control.  The checks that launch kernels load them from
 * KFDPOOL_GPU_KERNELS, a code object built from tools/gpu/kernels.hip.  A
 * second process is always started by exec, never by a fork of a process
 * that initialised HIP.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef __HIP_PLATFORM_AMD__
#define __HIP_PLATFORM_AMD__
#endif
#include <hip/hip_runtime_api.h>
#include <kfdpool_hip.h>
#include <kfdpool.h>

#define PASS 0
#define FAIL 1
#define NOTRUN 4
#define MIB (1ULL << 20)
#define KIB (1ULL << 10)
/* hipDeviceAttributeVirtualMemoryManagementSupported in HIP >= 5.7. */
#define VMM_ATTR 89

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

static int failed(const char *what, hipError_t e)
{
	step(0, what, e);
	return FAIL;
}

static int notrun(const char *fmt, ...)
{
	va_list ap;

	printf("# not run: ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	return NOTRUN;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* ---- plumbing ---- */

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

/* Start this program as "--role ROLE SOCK" (exec, never a plain fork). */
static pid_t spawn(const char *role, int sock, int other)
{
	char arg[16];
	pid_t pid = fork();

	if (pid)
		return pid;
	close(other);
	snprintf(arg, sizeof(arg), "%d", sock);
	execl("/proc/self/exe", "gpu_pool", "--role", role, arg, (char *)NULL);
	_exit(127);
}

/* Run @role in another process beside @fn in this one; both must pass. */
static int two_processes(const char *role, int (*fn)(int sock))
{
	int sv[2], st = 0, mine, theirs;
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv))
		return FAIL;
	pid = spawn(role, sv[1], sv[0]);
	close(sv[1]);
	mine = fn(sv[0]);
	close(sv[0]);
	waitpid(pid, &st, 0);
	theirs = WIFEXITED(st) ? WEXITSTATUS(st) : FAIL;
	if (mine == NOTRUN || theirs == NOTRUN)
		return mine == NOTRUN ? NOTRUN : theirs;
	return mine || theirs ? FAIL : PASS;
}

static int devices(void)
{
	int n = 0;

	return hipGetDeviceCount(&n) ? 0 : n;
}

static hipError_t pool_on(hipMemPool_t *pool, hipMemLocationType where,
			  int dev, size_t max_size)
{
	hipMemPoolProps props;

	memset(&props, 0, sizeof(props));
	props.allocType = hipMemAllocationTypePinned;
	props.handleTypes = hipMemHandleTypePosixFileDescriptor;
	props.location.type = where;
	props.location.id = dev;
	/* maxSize; HIP 5.2's headers call these bytes reserved[0..7]. */
	memcpy((char *)&props.win32SecurityAttributes +
	       sizeof(props.win32SecurityAttributes), &max_size,
	       sizeof(max_size));
	return hipMemPoolCreate(pool, &props);
}

/* The pool's fd and @p's export data, as an exporter sends them. */
static hipError_t export_both(hipMemPool_t pool, void *p, int *fd,
			      hipMemPoolPtrExportData *d)
{
	hipError_t e = hipMemPoolExportToShareableHandle(fd, pool,
			hipMemHandleTypePosixFileDescriptor, 0);

	return e ? e : hipMemPoolExportPointer(d, p);
}

/*
 * The importer's side of export_both: wait for the exporter's go ('S':
 * it could not run), take the pool's fd and the export data, import both.
 * NOTRUN or FAIL, else 0 with the runtime's answer in *e.
 */
static int import_both(int sock, hipMemPool_t *pool, void **q, int *fd,
		       hipError_t *e)
{
	hipMemPoolPtrExportData d;
	char c = 0;

	if (xfer(sock, &c, 1, 0) || c == 'S')
		return NOTRUN;
	*fd = recv_fd(sock);
	if (*fd < 0 || xfer(sock, &d, sizeof(d), 0))
		return FAIL;
	*e = hipMemPoolImportFromShareableHandle(pool, (void *)(intptr_t)*fd,
			hipMemHandleTypePosixFileDescriptor, 0);
	if (!*e)
		*e = hipMemPoolImportPointer(q, *pool, &d);
	return 0;
}

/* A device pool on device 0, or why not (NOTRUN printed). */
static int device_pool(hipMemPool_t *pool, size_t gran, size_t max_size)
{
	hipError_t e;

	if (!devices())
		return notrun("the runtime has no device");
	e = pool_on(pool, hipMemLocationTypeDevice, 0, max_size);
	if (e == hipErrorNotSupported)
		return notrun("this runtime cannot share device memory (see "
			      "libkfdpool-hip's line on stderr)");
	if (!step(!e, "device pool (device 0, PosixFileDescriptor)", e))
		return FAIL;
	if (gran && kfdpoolMemPoolSetGranularity(*pool, gran))
		return failed("granularity", hipSuccess);
	return PASS;
}

static int all_bytes(const unsigned char *b, size_t n, unsigned char v)
{
	size_t i;

	for (i = 0; i < n && b[i] == v; i++)
		;
	return i == n;
}

static int hip_version(void)
{
	int v = 0;

	return hipRuntimeGetVersion(&v) ? 0 : v;
}

/*
 * Whether libkfdpool-hip maps device chunks as external memory here (its
 * dmabuf path: KFDPOOL_RT_PATH=dmabuf, or a runtime without virtual
 * memory) rather than with hipMemMap: what some checks expect differs.
 */
static int ext_path(void)
{
	const char *e = getenv("KFDPOOL_RT_PATH");
	int attr = 0;

	if (e && !strcmp(e, "dmabuf"))
		return 1;
	if (hip_version() < 60200000 || !devices())
		return 1;
	return hipDeviceGetAttribute(&attr, (hipDeviceAttribute_t)VMM_ATTR, 0) ||
	       !attr;
}

/* ---- kernels ---- */

static hipFunction_t k_spin, k_fill, k_count;
static unsigned long long cycles_per_s;

/*
 * The kernels, loaded for the current device.  kp_spin counts clock64(),
 * whose timer runs at hipDeviceAttributeClockInstructionRate (kHz; a
 * constant 100 MHz on many AMD GPUs), not at the shader clock
 * hipDeviceAttributeClockRate reports: its cycles per second come from
 * the former (spin-clock times it).
 */
static int kernels(void)
{
	const char *path = getenv("KFDPOOL_GPU_KERNELS");
	hipModule_t mod;
	int khz = 0, dev = 0;

	if (!path || !*path)
		return notrun("no kernels (KFDPOOL_GPU_KERNELS: gpu-check builds "
			      "them with hipcc)");
	if (hipModuleLoad(&mod, path) ||
	    hipModuleGetFunction(&k_spin, mod, "kp_spin") ||
	    hipModuleGetFunction(&k_fill, mod, "kp_fill") ||
	    hipModuleGetFunction(&k_count, mod, "kp_count"))
		return failed("load the kernels", hipSuccess);
	hipGetDevice(&dev);
	if (hipDeviceGetAttribute(&khz, hipDeviceAttributeClockInstructionRate,
				  dev) || khz <= 0)
		hipDeviceGetAttribute(&khz, hipDeviceAttributeClockRate, dev);
	cycles_per_s = (unsigned long long)(khz > 0 ? khz : 100000) * 1000;
	return PASS;
}

static hipError_t spin(hipStream_t s, double seconds)
{
	unsigned long long cycles = (unsigned long long)(seconds * cycles_per_s);
	unsigned int *flag = NULL, v = 0;
	void *args[] = { &cycles, &flag, &v };

	return hipModuleLaunchKernel(k_spin, 1, 1, 1, 64, 1, 1, 0, s, args,
				     NULL);
}

static hipError_t fill(hipStream_t s, void *p, unsigned int v, size_t bytes)
{
	unsigned long long n = bytes / 4;
	void *args[] = { &p, &v, &n };

	return hipModuleLaunchKernel(k_fill, 256, 1, 1, 256, 1, 1, 0, s, args,
				     NULL);
}

/* Words of @p (@bytes) that are not @v, counted by a kernel on @s. */
static long count(hipStream_t s, const void *p, unsigned int v, size_t bytes)
{
	unsigned long long n = bytes / 4;
	unsigned int *bad = NULL, host = 0;
	void *args[] = { &p, &v, &n, &bad };

	if (hipMalloc((void **)&bad, sizeof(*bad)) ||
	    hipMemset(bad, 0, sizeof(*bad)) ||
	    hipModuleLaunchKernel(k_count, 256, 1, 1, 256, 1, 1, 0, s, args,
				  NULL) ||
	    hipStreamSynchronize(s) ||
	    hipMemcpy(&host, bad, sizeof(host), hipMemcpyDeviceToHost))
		host = ~0u;
	hipFree(bad);
	return host == ~0u ? -1 : (long)host;
}

/* ---- --info ---- */

struct kfd_version {		/* struct kfd_ioctl_get_version_args */
	uint32_t major, minor;
};
#define KFD_IOC_GET_VERSION _IOR('K', 0x01, struct kfd_version)

static int info(void)
{
	struct kfd_version kv = { 0, 0 };
	hipMemPool_t pool;
	int v = 0, attr = -1, fd;

	hipRuntimeGetVersion(&v);
	printf("HIP runtime: HIP_VERSION %d (%d.%d), built against %d\n", v,
	       v / 10000000, v / 100000 % 100, HIP_VERSION);
	if (v >= 60100000 && devices())
		hipDeviceGetAttribute(&attr, (hipDeviceAttribute_t)VMM_ATTR, 0);
	if (attr >= 0)
		printf("hipDeviceAttributeVirtualMemoryManagementSupported "
		       "(device 0): %d\n", attr);
	else
		printf("hipDeviceAttributeVirtualMemoryManagementSupported: "
		       "not asked (HIP < 6.1 or no device)\n");
	fd = open("/dev/kfd", O_RDWR | O_CLOEXEC);
	if (fd >= 0 && !ioctl(fd, KFD_IOC_GET_VERSION, &kv))
		printf("KFD ioctl version: %u.%u\n", kv.major, kv.minor);
	else
		printf("KFD ioctl version: unknown (/dev/kfd: %s)\n",
		       strerror(errno));
	if (fd >= 0)
		close(fd);
	printf("devices: %d\n", devices());
	fflush(stdout);
	/* libkfdpool-hip says its path on stderr at the first device pool. */
	if (!pool_on(&pool, hipMemLocationTypeDevice, 0, 0))
		hipMemPoolDestroy(pool);
	return PASS;
}

/* ---- share: a device pool between two processes, both ways ---- */

static int share_exporter(int sock)
{
	unsigned char *buf = malloc(MIB);
	hipMemPoolPtrExportData d;
	hipMemPool_t pool;
	hipError_t e;
	int fd, r;
	char c = 0;
	void *p;

	r = device_pool(&pool, 0, 0);
	if (r || !buf) {
		xfer(sock, "S", 1, 1);
		return r ? r : FAIL;
	}
	e = hipMallocFromPoolAsync(&p, MIB, pool, NULL);
	if (!e)
		e = hipMemset(p, 0x5a, MIB);
	if (!e)
		e = hipDeviceSynchronize();
	if (!step(!e, "exporter: 1 MiB allocated, hipMemset 0x5a", e))
		return FAIL;
	e = export_both(pool, p, &fd, &d);
	if (!step(!e, "exporter: pool and pointer exported", e))
		return FAIL;
	if (xfer(sock, "G", 1, 1) || send_fd(sock, fd) ||
	    xfer(sock, &d, sizeof(d), 1))
		return FAIL;
	close(fd);
	if (xfer(sock, &c, 1, 0) || c != 'W')
		return failed("exporter: the importer's answer", hipSuccess);
	e = hipMemcpy(buf, p, MIB, hipMemcpyDeviceToHost);
	if (!step(!e && all_bytes(buf, MIB, 0xa5),
		  "exporter: hipMemcpy reads the importer's 0xa5", e))
		return FAIL;
	e = hipFree(p);
	if (!e)
		e = hipMemPoolDestroy(pool);
	free(buf);
	return step(!e, "exporter: freed, pool ended, exits first", e) ?
	       PASS : FAIL;
}

static int share_importer(int sock)
{
	unsigned char *buf = malloc(MIB);
	hipPointerAttribute_t at;
	hipMemPool_t pool;
	hipError_t e;
	char c = 0;
	void *q;
	int fd, r;

	r = import_both(sock, &pool, &q, &fd, &e);
	if (r || !buf)
		return r ? r : FAIL;
	if (!step(!e, "importer: pool and pointer imported", e))
		return FAIL;
	e = hipPointerGetAttributes(&at, q);
	step(!e, "importer: hipPointerGetAttributes knows the pointer", e);
	e = hipMemcpy(buf, q, MIB, hipMemcpyDeviceToHost);
	if (!step(!e && all_bytes(buf, MIB, 0x5a),
		  "importer: hipMemcpy reads the exporter's 0x5a", e))
		return FAIL;
	e = hipMemset(q, 0xa5, MIB);
	if (!e)
		e = hipDeviceSynchronize();
	if (!step(!e, "importer: hipMemset 0xa5", e) || xfer(sock, "W", 1, 1))
		return FAIL;
	if (read(sock, &c, 1) != 0)	/* the exporter exits first */
		return FAIL;
	memset(buf, 0, MIB);
	e = hipMemcpy(buf, q, MIB, hipMemcpyDeviceToHost);
	if (!step(!e && all_bytes(buf, MIB, 0xa5),
		  "importer: the memory outlives its exporter", e))
		return FAIL;
	e = hipFree(q);
	if (!e)
		e = hipMemPoolDestroy(pool);
	close(fd);
	free(buf);
	return step(!e, "importer: freed its import, ended its pool", e) ?
	       PASS : FAIL;
}

static int check_share(void)
{
	return two_processes("share-importer", share_exporter);
}

/* ---- the dma-buf of a chunk is that chunk ---- */

/*
 * A 64 KiB-granularity pool's first chunk, exported and imported natively
 * in this process: the dma-buf's size against the chunk's (the runtime's
 * granularity on the vmm path, 4 MiB on the dmabuf path), and its bytes
 * (hipImportExternalMemory, copied whole) against a canary hipMalloc made
 * beside it, which must not be in it.  @canary: 0 for the size alone.
 */
static int chunk_dmabuf(int canary)
{
	struct kfdpool_pool_stats st;
	struct kfdpool_import out;
	struct kfdpool_record rec;
	hipMemPoolPtrExportData d;
	hipExternalMemoryHandleDesc hd;
	hipExternalMemoryBufferDesc bd;
	hipExternalMemory_t ext;
	hipMemPool_t pool;
	unsigned char *buf = NULL;
	void *p, *c = NULL, *m = NULL;
	off_t size;
	int r, fd;
	hipError_t e;

	r = device_pool(&pool, 64 * KIB, 0);
	if (r)
		return r;
	e = hipMallocFromPoolAsync(&p, 64 * KIB, pool, NULL);
	if (!e)
		e = hipMemset(p, 0x5a, 64 * KIB);
	if (!e && canary) {
		e = hipMalloc(&c, 64 * KIB);
		if (!e)
			e = hipMemset(c, 0xcc, 64 * KIB);
	}
	if (!e)
		e = hipDeviceSynchronize();
	if (!step(!e, "64 KiB allocated (and a canary hipMalloc)", e))
		return FAIL;
	e = export_both(pool, p, &fd, &d);
	if (!step(!e, "exported", e))
		return FAIL;
	memcpy(&rec, &d, sizeof(rec));
	r = kfdpool_import(fd, &rec, 0, &out);
	if (!step(r >= 0, "the chunk imported natively (kfdpool_import)",
		  hipSuccess))
		return FAIL;
	size = lseek(out.fd, 0, SEEK_END);
	printf("# chunk: entry %llu bytes, dma-buf %lld bytes, pool reserves "
	       "%llu\n", (unsigned long long)out.entry_size, (long long)size,
	       kfdpoolMemPoolGetStats(pool, &st) ? 0ULL :
	       (unsigned long long)st.reserved_bytes);
	if (!step(size == (off_t)out.entry_size &&
		  st.reserved_bytes == out.entry_size && st.entries == 1,
		  "the dma-buf is the chunk, as the pool counts it", hipSuccess))
		return FAIL;
	if (canary) {
		memset(&hd, 0, sizeof(hd));
		hd.type = hipExternalMemoryHandleTypeOpaqueFd;
		hd.handle.fd = out.fd;
		hd.size = out.entry_size;
		memset(&bd, 0, sizeof(bd));
		bd.size = out.entry_size;
		buf = malloc(out.entry_size);
		e = buf ? hipImportExternalMemory(&ext, &hd) :
		    hipErrorOutOfMemory;
		if (!e)
			e = hipExternalMemoryGetMappedBuffer(&m, ext, &bd);
		if (!e)
			e = hipMemcpy(buf, m, out.entry_size,
				      hipMemcpyDeviceToHost);
		if (!step(!e && !memchr(buf, 0xcc, out.entry_size),
			  "none of the canary's bytes in the chunk's dma-buf",
			  e))
			return FAIL;
		hipFree(m);
		hipDestroyExternalMemory(ext);
		free(buf);
		hipFree(c);
	}
	close(out.fd);
	kfdpool_release(fd, out.entry_id);
	close(fd);
	e = hipFree(p);
	if (!e)
		e = hipMemPoolDestroy(pool);
	return step(!e, "freed", e) ? PASS : FAIL;
}

static int check_dmabuf_size(void)
{
	return chunk_dmabuf(0);
}

static int check_canary(void)
{
	return chunk_dmabuf(1);
}

/* ---- free and reallocate while an importer still maps ---- */

static int fwm_exporter(int sock)
{
	hipMemPoolPtrExportData d;
	hipMemPool_t pool;
	void *p, *bait[24];
	hipError_t e = hipSuccess;
	int r, fd, i;
	char c = 0;

	r = device_pool(&pool, 0, 0);
	if (r) {
		xfer(sock, "S", 1, 1);
		return r;
	}
	e = hipMallocFromPoolAsync(&p, 2 * MIB, pool, NULL);
	if (!e)
		e = hipMemset(p, 0x11, 2 * MIB);
	if (!e)
		e = hipDeviceSynchronize();
	if (!e)
		e = export_both(pool, p, &fd, &d);
	if (!step(!e, "exporter: 2 MiB of 0x11 exported", e))
		return FAIL;
	if (xfer(sock, "G", 1, 1) || send_fd(sock, fd) ||
	    xfer(sock, &d, sizeof(d), 1) || xfer(sock, &c, 1, 0))
		return FAIL;
	close(fd);
	/* The importer maps it; the chunk goes back, and the runtime's next
	 * allocations must not be its memory. */
	e = hipFree(p);
	if (!e)
		e = hipMemPoolTrimTo(pool, 0);
	for (i = 0; !e && i < 24; i++) {
		e = hipMalloc(&bait[i], i < 16 ? 64 * KIB << (i % 6) : 2 * MIB);
		if (!e)
			e = hipMemset(bait[i], 0x77, 64 * KIB);
	}
	if (!e)
		e = hipDeviceSynchronize();
	if (!step(!e, "exporter: freed, trimmed, 24 hipMalloc of 0x77", e))
		return FAIL;
	if (xfer(sock, "B", 1, 1) || xfer(sock, &c, 1, 0) || c != 'K')
		return failed("exporter: the importer still reads 0x11",
			      hipSuccess);
	while (i--)
		hipFree(bait[i]);
	return hipMemPoolDestroy(pool) ? FAIL : PASS;
}

static int fwm_importer(int sock)
{
	unsigned char *buf = malloc(2 * MIB);
	hipMemPool_t pool;
	hipError_t e;
	char c = 0;
	void *q;
	int fd, ok, r;

	r = import_both(sock, &pool, &q, &fd, &e);
	if (r || !buf)
		return r ? r : FAIL;
	if (!e)
		e = hipMemcpy(buf, q, 2 * MIB, hipMemcpyDeviceToHost);
	if (!step(!e && all_bytes(buf, 2 * MIB, 0x11),
		  "importer: maps and reads 0x11", e))
		return FAIL;
	if (xfer(sock, "M", 1, 1) || xfer(sock, &c, 1, 0))
		return FAIL;
	e = hipMemcpy(buf, q, 2 * MIB, hipMemcpyDeviceToHost);
	ok = !e && all_bytes(buf, 2 * MIB, 0x11);
	step(ok, "importer: still 0x11 after the exporter's reallocations", e);
	xfer(sock, ok ? "K" : "X", 1, 1);
	hipFree(q);
	hipMemPoolDestroy(pool);
	close(fd);
	free(buf);
	return ok ? PASS : FAIL;
}

static int check_free_while_mapped(void)
{
	return two_processes("fwm-importer", fwm_exporter);
}

/* ---- stream order, checked with kernel writes ---- */

static void reuse(hipMemPool_t pool, int follow, int opport, int internal)
{
	hipMemPoolSetAttribute(pool, hipMemPoolReuseFollowEventDependencies,
			       &follow);
	hipMemPoolSetAttribute(pool, hipMemPoolReuseAllowOpportunistic, &opport);
	hipMemPoolSetAttribute(pool, hipMemPoolReuseAllowInternalDependencies,
			       &internal);
}

/*
 * A spins 1 s, then writes 0xaaaaaaaa to p, then frees p.  B allocates
 * the same size (the pool has room for one block), writes 0xbbbbbbbb: the
 * final bytes must be B's wherever B got p, and B must get it only as the
 * attribute allows.
 */
static int check_stream_order(void)
{
	static const struct {
		int follow, opport, internal, wait_event;
		const char *what;
	} cases[] = {
		{ 0, 0, 0, 0, "no reuse attribute: B never gets A's block" },
		{ 0, 1, 0, 0, "opportunistic: not while A's kernel runs" },
		{ 0, 0, 1, 0, "internal dependencies: B waits for A" },
		{ 1, 0, 0, 1, "follow event dependencies: B waited for A" },
	};
	hipStream_t a, b;
	hipMemPool_t pool;
	hipEvent_t ev;
	size_t i, size = 4 * MIB;	/* a chunk on either path */
	int r, ok = 1;
	void *p, *q;
	hipError_t e;

	r = kernels();
	if (!r)
		r = device_pool(&pool, size, size);
	if (r)
		return r;
	if (hipStreamCreate(&a) || hipStreamCreate(&b) ||
	    hipEventCreateWithFlags(&ev, hipEventDisableTiming))
		return FAIL;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		reuse(pool, cases[i].follow, cases[i].opport, cases[i].internal);
		q = NULL;
		e = hipMallocFromPoolAsync(&p, size, pool, a);
		if (!e)
			e = spin(a, 1.0);
		if (!e)
			e = fill(a, p, 0xaaaaaaaa, size);
		if (!e)
			e = hipFreeAsync(p, a);
		if (!e && cases[i].wait_event) {
			e = hipEventRecord(ev, a);
			if (!e)
				e = hipStreamWaitEvent(b, ev, 0);
		}
		if (e) {
			ok = step(0, cases[i].what, e);
			break;
		}
		e = hipMallocFromPoolAsync(&q, size, pool, b);
		if (!e)
			e = fill(b, q, 0xbbbbbbbb, size);
		if (!e)
			e = hipDeviceSynchronize();
		if (!e && q == p && !cases[i].internal && !cases[i].wait_event)
			ok &= step(0, cases[i].what, hipSuccess);
		else if (!e)
			ok &= step(!count(b, q, 0xbbbbbbbb, size), cases[i].what,
				   hipSuccess);
		else
			ok &= step(e == hipErrorOutOfMemory && q == NULL,
				   cases[i].what, e);
		if (q)
			hipFreeAsync(q, b);
		hipDeviceSynchronize();
		hipMemPoolTrimTo(pool, 0);
	}
	hipEventDestroy(ev);
	hipStreamDestroy(a);
	hipStreamDestroy(b);
	hipMemPoolDestroy(pool);
	return ok ? PASS : FAIL;
}

/* ---- hipGetLastError after pending markers ---- */

static int check_last_error(void)
{
	hipMemPool_t pool;
	hipStream_t a, b;
	hipError_t e, last;
	void *p, *q = NULL;
	int r, ok;

	r = kernels();
	if (!r)
		r = device_pool(&pool, 4 * MIB, 4 * MIB);
	if (r)
		return r;
	reuse(pool, 0, 1, 0);
	if (hipStreamCreate(&a) || hipStreamCreate(&b))
		return FAIL;
	e = hipMallocFromPoolAsync(&p, 4 * MIB, pool, a);
	if (!e)
		e = spin(a, 1.0);
	if (!e)
		e = hipFreeAsync(p, a);
	if (!step(!e, "a free pending behind a kernel", e))
		return FAIL;
	/* B polls A's marker (not ready: hipErrorNotReady in the runtime). */
	e = hipMallocFromPoolAsync(&q, 4 * MIB, pool, b);
	last = hipGetLastError();
	ok = step(last == e, "hipGetLastError is the allocation's own answer",
		  last);
	printf("# allocation: %s, hipGetLastError: %s\n", hipGetErrorName(e),
	       hipGetErrorName(last));
	if (!e)
		hipFreeAsync(q, b);
	e = hipMallocFromPoolAsync(&q, 2 * MIB, pool, a);
	last = hipGetLastError();
	ok &= step(!e && last == hipSuccess,
		   "A's own block at once, hipGetLastError hipSuccess", last);
	if (!e)
		hipFreeAsync(q, a);
	hipDeviceSynchronize();
	hipStreamDestroy(a);
	hipStreamDestroy(b);
	hipMemPoolDestroy(pool);
	return ok ? PASS : FAIL;
}

/* ---- a new chunk while a long kernel runs ---- */

/* A kernel of 3 s on stream A, then on the null stream: an allocation on B
 * that needs a new chunk waits for neither on the dmabuf path, for the
 * null stream alone on the vmm path (HIP <= 7.2). */

static int check_new_chunk_timing(void)
{
	hipStream_t a, b, on[2];
	hipMemPool_t pool;
	double t, took[2];
	void *p[2];
	int r, i, ok = 1;
	hipError_t e;

	r = kernels();
	if (!r)
		r = device_pool(&pool, 2 * MIB, 0);
	if (r)
		return r;
	if (hipStreamCreate(&a) || hipStreamCreate(&b))
		return FAIL;
	/* A kernel of 3 s on another stream, then on the null stream; the
	 * allocation on B, larger than a chunk, needs a chunk of its own
	 * each time. */
	on[0] = a;
	on[1] = NULL;
	for (i = 0; i < 2; i++) {
		e = spin(on[i], 3.0);
		if (e)
			return failed("launch", e);
		t = now();
		e = hipMallocFromPoolAsync(&p[i], 8 * MIB, pool, b);
		took[i] = now() - t;
		printf("# a new chunk while a kernel runs on %s: %.3f s (%s), "
		       "the kernel %s\n", i ? "the null stream" : "stream A",
		       took[i], hipGetErrorName(e),
		       hipStreamQuery(on[i]) == hipErrorNotReady ?
		       "still running" : "done");
		/* hipMemMap, which maps the vmm path's chunks, waits for the
		 * device's null stream up to HIP 7.2 (hip_vm.cpp). */
		if (i && !ext_path() && hip_version() < 70300000)
			ok &= step(!e && took[i] > 1.0,
				   "waits for the null stream (hipMemMap)", e);
		else
			ok &= step(!e && took[i] < 0.5,
				   i ? "no wait for the null stream" :
				   "no wait for another stream", e);
		hipDeviceSynchronize();
	}
	hipFree(p[0]);
	hipFree(p[1]);
	hipStreamDestroy(a);
	hipStreamDestroy(b);
	hipMemPoolDestroy(pool);
	return ok ? PASS : FAIL;
}

/* ---- hipFreeAsync on another device's stream ---- */

static int check_other_device_free(void)
{
	hipMemPool_t pool;
	hipStream_t s1;
	hipError_t e;
	void *p, *q;
	int r;

	if (devices() < 2)
		return notrun("one GPU (this needs two)");
	r = device_pool(&pool, 0, 0);
	if (r)
		return r;
	if (hipSetDevice(1) || hipStreamCreate(&s1) || hipSetDevice(0))
		return FAIL;
	e = hipMallocFromPoolAsync(&p, MIB, pool, s1);
	if (!e)
		e = hipFreeAsync(p, s1);
	if (!step(!e, "hipFreeAsync on device 1's stream, device 0 current",
		  e))
		return FAIL;
	e = hipMallocFromPoolAsync(&q, MIB, pool, s1);
	step(!e && q == p, "the same stream has it back", e);
	hipFreeAsync(q, s1);
	hipStreamSynchronize(s1);
	hipStreamDestroy(s1);
	hipMemPoolDestroy(pool);
	return !e && q == p ? PASS : FAIL;
}

/* ---- an importer mapping more than 1,024 chunks ---- */

#define MANY 1100

static int many_exporter(int sock)
{
	hipMemPoolPtrExportData *d = calloc(MANY, sizeof(*d));
	void **p = calloc(MANY, sizeof(*p));
	size_t free_b = 0, total = 0, gran = 64 * KIB;
	struct kfdpool_pool_stats st;
	hipMemPool_t pool;
	hipError_t e = hipSuccess;
	int r, fd, i;
	char c = 0;

	r = device_pool(&pool, gran, 0);
	if (!r && (!d || !p))
		r = FAIL;
	/* One chunk each, of the path's size (4 MiB on the dmabuf path):
	 * room for all of them twice over, or not run. */
	if (!r) {
		e = hipMallocFromPoolAsync(&p[0], gran, pool, NULL);
		if (e || kfdpoolMemPoolGetStats(pool, &st))
			r = failed("exporter: the first chunk", e);
	}
	if (!r && (hipMemGetInfo(&free_b, &total) ||
		   free_b / 2 / MANY < st.reserved_bytes))
		r = notrun("%zu MiB free, %d chunks of %llu KiB need twice that",
			   free_b >> 20, MANY,
			   (unsigned long long)st.reserved_bytes >> 10);
	if (r) {
		xfer(sock, "S", 1, 1);
		return r;
	}
	e = hipMemPoolExportPointer(&d[0], p[0]);
	for (i = 1; i < MANY && !e; i++) {
		e = hipMallocFromPoolAsync(&p[i], gran, pool, NULL);
		if (!e)
			e = hipMemPoolExportPointer(&d[i], p[i]);
	}
	if (!e)
		e = hipMemPoolExportToShareableHandle(&fd, pool,
				hipMemHandleTypePosixFileDescriptor, 0);
	if (!step(!e, "exporter: 1,100 chunks, a pointer in each", e))
		return FAIL;
	if (xfer(sock, "G", 1, 1) || send_fd(sock, fd) ||
	    xfer(sock, d, MANY * sizeof(*d), 1) || xfer(sock, &c, 1, 0))
		return FAIL;
	for (i = 0; i < MANY; i++)
		hipFree(p[i]);
	hipMemPoolDestroy(pool);
	close(fd);
	return c == 'K' ? PASS : FAIL;
}

static int many_importer(int sock)
{
	hipMemPoolPtrExportData *d = calloc(MANY, sizeof(*d));
	void **q = calloc(MANY, sizeof(*q));
	struct rlimit rl = { 1024, 1024 };
	hipMemPool_t pool;
	hipError_t e;
	char c = 0;
	int fd, i;

	if (xfer(sock, &c, 1, 0) || c == 'S')
		return NOTRUN;
	fd = recv_fd(sock);
	if (fd < 0 || !d || !q || xfer(sock, d, MANY * sizeof(*d), 0))
		return FAIL;
	setrlimit(RLIMIT_NOFILE, &rl);
	e = hipMemPoolImportFromShareableHandle(&pool, (void *)(intptr_t)fd,
			hipMemHandleTypePosixFileDescriptor, 0);
	for (i = 0; i < MANY && !e; i++)
		e = hipMemPoolImportPointer(&q[i], pool, &d[i]);
	printf("# importer: %d of %d chunks mapped with RLIMIT_NOFILE 1024\n",
	       i - !!e, MANY);
	step(!e, "importer: every chunk mapped", e);
	xfer(sock, e ? "X" : "K", 1, 1);
	while (i--)
		if (q[i])
			hipFree(q[i]);
	hipMemPoolDestroy(pool);
	return e ? FAIL : PASS;
}

static int check_many_chunks(void)
{
	return two_processes("many-importer", many_exporter);
}

/* ---- allocation inside a capture ---- */

static int check_capture(void)
{
	hipStreamCaptureStatus st = hipStreamCaptureStatusNone;
	hipMemPool_t pool;
	hipGraph_t g = NULL;
	hipStream_t s;
	void *p = NULL;
	hipError_t e;
	int r, ok;

	r = device_pool(&pool, 0, 0);
	if (r)
		return r;
	if (hipStreamCreate(&s) ||
	    hipStreamBeginCapture(s, hipStreamCaptureModeGlobal))
		return failed("begin a capture", hipSuccess);
	e = hipMallocFromPoolAsync(&p, MIB, pool, s);
	ok = step(e == hipErrorStreamCaptureUnsupported && !p,
		  "hipMallocFromPoolAsync in a capture refused", e);
	ok &= step(!hipStreamIsCapturing(s, &st) &&
		   st == hipStreamCaptureStatusActive, "the capture goes on",
		   hipSuccess);
	e = hipStreamEndCapture(s, &g);
	ok &= step(!e, "hipStreamEndCapture", e);
	if (g)
		hipGraphDestroy(g);
	hipStreamDestroy(s);
	hipMemPoolDestroy(pool);
	return ok ? PASS : FAIL;
}

/* ---- a kfdpool pool is never a current pool ---- */

/*
 * hipDeviceSetMemPool refuses a kfdpool pool; HIP 7.2's hipMemSetMemPool
 * answers for one what the runtime answers for a pool not its own
 * (hipErrorInvalidValue, hipErrorStreamCaptureUnsupported in a capture of
 * global mode, which it invalidates), older runtimes hipErrorNotSupported;
 * the device's current pool stays the runtime's, and hipMallocAsync works.
 */
static int check_set_mem_pool(void)
{
	hipStreamCaptureStatus st = hipStreamCaptureStatusNone;
	hipMemLocation loc = { hipMemLocationTypeDevice, 0 };
	hipMemPool_t pool, cur = NULL;
	hipGraph_t g = NULL;
	hipStream_t s;
	void *p = NULL;
	hipError_t e;
	int r, ok, v = 0;

	r = device_pool(&pool, 0, 0);
	if (r)
		return r;
	hipRuntimeGetVersion(&v);
	e = hipDeviceSetMemPool(0, pool);
	ok = step(e == hipErrorInvalidValue, "hipDeviceSetMemPool refused", e);
	e = hipMemSetMemPool(&loc, hipMemAllocationTypePinned, pool);
	if (v < 70200000) {
		ok &= step(e == hipErrorNotSupported,
			   "hipMemSetMemPool: not in this runtime", e);
	} else {
		ok &= step(e == hipErrorInvalidValue,
			   "hipMemSetMemPool: the runtime's answer", e);
		if (hipStreamCreate(&s) ||
		    hipStreamBeginCapture(s, hipStreamCaptureModeGlobal))
			return failed("begin a capture", hipSuccess);
		e = hipMemSetMemPool(&loc, hipMemAllocationTypePinned, pool);
		ok &= step(e == hipErrorStreamCaptureUnsupported,
			   "hipMemSetMemPool in a capture", e);
		ok &= step(!hipStreamIsCapturing(s, &st) &&
			   st == hipStreamCaptureStatusInvalidated,
			   "the capture invalidated, as the runtime does",
			   hipSuccess);
		hipStreamEndCapture(s, &g);
		if (g)
			hipGraphDestroy(g);
		hipStreamDestroy(s);
	}
	e = hipDeviceGetMemPool(&cur, 0);
	ok &= step(!e && cur && cur != pool, "the current pool is the runtime's",
		   e);
	e = hipMallocAsync(&p, MIB, 0);
	if (!e)
		e = hipFreeAsync(p, 0);
	if (!e)
		e = hipDeviceSynchronize();
	ok &= step(!e, "hipMallocAsync from it", e);
	hipMemPoolDestroy(pool);
	return ok ? PASS : FAIL;
}

/* ---- kernels and pointer attributes on pool memory, both processes ---- */

#if HIP_VERSION_MAJOR >= 6
#define AT_TYPE(a) ((a).type)
#else
#define AT_TYPE(a) ((a).memoryType)
#endif

/* A kernel writes @v over @p, another counts it; the runtime knows @p as
 * memory of @type. */
static int use(void *p, size_t size, unsigned int v, int type,
	       const char *who)
{
	hipPointerAttribute_t at;
	char what[128];
	hipError_t e;
	void *dp;
	int ok;

	memset(&at, 0, sizeof(at));
	e = hipPointerGetAttributes(&at, p);
	snprintf(what, sizeof(what), "%s: hipPointerGetAttributes says %s", who,
		 type == hipMemoryTypeHost ? "host" : "device");
	ok = step(!e && (int)AT_TYPE(at) == type, what, e);
	/* Kernels use the device's address of registered host memory. */
	dp = at.devicePointer ? at.devicePointer : p;
	e = fill(NULL, dp, v, size);
	if (!e)
		e = hipDeviceSynchronize();
	snprintf(what, sizeof(what), "%s: a kernel writes it, another reads it",
		 who);
	ok &= step(!e && !count(NULL, dp, v, size), what, e);
	return ok;
}

static int ka_exporter(int sock)
{
	hipMemPoolPtrExportData d[2];
	hipMemPool_t pool[2];
	void *p[2];
	hipError_t e;
	int r, fd[2], i, ok = 1;
	char c = 0;

	r = kernels();
	if (!r)
		r = device_pool(&pool[0], 0, 0);
	if (!r && (e = pool_on(&pool[1], hipMemLocationTypeHost, 0, 0)))
		r = failed("host pool", e);
	if (r) {
		xfer(sock, "S", 1, 1);
		return r;
	}
	for (i = 0; i < 2; i++) {
		e = hipMallocFromPoolAsync(&p[i], MIB, pool[i], NULL);
		if (!e)
			e = hipMemPoolExportPointer(&d[i], p[i]);
		if (!e)
			e = hipMemPoolExportToShareableHandle(&fd[i], pool[i],
					hipMemHandleTypePosixFileDescriptor, 0);
		if (e)
			return failed("exporter: allocate and export", e);
		ok &= use(p[i], MIB, 0x1234 + i, i ? hipMemoryTypeHost :
			  hipMemoryTypeDevice, i ? "exporter, host pool" :
			  "exporter, device pool");
	}
	if (xfer(sock, "G", 1, 1) || send_fd(sock, fd[0]) ||
	    send_fd(sock, fd[1]) || xfer(sock, d, sizeof(d), 1) ||
	    xfer(sock, &c, 1, 0))
		return FAIL;
	for (i = 0; i < 2; i++) {
		close(fd[i]);
		hipFree(p[i]);
		hipMemPoolDestroy(pool[i]);
	}
	return ok && c == 'K' ? PASS : FAIL;
}

static int ka_importer(int sock)
{
	hipMemPoolPtrExportData d[2];
	hipMemPool_t pool[2];
	hipError_t e = hipSuccess;
	int fd[2], i, ok = 1;
	char c = 0;
	void *q[2];

	if (xfer(sock, &c, 1, 0) || c == 'S')
		return NOTRUN;
	fd[0] = recv_fd(sock);
	fd[1] = recv_fd(sock);
	if (fd[0] < 0 || fd[1] < 0 || xfer(sock, d, sizeof(d), 0) || kernels())
		return FAIL;
	for (i = 0; i < 2; i++) {
		e = hipMemPoolImportFromShareableHandle(&pool[i],
				(void *)(intptr_t)fd[i],
				hipMemHandleTypePosixFileDescriptor, 0);
		if (!e)
			e = hipMemPoolImportPointer(&q[i], pool[i], &d[i]);
		if (e)
			break;
		ok &= step(i || !count(NULL, q[i], 0x1234 + i, MIB),
			   "importer: a kernel reads the exporter's words",
			   hipSuccess);
		ok &= use(q[i], MIB, 0x4321 + i, i ? hipMemoryTypeHost :
			  hipMemoryTypeDevice, i ? "importer, host pool" :
			  "importer, device pool");
		hipFree(q[i]);
		hipMemPoolDestroy(pool[i]);
		close(fd[i]);
	}
	ok &= step(!e, "importer: both pools imported", e);
	xfer(sock, ok ? "K" : "X", 1, 1);
	return ok ? PASS : FAIL;
}

static int check_kernel_access(void)
{
	return two_processes("ka-importer", ka_exporter);
}

/* ---- a pool on device 1: hipPointerGetAttributes in both processes ---- */

/*
 * The runtime's answer for pool memory of device 1: device 1 and the
 * pointer itself for memory it mapped (the vmm path); external memory is
 * device 0's to clr whatever device it was imported on, and device 0's
 * memory of it is made from the fd the import kept: its bytes must be the
 * buffer's all the same.
 */
static int attributes_of(void *p, const char *who, int imported)
{
	unsigned char *buf = malloc(MIB);
	hipPointerAttribute_t at;
	char what[160];
	hipError_t e;
	int ok;

	memset(&at, 0, sizeof(at));
	e = hipPointerGetAttributes(&at, p);
	printf("# %s: type %d device %d devicePointer %p (pointer %p)\n", who,
	       (int)AT_TYPE(at), at.device, at.devicePointer, p);
	snprintf(what, sizeof(what), "%s: device memory of device %s", who,
		 imported && ext_path() ? "0 (clr's rule for external memory)" :
		 "1, at the pointer");
	if (imported && ext_path())
		ok = step(!e && at.device == 0, what, e);
	else
		ok = step(!e && at.device == 1 && at.devicePointer == p, what, e);
	e = buf && !e ? hipMemcpy(buf, at.devicePointer, MIB,
				  hipMemcpyDeviceToHost) : hipErrorOutOfMemory;
	snprintf(what, sizeof(what), "%s: its devicePointer holds the bytes", who);
	ok &= step(!e && all_bytes(buf, MIB, 0x5a), what, e);
	free(buf);
	return ok;
}

static int d1_exporter(int sock)
{
	hipMemPoolPtrExportData d;
	hipMemPool_t pool;
	hipError_t e;
	int fd, ok;
	char c = 0;
	void *p;

	if (devices() < 2) {
		xfer(sock, "S", 1, 1);
		return notrun("one GPU (this needs two)");
	}
	e = pool_on(&pool, hipMemLocationTypeDevice, 1, 0);
	if (e == hipErrorNotSupported) {
		xfer(sock, "S", 1, 1);
		return notrun("this runtime cannot share device memory");
	}
	if (!e)
		e = hipMallocFromPoolAsync(&p, MIB, pool, NULL);
	if (!e)
		e = hipMemset(p, 0x5a, MIB);
	if (!e)
		e = hipDeviceSynchronize();
	if (!e)
		e = export_both(pool, p, &fd, &d);
	if (!step(!e, "exporter: 1 MiB of a device-1 pool, 0x5a, exported", e)) {
		xfer(sock, "S", 1, 1);
		return FAIL;
	}
	ok = attributes_of(p, "exporter", 0);
	if (xfer(sock, "G", 1, 1) || send_fd(sock, fd) ||
	    xfer(sock, &d, sizeof(d), 1) || xfer(sock, &c, 1, 0))
		return FAIL;
	close(fd);
	hipFree(p);
	hipMemPoolDestroy(pool);
	return ok && c == 'K' ? PASS : FAIL;
}

static int d1_importer(int sock)
{
	hipMemPool_t pool;
	hipError_t e;
	void *q = NULL;
	int fd, r, ok;

	r = import_both(sock, &pool, &q, &fd, &e);
	if (r)
		return r;
	ok = step(!e, "importer: imported", e) &&
	     attributes_of(q, "importer", 1);
	xfer(sock, ok ? "K" : "X", 1, 1);
	if (q)
		hipFree(q);
	hipMemPoolDestroy(pool);
	close(fd);
	return ok ? PASS : FAIL;
}

static int check_device1_attributes(void)
{
	return two_processes("d1-importer", d1_exporter);
}

/* ---- device memory back once exporter and importer freed ---- */

static size_t free_now(void)
{
	size_t f = 0, t = 0;

	return hipMemGetInfo(&f, &t) ? 0 : f;
}

/*
 * 256 MiB of a device pool shared and then freed by both sides: the
 * device's free memory (hipMemGetInfo, KFD's figure) is back where it was,
 * within 16 MiB, once the importer exited and the exporter destroyed the
 * pool.
 */
static int mb_exporter(int sock)
{
	hipMemPoolPtrExportData d;
	hipMemPool_t pool;
	size_t before, during, after, size = 256 * MIB;
	hipError_t e;
	int r, fd, ok;
	char c = 0;
	void *p;

	before = free_now();
	r = device_pool(&pool, 0, 0);
	if (!r && before < 2 * size)
		r = notrun("%zu MiB free, this needs 512", before >> 20);
	if (r) {
		xfer(sock, "S", 1, 1);
		return r;
	}
	e = hipMallocFromPoolAsync(&p, size, pool, NULL);
	if (!e)
		e = hipMemset(p, 0x2d, size);
	if (!e)
		e = hipDeviceSynchronize();
	if (!e)
		e = export_both(pool, p, &fd, &d);
	during = free_now();
	if (!step(!e && before - during >= size,
		  "exporter: 256 MiB allocated, set, exported", e)) {
		xfer(sock, "S", 1, 1);
		return FAIL;
	}
	if (xfer(sock, "G", 1, 1) || send_fd(sock, fd) ||
	    xfer(sock, &d, sizeof(d), 1))
		return FAIL;
	close(fd);
	/* The importer frees, ends its pool and exits. */
	if (read(sock, &c, 1) != 1 || c != 'K' || read(sock, &c, 1) != 0)
		return failed("exporter: the importer's use", hipSuccess);
	e = hipFree(p);
	if (!e)
		e = hipMemPoolTrimTo(pool, 0);
	if (!e)
		e = hipMemPoolDestroy(pool);
	if (!e)
		e = hipDeviceSynchronize();
	after = free_now();
	printf("# free device memory: %zu MiB before, %zu during, %zu after\n",
	       before >> 20, during >> 20, after >> 20);
	ok = step(!e && after + 16 * MIB >= before,
		  "exporter: the device's memory is back", e);
	return ok ? PASS : FAIL;
}

static int mb_importer(int sock)
{
	unsigned char *buf = malloc(MIB);
	hipMemPool_t pool;
	hipError_t e;
	void *q = NULL;
	int fd, r, ok;

	r = import_both(sock, &pool, &q, &fd, &e);
	if (r || !buf)
		return r ? r : FAIL;
	if (!e)
		e = hipMemcpy(buf, (char *)q + 255 * MIB, MIB,
			      hipMemcpyDeviceToHost);
	ok = step(!e && all_bytes(buf, MIB, 0x2d), "importer: reads the last MiB",
		  e);
	if (q)
		e = hipFree(q);
	if (!e)
		e = hipMemPoolDestroy(pool);
	if (!e)
		e = hipDeviceSynchronize();
	ok &= step(!e, "importer: freed, pool ended", e);
	close(fd);
	free(buf);
	xfer(sock, ok ? "K" : "X", 1, 1);
	return ok ? PASS : FAIL;
}

static int check_memory_back(void)
{
	return two_processes("mb-importer", mb_exporter);
}

/* ---- an earlier error survives kfdpool's calls (HIP >= 7.0) ---- */

/*
 * HIP 7.0 keeps the last error until it is read: a success no longer
 * resets it (HIP_UPDATE_ERROR_STATE).  A runtime error, then kfdpool's
 * calls and the calls it interposes, all succeeding: hipGetLastError is
 * still that error from 7.0 on, hipSuccess before (every call's result).
 */
static int check_earlier_error(void)
{
	hipMemPool_t pool;
	hipEvent_t ev;
	hipError_t e, last, want;
	void *p;
	int r, ok;

	r = device_pool(&pool, 0, 0);
	if (r)
		return r;
	if (hipEventCreateWithFlags(&ev, hipEventDisableTiming))
		return FAIL;
	e = hipSetDevice(devices());
	ok = step(e == hipErrorInvalidDevice, "hipSetDevice(count) fails", e);
	e = hipMallocFromPoolAsync(&p, MIB, pool, NULL);
	if (!e)
		e = hipFreeAsync(p, NULL);
	if (!e)
		e = hipEventRecord(ev, NULL);
	if (!e)
		e = hipStreamWaitEvent(NULL, ev, 0);
	if (!e)
		e = hipStreamSynchronize(NULL);
	if (!e)
		e = hipDeviceSynchronize();
	ok &= step(!e, "kfdpool's calls and the interposed ones succeed", e);
	want = hip_version() >= 70000000 ? hipErrorInvalidDevice : hipSuccess;
	last = hipPeekAtLastError();
	ok &= step(last == want, want ? "hipPeekAtLastError still has it" :
		   "hipPeekAtLastError: the last call's hipSuccess (HIP < 7.0)",
		   last);
	last = hipGetLastError();
	ok &= step(last == want, want ? "hipGetLastError still has it" :
		   "hipGetLastError: the last call's hipSuccess (HIP < 7.0)", last);
	last = hipGetLastError();
	ok &= step(last == hipSuccess, "and then hipSuccess", last);
	hipEventDestroy(ev);
	hipMemPoolDestroy(pool);
	return ok ? PASS : FAIL;
}

/* ---- a stream's synchronize waits for that stream alone ---- */

/*
 * A kernel of 3 s on B; on A a block of a pool at the default release
 * threshold (0) allocated and freed: hipStreamSynchronize(A), and
 * hipEventSynchronize of an event recorded on A, return while B's kernel
 * still runs, the chunk given back or not.
 */
static int check_stream_sync_alone(void)
{
	hipStream_t a, b;
	hipMemPool_t pool;
	hipEvent_t ev;
	double t, took;
	hipError_t e;
	void *p;
	int r, ok = 1, i;

	r = kernels();
	if (!r)
		r = device_pool(&pool, 0, 0);
	if (r)
		return r;
	if (hipStreamCreateWithFlags(&a, hipStreamNonBlocking) ||
	    hipStreamCreateWithFlags(&b, hipStreamNonBlocking) ||
	    hipEventCreateWithFlags(&ev, hipEventDisableTiming))
		return FAIL;
	for (i = 0; i < 2; i++) {
		e = spin(b, 3.0);
		if (!e)
			e = hipMallocFromPoolAsync(&p, 2 * MIB, pool, a);
		if (!e)
			e = hipFreeAsync(p, a);
		if (!e && i)
			e = hipEventRecord(ev, a);
		if (e)
			return failed("launch, allocate, free", e);
		t = now();
		e = i ? hipEventSynchronize(ev) : hipStreamSynchronize(a);
		took = now() - t;
		printf("# %s: %.3f s, B's kernel %s\n", i ? "hipEventSynchronize" :
		       "hipStreamSynchronize(A)", took,
		       hipStreamQuery(b) == hipErrorNotReady ? "still running" :
		       "done");
		ok &= step(!e && took < 0.5, i ?
			   "hipEventSynchronize waits for A alone" :
			   "hipStreamSynchronize(A) waits for A alone", e);
		hipDeviceSynchronize();
	}
	hipEventDestroy(ev);
	hipStreamDestroy(a);
	hipStreamDestroy(b);
	hipMemPoolDestroy(pool);
	return ok ? PASS : FAIL;
}

/* ---- a 1 GiB allocation, shared ---- */

#define GIB (1ULL << 30)

static int big_exporter(int sock)
{
	hipMemPoolPtrExportData d;
	hipMemPool_t pool;
	size_t before = free_now();
	hipError_t e;
	int r, fd;
	char c = 0;
	void *p;

	r = device_pool(&pool, 0, 0);
	if (!r && before < 3 * GIB)
		r = notrun("%zu MiB free, this needs 3 GiB", before >> 20);
	if (r) {
		xfer(sock, "S", 1, 1);
		return r;
	}
	e = hipMallocFromPoolAsync(&p, GIB, pool, NULL);
	if (!e)
		e = hipMemset(p, 0x47, GIB);
	if (!e)
		e = hipDeviceSynchronize();
	if (!e)
		e = export_both(pool, p, &fd, &d);
	if (!step(!e, "exporter: 1 GiB allocated, set, exported", e)) {
		xfer(sock, "S", 1, 1);
		return FAIL;
	}
	if (xfer(sock, "G", 1, 1) || send_fd(sock, fd) ||
	    xfer(sock, &d, sizeof(d), 1) || xfer(sock, &c, 1, 0))
		return FAIL;
	close(fd);
	e = hipFree(p);
	if (!e)
		e = hipMemPoolDestroy(pool);
	return step(!e && c == 'K', "exporter: the importer read it all; freed",
		    e) ? PASS : FAIL;
}

static int big_importer(int sock)
{
	unsigned char *buf = malloc(16 * MIB);
	hipMemPool_t pool;
	hipError_t e;
	size_t off;
	void *q = NULL;
	int fd, r, ok;

	r = import_both(sock, &pool, &q, &fd, &e);
	if (r || !buf)
		return r ? r : FAIL;
	ok = step(!e, "importer: the 1 GiB pointer imported", e);
	for (off = 0; ok && off < GIB; off += 16 * MIB) {
		e = hipMemcpy(buf, (char *)q + off, 16 * MIB,
			      hipMemcpyDeviceToHost);
		if (e || !all_bytes(buf, 16 * MIB, 0x47))
			ok = step(0, "importer: reads every byte", e);
	}
	if (ok)
		step(1, "importer: reads every byte", hipSuccess);
	xfer(sock, ok ? "K" : "X", 1, 1);
	if (q)
		hipFree(q);
	hipMemPoolDestroy(pool);
	close(fd);
	free(buf);
	return ok ? PASS : FAIL;
}

static int check_big_allocation(void)
{
	return two_processes("big-importer", big_exporter);
}

/* ---- the exporter killed while an importer maps ---- */

/* The exporter: 16 MiB of 0x6b exported, then it waits to be killed. */
static int killed_exporter(int sock)
{
	hipMemPoolPtrExportData d;
	hipMemPool_t pool;
	hipError_t e;
	int r, fd;
	char c;
	void *p;

	r = device_pool(&pool, 0, 0);
	if (r) {
		xfer(sock, "S", 1, 1);
		return r;
	}
	e = hipMallocFromPoolAsync(&p, 16 * MIB, pool, NULL);
	if (!e)
		e = hipMemset(p, 0x6b, 16 * MIB);
	if (!e)
		e = hipDeviceSynchronize();
	if (!e)
		e = export_both(pool, p, &fd, &d);
	if (e) {
		xfer(sock, "S", 1, 1);
		return failed("exporter: allocate, set, export", e);
	}
	if (xfer(sock, "G", 1, 1) || send_fd(sock, fd) ||
	    xfer(sock, &d, sizeof(d), 1))
		return FAIL;
	while (read(sock, &c, 1) > 0)	/* until SIGKILL */
		;
	return FAIL;
}

/*
 * This process imports 16 MiB, the exporter is killed (SIGKILL) while the
 * mapping is in use, and the memory stays: read, written, freed; a new
 * pool works after.
 */
static int check_exporter_killed(void)
{
	unsigned char *buf = malloc(16 * MIB);
	hipMemPool_t pool, again;
	int sv[2], fd, r, ok, st = 0;
	hipError_t e;
	void *q = NULL;
	pid_t pid;

	if (!buf || socketpair(AF_UNIX, SOCK_STREAM, 0, sv))
		return FAIL;
	pid = spawn("killed-exporter", sv[1], sv[0]);
	close(sv[1]);
	r = import_both(sv[0], &pool, &q, &fd, &e);
	if (r) {
		kill(pid, SIGKILL);
		waitpid(pid, &st, 0);
		return r;
	}
	ok = step(!e, "imported", e);
	if (ok)
		e = hipMemset(q, 0x6c, MIB);
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	ok &= step(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL,
		   "the exporter killed with SIGKILL", hipSuccess);
	if (!e)
		e = hipDeviceSynchronize();
	if (!e)
		e = hipMemcpy(buf, q, 16 * MIB, hipMemcpyDeviceToHost);
	ok &= step(!e && all_bytes(buf, MIB, 0x6c) &&
		   all_bytes(buf + MIB, 15 * MIB, 0x6b),
		   "the mapping outlives the exporter, read and written", e);
	if (q)
		e = hipFree(q);
	if (!e)
		e = hipMemPoolDestroy(pool);
	ok &= step(!e, "freed, pool ended", e);
	e = pool_on(&again, hipMemLocationTypeDevice, 0, 0);
	if (!e)
		e = hipMemPoolDestroy(again);
	ok &= step(!e, "a new device pool after", e);
	close(fd);
	close(sv[0]);
	free(buf);
	return ok ? PASS : FAIL;
}

/* ---- ROCr's dma-buf export on a pool pointer ---- */

typedef int (*hsa_export_fn)(const void *, size_t, int *, uint64_t *);

/*
 * hsa_amd_portable_export_dmabuf (ROCr >= 5.6), as RCCL's InfiniBand
 * registration and UCX call it on user buffers: on memory ROCr mapped
 * itself (the vmm path's hipMemMap) it answers, an error or a dma-buf,
 * where on an interop map it would dereference a null region and crash
 * (runtime.cpp): a crash fails the check.  Importers of the dmabuf path
 * map interop maps: not asked there.
 */
static int hsa_export_of(void *p, const char *who)
{
	void *so = dlopen("libhsa-runtime64.so.1", RTLD_LAZY | RTLD_NOLOAD);
	hsa_export_fn ex = so ? (hsa_export_fn)dlsym(so, "hsa_amd_portable_export_dmabuf") :
			   NULL;
	uint64_t off = 0;
	char what[128];
	int fd = -1, st;

	if (!ex)
		return notrun("ROCr has no hsa_amd_portable_export_dmabuf (< 5.6)");
	st = ex(p, MIB, &fd, &off);
	printf("# %s: hsa_amd_portable_export_dmabuf: status %#x, fd %d, "
	       "offset %llu\n", who, st, fd, (unsigned long long)off);
	if (!st && fd >= 0)
		close(fd);
	snprintf(what, sizeof(what), "%s: ROCr answers for a pool pointer", who);
	return step(1, what, hipSuccess) ? PASS : FAIL;
}

static int he_exporter(int sock)
{
	hipMemPoolPtrExportData d;
	hipMemPool_t pool;
	hipError_t e;
	int r, fd;
	char c = 0;
	void *p;

	r = device_pool(&pool, 0, 0);
	if (!r && ext_path())
		r = notrun("device chunks are external memory here (an importer's "
			   "interop map would crash ROCr's export)");
	if (r) {
		xfer(sock, "S", 1, 1);
		return r;
	}
	e = hipMallocFromPoolAsync(&p, MIB, pool, NULL);
	if (!e)
		e = export_both(pool, p, &fd, &d);
	if (e) {
		xfer(sock, "S", 1, 1);
		return failed("exporter: allocate, export", e);
	}
	r = hsa_export_of(p, "exporter");
	if (xfer(sock, "G", 1, 1) || send_fd(sock, fd) ||
	    xfer(sock, &d, sizeof(d), 1) || xfer(sock, &c, 1, 0))
		return FAIL;
	close(fd);
	hipFree(p);
	hipMemPoolDestroy(pool);
	return r ? r : c == 'K' ? PASS : FAIL;
}

static int he_importer(int sock)
{
	hipMemPool_t pool;
	hipError_t e;
	void *q = NULL;
	int fd, r;

	r = import_both(sock, &pool, &q, &fd, &e);
	if (r)
		return r;
	r = step(!e, "importer: imported", e) ? hsa_export_of(q, "importer") :
	    FAIL;
	xfer(sock, r ? "X" : "K", 1, 1);
	if (q)
		hipFree(q);
	hipMemPoolDestroy(pool);
	close(fd);
	return r;
}

static int check_hsa_export(void)
{
	return two_processes("he-importer", he_exporter);
}

/* ---- hipMemPoolSetAccess with a peer ---- */

/*
 * A device-0 pool opened to device 1 (hipMemPoolSetAccess): a kernel on
 * device 1 writes a block of it, one on device 0 reads it; the access is
 * what hipMemPoolGetAccess says.  The vmm path only (the dmabuf path
 * refuses peers, with a line saying so).
 */
static int check_peer_access(void)
{
	hipMemAccessDesc acc = { { hipMemLocationTypeDevice, 1 },
				 hipMemAccessFlagsProtReadWrite };
	hipMemLocation dev1 = { hipMemLocationTypeDevice, 1 };
	hipFunction_t fill1;
	hipMemAccessFlags f = hipMemAccessFlagsProtNone;
	hipMemPool_t pool;
	hipModule_t mod1;
	unsigned int v = 0x7e57;
	unsigned long long n = 2 * MIB / 4;
	void *args[3], *p;
	hipError_t e;
	int r, ok;

	if (devices() < 2)
		return notrun("one GPU (this needs two)");
	r = kernels();
	if (!r)
		r = device_pool(&pool, 0, 0);
	if (r)
		return r;
	e = hipMemPoolSetAccess(pool, &acc, 1);
	if (e == hipErrorNotSupported && ext_path())
		return notrun("the dmabuf path maps no peers (HIP >= 6.2 with "
			      "virtual memory does)");
	ok = step(!e, "hipMemPoolSetAccess: device 1 read-write", e);
	e = hipMemPoolGetAccess(&f, pool, &dev1);
	ok &= step(!e && f == hipMemAccessFlagsProtReadWrite,
		   "hipMemPoolGetAccess says so", e);
	e = hipMallocFromPoolAsync(&p, 2 * MIB, pool, NULL);
	if (!e)
		e = hipDeviceSynchronize();
	if (!e)
		e = hipSetDevice(1);
	if (!e)
		e = hipModuleLoad(&mod1, getenv("KFDPOOL_GPU_KERNELS"));
	if (!e)
		e = hipModuleGetFunction(&fill1, mod1, "kp_fill");
	args[0] = &p;
	args[1] = &v;
	args[2] = &n;
	if (!e)
		e = hipModuleLaunchKernel(fill1, 256, 1, 1, 256, 1, 1, 0, NULL,
					  args, NULL);
	if (!e)
		e = hipDeviceSynchronize();
	hipSetDevice(0);
	ok &= step(!e, "a kernel on device 1 writes the block", e);
	ok &= step(!e && !count(NULL, p, v, 2 * MIB),
		   "device 0 reads what device 1 wrote", hipSuccess);
	hipFree(p);
	hipMemPoolDestroy(pool);
	return ok ? PASS : FAIL;
}

/* ---- the spin kernel's clock ---- */

/*
 * kp_spin counts clock64() for the seconds asked, converted with
 * hipDeviceAttributeClockInstructionRate: 1 s asked is about 1 s taken
 * (events on the stream), else every timing check above is off.
 */
static int check_spin_clock(void)
{
	hipEvent_t t0, t1;
	hipStream_t s;
	hipError_t e;
	float ms = 0;
	int r, khz = 0, shader = 0;

	r = kernels();
	if (r)
		return r;
	hipDeviceGetAttribute(&khz, hipDeviceAttributeClockInstructionRate, 0);
	hipDeviceGetAttribute(&shader, hipDeviceAttributeClockRate, 0);
	if (hipStreamCreate(&s) || hipEventCreate(&t0) || hipEventCreate(&t1))
		return FAIL;
	e = hipEventRecord(t0, s);
	if (!e)
		e = spin(s, 1.0);
	if (!e)
		e = hipEventRecord(t1, s);
	if (!e)
		e = hipEventSynchronize(t1);
	if (!e)
		e = hipEventElapsedTime(&ms, t0, t1);
	printf("# ClockInstructionRate %d kHz, ClockRate %d kHz: 1 s asked, "
	       "%.3f s taken\n", khz, shader, ms / 1000);
	hipEventDestroy(t0);
	hipEventDestroy(t1);
	hipStreamDestroy(s);
	return step(!e && ms > 700 && ms < 1500, "the spin kernel's second", e) ?
	       PASS : FAIL;
}

/* ---- the table ---- */

static const struct {
	const char *name;
	int (*fn)(void);
} checks[] = {
	{ "share", check_share },
	{ "dmabuf-size", check_dmabuf_size },
	{ "canary", check_canary },
	{ "free-while-mapped", check_free_while_mapped },
	{ "stream-order", check_stream_order },
	{ "last-error", check_last_error },
	{ "new-chunk-timing", check_new_chunk_timing },
	{ "other-device-free", check_other_device_free },
	{ "many-chunks", check_many_chunks },
	{ "capture", check_capture },
	{ "set-mem-pool", check_set_mem_pool },
	{ "kernel-access", check_kernel_access },
	{ "device1-attributes", check_device1_attributes },
	{ "memory-back", check_memory_back },
	{ "earlier-error", check_earlier_error },
	{ "stream-sync-alone", check_stream_sync_alone },
	{ "big-allocation", check_big_allocation },
	{ "exporter-killed", check_exporter_killed },
	{ "hsa-export", check_hsa_export },
	{ "peer-access", check_peer_access },
	{ "spin-clock", check_spin_clock },
};

static const struct {
	const char *name;
	int (*fn)(int sock);
} roles[] = {
	{ "share-importer", share_importer },
	{ "fwm-importer", fwm_importer },
	{ "many-importer", many_importer },
	{ "ka-importer", ka_importer },
	{ "d1-importer", d1_importer },
	{ "mb-importer", mb_importer },
	{ "big-importer", big_importer },
	{ "killed-exporter", killed_exporter },
	{ "he-importer", he_importer },
};

int main(int argc, char **argv)
{
	size_t i;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 4 && !strcmp(argv[1], "--role")) {
		for (i = 0; i < sizeof(roles) / sizeof(roles[0]); i++)
			if (!strcmp(argv[2], roles[i].name))
				return roles[i].fn(atoi(argv[3]));
		return 2;
	}
	if (argc == 2 && !strcmp(argv[1], "--info"))
		return info();
	if (argc == 2 && !strcmp(argv[1], "--list")) {
		for (i = 0; i < sizeof(checks) / sizeof(checks[0]); i++)
			printf("%s\n", checks[i].name);
		return 0;
	}
	if (argc == 3 && !strcmp(argv[1], "--check")) {
		for (i = 0; i < sizeof(checks) / sizeof(checks[0]); i++)
			if (!strcmp(argv[2], checks[i].name))
				return checks[i].fn();
	}
	fprintf(stderr, "usage: gpu_pool --info | --list | --check NAME\n");
	return 2;
}
