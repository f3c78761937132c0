// SPDX-License-Identifier: GPL-2.0-only
/*
 * Device pools through the HIP runtime, against the
 * TEST-ONLY STAND-IN for it (hiprt_standin.c: "device" memory is host
 * memory behind real dma-bufs, every call recorded), under each clr
 * release it models.  What is checked is the call sequence libkfdpool-hip
 * makes, as clr would see it:
 *
 *   the path chosen by what the runtime and the driver can do (HIP >= 6.2
 *     and the VMM attribute for vmm, DMABUF_SUPPORTED for dmabuf), said
 *     in one line that names why the other was not;
 *   vmm: hipMemCreate, hipMemExportToShareableHandle, and the chunk mapped
 *     by the runtime itself (hipMemAddressReserve, hipMemMap,
 *     hipMemSetAccess), never as external memory; the dma-buf pinned; a
 *     pool opened to a peer gives it every chunk with hipMemSetAccess;
 *   dmabuf: hipExtMallocWithFlags and hsa_amd_portable_export_dmabuf, each
 *     chunk a driver object of its own (never a block of ROCr's fragment
 *     allocator shared with other allocations, never reused from its block
 *     cache); peer access refused with one line;
 *   runtime errors passed up unchanged;
 *   the importer, another process whose devices are numbered otherwise or
 *     alike: the pool's device found by PCI bus id, mapped on its own
 *     ordinal with hipMemImportFromShareableHandle and hipMemMap (no fd
 *     kept), or, on the dmabuf path, as external memory, the fd kept for
 *     the runtime (clr maps its number again for device 0) until the
 *     mapping goes, one per chunk until RLIMIT_NOFILE says no, and refused
 *     where the release never frees external memory (7.2); the runtime
 *     knows the pointer (hipMemcpy, hipMemset, hipPointerGetAttributes:
 *     device 1 is device 1 in both processes), ROCr's dma-buf export
 *     answers an error for it, never crashes; nothing left after;
 *   hipGetProcAddress hands out libkfdpool-hip's functions for its names;
 *   the pool calls answer as the runtime answers for a pool of its own
 *     given the same arguments (device ids, access descriptors by release,
 *     the export's handle types, a pool made during a capture).
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/resource.h>

#include "lib_hip_util.h"
#include "hiprt_standin.h"
#include "kselftest_harness.h"

#define SIZE (1 << 20)

static char logs[1 << 16];

static const char *standin_log(void)
{
	kfdpool_standin_log(logs, sizeof(logs));
	return logs;
}

/* Whether the lines of @want (";"-separated) are in @log in that order. */
static int in_order(const char *log, const char *want)
{
	char buf[512], *w, *save = NULL;
	const char *at = log;

	snprintf(buf, sizeof(buf), "%s", want);
	for (w = strtok_r(buf, ";", &save); w; w = strtok_r(NULL, ";", &save)) {
		at = strstr(at, w);
		if (!at)
			return 0;
		at += strlen(w);
	}
	return 1;
}

static hipError_t device_pool(hipMemPool_t *pool, int dev)
{
	hipMemPoolProps p = lh_props(hipMemHandleTypePosixFileDescriptor, 0);

	p.location.type = hipMemLocationTypeDevice;
	p.location.id = dev;
	return hipMemPoolCreate(pool, &p);
}

/* Lines written to stderr while @fn ran. */
static int stderr_lines(hipError_t (*fn)(void *), void *arg, hipError_t *ret,
			char *buf, size_t len)
{
	int mfd = memfd_create("stderr", MFD_CLOEXEC), saved = dup(2), n = 0;
	ssize_t r;

	fflush(stderr);
	dup2(mfd, 2);
	*ret = fn(arg);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	r = pread(mfd, buf, len - 1, 0);
	close(mfd);
	buf[r > 0 ? r : 0] = 0;
	for (char *c = buf; *c; c++)
		n += *c == '\n';
	return n;
}

/* ---- the importer, another process ---- */

struct msg {
	hipMemPoolPtrExportData d;
	char busid[16];		/* the pool's GPU */
};

/* Whether this process maps device chunks as external memory
 * (KFDPOOL_RT_PATH=dmabuf), not through virtual memory. */
static int ext_path(void)
{
	const char *e = getenv("KFDPOOL_RT_PATH");

	return e && !strcmp(e, "dmabuf");
}

/* The importer's import, as the release it runs against maps it: refused
 * where external memory is never freed (7.2's retained view). */
static int ext_refused(void)
{
	return ext_path() && KFDPOOL_STANDIN_SINCE(7, 2);
}

/*
 * The runtime refuses to map the import, at each of its steps: the import
 * fails with the runtime's error mapped, and leaves nothing behind (no fd
 * of the process's or the stand-in's, no import in the kernel, nothing in
 * the runtime).  0, or which check failed.
 */
static int import_refused(hipMemPool_t pool, hipMemPoolPtrExportData *d,
			  int dev)
{
	struct step {
		const char *call;
		hipError_t answer, want;
		const char *log;
	};
	char vmm_map[128], vmm_access[160], ext_map[128];
	const struct step vmm[] = {
		{ "hipMemImportFromShareableHandle", hipErrorInvalidValue,
		  hipErrorInvalidValue, "hipMemImportFromShareableHandle fails" },
		{ "hipMemMap", hipErrorInvalidValue, hipErrorInvalidValue,
		  vmm_map },
		{ "hipMemSetAccess", hipErrorInvalidDevice, hipErrorInvalidDevice,
		  vmm_access },
		{ "hipGetDevice", hipErrorNoDevice, hipErrorNoDevice,
		  "hipGetDevice fails" },
	}, ext[] = {
		{ "hipImportExternalMemory", hipErrorOutOfMemory,
		  hipErrorOutOfMemory, "hipImportExternalMemory fails" },
		{ "hipExternalMemoryGetMappedBuffer", hipErrorInvalidValue,
		  hipErrorInvalidValue, ext_map },
		{ "hipGetDevice", hipErrorNoDevice, hipErrorNoDevice,
		  "hipGetDevice fails" },
	};
	const struct step *steps = ext_path() ? ext : vmm;
	size_t i, n = ext_path() ? sizeof(ext) / sizeof(ext[0]) :
				  sizeof(vmm) / sizeof(vmm[0]);
	struct kfdpool_pool_stats st;
	int nfds = lh_nfds();
	void *q;

	snprintf(vmm_map, sizeof(vmm_map), "hipMemMap fails;hipMemAddressFree;"
		 "hipMemRelease dev%d", dev);
	snprintf(vmm_access, sizeof(vmm_access), "hipMemSetAccess fails;"
		 "hipMemUnmap dev%d;hipMemAddressFree;hipMemRelease dev%d", dev,
		 dev);
	snprintf(ext_map, sizeof(ext_map), "hipExternalMemoryGetMappedBuffer "
		 "fails;hipDestroyExternalMemory dev%d", dev);
	for (i = 0; i < n; i++) {
		standin_log();
		kfdpool_standin_fail(steps[i].call, 0, steps[i].answer);
		q = NULL;
		if (hipMemPoolImportPointer(&q, pool, d) != steps[i].want || q)
			return 1;
		if (!kfdpool_standin_fail(NULL, 0, 0))
			return 2;	/* the runtime was never asked */
		if (!in_order(standin_log(), steps[i].log)) {
			fprintf(stderr, "importer log (%s):\n%s", steps[i].call,
				logs);
			return 3;
		}
		if (lh_nfds() != nfds || kfdpool_standin_fds())
			return 4;
		if (kfdpoolMemPoolGetStats(pool, &st) || st.fd_imports ||
		    st.fd_imported_bytes)
			return 5;
	}
	return 0;
}

struct import_args {
	hipMemPool_t pool;
	hipMemPoolPtrExportData *d;
	void **q;
};

static hipError_t import_one(void *arg)
{
	struct import_args *a = arg;

	return hipMemPoolImportPointer(a->q, a->pool, a->d);
}

/* What ROCr says of @p: an hsa_amd_pointer_type_t, -1 if it cannot. */
static int rocr_pointer_type(const void *p)
{
	struct { uint32_t size; int type; char rest[64]; } info;

	memset(&info, 0, sizeof(info));
	info.size = sizeof(info);
	return hsa_amd_pointer_info(p, &info, NULL, NULL, NULL) ? -1 : info.type;
}

/* A file whose first page is 0x33: what a closed fd's number could name
 * by the time the runtime maps it again. */
static int sentinel(void)
{
	char page[4096];
	int fd = memfd_create("sentinel", MFD_CLOEXEC);

	memset(page, 0x33, sizeof(page));
	if (fd >= 0 && (ftruncate(fd, 4 << 20) ||
			pwrite(fd, page, sizeof(page), 0) != sizeof(page))) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/*
 * Import the pointer, read what the exporter wrote (0x5a), answer 0xa5,
 * and tell the exporter 'K' (or 'R': refused as the release refuses
 * external memory it never frees).
 */
static int importer(int sock)
{
	hipMemPool_t pool;
	hipPointerAttribute_t a;
	struct msg m;
	unsigned char *buf = malloc(SIZE);
	struct kfdpool_query kq;
	unsigned char *seen;
	uint64_t off;
	void *q = NULL;
	int fd, i, n, dev = -1, nfds, held, sentinels[8];

	fd = lh_recv_fd(sock);
	if (fd < 0 || lh_read_all(sock, &m, sizeof(m)) || !buf)
		return 2;
	/* The library's control fd stays open once opened: open it now. */
	if (kfdpool_ctl(&kq) < 0)
		return 2;
	/* The pool's GPU, as this process numbers it. */
	if (hipDeviceGetByPCIBusId(&dev, m.busid))
		return 2;
	nfds = lh_nfds();
	if (hipMemPoolImportFromShareableHandle(&pool, (void *)(intptr_t)fd,
			hipMemHandleTypePosixFileDescriptor, 0))
		return 3;
	if (ext_refused()) {
		struct import_args ia = { pool, &m.d, &q };
		char err[1024];
		hipError_t e;

		/* Refused, with one line that says why. */
		if (stderr_lines(import_one, &ia, &e, err, sizeof(err)) != 1 ||
		    e != hipErrorNotSupported || q ||
		    !strstr(err, "PR #1749")) {
			fprintf(stderr, "importer: %d %p: %s", e, q, err);
			return 30;
		}
		if (hipMemPoolDestroy(pool))
			return 31;
		close(fd);
		return lh_write_all(sock, "R", 1) ? 12 : 0;
	}
	i = import_refused(pool, &m.d, dev);
	if (i)
		return 20 + i;
	n = lh_nfds();
	if (hipMemPoolImportPointer(&q, pool, &m.d))
		return 4;
	/* Through virtual memory the driver holds the buffer: no fd per
	 * chunk.  As external memory the runtime keeps the fd's number: one
	 * held open until the mapping goes. */
	held = ext_path() && !getenv("KFDPOOL_STANDIN_TAKE_FD");
	if (lh_nfds() != n + held)
		return 14;
	/* Files opened now take the lowest free numbers: among them any the
	 * import closed while the runtime still counts on it. */
	for (i = 0; i < 8; i++)
		sentinels[i] = sentinel();
	if (!in_order(standin_log(), ext_path() ?
		      (dev ? "hipImportExternalMemory dev1;"
			     "hipExternalMemoryGetMappedBuffer dev1" :
			     "hipImportExternalMemory dev0;"
			     "hipExternalMemoryGetMappedBuffer dev0") :
		      (dev ? "hipMemImportFromShareableHandle dev1;"
			     "hipMemAddressReserve;hipMemMap dev1;"
			     "hipMemSetAccess dev1 of dev1" :
			     "hipMemImportFromShareableHandle dev0;"
			     "hipMemAddressReserve;hipMemMap dev0;"
			     "hipMemSetAccess dev0 of dev0"))) {
		fprintf(stderr, "importer log:\n%s", logs);
		return 5;
	}
	if (kfdpool_standin_device_of(q) != dev)
		return 6;
	/* A chunk of 2 MiB is where the GPU can use its 2 MiB fragments. */
	if ((uintptr_t)q & ((2 << 20) - 1))
		return 15;
	/* The runtime knows the pointer: its copies work on it. */
	if (hipMemcpy(buf, q, SIZE, hipMemcpyDeviceToHost))
		return 7;
	for (i = 0; i < SIZE; i++)
		if (buf[i] != 0x5a)
			return 8;
	/*
	 * And what it says of it: its device, and device memory that is the
	 * same buffer.  External memory is device 0's to clr whatever device
	 * it was imported on, and device 0's memory of it is made from the
	 * number the import kept (a runtime that took the fd has none).
	 */
	if (!getenv("KFDPOOL_STANDIN_TAKE_FD")) {
		if (hipPointerGetAttributes(&a, q) ||
		    a.type != hipMemoryTypeDevice)
			return 16;
		if (a.device != (ext_path() ? 0 : dev) ||
		    (!ext_path() && a.devicePointer != q))
			return 17;
		seen = a.devicePointer;
		for (off = 0; off < SIZE; off += 4096)
			if (seen[off] != 0x5a) {
				fprintf(stderr, "importer: device %d's memory of "
					"%p reads %#x at %llu\n", a.device, q,
					seen[off], (unsigned long long)off);
				return 18;
			}
	}
	/* ROCr's dma-buf export (RCCL's, UCX's) answers an error for it. */
	if (!ext_path() &&
	    hsa_amd_portable_export_dmabuf(q, SIZE, &i, &off) !=
	    HSA_STATUS_ERROR_INVALID_ALLOCATION)
		return 19;
	if (hipMemset(q, 0xa5, SIZE))
		return 9;
	if (hipFree(q) || hipMemPoolDestroy(pool))
		return 10;
	/* The runtime let go of the mapping: ROCr knows nothing there. */
	if (rocr_pointer_type(q) != 0)
		return 29;
	for (i = 0; i < 8; i++) {
		if (sentinels[i] < 0 || fcntl(sentinels[i], F_GETFD) < 0)
			return 13;
		close(sentinels[i]);
	}
	close(fd);
	/* Every fd of the import closed, once: none left, none closed
	 * twice (a double close would have taken another fd with it). */
	if (lh_nfds() != nfds - 1 || kfdpool_standin_fds()) {
		fprintf(stderr, "importer: %d fds before, %d after; the "
			"stand-in holds %d\n", nfds, lh_nfds(),
			kfdpool_standin_fds());
		return 11;
	}
	free(buf);
	return lh_write_all(sock, "K", 1) ? 12 : 0;
}

/*
 * Export a device-1 pointer to an importer exec'd with @env (NULL-ended)
 * set and the devices numbered as here, or the other way round with
 * @reversed; 0 or the importer's status.  The exporter's own pointer is
 * checked as the importer's is.
 */
static int share_with_importer(struct __test_metadata *_metadata,
			       int reversed, const char *const *env)
{
	unsigned char *buf = malloc(SIZE);
	hipPointerAttribute_t a;
	hipMemPool_t pool;
	struct msg m;
	int sv[2], fd, st, i, dfd = -1;
	char arg[16], c = 0;
	uint64_t off = 0;
	void *p;
	pid_t pid;

	if (device_pool(&pool, 1))
		return -1;
	memset(&m, 0, sizeof(m));
	if (hipMallocFromPoolAsync(&p, SIZE, pool, NULL) ||
	    hipMemset(p, 0x5a, SIZE) || hipMemPoolExportPointer(&m.d, p) ||
	    hipMemPoolExportToShareableHandle(&fd, pool,
			hipMemHandleTypePosixFileDescriptor, 0) ||
	    hipDeviceGetPCIBusId(m.busid, sizeof(m.busid), 1))
		return -2;
	/* Device 1's memory, mapped by the runtime itself. */
	EXPECT_EQ(hipSuccess, hipPointerGetAttributes(&a, p));
	EXPECT_EQ(1, a.device);
	EXPECT_EQ(p, a.devicePointer);
	EXPECT_EQ(0, (uintptr_t)p & ((2 << 20) - 1));
	EXPECT_EQ(HSA_STATUS_ERROR_INVALID_ALLOCATION,
		  hsa_amd_portable_export_dmabuf(p, SIZE, &dfd, &off));
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv))
		return -3;
	pid = fork();
	if (!pid) {
		close(sv[0]);
		snprintf(arg, sizeof(arg), "%d", sv[1]);
		setenv("KFDPOOL_STANDIN_DEVICES", reversed ?
		       "0000:c1:00.0,0000:03:00.0" : "0000:03:00.0,0000:c1:00.0",
		       1);
		for (i = 0; env && env[i]; i++)
			putenv((char *)env[i]);
		execl("/proc/self/exe", "importer", "--importer", arg,
		      (char *)NULL);
		_exit(127);
	}
	close(sv[1]);
	if (lh_send_fd(sv[0], fd) || lh_write_all(sv[0], &m, sizeof(m)))
		return -4;
	close(fd);
	lh_read_all(sv[0], &c, 1);
	waitpid(pid, &st, 0);
	close(sv[0]);
	EXPECT_TRUE(c == 'K' || c == 'R') TH_LOG("importer said %#x", c);
	/* The importer's answer, read back through the runtime. */
	EXPECT_EQ(hipSuccess, hipMemcpy(buf, p, SIZE, hipMemcpyDeviceToHost));
	for (i = 0; i < SIZE && buf[i] == (c == 'K' ? 0xa5 : 0x5a); i++)
		;
	EXPECT_EQ(SIZE, i);
	EXPECT_EQ(hipSuccess, hipFree(p));
	EXPECT_EQ(hipSuccess, hipMemPoolDestroy(pool));
	free(buf);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

FIXTURE(dev) {
	int ok;
};

FIXTURE_SETUP(dev)
{
	self->ok = 0;
	if (access("/dev/kfdpool", F_OK))
		SKIP(return, "/dev/kfdpool missing (module not loaded)");
	ksft_print_msg("runtime: TEST-ONLY STAND-IN (selftests/hiprt_standin.c), "
		       "not HIP's runtime: host memory behind real dma-bufs\n");
	unsetenv("KFDPOOL_BACKEND");
	standin_log();
	self->ok = 1;
}

FIXTURE_TEARDOWN(dev)
{
}

TEST_F(dev, vmm_path_allocates_exports_and_names_the_gpu)
{
	struct kfdpool_pool_stats st;
	hipMemPool_t pool;
	void *p;

	ASSERT_EQ(hipSuccess, device_pool(&pool, 1));
	EXPECT_STREQ("rocr", kfdpoolMemPoolBackend(pool));
	ASSERT_EQ(hipSuccess, hipMallocFromPoolAsync(&p, 4096, pool, NULL));
	/* Mapped by the runtime as its own (hipMemMap), never as external
	 * memory (an interop map, whose region ROCr records as null). */
	EXPECT_TRUE(in_order(standin_log(), "hipMemCreate dev1;"
			     "hipMemExportToShareableHandle dev1;"
			     "hipMemAddressReserve;hipMemMap dev1;"
			     "hipMemSetAccess dev1 of dev1 flags 3"))
		TH_LOG("%s", logs);
	EXPECT_EQ(NULL, strstr(logs, "hipImportExternalMemory")) TH_LOG("%s", logs);
	EXPECT_EQ(1, kfdpool_standin_device_of(p));
	EXPECT_EQ(hipSuccess, hipMemset(p, 1, 4096));
	/* The kernel pool holds the dma-buf, named by the GPU's bus id
	 * (lower case, whatever the runtime's spelling). */
	ASSERT_EQ(hipSuccess, kfdpoolMemPoolGetStats(pool, &st));
	EXPECT_EQ(1, st.entries);
	EXPECT_EQ(0, strncmp(st.name, "hip-d0000:c1:00.0-", 18)) TH_LOG("%s", st.name);
	EXPECT_EQ(hipSuccess, hipFree(p));
	EXPECT_EQ(hipSuccess, hipMemPoolDestroy(pool));
	EXPECT_TRUE(in_order(standin_log(), "hipMemUnmap dev1;"
			     "hipMemAddressFree;hipMemRelease dev1"))
		TH_LOG("%s", logs);
}

TEST_F_TIMEOUT(dev, importer_maps_by_bus_id_and_the_runtime_knows_it, 300)
{
	EXPECT_EQ(0, share_with_importer(_metadata, 1, NULL));
}

/* A pool of device 1 is device 1's memory in both processes, as
 * hipPointerGetAttributes and ROCr see it. */
TEST_F_TIMEOUT(dev, a_pool_on_device_1_is_device_1_in_both_processes, 300)
{
	EXPECT_EQ(0, share_with_importer(_metadata, 0, NULL));
}

/*
 * An importer that maps external memory keeps the fd whose number clr
 * maps again for another device (hipPointerGetAttributes of a device-1
 * import makes device 0's memory from it): open until the mapping goes.
 */
TEST_F_TIMEOUT(dev, an_external_memory_import_keeps_the_fd_the_runtime_uses, 300)
{
	static const char *const env[] = { "KFDPOOL_RT_PATH=dmabuf", NULL };

	EXPECT_EQ(0, share_with_importer(_metadata, 0, env));
}

TEST_F_TIMEOUT(dev, a_runtime_that_takes_the_fd_is_left_it, 300)
{
	static const char *const env[] = { "KFDPOOL_RT_PATH=dmabuf",
					   "KFDPOOL_STANDIN_TAKE_FD=1", NULL };

	EXPECT_EQ(0, share_with_importer(_metadata, 1, env));
}

/* ---- answers as the runtime's own pools get them ---- */

/*
 * A pool of the runtime's (no handle type: kfdpool passes it on) and one
 * of kfdpool's (a POSIX fd handle type) on the same device, given the same
 * arguments, must answer alike: the stand-in answers as clr's
 * hip_mempool.cpp of its release does.
 */
static hipError_t rt_pool(hipMemPool_t *pool, int dev)
{
	hipMemPoolProps p = lh_props(hipMemHandleTypeNone, 0);

	p.location.type = hipMemLocationTypeDevice;
	p.location.id = dev;
	return hipMemPoolCreate(pool, &p);
}

#define SAME(what, rt, kp, bad) do { \
	hipError_t a_ = (rt), b_ = (kp); \
	if (a_ != b_) { \
		fprintf(stderr, "# %s: runtime %s, kfdpool %s\n", (what), \
			hipGetErrorName(a_), hipGetErrorName(b_)); \
		(bad)++; \
	} \
} while (0)

TEST_F(dev, create_past_the_devices_answers_as_the_runtime)
{
	static const int ids[] = { 2, 3, 64, 1000, -1 };
	hipMemPool_t a = NULL, b = NULL;
	unsigned int i;
	int bad = 0;

	for (i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
		char what[32];

		snprintf(what, sizeof(what), "device %d", ids[i]);
		SAME(what, rt_pool(&a, ids[i]), device_pool(&b, ids[i]), bad);
		EXPECT_EQ(hipErrorInvalidValue, device_pool(&b, ids[i]));
	}
	EXPECT_EQ(0, bad);
}

static const hipMemLocation locs[] = {
	{ hipMemLocationTypeDevice, 0 }, { hipMemLocationTypeDevice, 1 },
	{ hipMemLocationTypeDevice, 2 }, { hipMemLocationTypeDevice, 64 },
	{ hipMemLocationTypeDevice, -1 }, { hipMemLocationTypeHost, 0 },
	{ (hipMemLocationType)7, 0 },
};

TEST_F(dev, get_access_answers_as_the_runtime)
{
	hipMemPool_t a, b;
	unsigned int i;
	int bad = 0;

	ASSERT_EQ(hipSuccess, rt_pool(&a, 1));
	ASSERT_EQ(hipSuccess, device_pool(&b, 1));
	for (i = 0; i < sizeof(locs) / sizeof(locs[0]); i++) {
		hipMemAccessFlags fa = 99, fb = 99;
		hipMemLocation la = locs[i], lb = locs[i];
		char what[48];

		snprintf(what, sizeof(what), "location %d:%d", la.type, la.id);
		SAME(what, hipMemPoolGetAccess(&fa, a, &la),
		     hipMemPoolGetAccess(&fb, b, &lb), bad);
		EXPECT_EQ(fa, fb) TH_LOG("%s", what);
	}
	EXPECT_EQ(hipErrorInvalidValue, hipMemPoolGetAccess(NULL, b,
		  (hipMemLocation *)&locs[0]));
	EXPECT_EQ(0, bad);
	EXPECT_EQ(hipSuccess, hipMemPoolDestroy(a));
	EXPECT_EQ(hipSuccess, hipMemPoolDestroy(b));
}

/* Descriptor lists for pools on device 1 of the stand-in's two. */
static const struct access_case {
	const char *what;
	hipMemAccessDesc d[3];
	size_t n;
} access_cases[] = {
	{ "peer read-write", { { { hipMemLocationTypeDevice, 0 }, 3 } }, 1 },
	{ "peer read-only", { { { hipMemLocationTypeDevice, 0 }, 1 } }, 1 },
	{ "peer none", { { { hipMemLocationTypeDevice, 0 }, 0 } }, 1 },
	{ "own read-write", { { { hipMemLocationTypeDevice, 1 }, 3 } }, 1 },
	{ "own read-only", { { { hipMemLocationTypeDevice, 1 }, 1 } }, 1 },
	{ "own none", { { { hipMemLocationTypeDevice, 1 }, 0 } }, 1 },
	{ "device past them", { { { hipMemLocationTypeDevice, 2 }, 3 } }, 1 },
	{ "device -1", { { { hipMemLocationTypeDevice, -1 }, 3 } }, 1 },
	{ "host", { { { hipMemLocationTypeHost, 0 }, 3 } }, 1 },
	{ "flags 7", { { { hipMemLocationTypeDevice, 0 }, 7 } }, 1 },
	{ "peer then own read-only", { { { hipMemLocationTypeDevice, 0 }, 3 },
				       { { hipMemLocationTypeDevice, 1 }, 1 } },
	  2 },
	{ "more than the devices", { { { hipMemLocationTypeDevice, 0 }, 3 },
				     { { hipMemLocationTypeDevice, 1 }, 3 },
				     { { hipMemLocationTypeDevice, 0 }, 3 } },
	  3 },
	{ "none", { { { hipMemLocationTypeDevice, 0 }, 3 } }, 0 },
};

/* Every case on fresh pools of both: how many answered otherwise. */
static int set_access_cases(void)
{
	hipMemLocation dev0 = { hipMemLocationTypeDevice, 0 };
	hipMemPool_t a, b;
	unsigned int i;
	int bad = 0;

	for (i = 0; i < sizeof(access_cases) / sizeof(access_cases[0]); i++) {
		const struct access_case *c = &access_cases[i];
		hipMemAccessFlags fa = 99, fb = 99;
		hipError_t ea;

		if (rt_pool(&a, 1) || device_pool(&b, 1))
			return 100;
		ea = hipMemPoolSetAccess(a, c->d, c->n);
		SAME(c->what, ea, hipMemPoolSetAccess(b, c->d, c->n), bad);
		if (!ea) {
			hipMemPoolGetAccess(&fa, a, &dev0);
			hipMemPoolGetAccess(&fb, b, &dev0);
			if (fa != fb) {
				fprintf(stderr, "# %s: device 0 given %d by the "
					"runtime, %d by kfdpool\n", c->what,
					fa, fb);
				bad++;
			}
		}
		hipMemPoolDestroy(a);
		hipMemPoolDestroy(b);
	}
	if (rt_pool(&a, 1) || device_pool(&b, 1))
		return 100;
	SAME("no list", hipMemPoolSetAccess(a, NULL, 0),
	     hipMemPoolSetAccess(b, NULL, 0), bad);
	hipMemPoolDestroy(a);
	hipMemPoolDestroy(b);
	return bad;
}

TEST_F(dev, set_access_answers_as_the_runtime)
{
	hipMemAccessDesc own_ro = { { hipMemLocationTypeDevice, 1 },
				    hipMemAccessFlagsProtRead };
	hipMemPool_t b;

	EXPECT_EQ(0, set_access_cases());
	/* Every release modelled takes read-only on the own device, and
	 * leaves it read-write. */
	ASSERT_EQ(hipSuccess, device_pool(&b, 1));
	EXPECT_EQ(hipSuccess, hipMemPoolSetAccess(b, &own_ro, 1));
	EXPECT_EQ(hipErrorInvalidValue, hipMemPoolSetAccess(b, NULL, 0));
	EXPECT_EQ(hipSuccess, hipMemPoolDestroy(b));
}

/* The newest clr checks every descriptor first (HIP_VERSION 7.3 here). */
static int checked_child(void)
{
	hipMemAccessDesc own_ro = { { hipMemLocationTypeDevice, 1 },
				    hipMemAccessFlagsProtRead };
	hipMemPool_t b;
	int bad = set_access_cases();

	if (device_pool(&b, 1))
		return 100;
	if (hipMemPoolSetAccess(b, &own_ro, 1) != hipErrorNotSupported)
		bad++;
	hipMemPoolDestroy(b);
	return bad;
}

TEST_F(dev, set_access_answers_as_the_newest_runtime)
{
	EXPECT_EQ(0, lh_exec_self("checked", "KFDPOOL_STANDIN_VERSION",
				  "70300000"));
}

TEST_F(dev, export_takes_the_pools_handle_types_exactly)
{
	hipMemPool_t a, b;
	int fd = -1;
	hipError_t e;

	e = lh_pool(&b, hipMemHandleTypePosixFileDescriptor |
		    hipMemHandleTypeFabric, 0);
	if (e == hipErrorNotSupported)
		SKIP(return, "no pool handles in this module");
	ASSERT_EQ(hipSuccess, e);
	EXPECT_EQ(hipErrorInvalidValue, hipMemPoolExportToShareableHandle(&fd,
		  b, hipMemHandleTypePosixFileDescriptor, 0));
	EXPECT_EQ(-1, fd);
	EXPECT_EQ(hipSuccess, hipMemPoolDestroy(b));
	/* As the runtime answers for one of its own. */
	ASSERT_EQ(hipSuccess, rt_pool(&a, 0));
	ASSERT_EQ(hipSuccess, device_pool(&b, 0));
	EXPECT_EQ(hipMemPoolExportToShareableHandle(&fd, a,
		  hipMemHandleTypePosixFileDescriptor, 0),
		  hipMemPoolExportToShareableHandle(&fd, b,
		  hipMemHandleTypeFabric, 0));
	EXPECT_EQ(hipMemPoolExportToShareableHandle(&fd, a,
		  hipMemHandleTypeNone, 0),
		  hipMemPoolExportToShareableHandle(&fd, b,
		  hipMemHandleTypeNone, 0));
	EXPECT_EQ(hipSuccess, hipMemPoolDestroy(a));
	EXPECT_EQ(hipSuccess, hipMemPoolDestroy(b));
}

static hipStreamCaptureStatus capture_status(hipStream_t s)
{
	hipStreamCaptureStatus st = (hipStreamCaptureStatus)-1;

	hipStreamIsCapturing(s, &st);
	return st;
}

struct capturer {
	hipStream_t s;
	hipStreamCaptureMode mode;
};

static void *begin_capture(void *arg)
{
	struct capturer *c = arg;

	return (void *)(uintptr_t)hipStreamBeginCapture(c->s, c->mode);
}

/*
 * One capture, begun in this thread or another, and what making a pool
 * answers meanwhile: the runtime's answer for its own pool, kfdpool's for
 * a device pool and a host pool.  The capture is left capturing.
 */
static void create_in_capture(struct __test_metadata *_metadata,
			      hipStreamCaptureMode mode, int other,
			      hipError_t want)
{
	struct capturer c = { NULL, mode };
	hipMemPool_t a = NULL, b = NULL, h = NULL;
	hipError_t ea, eb, eh;
	pthread_t t;
	void *r = NULL;
	hipGraph_t g;

	ASSERT_EQ(hipSuccess, hipStreamCreate(&c.s));
	if (other) {
		ASSERT_EQ(0, pthread_create(&t, NULL, begin_capture, &c));
		pthread_join(t, &r);
	} else {
		r = begin_capture(&c);
	}
	ASSERT_EQ(hipSuccess, (hipError_t)(uintptr_t)r);
	ea = rt_pool(&a, 0);
	eb = device_pool(&b, 0);
	eh = lh_pool(&h, hipMemHandleTypePosixFileDescriptor, 0);
	EXPECT_EQ(want, ea);
	EXPECT_EQ(ea, eb);
	EXPECT_EQ(ea, eh);
	EXPECT_EQ(hipStreamCaptureStatusActive, capture_status(c.s));
	EXPECT_EQ(hipSuccess, hipStreamEndCapture(c.s, &g));
	if (!ea)
		EXPECT_EQ(hipSuccess, hipMemPoolDestroy(a));
	if (!eb)
		EXPECT_EQ(hipSuccess, hipMemPoolDestroy(b));
	if (!eh)
		EXPECT_EQ(hipSuccess, hipMemPoolDestroy(h));
	hipStreamDestroy(c.s);
}

/* From 7.0 clr refuses (hip_mempool.cpp; see hiprt_standin.c). */
TEST_F(dev, create_in_a_capture_answers_as_the_runtime)
{
	hipError_t refused = KFDPOOL_STANDIN_SINCE(7, 0) ?
		hipErrorStreamCaptureUnsupported : hipSuccess;

	create_in_capture(_metadata, hipStreamCaptureModeGlobal, 0, refused);
	create_in_capture(_metadata, hipStreamCaptureModeThreadLocal, 0,
			  refused);
	create_in_capture(_metadata, hipStreamCaptureModeRelaxed, 0,
			  hipSuccess);
	create_in_capture(_metadata, hipStreamCaptureModeGlobal, 1, refused);
	create_in_capture(_metadata, hipStreamCaptureModeThreadLocal, 1,
			  hipSuccess);
}

static hipError_t set_peer(void *pool)
{
	hipMemAccessDesc d = { { hipMemLocationTypeDevice, 0 },
			       hipMemAccessFlagsProtReadWrite };

	return hipMemPoolSetAccess(pool, &d, 1);
}

TEST_F(dev, set_access_maps_peers_with_the_runtime)
{
	hipMemLocation dev0 = { hipMemLocationTypeDevice, 0 };
	hipMemLocation dev1 = { hipMemLocationTypeDevice, 1 };
	hipMemLocation host = { hipMemLocationTypeHost, 0 };
	hipMemAccessFlags f;
	hipMemPool_t pool;
	size_t gran = 1 << 20;
	void *p, *q, *r;

	ASSERT_EQ(hipSuccess, device_pool(&pool, 1));
	ASSERT_EQ(hipSuccess, kfdpoolMemPoolSetGranularity(pool, gran));
	/* Every chunk is the runtime's own mapping: one made before the
	 * peer is named is given to it too. */
	ASSERT_EQ(hipSuccess, hipMallocFromPoolAsync(&p, gran, pool, NULL));
	standin_log();
	ASSERT_EQ(hipSuccess, set_peer(pool));
	EXPECT_TRUE(in_order(standin_log(), "hipMemSetAccess dev0 of dev1 flags 3"))
		TH_LOG("%s", logs);
	EXPECT_EQ(hipSuccess, hipMemPoolGetAccess(&f, pool, &dev0));
	EXPECT_EQ(hipMemAccessFlagsProtReadWrite, f);
	/* Its own device always; the host is no location clr answers for. */
	f = hipMemAccessFlagsProtNone;
	EXPECT_EQ(hipSuccess, hipMemPoolGetAccess(&f, pool, &dev1));
	EXPECT_EQ(hipMemAccessFlagsProtReadWrite, f);
	EXPECT_EQ(hipErrorInvalidValue, hipMemPoolGetAccess(&f, pool, &host));
	/* Chunks reserved now are mapped for the peer as they are made. */
	ASSERT_EQ(hipSuccess, hipMallocFromPoolAsync(&q, gran, pool, NULL));
	ASSERT_EQ(hipSuccess, hipMallocFromPoolAsync(&r, gran, pool, NULL));
	EXPECT_TRUE(in_order(standin_log(), "hipMemCreate dev1;"
			     "hipMemExportToShareableHandle dev1;"
			     "hipMemAddressReserve;hipMemMap dev1;"
			     "hipMemSetAccess dev1 of dev1 flags 3;"
			     "hipMemSetAccess dev0 of dev1 flags 3;"
			     "hipMemCreate dev1;hipMemMap dev1;"
			     "hipMemSetAccess dev1 of dev1 flags 3;"
			     "hipMemSetAccess dev0 of dev1 flags 3"))
		TH_LOG("%s", logs);
	EXPECT_EQ(NULL, strstr(logs, "hipImportExternalMemory"));
	EXPECT_EQ(hipSuccess, hipFree(p));
	EXPECT_EQ(hipSuccess, hipFree(q));
	EXPECT_EQ(hipSuccess, hipFree(r));
	EXPECT_EQ(hipSuccess, hipMemPoolDestroy(pool));
	EXPECT_TRUE(in_order(standin_log(), "hipMemUnmap dev1;"
			     "hipMemAddressFree;hipMemRelease dev1"))
		TH_LOG("%s", logs);
}

static hipError_t create_dev1(void *pool)
{
	return device_pool(pool, 1);
}

/* KFDPOOL_RT_PATH: a value it refuses fails the call, said once per call,
 * never ignored (the library's rule for every KFDPOOL_* variable). */
TEST_F(dev, rt_path_is_validated)
{
	hipMemPool_t pool = NULL;
	char out[1024];
	hipError_t e;

	setenv("KFDPOOL_RT_PATH", "dma-buf", 1);
	EXPECT_EQ(1, stderr_lines(create_dev1, &pool, &e, out, sizeof(out)))
		TH_LOG("%s", out);
	unsetenv("KFDPOOL_RT_PATH");
	EXPECT_EQ(hipErrorInvalidValue, e);
	EXPECT_TRUE(strstr(out, "KFDPOOL_RT_PATH=\"dma-buf\" is not valid") != NULL)
		TH_LOG("%s", out);
	/* Nothing half made; unset, the same call works. */
	EXPECT_EQ(NULL, pool);
	ASSERT_EQ(hipSuccess, device_pool(&pool, 1));
	EXPECT_EQ(hipSuccess, hipMemPoolDestroy(pool));
}

/*
 * The dmabuf path refused at each step: the allocation fails, the memory
 * is given back to the runtime, the dma-buf closed the way it came (ROCr's
 * own close when it has one).  A dma-buf that holds more than the chunk (a
 * nonzero offset) is refused: pinning it would share memory that is not
 * the pool's.  0, or 20 + which check failed.
 */
static int dmabuf_errors(void)
{
	static const struct {
		const char *call;
		int answer;
		hipError_t want;
		const char *log;
	} steps[] = {
		{ "hipExtMallocWithFlags", hipErrorOutOfMemory,
		  hipErrorOutOfMemory, "hipExtMallocWithFlags fails" },
		{ "hsa_amd_portable_export_dmabuf", 0x1001, hipErrorUnknown,
		  "hsa_amd_portable_export_dmabuf fails;hipFree dev1" },
		{ "hsa_amd_portable_export_dmabuf", KFDPOOL_STANDIN_WRONG,
		  hipErrorNotSupported, "hsa_amd_portable_export_dmabuf dev1;"
		  " off 4096;hsa_amd_portable_close_dmabuf;hipFree dev1" },
	};
	hipMemPool_t pool;
	size_t i;
	int nfds;
	void *p;

	if (device_pool(&pool, 1) || hipMallocFromPoolAsync(&p, 4096, pool, NULL) ||
	    hipFree(p) || hipMemPoolTrimTo(pool, 0))
		return 20;
	nfds = lh_nfds();
	for (i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		standin_log();
		kfdpool_standin_fail(steps[i].call, 0, steps[i].answer);
		p = NULL;
		if (hipMallocFromPoolAsync(&p, 4096, pool, NULL) != steps[i].want ||
		    p)
			return 21;
		if (!kfdpool_standin_fail(NULL, 0, 0))
			return 22;
		if (!in_order(standin_log(), steps[i].log)) {
			fprintf(stderr, "%s:\n%s", steps[i].call, logs);
			return 23;
		}
		if (lh_nfds() != nfds || kfdpool_standin_fds() ||
		    lh_attr(pool, hipMemPoolAttrReservedMemCurrent))
			return 24;
	}
	if (hipMallocFromPoolAsync(&p, 4096, pool, NULL) || hipFree(p) ||
	    hipMemPoolDestroy(pool))
		return 25;
	return 0;
}

/* ROCr 5.6 to 6.0 (no VMM): a child with that runtime version. */
static int dmabuf_child(void)
{
	hipMemPool_t pool;
	hipError_t e;
	char out[1024];
	void *p;

	if (device_pool(&pool, 1) || hipMallocFromPoolAsync(&p, 4096, pool, NULL))
		return 2;
	if (!in_order(standin_log(), "hipExtMallocWithFlags dev1;"
		      "hsa_amd_portable_export_dmabuf dev1 ")) {
		fprintf(stderr, "%s", logs);
		return 3;
	}
	if (strstr(logs, "hipMemCreate"))
		return 4;
	/* No peer mapping: refused, said once. */
	if (stderr_lines(set_peer, pool, &e, out, sizeof(out)) != 1 ||
	    e != hipErrorNotSupported || !strstr(out, "ROCm >= 6.2"))
		return 5;
	if (stderr_lines(set_peer, pool, &e, out, sizeof(out)) != 0 ||
	    e != hipErrorNotSupported)
		return 6;
	if (hipFree(p) || hipMemPoolDestroy(pool))
		return 7;
	if (!strstr(standin_log(), "hipFree dev1"))
		return 8;
	return dmabuf_errors();
}

TEST_F_TIMEOUT(dev, rocr_5_6_path_exports_with_hsa, 300)
{
	EXPECT_EQ(0, lh_exec_self("dmabuf", "KFDPOOL_STANDIN_VERSION",
				  "50700000"));
}

/*
 * A runtime that refuses one step of the vmm path: the allocation fails
 * with the runtime's own error, unchanged, what the earlier steps made is
 * given back in reverse order, and the pool is as before: its one chunk
 * of room (maxSize) is still there for the next allocation.  With @peer,
 * the pool is opened to device 0 first, and its chunks are given to it.
 */
static void runtime_errors(struct __test_metadata *_metadata, int peer)
{
	static const struct {
		const char *call;	/* the runtime call that fails */
		hipError_t answer;	/* with this */
		hipError_t want;	/* hipMallocFromPoolAsync's answer */
		const char *undo;	/* then these calls, in this order */
		int peer;		/* 1: only with, 0: only without */
	} steps[] = {
		{ "hipMemCreate", hipErrorOutOfMemory, hipErrorOutOfMemory,
		  "hipMemCreate fails", -1 },
		{ "hipMemExportToShareableHandle", hipErrorNotSupported,
		  hipErrorNotSupported, "hipMemRelease dev1", -1 },
		{ "hipMemAddressReserve", hipErrorOutOfMemory,
		  hipErrorOutOfMemory, "hipMemRelease dev1", -1 },
		{ "hipMemMap", hipErrorInvalidValue, hipErrorInvalidValue,
		  "hipMemAddressFree;hipMemRelease dev1", -1 },
		{ "hipMemSetAccess", hipErrorInvalidDevice,
		  hipErrorInvalidDevice,
		  "hipMemUnmap dev1;hipMemAddressFree;hipMemRelease dev1", -1 },
		/* The pool's device made current, and put back: */
		{ "hipGetDevice", hipErrorNoDevice, hipErrorNoDevice,
		  "hipGetDevice fails", -1 },
		{ "hipSetDevice", hipErrorInvalidDevice, hipErrorInvalidDevice,
		  "hipSetDevice fails", -1 },
		/* An export that is no dma-buf (its size is not the chunk's):
		 * never pinned. */
		{ "hipMemExportToShareableHandle", KFDPOOL_STANDIN_WRONG,
		  hipErrorNotSupported, "hipMemRelease dev1", -1 },
	};
	hipMemPoolProps props = lh_props(hipMemHandleTypePosixFileDescriptor,
					 1 << 20);
	struct kfdpool_pool_stats st;
	hipMemPool_t pool;
	hipStream_t s;
	int nfds, dev = -1;
	size_t i;
	void *p;

	props.location.type = hipMemLocationTypeDevice;
	props.location.id = 1;
	ASSERT_EQ(hipSuccess, hipMemPoolCreate(&pool, &props));
	ASSERT_EQ(hipSuccess, kfdpoolMemPoolSetGranularity(pool, 1 << 20));
	if (peer)
		ASSERT_EQ(hipSuccess, set_peer(pool));
	/* A stream of its own: the null stream would ask for the device
	 * before the backend does. */
	ASSERT_EQ(hipSuccess, hipStreamCreate(&s));
	ASSERT_EQ(hipSuccess, hipSetDevice(0));
	/* Whatever the library opens once is open before counting. */
	ASSERT_EQ(hipSuccess, hipMallocFromPoolAsync(&p, 4096, pool, s));
	ASSERT_EQ(hipSuccess, hipFree(p));
	ASSERT_EQ(hipSuccess, hipMemPoolTrimTo(pool, 0));
	nfds = lh_nfds();
	for (i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		if (steps[i].peer >= 0 && steps[i].peer != peer)
			continue;
		standin_log();
		kfdpool_standin_fail(steps[i].call, 0, steps[i].answer);
		p = NULL;
		EXPECT_EQ(steps[i].want, hipMallocFromPoolAsync(&p, 4096, pool, s))
			TH_LOG("%s", steps[i].call);
		EXPECT_EQ(NULL, p);
		EXPECT_TRUE(kfdpool_standin_fail(NULL, 0, 0))
			TH_LOG("%s was never called", steps[i].call);
		EXPECT_TRUE(in_order(standin_log(), steps[i].undo))
			TH_LOG("%s:\n%s", steps[i].call, logs);
		EXPECT_EQ(hipSuccess, hipGetDevice(&dev));
		EXPECT_EQ(0, dev);
		EXPECT_EQ(nfds, lh_nfds()) TH_LOG("%s", steps[i].call);
		EXPECT_EQ(0, kfdpool_standin_fds()) TH_LOG("%s", steps[i].call);
		ASSERT_EQ(hipSuccess, kfdpoolMemPoolGetStats(pool, &st));
		EXPECT_EQ(0, st.entries) TH_LOG("%s", steps[i].call);
		EXPECT_EQ(0, lh_attr(pool, hipMemPoolAttrReservedMemCurrent));
	}
	/* All of maxSize is still there. */
	ASSERT_EQ(hipSuccess, hipMallocFromPoolAsync(&p, 1 << 20, pool, s));
	EXPECT_EQ(1, kfdpool_standin_device_of(p));
	EXPECT_EQ(hipSuccess, hipFree(p));
	EXPECT_EQ(hipSuccess, hipMemPoolDestroy(pool));
	EXPECT_EQ(hipSuccess, hipStreamDestroy(s));
}

TEST_F_TIMEOUT(dev, a_runtime_error_fails_the_chunk_and_undoes_it, 300)
{
	runtime_errors(_metadata, 0);
}

TEST_F_TIMEOUT(dev, a_runtime_error_of_a_peer_mapped_chunk_undoes_it, 300)
{
	runtime_errors(_metadata, 1);
}

/*
 * The runtime's granularity makes a chunk larger than asked: the pool
 * counts what it got, and a chunk that takes it past maxSize is given back
 * (hipErrorOutOfMemory) rather than kept.
 */
TEST_F(dev, a_chunk_the_runtime_rounds_up_counts_whole)
{
	const size_t gran = (64 << 10) + 4096;	/* the stand-in's is 64 KiB */
	hipMemPoolProps props = lh_props(hipMemHandleTypePosixFileDescriptor,
					 0);
	hipMemPool_t pool;
	void *p;

	props.location.type = hipMemLocationTypeDevice;
	props.location.id = 1;
	ASSERT_EQ(hipSuccess, hipMemPoolCreate(&pool, &props));
	ASSERT_EQ(hipSuccess, kfdpoolMemPoolSetGranularity(pool, gran));
	ASSERT_EQ(hipSuccess, hipMallocFromPoolAsync(&p, 4096, pool, NULL));
	EXPECT_EQ(128 << 10, lh_attr(pool, hipMemPoolAttrReservedMemCurrent));
	EXPECT_EQ(hipSuccess, hipFree(p));
	EXPECT_EQ(hipSuccess, hipMemPoolDestroy(pool));

	/* maxSize holds the chunk asked for, not the one made. */
	props.maxSize = gran + 4096;
	ASSERT_EQ(hipSuccess, hipMemPoolCreate(&pool, &props));
	ASSERT_EQ(hipSuccess, kfdpoolMemPoolSetGranularity(pool, gran));
	standin_log();
	EXPECT_EQ(hipErrorOutOfMemory, hipMallocFromPoolAsync(&p, 4096, pool,
							      NULL));
	EXPECT_TRUE(in_order(standin_log(), "hipMemCreate dev1;"
			     "hipMemUnmap dev1;hipMemAddressFree;"
			     "hipMemRelease dev1")) TH_LOG("%s", logs);
	EXPECT_EQ(0, lh_attr(pool, hipMemPoolAttrReservedMemCurrent));
	EXPECT_EQ(0, kfdpool_standin_fds());
	EXPECT_EQ(hipSuccess, hipMemPoolDestroy(pool));
}

/* A peer the pool was opened to whose mapping of a new chunk is refused:
 * the chunk is given back, the allocation fails. */
TEST_F(dev, a_refused_peer_mapping_fails_the_new_chunk)
{
	size_t gran = 1 << 20;
	hipMemPool_t pool;
	void *p, *q = NULL;

	ASSERT_EQ(hipSuccess, device_pool(&pool, 1));
	ASSERT_EQ(hipSuccess, kfdpoolMemPoolSetGranularity(pool, gran));
	ASSERT_EQ(hipSuccess, set_peer(pool));
	ASSERT_EQ(hipSuccess, hipMallocFromPoolAsync(&p, gran, pool, NULL));
	standin_log();
	/* The chunk's own access is granted; the peer's is refused. */
	kfdpool_standin_fail("hipMemSetAccess", 1, hipErrorOutOfMemory);
	EXPECT_EQ(hipErrorOutOfMemory, hipMallocFromPoolAsync(&q, gran, pool,
							      NULL));
	EXPECT_EQ(NULL, q);
	EXPECT_TRUE(in_order(standin_log(), "hipMemSetAccess dev1 of dev1;"
			     "hipMemSetAccess fails;hipMemUnmap dev1;"
			     "hipMemAddressFree;hipMemRelease dev1"))
		TH_LOG("%s", logs);
	EXPECT_EQ(gran, lh_attr(pool, hipMemPoolAttrReservedMemCurrent));
	EXPECT_EQ(1, kfdpool_standin_fds());	/* p's */
	EXPECT_EQ(hipSuccess, hipFree(p));
	EXPECT_EQ(hipSuccess, hipMemPoolDestroy(pool));
}

/* ---- the path, chosen by what the runtime and the driver can do ---- */

/* In a child with the stand-in made as @env says: make a device pool twice
 * and allocate from it.  Its answers go to stdout. */
static int path_child(void)
{
	hipMemPool_t pool;
	hipError_t c1, c2, a = hipErrorNotReady;
	void *p = NULL;

	c1 = device_pool(&pool, 1);
	if (!c1) {
		a = hipMallocFromPoolAsync(&p, 4096, pool, NULL);
		if (!a)
			hipFree(p);
		hipMemPoolDestroy(pool);
	}
	c2 = device_pool(&pool, 1);
	if (!c2)
		hipMemPoolDestroy(pool);
	printf("create %d %d alloc %d\n%s", c1, c2, a, standin_log());
	return 0;
}

struct child_out {
	char out[1 << 15], err[4096];
	int create, alloc, nerr;
};

/* Run "--ROLE" in a child with @env (NULL-terminated) set; its output. */
static int run_child(const char *role, const char *const *env,
		     struct child_out *o)
{
	int po[2], pe[2], st, i;
	ssize_t n;
	pid_t pid;

	memset(o, 0, sizeof(*o));
	if (pipe(po) || pipe(pe))
		return -1;
	pid = fork();
	if (!pid) {
		dup2(po[1], 1);
		dup2(pe[1], 2);
		for (i = 0; env && env[i]; i++)
			putenv((char *)env[i]);
		execl("/proc/self/exe", "child", role, (char *)NULL);
		_exit(127);
	}
	close(po[1]);
	close(pe[1]);
	for (i = 0; i < (int)sizeof(o->out) - 1; i += n) {
		n = read(po[0], o->out + i, sizeof(o->out) - 1 - i);
		if (n <= 0)
			break;
	}
	for (i = 0; i < (int)sizeof(o->err) - 1; i += n) {
		n = read(pe[0], o->err + i, sizeof(o->err) - 1 - i);
		if (n <= 0)
			break;
	}
	close(po[0]);
	close(pe[0]);
	waitpid(pid, &st, 0);
	for (i = 0; o->err[i]; i++)
		o->nerr += o->err[i] == '\n';
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

TEST_F_TIMEOUT(dev, the_path_is_chosen_by_what_runtime_and_driver_can_do, 300)
{
	static const struct {
		const char *env[4];
		hipError_t create, alloc;
		const char *line[3];	/* what the one line says */
		const char *call;	/* the call that allocated */
	} cases[] = {
		{ { NULL }, hipSuccess, hipSuccess,
		  { "vmm path", "dmabuf path not used: vmm comes first" },
		  "hipMemCreate dev1" },
		/* 6.1 says the attribute is 1, but refuses the handles. */
		{ { "KFDPOOL_STANDIN_VERSION=60102000" }, hipSuccess, hipSuccess,
		  { "dmabuf path", "vmm path not used: HIP 6.1 is older than 6.2" },
		  "hipExtMallocWithFlags dev1" },
		{ { "KFDPOOL_STANDIN_VMM=0" }, hipSuccess, hipSuccess,
		  { "dmabuf path", "VirtualMemoryManagementSupported is 0" },
		  "hipExtMallocWithFlags dev1" },
		{ { "KFDPOOL_STANDIN_VERSION=60102000",
		    "KFDPOOL_STANDIN_DMABUF=0" },
		  hipErrorNotSupported, hipErrorNotReady,
		  { "none", "HIP 6.1 is older than 6.2", "DMABUF_SUPPORTED is false" },
		  NULL },
		{ { "KFDPOOL_RT_PATH=dmabuf" }, hipSuccess, hipSuccess,
		  { "dmabuf path", "KFDPOOL_RT_PATH" },
		  "hipExtMallocWithFlags dev1" },
		{ { "KFDPOOL_RT_PATH=vmm", "KFDPOOL_STANDIN_VERSION=60102000" },
		  hipErrorNotSupported, hipErrorNotReady,
		  { "none of the one KFDPOOL_RT_PATH names", "older than 6.2" },
		  NULL },
	};
	struct child_out *o = malloc(sizeof(*o));
	size_t i, j;
	int c1, c2, a;

	ASSERT_NE(NULL, o);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		EXPECT_EQ(0, run_child("--path", cases[i].env, o)) TH_LOG("%zu", i);
		ASSERT_EQ(3, sscanf(o->out, "create %d %d alloc %d", &c1, &c2, &a))
			TH_LOG("%zu: %s", i, o->out);
		EXPECT_EQ(cases[i].create, c1) TH_LOG("case %zu", i);
		EXPECT_EQ(cases[i].create, c2) TH_LOG("case %zu", i);
		EXPECT_EQ(cases[i].alloc, a) TH_LOG("case %zu", i);
		/* One line, once, naming the path and why not the other. */
		EXPECT_EQ(1, o->nerr) TH_LOG("case %zu: %s", i, o->err);
		EXPECT_TRUE(strstr(o->err, "kfdpool: device pools beside ") != NULL)
			TH_LOG("case %zu: %s", i, o->err);
		for (j = 0; j < 3 && cases[i].line[j]; j++)
			EXPECT_TRUE(strstr(o->err, cases[i].line[j]) != NULL)
				TH_LOG("case %zu: want \"%s\" in %s", i,
				       cases[i].line[j], o->err);
		if (cases[i].call)
			EXPECT_TRUE(strstr(o->out, cases[i].call) != NULL)
				TH_LOG("case %zu: %s", i, o->out);
	}
	free(o);
}

/* ---- the dmabuf path: each chunk a driver object of its own ---- */

/*
 * In a child on the dmabuf path (HIP 5.7): chunks of a 64 KiB-granularity
 * pool beside a canary hipMalloc.  ROCr's fragment allocator would serve
 * both from one 2 MiB block, whose dma-buf holds the canary, and give a
 * freed 2 MiB block to the next hipMalloc.  0, or which check failed.
 */
static int frag_child(void)
{
	struct kfdpool_pool_stats st;
	void *p1, *p2, *canary, *after, *base = NULL;
	uint64_t o1, o2, oc;
	hipMemPool_t pool;
	size_t size = 0;
	hipError_t e;

	if (device_pool(&pool, 1) ||
	    kfdpoolMemPoolSetGranularity(pool, 64 << 10))
		return 2;
	e = hipMallocFromPoolAsync(&p1, 64 << 10, pool, NULL);
	if (e) {
		fprintf(stderr, "first chunk: %d\n", e);
		return 3;
	}
	if (hipMalloc(&canary, 64 << 10) || hipMemset(canary, 0xcc, 64 << 10))
		return 4;
	/* Larger than the first chunk's room: a second chunk. */
	e = hipMallocFromPoolAsync(&p2, 4 << 20, pool, NULL);
	if (e) {
		fprintf(stderr, "second chunk: %d\n", e);
		return 5;
	}
	o1 = kfdpool_standin_object_of(p1, &base, &size);
	o2 = kfdpool_standin_object_of(p2, NULL, NULL);
	oc = kfdpool_standin_object_of(canary, NULL, NULL);
	if (!o1 || o1 == oc || o2 == oc || o1 == o2) {
		fprintf(stderr, "objects %llu %llu, canary's %llu\n",
			(unsigned long long)o1, (unsigned long long)o2,
			(unsigned long long)oc);
		return 6;
	}
	/* The pinned dma-buf is the chunk, whole, and what the pool counts. */
	if (base != p1 || kfdpoolMemPoolGetStats(pool, &st) ||
	    st.reserved_bytes != 2 * size || st.entries != 2) {
		fprintf(stderr, "object %p+%zu for %p; pinned %llu in %u\n",
			base, size, p1, (unsigned long long)st.reserved_bytes,
			(unsigned)st.entries);
		return 7;
	}
	/* Given back, the chunks' objects are not the next hipMalloc's. */
	if (hipFree(p1) || hipFree(p2) || hipMemPoolTrimTo(pool, 0) ||
	    lh_attr(pool, hipMemPoolAttrReservedMemCurrent))
		return 8;
	if (hipMalloc(&after, 2 << 20))
		return 9;
	oc = kfdpool_standin_object_of(after, NULL, NULL);
	if (oc == o1 || oc == o2) {
		fprintf(stderr, "a freed chunk's object %llu is hipMalloc's\n",
			(unsigned long long)oc);
		return 10;
	}
	if (hipFree(after) || hipFree(canary) || hipMemPoolDestroy(pool))
		return 11;
	return 0;
}

TEST_F_TIMEOUT(dev, dmabuf_chunks_are_driver_objects_of_their_own, 300)
{
	static const char *const env[][3] = {
		{ "KFDPOOL_STANDIN_VERSION=50700000" },
		/* The control: ROCr without its fragment allocator. */
		{ "KFDPOOL_STANDIN_VERSION=50700000",
		  "HSA_DISABLE_FRAGMENT_ALLOCATOR=1" },
		/* Chosen on 6.2 too. */
		{ "KFDPOOL_RT_PATH=dmabuf" },
	};
	struct child_out *o = malloc(sizeof(*o));
	size_t i;

	ASSERT_NE(NULL, o);
	for (i = 0; i < sizeof(env) / sizeof(env[0]); i++)
		EXPECT_EQ(0, run_child("--frag", env[i], o))
			TH_LOG("case %zu: %s", i, o->err);
	free(o);
}

/* ---- an importer holds no fd per chunk ---- */

#define MANY 48

/*
 * Import MANY pointers, each in a chunk of its own, with 16 fds to spare:
 * through virtual memory all of them, holding no fd; as external memory
 * (KFDPOOL_RT_PATH=dmabuf) one fd each until none is left, then the
 * import fails with hipErrorOutOfMemory and one line naming the limit,
 * and nothing is left of it.
 */
static int many_importer(int sock)
{
	hipMemPoolPtrExportData d[MANY];
	void *q[MANY];
	hipMemPool_t pool;
	struct rlimit rl;
	char err[2048];
	int fd, i, n, got = MANY, mfd, saved, lines = 0;
	hipError_t e = hipSuccess;
	ssize_t r;

	fd = lh_recv_fd(sock);
	if (fd < 0 || lh_read_all(sock, d, sizeof(d)))
		return 2;
	if (hipMemPoolImportFromShareableHandle(&pool, (void *)(intptr_t)fd,
			hipMemHandleTypePosixFileDescriptor, 0))
		return 3;
	if (ext_refused()) {
		/* (7.2 refuses external memory: a_pool_..._is_refused.) */
		if (hipMemPoolImportPointer(&q[0], pool, &d[0]) !=
		    hipErrorNotSupported || hipMemPoolDestroy(pool))
			return 10;
		return lh_write_all(sock, "K", 1) ? 9 : 0;
	}
	/* The first import opens what the library keeps (its ring). */
	if (hipMemPoolImportPointer(&q[0], pool, &d[0]))
		return 4;
	n = lh_nfds();
	rl.rlim_cur = rl.rlim_max = n + 16;
	if (setrlimit(RLIMIT_NOFILE, &rl))
		return 4;
	mfd = memfd_create("stderr", MFD_CLOEXEC);
	saved = dup(2);
	fflush(stderr);
	dup2(mfd, 2);
	for (i = 1; i < MANY && !e; i++) {
		e = hipMemPoolImportPointer(&q[i], pool, &d[i]);
		if (e)
			got = i;
	}
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	r = pread(mfd, err, sizeof(err) - 1, 0);
	close(mfd);
	err[r > 0 ? r : 0] = 0;
	for (char *c = err; *c; c++)
		lines += *c == '\n';
	if (!ext_path() && (e || lh_nfds() != n || lines)) {
		fprintf(stderr, "import %d of %d: %d (%d fds)\n%s", got, MANY,
			e, lh_nfds(), err);
		return 5;
	}
	/* (Of the 16 fds to spare the capture of stderr takes two.) */
	if (ext_path() && (e != hipErrorOutOfMemory || got < 8 ||
			   lh_nfds() != n + got - 1 || lines != 1 ||
			   !strstr(err, "RLIMIT_NOFILE"))) {
		fprintf(stderr, "import %d of %d: %d (%d fds, %d before)\n%s",
			got, MANY, e, lh_nfds(), n, err);
		return 6;
	}
	for (i = 0; i < got; i++)
		if (hipFree(q[i]))
			return 7;
	/* The fds go with their mappings (given back at a synchronising
	 * call), the first import's too. */
	if (hipDeviceSynchronize() || lh_nfds() != n - ext_path() ||
	    kfdpool_standin_fds()) {
		fprintf(stderr, "%d fds, %d before\n", lh_nfds(), n);
		return 11;
	}
	if (hipMemPoolDestroy(pool))
		return 8;
	return lh_write_all(sock, "K", 1) ? 9 : 0;
}

static void share_many(struct __test_metadata *_metadata, const char *env)
{
	hipMemPoolPtrExportData d[MANY];
	void *p[MANY];
	hipMemPool_t pool;
	int sv[2], fd, st, i;
	char arg[16], c = 0;
	pid_t pid;

	ASSERT_EQ(hipSuccess, device_pool(&pool, 1));
	ASSERT_EQ(hipSuccess, kfdpoolMemPoolSetGranularity(pool, 64 << 10));
	for (i = 0; i < MANY; i++) {
		ASSERT_EQ(hipSuccess, hipMallocFromPoolAsync(&p[i], 64 << 10,
							     pool, NULL));
		ASSERT_EQ(hipSuccess, hipMemPoolExportPointer(&d[i], p[i]));
	}
	ASSERT_EQ(hipSuccess, hipMemPoolExportToShareableHandle(&fd, pool,
		  hipMemHandleTypePosixFileDescriptor, 0));
	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		close(sv[0]);
		snprintf(arg, sizeof(arg), "%d", sv[1]);
		if (env)
			putenv((char *)env);
		execl("/proc/self/exe", "importer", "--many", arg, (char *)NULL);
		_exit(127);
	}
	close(sv[1]);
	ASSERT_EQ(0, lh_send_fd(sv[0], fd));
	ASSERT_EQ(0, lh_write_all(sv[0], d, sizeof(d)));
	close(fd);
	lh_read_all(sv[0], &c, 1);
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	close(sv[0]);
	EXPECT_EQ('K', c);
	EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0)
		TH_LOG("importer status %#x", st);
	for (i = 0; i < MANY; i++)
		EXPECT_EQ(hipSuccess, hipFree(p[i]));
	EXPECT_EQ(hipSuccess, hipMemPoolDestroy(pool));
}

TEST_F_TIMEOUT(dev, an_importer_holds_no_fd_per_chunk, 300)
{
	share_many(_metadata, NULL);
}

TEST_F_TIMEOUT(dev, an_external_memory_importer_holds_an_fd_per_chunk, 300)
{
	share_many(_metadata, "KFDPOOL_RT_PATH=dmabuf");
}

TEST(get_proc_address_hands_out_kfdpools_functions)
{
	void *f = NULL, *mine = dlsym(RTLD_DEFAULT, "hipFree");
	Dl_info info;

	ASSERT_EQ(hipSuccess, hipGetProcAddress("hipFree", &f, 600, 0, NULL));
	EXPECT_EQ(mine, f);
	ASSERT_TRUE(dladdr(f, &info));
	EXPECT_TRUE(strstr(info.dli_fname, "libkfdpool-hip") != NULL)
		TH_LOG("%s", info.dli_fname);
	ASSERT_EQ(hipSuccess, hipGetProcAddress("hipStreamWaitEvent", &f, 600,
						0, NULL));
	ASSERT_TRUE(dladdr(f, &info));
	EXPECT_TRUE(strstr(info.dli_fname, "libkfdpool-hip") != NULL)
		TH_LOG("%s", info.dli_fname);
	EXPECT_EQ(dlsym(RTLD_DEFAULT, "hipStreamWaitEvent"), f);
	/* HIP 7.2's, which kfdpool defines too. */
	ASSERT_EQ(hipSuccess, hipGetProcAddress("hipMemSetMemPool", &f, 702,
						0, NULL));
	EXPECT_EQ(dlvsym(RTLD_DEFAULT, "hipMemSetMemPool", "hip_7.2"), f);
	/* What kfdpool does not define stays the runtime's. */
	ASSERT_EQ(hipSuccess, hipGetProcAddress("hipMalloc", &f, 600, 0, NULL));
	ASSERT_TRUE(dladdr(f, &info));
	EXPECT_TRUE(strstr(info.dli_fname, "standin") != NULL)
		TH_LOG("%s", info.dli_fname);
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "--importer"))
		return importer(atoi(argv[2]));
	if (argc == 3 && !strcmp(argv[1], "--many"))
		return many_importer(atoi(argv[2]));
	if (argc == 2 && !strcmp(argv[1], "--dmabuf"))
		return dmabuf_child();
	if (argc == 2 && !strcmp(argv[1], "--path"))
		return path_child();
	if (argc == 2 && !strcmp(argv[1], "--frag"))
		return frag_child();
	if (argc == 2 && !strcmp(argv[1], "--checked"))
		return checked_child();
	return test_harness_run(argc, argv);
}
