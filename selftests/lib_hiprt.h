/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * libkfdpool-hip beside HIP's real runtime (libamdhip64; Debian's 5.2
 * finds no GPU and answers hipErrorNoDevice).  Included by the four
 * lib_hiprt_*_test programs, which differ only in how the process reaches
 * kfdpool:
 *   linked    -lkfdpool-hip -lamdhip64
 *   preload   -lamdhip64 alone, libkfdpool-hip.so.1 in LD_PRELOAD
 *   dso       HIP reached only through another library (lib_hiprt_dso.c
 *             linked -lkfdpool-hip -lamdhip64)
 *   asneeded  -Wl,--as-needed and kfdpool-hip from pkg-config, the HIP
 *             code in a plugin loaded with dlopen that knows nothing of
 *             kfdpool (lib_hiprt_dso.c linked -lamdhip64 alone)
 * Each defines hiprt_api(): the hip* functions as its HIP calls reach them.
 *
 * What is checked: every call kfdpool does not own (foreign pointers,
 * pools and handles, error names and strings) returns exactly what the
 * runtime's own function returns (found with dlvsym on libamdhip64); a
 * host pool is kfdpool's, and two processes, each with the runtime loaded,
 * share one; device pools fail cleanly beside the runtime.
 */
#ifndef LIB_HIPRT_H
#define LIB_HIPRT_H

#include <dlfcn.h>
#include <sys/mman.h>

#ifndef __HIP_PLATFORM_AMD__
#define __HIP_PLATFORM_AMD__
#endif
#include <hip/hip_runtime_api.h>

#include "lib_hip_util.h"

/* The functions compared, with the version libamdhip64 gives each. */
#define HIPRT_FUNCS(X) \
	X(hipFree, "hip_4.2") \
	X(hipFreeAsync, "hip_5.1") \
	X(hipMallocFromPoolAsync, "hip_5.1") \
	X(hipMemPoolCreate, "hip_5.1") \
	X(hipMemPoolDestroy, "hip_5.1") \
	X(hipMemPoolTrimTo, "hip_5.1") \
	X(hipMemPoolSetAttribute, "hip_5.1") \
	X(hipMemPoolGetAttribute, "hip_5.1") \
	X(hipMemPoolSetAccess, "hip_5.1") \
	X(hipMemPoolGetAccess, "hip_5.1") \
	X(hipMemPoolExportToShareableHandle, "hip_5.1") \
	X(hipMemPoolImportFromShareableHandle, "hip_5.1") \
	X(hipMemPoolExportPointer, "hip_5.1") \
	X(hipMemPoolImportPointer, "hip_5.1") \
	X(hipGetErrorName, "hip_4.2") \
	X(hipGetErrorString, "hip_4.2") \
	X(hipGetDeviceCount, "hip_4.2") \
	X(hipDeviceGetDefaultMemPool, "hip_5.1") \
	X(hipEventRecord, "hip_4.2") \
	X(hipEventDestroy, "hip_4.2") \
	X(hipStreamDestroy, "hip_4.2") \
	X(hipStreamWaitEvent, "hip_4.2") \
	X(hipStreamWaitEvent_spt, "hip_5.2") \
	X(hipEventCreateWithFlags, "hip_4.2") \
	X(hipStreamCreate, "hip_4.2") \
	X(hipRuntimeGetVersion, "hip_4.2") \
	X(hipGetLastError, "hip_4.2") \
	X(hipPeekAtLastError, "hip_4.2") \
	X(hipDeviceSynchronize, "hip_4.2") \
	X(hipStreamSynchronize, "hip_4.2") \
	X(hipEventSynchronize, "hip_4.2") \
	X(hipDeviceSetMemPool, "hip_5.1")

struct hiprt_api {
#define HIPRT_MEMBER(name, version) __typeof__(name) *name;
	HIPRT_FUNCS(HIPRT_MEMBER)
#undef HIPRT_MEMBER
};

/* A table of the functions as the code that includes this reaches them. */
#define HIPRT_API_INIT(name, version) .name = name,

#endif /* LIB_HIPRT_H */

#ifdef HIPRT_TESTS
#include "kselftest_harness.h"

const struct hiprt_api *hiprt_api(void);

static const struct hiprt_api *kp;	/* as this program reaches HIP */
static struct hiprt_api rt;		/* libamdhip64's own functions */
static const char *rt_path;
static int rt_no_device;		/* the runtime answers NoDevice */
static int rt_version;			/* its HIP_VERSION, 0 if it says none */
static void *rt_handle;			/* libamdhip64 */

static hipError_t rt_foreign_ptr;	/* its hipFree of a pointer not its */

/*
 * Without a GPU a runtime refuses what needs one with an error of its own
 * release: hipErrorInvalidDevice (5.2 for a pointer it does not know) or
 * hipErrorNoDevice (5.7 and 6.4 for that, and 6.4 for any lookup).
 */
static int rt_no_gpu_error(hipError_t e)
{
	return e == hipErrorInvalidDevice || e == hipErrorNoDevice;
}

static void hiprt_setup(void)
{
	static const char *const sonames[] = {
		"libamdhip64.so.7", "libamdhip64.so.6", "libamdhip64.so.5",
	};
	Dl_info info;
	void *h = NULL;
	size_t i;
	int n;

	kp = hiprt_api();
	if (!kp) {
		fprintf(stderr, "no HIP functions to test\n");
		exit(1);
	}
	for (i = 0; i < sizeof(sonames) / sizeof(sonames[0]) && !h; i++)
		h = dlopen(sonames[i], RTLD_NOW | RTLD_NOLOAD);
	if (!h)
		return;
	rt_handle = h;
#define HIPRT_LOOKUP(name, version) \
	rt.name = (__typeof__(rt.name))dlvsym(h, #name, version);
	HIPRT_FUNCS(HIPRT_LOOKUP)
#undef HIPRT_LOOKUP
	if (rt.hipFree && dladdr((void *)rt.hipFree, &info))
		rt_path = info.dli_fname;
	rt_no_device = rt.hipGetDeviceCount &&
		       rt.hipGetDeviceCount(&n) == hipErrorNoDevice;
	if (!rt.hipRuntimeGetVersion || rt.hipRuntimeGetVersion(&rt_version))
		rt_version = 0;
	if (rt.hipFree)
		rt_foreign_ptr = rt.hipFree(&rt_foreign_ptr);
}

/* The file a function of the table comes from. */
static const char *object_of(const void *fn)
{
	Dl_info info;

	return dladdr(fn, &info) && info.dli_fname ? info.dli_fname : "?";
}

static int kfdpool_is_first(void)
{
	return strstr(object_of((void *)kp->hipMemPoolCreate),
		      "libkfdpool-hip") &&
	       strstr(object_of((void *)kp->hipFree), "libkfdpool-hip");
}

TEST(the_runtime_is_loaded_and_kfdpool_comes_first)
{
	int i;

	ASSERT_NE(NULL, rt_path) TH_LOG("libamdhip64 is not loaded");
	TH_LOG("runtime: %s", rt_path);
	ASSERT_TRUE(strstr(rt_path, "libamdhip64") != NULL);
#define HIPRT_FOUND(name, version) \
	EXPECT_NE(NULL, (void *)rt.name) TH_LOG("%s@%s", #name, version); \
	EXPECT_TRUE(strstr(object_of((void *)rt.name), "libamdhip64") != NULL);
	HIPRT_FUNCS(HIPRT_FOUND)
#undef HIPRT_FOUND
	/* Every name kfdpool defines reaches kfdpool. */
	for (i = 0; i < 2; i++)
		TH_LOG("%s: %s", i ? "hipFree" : "hipMemPoolCreate",
		       object_of(i ? (void *)kp->hipFree :
				 (void *)kp->hipMemPoolCreate));
	EXPECT_TRUE(kfdpool_is_first());
	/* What kfdpool does not define is the runtime's. */
	EXPECT_EQ((void *)rt.hipGetDeviceCount, (void *)kp->hipGetDeviceCount);
}

/* The runtime of the HIP release whose headers built this program. */
TEST(the_runtime_is_the_headers_release)
{
	ASSERT_NE(0, rt_version) TH_LOG("hipRuntimeGetVersion failed");
	TH_LOG("runtime HIP %d.%d.%d, headers HIP %d.%d.%d",
	       rt_version / 10000000, rt_version / 100000 % 100,
	       rt_version % 100000, HIP_VERSION_MAJOR, HIP_VERSION_MINOR,
	       HIP_VERSION_PATCH);
	EXPECT_EQ(HIP_VERSION_MAJOR, rt_version / 10000000);
	EXPECT_EQ(HIP_VERSION_MINOR, rt_version / 100000 % 100);
	TH_LOG("hipFree of a pointer it does not know: %d", rt_foreign_ptr);
	if (rt_no_device)
		EXPECT_TRUE(rt_no_gpu_error(rt_foreign_ptr));
}

/*
 * A program that looks functions up (hipGetProcAddress, HIP 6.1 on) gets
 * kfdpool's for the names kfdpool defines and the runtime's for the rest.
 * Looked up by name: older headers do not declare it.  Without a GPU the
 * runtime refuses every lookup (it initializes first), and kfdpool must
 * answer the same; the replacement itself is checked against the stand-in
 * (lib_standin_device_test).
 */
TEST(get_proc_address_reaches_kfdpool)
{
	typedef hipError_t gpa_fn(const char *symbol, void **pfn, int version,
				  uint64_t flags, int *status);
	gpa_fn *gpa, *rt_gpa;
	void *mine = NULL, *theirs = NULL, *rt_mine = NULL;
	hipError_t a;
	int st = 0;

	ASSERT_NE(NULL, rt_handle);
	rt_gpa = (gpa_fn *)dlsym(rt_handle, "hipGetProcAddress");
	if (!rt_gpa)
		SKIP(return, "the runtime has no hipGetProcAddress (HIP before 6.1)");
	gpa = (gpa_fn *)dlsym(RTLD_DEFAULT, "hipGetProcAddress");
	ASSERT_NE(NULL, gpa);
	EXPECT_TRUE(strstr(object_of((void *)gpa), "libkfdpool-hip") != NULL)
		TH_LOG("hipGetProcAddress from %s", object_of((void *)gpa));
	a = rt_gpa("hipMemPoolCreate", &rt_mine, rt_version, 0, &st);
	EXPECT_EQ(a, gpa("hipMemPoolCreate", &mine, rt_version, 0, &st));
	EXPECT_EQ(rt_gpa("hipGetDeviceCount", &rt_mine, rt_version, 0, &st),
		  gpa("hipGetDeviceCount", &theirs, rt_version, 0, &st));
	EXPECT_EQ(rt_gpa("noSuchFunction", &rt_mine, rt_version, 0, &st),
		  gpa("noSuchFunction", &mine, rt_version, 0, &st));
	if (a != hipSuccess) {
		TH_LOG("the runtime refuses lookups: %d", a);
		EXPECT_TRUE(rt_no_device && rt_no_gpu_error(a));
		return;
	}
	EXPECT_EQ((void *)kp->hipMemPoolCreate, mine)
		TH_LOG("hipMemPoolCreate from %s", object_of(mine));
	EXPECT_EQ((void *)rt.hipGetDeviceCount, theirs)
		TH_LOG("hipGetDeviceCount from %s", object_of(theirs));
}

TEST(error_names_and_strings_are_the_runtimes)
{
	static const int codes[] = {
		0, 1, 2, 3, 98, 100, 101, 200, 209, 400, 500, 600, 700, 719,
		801, 999, 1054, 12345, -1,
	};
	size_t i;

	ASSERT_NE(NULL, rt.hipGetErrorString);
	for (i = 0; i < sizeof(codes) / sizeof(codes[0]); i++) {
		hipError_t c = (hipError_t)codes[i];

		/* The runtime's own strings: the same pointers. */
		EXPECT_EQ(rt.hipGetErrorName(c), kp->hipGetErrorName(c))
			TH_LOG("hipGetErrorName(%d): %s / %s", codes[i],
			       rt.hipGetErrorName(c), kp->hipGetErrorName(c));
		EXPECT_EQ(rt.hipGetErrorString(c), kp->hipGetErrorString(c))
			TH_LOG("hipGetErrorString(%d): %s / %s", codes[i],
			       rt.hipGetErrorString(c),
			       kp->hipGetErrorString(c));
	}
}

TEST(foreign_pointers_are_the_runtimes)
{
	hipMemPoolPtrExportData d;
	void *heap = malloc(64);
	int stack;

	ASSERT_NE(NULL, rt.hipFree);
	ASSERT_NE(NULL, heap);
	memset(&d, 0, sizeof(d));
	EXPECT_EQ(rt.hipFree(heap), kp->hipFree(heap));
	EXPECT_EQ(rt.hipFree(&stack), kp->hipFree(&stack));
	EXPECT_EQ(rt.hipFree(NULL), kp->hipFree(NULL));
	EXPECT_EQ(rt.hipFreeAsync(heap, NULL), kp->hipFreeAsync(heap, NULL));
	EXPECT_EQ(rt.hipFreeAsync(NULL, NULL), kp->hipFreeAsync(NULL, NULL));
	EXPECT_EQ(rt.hipMemPoolExportPointer(&d, heap),
		  kp->hipMemPoolExportPointer(&d, heap));
	EXPECT_EQ(rt.hipMemPoolExportPointer(&d, NULL),
		  kp->hipMemPoolExportPointer(&d, NULL));
	if (rt_no_device)
		EXPECT_EQ(rt_foreign_ptr, kp->hipFree(heap));
	free(heap);
}

/*
 * A pool that is the runtime's: its default pool where it has a GPU; with
 * no GPU the runtime refuses every pool before reading the handle (every
 * call is hipErrorInvalidDevice), so any handle that is not kfdpool's
 * stands for one.
 */
static char not_kfdpools_pool[64];

static hipMemPool_t runtime_pool(void)
{
	hipMemPool_t pool = NULL;

	if (rt.hipDeviceGetDefaultMemPool(&pool, 0) == hipSuccess)
		return pool;
	return rt_no_device ? (hipMemPool_t)not_kfdpools_pool : NULL;
}

TEST(runtime_pools_are_the_runtimes)
{
	hipMemPool_t pool = runtime_pool(), np1 = NULL, np2 = NULL;
	hipMemPoolPtrExportData d;
	hipMemAccessFlags f1 = 0, f2 = 0;
	hipMemPoolProps props;
	hipMemAccessDesc acc;
	hipMemLocation loc;
	uint64_t v1 = 0, v2 = 0, thr = 0;
	void *p1 = NULL, *p2 = NULL;
	int fd1 = -1, fd2 = -1;
	hipError_t a, b;

	ASSERT_NE(NULL, pool) TH_LOG("no pool of the runtime to try");
	memset(&d, 0, sizeof(d));
	a = rt.hipMemPoolGetAttribute(pool, hipMemPoolAttrReleaseThreshold, &v1);
	b = kp->hipMemPoolGetAttribute(pool, hipMemPoolAttrReleaseThreshold, &v2);
	EXPECT_EQ(a, b);
	EXPECT_EQ(v1, v2);
	EXPECT_EQ(rt.hipMemPoolSetAttribute(pool, hipMemPoolAttrReleaseThreshold, &thr),
		  kp->hipMemPoolSetAttribute(pool, hipMemPoolAttrReleaseThreshold, &thr));
	EXPECT_EQ(rt.hipMemPoolTrimTo(pool, 0), kp->hipMemPoolTrimTo(pool, 0));
	memset(&acc, 0, sizeof(acc));
	acc.location.type = hipMemLocationTypeDevice;
	acc.flags = hipMemAccessFlagsProtReadWrite;
	EXPECT_EQ(rt.hipMemPoolSetAccess(pool, &acc, 1),
		  kp->hipMemPoolSetAccess(pool, &acc, 1));
	loc = acc.location;
	EXPECT_EQ(rt.hipMemPoolGetAccess(&f1, pool, &loc),
		  kp->hipMemPoolGetAccess(&f2, pool, &loc));
	EXPECT_EQ(f1, f2);
	EXPECT_EQ(rt.hipMemPoolExportToShareableHandle(&fd1, pool,
			hipMemHandleTypePosixFileDescriptor, 0),
		  kp->hipMemPoolExportToShareableHandle(&fd2, pool,
			hipMemHandleTypePosixFileDescriptor, 0));
	EXPECT_EQ(rt.hipMemPoolImportPointer(&p1, pool, &d),
		  kp->hipMemPoolImportPointer(&p2, pool, &d));
	a = rt.hipMallocFromPoolAsync(&p1, 256, pool, NULL);
	b = kp->hipMallocFromPoolAsync(&p2, 256, pool, NULL);
	EXPECT_EQ(a, b);
	if (a == hipSuccess)
		rt.hipFreeAsync(p1, NULL);
	if (b == hipSuccess)
		rt.hipFreeAsync(p2, NULL);
	/* A device pool without handle types is the runtime's to make. */
	memset(&props, 0, sizeof(props));
	props.allocType = hipMemAllocationTypePinned;
	props.location.type = hipMemLocationTypeDevice;
	a = rt.hipMemPoolCreate(&np1, &props);
	b = kp->hipMemPoolCreate(&np2, &props);
	EXPECT_EQ(a, b);
	if (a == hipSuccess)
		EXPECT_EQ(hipSuccess, rt.hipMemPoolDestroy(np1));
	if (b == hipSuccess)
		EXPECT_EQ(hipSuccess, rt.hipMemPoolDestroy(np2));
	EXPECT_EQ(rt.hipMemPoolCreate(&np1, NULL), kp->hipMemPoolCreate(&np2, NULL));
	if (rt_no_device)
		EXPECT_EQ(rt.hipMemPoolDestroy(pool), kp->hipMemPoolDestroy(pool));
}

/* The stream and event calls kfdpool follows (stream order) are the
 * runtime's: forwarded, the same answers. */
TEST(stream_and_event_calls_are_the_runtimes)
{
	hipEvent_t e1 = NULL, e2 = NULL;
	hipStream_t s1 = NULL, s2 = NULL;
	hipError_t a, b;

	ASSERT_NE(NULL, rt.hipEventRecord);
	EXPECT_EQ(rt.hipEventRecord(NULL, NULL), kp->hipEventRecord(NULL, NULL));
	EXPECT_EQ(rt.hipEventDestroy(NULL), kp->hipEventDestroy(NULL));
	EXPECT_EQ(rt.hipStreamWaitEvent(NULL, NULL, 0),
		  kp->hipStreamWaitEvent(NULL, NULL, 0));
	EXPECT_EQ(rt.hipStreamWaitEvent_spt(NULL, NULL, 0),
		  kp->hipStreamWaitEvent_spt(NULL, NULL, 0));
	EXPECT_EQ(rt.hipStreamWaitEvent(NULL, NULL, 1),
		  kp->hipStreamWaitEvent(NULL, NULL, 1));
	/* With the runtime's own objects where it makes them. */
	a = rt.hipEventCreateWithFlags(&e1, 0);
	b = rt.hipEventCreateWithFlags(&e2, 0);
	EXPECT_EQ(a, b);
	EXPECT_EQ(rt.hipStreamCreate(&s1), rt.hipStreamCreate(&s2));
	if (!a && !b) {
		EXPECT_EQ(rt.hipEventRecord(e1, s1), kp->hipEventRecord(e2, s2));
		EXPECT_EQ(rt.hipStreamWaitEvent(s1, e1, 0),
			  kp->hipStreamWaitEvent(s2, e2, 0));
		EXPECT_EQ(rt.hipEventDestroy(e1), kp->hipEventDestroy(e2));
	}
	if (s1 && s2)
		EXPECT_EQ(rt.hipStreamDestroy(s1), kp->hipStreamDestroy(s2));
	EXPECT_EQ(rt.hipStreamSynchronize(NULL), kp->hipStreamSynchronize(NULL));
	EXPECT_EQ(rt.hipEventSynchronize(NULL), kp->hipEventSynchronize(NULL));
	EXPECT_EQ(rt.hipDeviceSynchronize(), kp->hipDeviceSynchronize());
	/* kfdpool defines these names, and they reach it. */
	EXPECT_TRUE(strstr(object_of((void *)kp->hipEventRecord),
			   "libkfdpool-hip") != NULL);
	EXPECT_TRUE(strstr(object_of((void *)kp->hipStreamDestroy),
			   "libkfdpool-hip") != NULL);
	EXPECT_TRUE(strstr(object_of((void *)kp->hipStreamSynchronize),
			   "libkfdpool-hip") != NULL);
}

/*
 * The last error is the runtime's to answer after its own calls, and after
 * kfdpool's what the runtime answers after the same call: Debian's 5.2,
 * with no device, answers hipErrorInvalidDevice to every hipGetLastError.
 */
TEST(last_error_is_the_runtimes)
{
	hipMemPool_t pool;
	void *p = NULL;

	EXPECT_EQ(rt.hipGetLastError(), kp->hipGetLastError());
	EXPECT_EQ(rt.hipPeekAtLastError(), kp->hipPeekAtLastError());
	kp->hipMemPoolCreate(&pool, NULL);	/* the runtime's */
	EXPECT_EQ(rt.hipPeekAtLastError(), kp->hipPeekAtLastError());
	EXPECT_EQ(rt.hipGetLastError(), kp->hipGetLastError());
	kp->hipFree(p);
	EXPECT_EQ(rt.hipGetLastError(), kp->hipGetLastError());
	kp->hipMallocFromPoolAsync(NULL, 4096, NULL, NULL);
	EXPECT_EQ(rt.hipGetLastError(), kp->hipGetLastError());
}

/*
 * A pool of kfdpool's never reaches the runtime: hipDeviceSetMemPool
 * refuses it (the runtime would read it as its own), and a pool fd said to
 * be another handle type is refused, not handed to the runtime as one of
 * its handles.
 */
TEST(kfdpools_pools_never_reach_the_runtime)
{
	hipMemPoolProps props;
	hipMemPool_t pool, imp = NULL;
	int fd;

	if (access("/dev/kfdpool", F_OK))
		SKIP(return, "/dev/kfdpool missing (module not loaded)");
	memset(&props, 0, sizeof(props));
	props.allocType = hipMemAllocationTypePinned;
	props.location.type = hipMemLocationTypeHost;
	props.handleTypes = hipMemHandleTypePosixFileDescriptor;
	ASSERT_EQ(hipSuccess, kp->hipMemPoolCreate(&pool, &props));
	EXPECT_EQ(hipErrorInvalidValue, kp->hipDeviceSetMemPool(0, pool));
	ASSERT_EQ(hipSuccess, kp->hipMemPoolExportToShareableHandle(&fd, pool,
		  hipMemHandleTypePosixFileDescriptor, 0));
	EXPECT_EQ(hipErrorInvalidValue, kp->hipMemPoolImportFromShareableHandle(
		  &imp, (void *)(intptr_t)fd, hipMemHandleTypeNone, 0));
	EXPECT_EQ(NULL, imp);
	close(fd);
	EXPECT_EQ(hipSuccess, kp->hipMemPoolDestroy(pool));
	/* Any other pool is the runtime's. */
	EXPECT_EQ(rt.hipDeviceSetMemPool(0, (hipMemPool_t)not_kfdpools_pool),
		  kp->hipDeviceSetMemPool(0, (hipMemPool_t)not_kfdpools_pool));
}

/*
 * A POSIX-fd handle is an int, as clr reads it (the low 32 bits of the
 * argument): exported into an int64_t whose upper half is garbage (as
 * ROCm's hip-tests keep it), it imports from that value, and is not
 * handed to the runtime for its upper half.
 */
TEST(a_posix_fd_handle_is_an_int)
{
	hipMemPoolProps props;
	hipMemPool_t pool, imp = NULL;
	int64_t h;

	if (access("/dev/kfdpool", F_OK))
		SKIP(return, "/dev/kfdpool missing (module not loaded)");
	memset(&props, 0, sizeof(props));
	props.allocType = hipMemAllocationTypePinned;
	props.location.type = hipMemLocationTypeHost;
	props.handleTypes = hipMemHandleTypePosixFileDescriptor;
	ASSERT_EQ(hipSuccess, kp->hipMemPoolCreate(&pool, &props));
	memset(&h, 0xaa, sizeof(h));
	ASSERT_EQ(hipSuccess, kp->hipMemPoolExportToShareableHandle(&h, pool,
		  hipMemHandleTypePosixFileDescriptor, 0));
	/* Four bytes written, as clr writes them. */
	EXPECT_EQ(0xaaaaaaaau, (uint64_t)h >> 32);
	EXPECT_EQ(hipSuccess, kp->hipMemPoolImportFromShareableHandle(&imp,
		  (void *)(intptr_t)h, hipMemHandleTypePosixFileDescriptor, 0));
	EXPECT_NE(NULL, imp);
	close((int)h);
	if (imp)
		EXPECT_EQ(hipSuccess, kp->hipMemPoolDestroy(imp));
	EXPECT_EQ(hipSuccess, kp->hipMemPoolDestroy(pool));
}

/*
 * At the default release threshold (0), beside a runtime without a
 * device as without one: the chunk stays through hipFreeAsync, and goes
 * back at the next synchronising call, whose answer is the runtime's.
 */
static uint64_t reserved(hipMemPool_t pool)
{
	uint64_t v = ~0ull;

	kp->hipMemPoolGetAttribute(pool, hipMemPoolAttrReservedMemCurrent, &v);
	return v;
}

TEST(default_threshold_gives_back_at_a_synchronise)
{
	hipMemPoolProps props;
	hipMemPool_t pool;
	void *p, *q;

	if (access("/dev/kfdpool", F_OK))
		SKIP(return, "/dev/kfdpool missing (module not loaded)");
	memset(&props, 0, sizeof(props));
	props.allocType = hipMemAllocationTypePinned;
	props.location.type = hipMemLocationTypeHost;
	props.handleTypes = hipMemHandleTypePosixFileDescriptor;
	ASSERT_EQ(hipSuccess, kp->hipMemPoolCreate(&pool, &props));
	ASSERT_EQ(hipSuccess, kp->hipMallocFromPoolAsync(&p, 1 << 20, pool, NULL));
	ASSERT_EQ(hipSuccess, kp->hipFreeAsync(p, NULL));
	EXPECT_EQ(2 << 20, reserved(pool));
	ASSERT_EQ(hipSuccess, kp->hipMallocFromPoolAsync(&q, 1 << 20, pool, NULL));
	EXPECT_EQ(p, q);
	ASSERT_EQ(hipSuccess, kp->hipFreeAsync(q, NULL));
	EXPECT_EQ(rt.hipStreamSynchronize(NULL), kp->hipStreamSynchronize(NULL));
	if (rt_no_device)
		EXPECT_EQ(0, reserved(pool));
	EXPECT_EQ(hipSuccess, kp->hipMemPoolDestroy(pool));
}

/*
 * hipMemSetMemPool is HIP 7.2's, and kfdpool's beside any runtime.  Beside
 * an older one it answers hipErrorNotSupported; beside 7.2 or later, what the runtime answers (lib_standin_clr_test
 * checks a kfdpool pool against a stand-in of 7.2).  Looked up by version:
 * older headers do not declare it.
 */
TEST(mem_set_mem_pool_is_kfdpools)
{
	typedef hipError_t msmp_fn(hipMemLocation *location,
				   hipMemAllocationType type,
				   hipMemPool_t pool);
	hipMemLocation loc = { hipMemLocationTypeDevice, 0 };
	hipMemPool_t other = (hipMemPool_t)not_kfdpools_pool;
	msmp_fn *mine, *theirs;

	ASSERT_NE(NULL, rt_handle);
	mine = (msmp_fn *)dlvsym(RTLD_DEFAULT, "hipMemSetMemPool", "hip_7.2");
	ASSERT_NE(NULL, mine);
	EXPECT_TRUE(strstr(object_of((void *)mine), "libkfdpool-hip") != NULL)
		TH_LOG("hipMemSetMemPool from %s", object_of((void *)mine));
	theirs = (msmp_fn *)dlvsym(rt_handle, "hipMemSetMemPool", "hip_7.2");
	if (theirs) {
		EXPECT_EQ(theirs(&loc, hipMemAllocationTypePinned, other),
			  mine(&loc, hipMemAllocationTypePinned, other));
		return;
	}
	EXPECT_EQ(hipErrorNotSupported,
		  mine(&loc, hipMemAllocationTypePinned, other));
}

TEST(foreign_shareable_handles_are_the_runtimes)
{
	unsigned char fabric[64];
	hipMemPool_t p1 = NULL, p2 = NULL;
	int fd = memfd_create("not-a-pool", MFD_CLOEXEC);

	ASSERT_LE(0, fd);
	EXPECT_EQ(rt.hipMemPoolImportFromShareableHandle(&p1,
			(void *)(intptr_t)fd, hipMemHandleTypePosixFileDescriptor, 0),
		  kp->hipMemPoolImportFromShareableHandle(&p2,
			(void *)(intptr_t)fd, hipMemHandleTypePosixFileDescriptor, 0));
	close(fd);
	/* A closed fd. */
	EXPECT_EQ(rt.hipMemPoolImportFromShareableHandle(&p1,
			(void *)(intptr_t)fd, hipMemHandleTypePosixFileDescriptor, 0),
		  kp->hipMemPoolImportFromShareableHandle(&p2,
			(void *)(intptr_t)fd, hipMemHandleTypePosixFileDescriptor, 0));
	memset(fabric, 0x5a, sizeof(fabric));
	EXPECT_EQ(rt.hipMemPoolImportFromShareableHandle(&p1, fabric,
			hipMemHandleTypeFabric, 0),
		  kp->hipMemPoolImportFromShareableHandle(&p2, fabric,
			hipMemHandleTypeFabric, 0));
}

/* Lines kfdpool wrote to stderr while @fn ran. */
static int stderr_lines_of(void (*fn)(void *), void *arg, char *buf,
			   size_t len)
{
	int mfd = memfd_create("stderr", MFD_CLOEXEC), saved = dup(2), n = 0;
	ssize_t r;
	char *c;

	if (mfd < 0 || saved < 0)
		return -1;
	fflush(stderr);
	dup2(mfd, 2);
	fn(arg);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	r = pread(mfd, buf, len - 1, 0);
	close(mfd);
	buf[r > 0 ? r : 0] = 0;
	for (c = buf; *c; c++)
		n += *c == '\n';
	return n;
}

struct create_args {
	hipMemPoolProps props;
	hipError_t ret[2];
};

static void create_twice(void *arg)
{
	struct create_args *a = arg;
	hipMemPool_t pool;
	int i;

	for (i = 0; i < 2; i++)
		a->ret[i] = kp->hipMemPoolCreate(&pool, &a->props);
}

/*
 * An IPC device pool is kfdpool's.  Without a GPU no runtime can give it
 * device memory to share, whatever its release can do on one (5.2 has no
 * way to export device memory; 5.7 and 6.4 have, but their device answers
 * no): refused, hipErrorNotSupported, and said once, naming why.
 */
TEST(device_pools_fail_beside_the_runtime)
{
	struct create_args a;
	hipMemPool_t pool;
	char out[4096];

	memset(&a, 0, sizeof(a));
	a.props.allocType = hipMemAllocationTypePinned;
	a.props.location.type = hipMemLocationTypeDevice;
	a.props.handleTypes = hipMemHandleTypePosixFileDescriptor;
	unsetenv("KFDPOOL_BACKEND");
	EXPECT_EQ(1, stderr_lines_of(create_twice, &a, out, sizeof(out)))
		TH_LOG("stderr: %s", out);
	TH_LOG("%s", out);
	EXPECT_EQ(hipErrorNotSupported, a.ret[0]);
	EXPECT_EQ(hipErrorNotSupported, a.ret[1]);
	EXPECT_TRUE(strstr(out, "kfdpool: device pools") != NULL);
	/* KFDPOOL_POOLS=all takes pools without handle types too. */
	a.props.handleTypes = hipMemHandleTypeNone;
	setenv("KFDPOOL_POOLS", "all", 1);
	EXPECT_EQ(0, stderr_lines_of(create_twice, &a, out, sizeof(out)))
		TH_LOG("stderr: %s", out);
	EXPECT_EQ(hipErrorNotSupported, a.ret[0]);
	/* The default, "ipc": the runtime's pool. */
	setenv("KFDPOOL_POOLS", "ipc", 1);
	EXPECT_EQ(0, stderr_lines_of(create_twice, &a, out, sizeof(out)));
	EXPECT_EQ(rt.hipMemPoolCreate(&pool, &a.props), a.ret[0]);
	setenv("KFDPOOL_POOLS", "some", 1);
	EXPECT_EQ(1, stderr_lines_of(create_twice, &a, out, sizeof(out)))
		TH_LOG("stderr: %s", out);
	EXPECT_EQ(hipErrorInvalidValue, a.ret[0]);
	unsetenv("KFDPOOL_POOLS");
}

/* ---- a host pool of kfdpool's, shared with another process ---- */

#define HIPRT_NBUF 3
static const size_t hiprt_sizes[HIPRT_NBUF] = { 4096, 1 << 20, 3 << 20 };

struct hiprt_msg {
	hipMemPoolPtrExportData data[HIPRT_NBUF];
};

/* The importer: the same program, exec'd with "--importer FD". */
static int hiprt_importer(int sock)
{
	struct hiprt_msg m;
	hipMemPool_t pool;
	void *p[HIPRT_NBUF];
	int fd, i, bad = 0;
	char ok = 'K';

	if (!rt_path || !kfdpool_is_first()) {
		fprintf(stderr, "importer: runtime %s, kfdpool first %d\n",
			rt_path ? rt_path : "not loaded", kfdpool_is_first());
		return 3;
	}
	fd = lh_recv_fd(sock);
	if (fd < 0 || lh_read_all(sock, &m, sizeof(m)))
		return 4;
	if (kp->hipMemPoolImportFromShareableHandle(&pool, (void *)(intptr_t)fd,
			hipMemHandleTypePosixFileDescriptor, 0) != hipSuccess)
		return 5;
	close(fd);
	for (i = 0; i < HIPRT_NBUF; i++) {
		if (kp->hipMemPoolImportPointer(&p[i], pool, &m.data[i]))
			return 6;
		if (lh_check(p[i], hiprt_sizes[i], i, 0x1111) >= 0)
			bad = 1;
		/* The answer, in place. */
		lh_fill(p[i], hiprt_sizes[i], i, 0x2222);
	}
	for (i = 0; i < HIPRT_NBUF; i++)
		if (kp->hipFree(p[i]) != hipSuccess)
			return 7;
	if (kp->hipMemPoolDestroy(pool) != hipSuccess)
		return 8;
	if (bad)
		ok = 'B';
	return lh_write_all(sock, &ok, 1) ? 9 : 0;
}

TEST(host_pool_ipc_between_two_processes)
{
	hipMemPoolProps props;
	struct hiprt_msg m;
	hipMemPool_t pool;
	void *p[HIPRT_NBUF];
	int sv[2], fd, i, st, base;
	char arg[16], reply = 0;
	pid_t pid;

	if (access("/dev/kfdpool", F_OK))
		SKIP(return, "/dev/kfdpool missing (module not loaded)");
	base = lh_dmabufs(-1);
	memset(&props, 0, sizeof(props));
	props.allocType = hipMemAllocationTypePinned;
	props.location.type = hipMemLocationTypeHost;
	props.handleTypes = hipMemHandleTypePosixFileDescriptor;
	ASSERT_EQ(hipSuccess, kp->hipMemPoolCreate(&pool, &props));
	for (i = 0; i < HIPRT_NBUF; i++) {
		ASSERT_EQ(hipSuccess, kp->hipMallocFromPoolAsync(&p[i],
			  hiprt_sizes[i], pool, NULL));
		lh_fill(p[i], hiprt_sizes[i], i, 0x1111);
		ASSERT_EQ(hipSuccess, kp->hipMemPoolExportPointer(&m.data[i], p[i]));
		/* The runtime does not know kfdpool's pointers. */
		if (rt_no_device)
			EXPECT_EQ(rt_foreign_ptr, rt.hipFree(p[i]));
	}
	ASSERT_EQ(hipSuccess, kp->hipMemPoolExportToShareableHandle(&fd, pool,
		  hipMemHandleTypePosixFileDescriptor, 0));
	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		close(sv[0]);
		snprintf(arg, sizeof(arg), "%d", sv[1]);
		execl("/proc/self/exe", "importer", "--importer", arg,
		      (char *)NULL);
		_exit(127);
	}
	close(sv[1]);
	ASSERT_EQ(0, lh_send_fd(sv[0], fd));
	close(fd);
	ASSERT_EQ(0, lh_write_all(sv[0], &m, sizeof(m)));
	EXPECT_EQ(0, lh_read_all(sv[0], &reply, 1));
	EXPECT_EQ('K', reply);
	close(sv[0]);
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0)
		TH_LOG("importer status %#x", st);
	for (i = 0; i < HIPRT_NBUF; i++) {
		EXPECT_EQ(-1, lh_check(p[i], hiprt_sizes[i], i, 0x2222));
		EXPECT_EQ(hipSuccess, kp->hipFree(p[i]));
	}
	EXPECT_EQ(hipSuccess, kp->hipMemPoolDestroy(pool));
	if (base >= 0)
		EXPECT_EQ(base, lh_dmabufs(base));
}

int main(int argc, char **argv)
{
	hiprt_setup();
	if (argc == 3 && !strcmp(argv[1], "--importer"))
		return hiprt_importer(atoi(argv[2]));
	return test_harness_run(argc, argv);
}

#endif /* HIPRT_TESTS */
