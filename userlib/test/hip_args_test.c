// SPDX-License-Identifier: MIT
/*
 * Every documented argument error of every HIP entry point and extension,
 * and of the native API.  Arguments are checked before any system call, so
 * this runs without the kfdpool module (and without a GPU).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

#include "kfdpool_hip.h"
#include "rt/types.h"
#include "kselftest_harness.h"

/* A pointer that is no pool: the library never dereferences it. */
static int not_a_pool_obj;
#define BOGUS_POOL ((hipMemPool_t)&not_a_pool_obj)

static hipMemPoolProps host_props(void)
{
	hipMemPoolProps p;

	memset(&p, 0, sizeof(p));
	p.allocType = hipMemAllocationTypePinned;
	p.handleTypes = hipMemHandleTypePosixFileDescriptor;
	p.location.type = hipMemLocationTypeHost;
	return p;
}

TEST(create_null_arguments)
{
	hipMemPoolProps p = host_props();
	hipMemPool_t pool;

	EXPECT_EQ(hipErrorInvalidValue, hipMemPoolCreate(NULL, &p));
	EXPECT_EQ(hipErrorInvalidValue, hipMemPoolCreate(&pool, NULL));
}

TEST(create_bad_alloc_type)
{
	hipMemPoolProps p = host_props();
	hipMemPool_t pool;

	p.allocType = hipMemAllocationTypeInvalid;
	EXPECT_EQ(hipErrorInvalidValue, hipMemPoolCreate(&pool, &p));
	p.allocType = (hipMemAllocationType)2;
	EXPECT_EQ(hipErrorInvalidValue, hipMemPoolCreate(&pool, &p));
	p.allocType = hipMemAllocationTypeMax;
	EXPECT_EQ(hipErrorInvalidValue, hipMemPoolCreate(&pool, &p));
}

TEST(create_bad_handle_types)
{
	hipMemPoolProps p = host_props();
	hipMemPool_t pool;
	unsigned int bit;

	for (bit = 4; bit < 31; bit++) {
		p.handleTypes = (hipMemAllocationHandleType)(1u << bit);
		EXPECT_EQ(hipErrorInvalidValue, hipMemPoolCreate(&pool, &p))
			TH_LOG("bit %u", bit);
	}
	p.handleTypes = hipMemHandleTypeWin32;
	EXPECT_EQ(hipErrorNotSupported, hipMemPoolCreate(&pool, &p));
	p.handleTypes = hipMemHandleTypeWin32Kmt;
	EXPECT_EQ(hipErrorNotSupported, hipMemPoolCreate(&pool, &p));
	p.handleTypes = (hipMemAllocationHandleType)
		(hipMemHandleTypePosixFileDescriptor | hipMemHandleTypeWin32);
	EXPECT_EQ(hipErrorNotSupported, hipMemPoolCreate(&pool, &p));
}

TEST(create_bad_location)
{
	hipMemPoolProps p = host_props();
	hipMemPool_t pool;

	p.location.type = hipMemLocationTypeInvalid;
	EXPECT_EQ(hipErrorInvalidValue, hipMemPoolCreate(&pool, &p));
	p.location.type = (hipMemLocationType)5;
	EXPECT_EQ(hipErrorInvalidValue, hipMemPoolCreate(&pool, &p));
	p.location.type = hipMemLocationTypeDevice;
	/* clr's answer for a device it has not (hip_mempool.cpp). */
	p.location.id = -1;
	EXPECT_EQ(hipErrorInvalidValue, hipMemPoolCreate(&pool, &p));
	p.location.id = 64;
	EXPECT_EQ(hipErrorInvalidValue, hipMemPoolCreate(&pool, &p));
}

TEST(create_reserved_must_be_zero)
{
	hipMemPoolProps p = host_props();
	hipMemPool_t pool;
	size_t i;

	for (i = 0; i < sizeof(p.reserved); i++) {
		p = host_props();
		p.reserved[i] = 1;
		EXPECT_EQ(hipErrorInvalidValue, hipMemPoolCreate(&pool, &p))
			TH_LOG("reserved[%zu]", i);
	}
}

TEST(create_device_pool_without_gpu)
{
	hipMemPoolProps p = host_props();
	hipMemPool_t pool;

	if (!access("/dev/kfd", F_OK))
		SKIP(return, "/dev/kfd exists: a GPU node");
	unsetenv("KFDPOOL_BACKEND");
	p.location.type = hipMemLocationTypeDevice;
	p.location.id = 0;
	/* The module comes first: without it, that is the answer. */
	EXPECT_EQ(access(KFDPOOL_DEVICE_PATH, R_OK | W_OK) ?
		  hipErrorNotInitialized : hipErrorNoDevice,
		  hipMemPoolCreate(&pool, &p));
	/* A substitute that is not a backend name. */
	setenv("KFDPOOL_BACKEND", "nonesuch", 1);
	EXPECT_EQ(hipErrorInvalidValue, hipMemPoolCreate(&pool, &p));
	/* kfd never serves host pools. */
	p.location.type = hipMemLocationTypeHost;
	setenv("KFDPOOL_BACKEND", "kfd", 1);
	EXPECT_EQ(hipErrorInvalidValue, hipMemPoolCreate(&pool, &p));
	unsetenv("KFDPOOL_BACKEND");
}

/*
 * Without /dev/kfdpool every pool fails with hipErrorNotInitialized,
 * whatever backend could serve it, and stderr gets one line naming the
 * cause, once per process (a child, with stderr on a pipe).
 */
TEST(create_without_module)
{
	static const char want[] = "kfdpool: /dev/kfdpool: No such file or "
		"directory (is the module loaded? modprobe kfdpool)\n";
	char out[512];
	int pfd[2], st;
	ssize_t n, len;
	pid_t pid;

	if (!access(KFDPOOL_DEVICE_PATH, F_OK))
		SKIP(return, "/dev/kfdpool exists");
	ASSERT_EQ(0, pipe(pfd));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		hipMemPoolProps p = host_props();
		hipMemPool_t pool;
		hipError_t e1, e2;

		dup2(pfd[1], 2);
		close(pfd[0]);
		unsetenv("KFDPOOL_BACKEND");
		e1 = hipMemPoolCreate(&pool, &p);
		p.location.type = hipMemLocationTypeDevice;
		e2 = hipMemPoolCreate(&pool, &p);
		_exit(e1 == e2 ? e1 : 255);
	}
	close(pfd[1]);
	len = 0;
	while ((n = read(pfd[0], out + len, sizeof(out) - 1 - len)) > 0)
		len += n;
	close(pfd[0]);
	out[len] = 0;
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	EXPECT_TRUE(WIFEXITED(st));
	EXPECT_EQ(hipErrorNotInitialized, WEXITSTATUS(st));
	EXPECT_STREQ(want, out);
}

TEST(destroy)
{
	EXPECT_EQ(hipErrorInvalidValue, hipMemPoolDestroy(NULL));
	EXPECT_EQ(hipErrorInvalidValue, hipMemPoolDestroy(BOGUS_POOL));
}

TEST(malloc_from_pool)
{
	void *ptr = &ptr;

	EXPECT_EQ(hipErrorInvalidValue,
		  hipMallocFromPoolAsync(NULL, 4096, BOGUS_POOL, NULL));
	EXPECT_EQ(hipErrorInvalidValue,
		  hipMallocFromPoolAsync(&ptr, 0, BOGUS_POOL, NULL));
	EXPECT_EQ(hipErrorInvalidValue,
		  hipMallocFromPoolAsync(&ptr, 4096, NULL, NULL));
	EXPECT_EQ(hipErrorInvalidValue,
		  hipMallocFromPoolAsync(&ptr, 4096, BOGUS_POOL, NULL));
	EXPECT_EQ(&ptr, ptr);	/* untouched on failure */
}

TEST(free_pointers)
{
	int local;
	void *heap = malloc(16);

	EXPECT_EQ(hipSuccess, hipFree(NULL));
	EXPECT_EQ(hipErrorInvalidValue, hipFree(&local));
	EXPECT_EQ(hipErrorInvalidValue, hipFree(heap));
	/* clr's newest answer (hip_mempool.cpp; 5.6 to 6.2 said
	 * hipErrorInvalidValue). */
	EXPECT_EQ(hipSuccess, hipFreeAsync(NULL, NULL));
	EXPECT_EQ(hipErrorInvalidValue, hipFreeAsync(&local, NULL));
	EXPECT_EQ(hipErrorInvalidValue,
		  hipFreeAsync(heap, (hipStream_t)(uintptr_t)0x1234));
	free(heap);
}

TEST(trim_to)
{
	EXPECT_EQ(hipErrorInvalidValue, hipMemPoolTrimTo(NULL, 0));
	EXPECT_EQ(hipErrorInvalidValue, hipMemPoolTrimTo(BOGUS_POOL, 0));
}

TEST(set_attribute)
{
	uint64_t v64 = 0;
	int vi = 1;

	EXPECT_EQ(hipErrorInvalidValue, hipMemPoolSetAttribute(BOGUS_POOL,
		  hipMemPoolAttrReleaseThreshold, NULL));
	EXPECT_EQ(hipErrorInvalidValue, hipMemPoolSetAttribute(BOGUS_POOL,
		  (hipMemPoolAttr)0, &v64));
	EXPECT_EQ(hipErrorInvalidValue, hipMemPoolSetAttribute(BOGUS_POOL,
		  (hipMemPoolAttr)9, &v64));
	/* Current figures are read-only, even with a valid pool. */
	EXPECT_EQ(hipErrorInvalidValue, hipMemPoolSetAttribute(BOGUS_POOL,
		  hipMemPoolAttrReservedMemCurrent, &v64));
	EXPECT_EQ(hipErrorInvalidValue, hipMemPoolSetAttribute(BOGUS_POOL,
		  hipMemPoolAttrUsedMemCurrent, &v64));
	/* High-water marks reset to 0 only. */
	v64 = 1;
	EXPECT_EQ(hipErrorInvalidValue, hipMemPoolSetAttribute(BOGUS_POOL,
		  hipMemPoolAttrReservedMemHigh, &v64));
	EXPECT_EQ(hipErrorInvalidValue, hipMemPoolSetAttribute(BOGUS_POOL,
		  hipMemPoolAttrUsedMemHigh, &v64));
	/* Reuse flags are booleans. */
	vi = 2;
	EXPECT_EQ(hipErrorInvalidValue, hipMemPoolSetAttribute(BOGUS_POOL,
		  hipMemPoolReuseFollowEventDependencies, &vi));
	vi = -1;
	EXPECT_EQ(hipErrorInvalidValue, hipMemPoolSetAttribute(BOGUS_POOL,
		  hipMemPoolReuseAllowOpportunistic, &vi));
	/* Valid arguments, no such pool. */
	vi = 1;
	v64 = 0;
	EXPECT_EQ(hipErrorInvalidValue, hipMemPoolSetAttribute(BOGUS_POOL,
		  hipMemPoolReuseAllowInternalDependencies, &vi));
	EXPECT_EQ(hipErrorInvalidValue, hipMemPoolSetAttribute(BOGUS_POOL,
		  hipMemPoolAttrUsedMemHigh, &v64));
	EXPECT_EQ(hipErrorInvalidValue, hipMemPoolSetAttribute(NULL,
		  hipMemPoolAttrReleaseThreshold, &v64));
}

TEST(get_attribute)
{
	uint64_t v64;
	int a;

	EXPECT_EQ(hipErrorInvalidValue, hipMemPoolGetAttribute(BOGUS_POOL,
		  hipMemPoolAttrReleaseThreshold, NULL));
	EXPECT_EQ(hipErrorInvalidValue, hipMemPoolGetAttribute(BOGUS_POOL,
		  (hipMemPoolAttr)0, &v64));
	EXPECT_EQ(hipErrorInvalidValue, hipMemPoolGetAttribute(BOGUS_POOL,
		  (hipMemPoolAttr)9, &v64));
	for (a = hipMemPoolReuseFollowEventDependencies;
	     a <= hipMemPoolAttrUsedMemHigh; a++) {
		EXPECT_EQ(hipErrorInvalidValue, hipMemPoolGetAttribute(
			  BOGUS_POOL, (hipMemPoolAttr)a, &v64));
		EXPECT_EQ(hipErrorInvalidValue, hipMemPoolGetAttribute(
			  NULL, (hipMemPoolAttr)a, &v64));
	}
}

TEST(set_access)
{
	hipMemAccessDesc d;

	memset(&d, 0, sizeof(d));
	d.location.type = hipMemLocationTypeDevice;
	d.flags = hipMemAccessFlagsProtReadWrite;
	EXPECT_EQ(hipErrorInvalidValue, hipMemPoolSetAccess(BOGUS_POOL, NULL, 1));
	EXPECT_EQ(hipErrorInvalidValue, hipMemPoolSetAccess(BOGUS_POOL, NULL, 0));
	EXPECT_EQ(hipErrorInvalidValue, hipMemPoolSetAccess(NULL, &d, 1));
	d.flags = (hipMemAccessFlags)2;
	EXPECT_EQ(hipErrorInvalidValue, hipMemPoolSetAccess(BOGUS_POOL, &d, 1));
	d.flags = (hipMemAccessFlags)4;
	EXPECT_EQ(hipErrorInvalidValue, hipMemPoolSetAccess(BOGUS_POOL, &d, 1));
	d.flags = hipMemAccessFlagsProtRead;
	d.location.type = hipMemLocationTypeInvalid;
	EXPECT_EQ(hipErrorInvalidValue, hipMemPoolSetAccess(BOGUS_POOL, &d, 1));
	/* The descriptors are checked against the pool, which is none. */
	d.location.type = hipMemLocationTypeDevice;
	d.location.id = -1;
	EXPECT_EQ(hipErrorInvalidValue, hipMemPoolSetAccess(BOGUS_POOL, &d, 1));
	d.location.id = 64;
	EXPECT_EQ(hipErrorInvalidValue, hipMemPoolSetAccess(BOGUS_POOL, &d, 1));
}

TEST(get_access)
{
	hipMemAccessFlags f;
	hipMemLocation loc = { hipMemLocationTypeDevice, 0 };

	EXPECT_EQ(hipErrorInvalidValue, hipMemPoolGetAccess(NULL, BOGUS_POOL, &loc));
	EXPECT_EQ(hipErrorInvalidValue, hipMemPoolGetAccess(&f, BOGUS_POOL, NULL));
	EXPECT_EQ(hipErrorInvalidValue, hipMemPoolGetAccess(&f, BOGUS_POOL, &loc));
	EXPECT_EQ(hipErrorInvalidValue, hipMemPoolGetAccess(&f, NULL, &loc));
	loc.type = hipMemLocationTypeInvalid;
	EXPECT_EQ(hipErrorInvalidValue, hipMemPoolGetAccess(&f, BOGUS_POOL, &loc));
	loc.type = hipMemLocationTypeDevice;
	loc.id = -1;
	EXPECT_EQ(hipErrorInvalidValue, hipMemPoolGetAccess(&f, BOGUS_POOL, &loc));
}

TEST(export_to_shareable_handle)
{
	int fd = -1;

	EXPECT_EQ(hipErrorInvalidValue, hipMemPoolExportToShareableHandle(NULL,
		  BOGUS_POOL, hipMemHandleTypePosixFileDescriptor, 0));
	EXPECT_EQ(hipErrorInvalidValue, hipMemPoolExportToShareableHandle(&fd,
		  BOGUS_POOL, hipMemHandleTypePosixFileDescriptor, 1));
	EXPECT_EQ(hipErrorNotSupported, hipMemPoolExportToShareableHandle(&fd,
		  BOGUS_POOL, hipMemHandleTypeWin32, 0));
	EXPECT_EQ(hipErrorNotSupported, hipMemPoolExportToShareableHandle(&fd,
		  BOGUS_POOL, hipMemHandleTypeWin32Kmt, 0));
	EXPECT_EQ(hipErrorInvalidValue, hipMemPoolExportToShareableHandle(&fd,
		  BOGUS_POOL, hipMemHandleTypeNone, 0));
	EXPECT_EQ(hipErrorInvalidValue, hipMemPoolExportToShareableHandle(&fd,
		  BOGUS_POOL, (hipMemAllocationHandleType)3, 0));
	EXPECT_EQ(hipErrorInvalidValue, hipMemPoolExportToShareableHandle(&fd,
		  BOGUS_POOL, hipMemHandleTypePosixFileDescriptor, 0));
	EXPECT_EQ(hipErrorInvalidValue, hipMemPoolExportToShareableHandle(&fd,
		  NULL, hipMemHandleTypeFabric, 0));
	EXPECT_EQ(-1, fd);
}

TEST(import_from_shareable_handle)
{
	hipMemPool_t pool = NULL;
	int nfd = open("/dev/null", O_RDWR | O_CLOEXEC);
	int closed = dup(nfd);

	ASSERT_LE(0, nfd);
	close(closed);
	EXPECT_EQ(hipErrorInvalidValue, hipMemPoolImportFromShareableHandle(NULL,
		  (void *)(intptr_t)nfd, hipMemHandleTypePosixFileDescriptor, 0));
	EXPECT_EQ(hipErrorInvalidValue, hipMemPoolImportFromShareableHandle(&pool,
		  (void *)(intptr_t)nfd, hipMemHandleTypePosixFileDescriptor, 1));
	EXPECT_EQ(hipErrorNotSupported, hipMemPoolImportFromShareableHandle(&pool,
		  (void *)(intptr_t)nfd, hipMemHandleTypeWin32, 0));
	EXPECT_EQ(hipErrorNotSupported, hipMemPoolImportFromShareableHandle(&pool,
		  (void *)(intptr_t)nfd, hipMemHandleTypeWin32Kmt, 0));
	EXPECT_EQ(hipErrorInvalidValue, hipMemPoolImportFromShareableHandle(&pool,
		  (void *)(intptr_t)nfd, hipMemHandleTypeNone, 0));
	EXPECT_EQ(hipErrorInvalidValue, hipMemPoolImportFromShareableHandle(&pool,
		  (void *)(intptr_t)-1, hipMemHandleTypePosixFileDescriptor, 0));
	EXPECT_EQ(hipErrorInvalidValue, hipMemPoolImportFromShareableHandle(&pool,
		  (void *)((intptr_t)1 << 40), hipMemHandleTypePosixFileDescriptor, 0));
	/* A closed fd, and an fd that is not a pool. */
	EXPECT_EQ(hipErrorInvalidValue, hipMemPoolImportFromShareableHandle(&pool,
		  (void *)(intptr_t)closed, hipMemHandleTypePosixFileDescriptor, 0));
	EXPECT_EQ(hipErrorInvalidValue, hipMemPoolImportFromShareableHandle(&pool,
		  (void *)(intptr_t)nfd, hipMemHandleTypePosixFileDescriptor, 0));
	EXPECT_EQ(hipErrorInvalidValue, hipMemPoolImportFromShareableHandle(&pool,
		  NULL, hipMemHandleTypeFabric, 0));
	EXPECT_EQ(NULL, pool);
	close(nfd);
}

TEST(export_pointer)
{
	hipMemPoolPtrExportData d;
	int local;
	void *heap = malloc(64);

	EXPECT_EQ(hipErrorInvalidValue, hipMemPoolExportPointer(NULL, heap));
	EXPECT_EQ(hipErrorInvalidValue, hipMemPoolExportPointer(&d, NULL));
	EXPECT_EQ(hipErrorInvalidValue, hipMemPoolExportPointer(&d, &local));
	EXPECT_EQ(hipErrorInvalidValue, hipMemPoolExportPointer(&d, heap));
	free(heap);
}

TEST(import_pointer)
{
	hipMemPoolPtrExportData d;
	void *ptr = &ptr;

	memset(&d, 0, sizeof(d));
	EXPECT_EQ(hipErrorInvalidValue, hipMemPoolImportPointer(NULL, BOGUS_POOL, &d));
	EXPECT_EQ(hipErrorInvalidValue, hipMemPoolImportPointer(&ptr, BOGUS_POOL, NULL));
	EXPECT_EQ(hipErrorInvalidValue, hipMemPoolImportPointer(&ptr, BOGUS_POOL, &d));
	EXPECT_EQ(hipErrorInvalidValue, hipMemPoolImportPointer(&ptr, NULL, &d));
	EXPECT_EQ(NULL, ptr);
}

TEST(batch_extensions)
{
	hipMemPoolPtrExportData d[2];
	hipError_t res[2] = { hipSuccess, hipSuccess };
	void *ptrs[2] = { &d[0], NULL };
	struct kfdpool_pool_stats st;
	int local;

	EXPECT_EQ(hipErrorInvalidValue, kfdpoolExportPointers(NULL, ptrs, 2, res));
	EXPECT_EQ(hipErrorInvalidValue, kfdpoolExportPointers(d, NULL, 2, res));
	EXPECT_EQ(hipSuccess, kfdpoolExportPointers(NULL, NULL, 0, NULL));
	EXPECT_EQ(hipErrorInvalidValue, kfdpoolExportPointers(d, ptrs, 2, res));
	EXPECT_EQ(hipErrorInvalidValue, res[0]);
	EXPECT_EQ(hipErrorInvalidValue, res[1]);

	EXPECT_EQ(hipErrorInvalidValue, kfdpoolImportPointers(NULL, BOGUS_POOL, d, 2, res));
	EXPECT_EQ(hipErrorInvalidValue, kfdpoolImportPointers(ptrs, BOGUS_POOL, NULL, 2, res));
	EXPECT_EQ(hipSuccess, kfdpoolImportPointers(NULL, BOGUS_POOL, NULL, 0, NULL));
	res[0] = res[1] = hipSuccess;
	EXPECT_EQ(hipErrorInvalidValue, kfdpoolImportPointers(ptrs, BOGUS_POOL, d, 2, res));
	EXPECT_EQ(hipErrorInvalidValue, res[0]);
	EXPECT_EQ(hipErrorInvalidValue, res[1]);
	EXPECT_EQ(NULL, ptrs[0]);

	EXPECT_EQ(hipErrorInvalidValue, kfdpoolFreePointers(NULL, 1, NULL));
	EXPECT_EQ(hipSuccess, kfdpoolFreePointers(NULL, 0, NULL));
	ptrs[0] = &local;
	ptrs[1] = NULL;		/* NULL elements are skipped */
	res[0] = res[1] = hipErrorUnknown;
	EXPECT_EQ(hipErrorInvalidValue, kfdpoolFreePointers(ptrs, 2, res));
	EXPECT_EQ(hipErrorInvalidValue, res[0]);
	EXPECT_EQ(hipSuccess, res[1]);

	EXPECT_EQ(hipErrorInvalidValue, kfdpoolMemPoolSetGranularity(BOGUS_POOL, 4096));
	EXPECT_EQ(hipErrorInvalidValue, kfdpoolMemPoolSetGranularity(BOGUS_POOL, (64 << 10) + 1));
	EXPECT_EQ(hipErrorInvalidValue, kfdpoolMemPoolSetGranularity(BOGUS_POOL, 2 << 20));
	EXPECT_EQ(hipErrorInvalidValue, kfdpoolMemPoolGetStats(BOGUS_POOL, NULL));
	EXPECT_EQ(hipErrorInvalidValue, kfdpoolMemPoolGetStats(BOGUS_POOL, &st));
	EXPECT_EQ(NULL, kfdpoolMemPoolBackend(BOGUS_POOL));
}

/*
 * The stream and event calls libkfdpool-hip interposes, in a process
 * without a HIP runtime: there are no streams or events to forward to
 * (hipErrorInvalidHandle), nor functions to hand out (hipErrorNotSupported).
 */
TEST(streams_and_events_without_a_runtime)
{
	hipMemLocation loc = { hipMemLocationTypeDevice, 0 };
	hipEvent_t ev = (hipEvent_t)&not_a_pool_obj;
	hipStream_t s = (hipStream_t)&not_a_pool_obj;
	void *fn = &fn;

	EXPECT_EQ(hipErrorInvalidHandle, hipEventRecord(ev, NULL));
	EXPECT_EQ(hipErrorInvalidHandle, hipEventRecord_spt(ev, s));
	EXPECT_EQ(hipErrorInvalidHandle, hipStreamWaitEvent(s, ev, 0));
	EXPECT_EQ(hipErrorInvalidHandle, hipStreamWaitEvent_spt(NULL, ev, 0));
	EXPECT_EQ(hipErrorInvalidHandle, hipEventDestroy(ev));
	EXPECT_EQ(hipErrorInvalidHandle, hipStreamDestroy(s));
	EXPECT_EQ(hipErrorNotSupported, hipGetProcAddress("hipFree", &fn, 600,
							  0, NULL));
	EXPECT_EQ(&fn, fn);
	EXPECT_EQ(hipErrorInvalidHandle, hipStreamSynchronize(s));
	EXPECT_EQ(hipErrorInvalidHandle, hipStreamSynchronize_spt(NULL));
	EXPECT_EQ(hipErrorInvalidHandle, hipEventSynchronize(ev));
	EXPECT_EQ(hipErrorNoDevice, hipDeviceSynchronize());
	EXPECT_EQ(hipErrorInvalidValue,
		  hipDeviceSetMemPool(0, (hipMemPool_t)&not_a_pool_obj));
	EXPECT_EQ(hipErrorInvalidValue,
		  hipMemSetMemPool(&loc, hipMemAllocationTypePinned,
				   (hipMemPool_t)&not_a_pool_obj));
}

/*
 * Without a runtime the thread's last error is kfdpool's calls' alone:
 * each call writes it (clr's HIP_RETURN), hipGetLastError answers it and
 * puts hipSuccess back, hipPeekAtLastError leaves it.
 */
TEST(last_error_without_a_runtime)
{
	void *ptr;

	EXPECT_EQ(hipErrorInvalidValue, hipMemPoolDestroy(BOGUS_POOL));
	EXPECT_EQ(hipErrorInvalidValue, hipPeekAtLastError());
	EXPECT_EQ(hipErrorInvalidValue, hipGetLastError());
	EXPECT_EQ(hipSuccess, hipGetLastError());
	EXPECT_EQ(hipErrorInvalidValue,
		  hipMallocFromPoolAsync(&ptr, 4096, NULL, NULL));
	EXPECT_EQ(hipSuccess, hipFree(NULL));
	EXPECT_EQ(hipSuccess, hipPeekAtLastError());
	EXPECT_EQ(hipErrorNotSupported, hipGetProcAddress("hipFree", &ptr, 600,
							  0, NULL));
	EXPECT_EQ(hipErrorNotSupported, hipExtGetLastError());
	EXPECT_EQ(hipSuccess, hipExtGetLastError());
}

TEST(error_names)
{
	EXPECT_STREQ("hipSuccess", hipGetErrorName(hipSuccess));
	EXPECT_STREQ("hipErrorInvalidValue", hipGetErrorName(hipErrorInvalidValue));
	EXPECT_STREQ("hipErrorOutOfMemory", hipGetErrorName(hipErrorOutOfMemory));
	EXPECT_STREQ("hipErrorNotSupported", hipGetErrorName(hipErrorNotSupported));
	EXPECT_STREQ("hipErrorInvalidHandle", hipGetErrorName(hipErrorInvalidHandle));
	EXPECT_STREQ("hipErrorNoDevice", hipGetErrorName(hipErrorNoDevice));
	EXPECT_STREQ("hipErrorUnknown", hipGetErrorName((hipError_t)12345));
	EXPECT_STREQ("no error", hipGetErrorString(hipSuccess));
	EXPECT_STREQ("invalid argument", hipGetErrorString(hipErrorInvalidValue));
	EXPECT_STREQ("unknown error", hipGetErrorString((hipError_t)12345));
}

/*
 * The table of docs/library.md, every row of it; every other errno is
 * hipErrorUnknown, so an errno the library starts mapping without this
 * table (and the documentation) following fails here too.
 */
TEST(errno_mapping)
{
	static const struct { int err; hipError_t hip; } map[] = {
		{ 0, hipSuccess },
		{ -EINVAL, hipErrorInvalidValue }, { -EXDEV, hipErrorInvalidValue },
		{ -EBADF, hipErrorInvalidValue }, { -ENOTTY, hipErrorInvalidValue },
		{ -EFAULT, hipErrorInvalidValue }, { -ENAMETOOLONG, hipErrorInvalidValue },
		{ -EPERM, hipErrorInvalidValue }, { -EACCES, hipErrorInvalidValue },
		{ -ENOMEM, hipErrorOutOfMemory }, { -ENOSPC, hipErrorOutOfMemory },
		{ -EDQUOT, hipErrorOutOfMemory }, { -EMFILE, hipErrorOutOfMemory },
		{ -ENFILE, hipErrorOutOfMemory }, { -E2BIG, hipErrorOutOfMemory },
		{ -ENOENT, hipErrorInvalidHandle }, { -ESTALE, hipErrorInvalidHandle },
		{ -ENXIO, hipErrorInvalidHandle },
		{ -EOPNOTSUPP, hipErrorNotSupported },
		{ -ENODEV, hipErrorNoDevice },
		{ -EEXIST, hipErrorAlreadyMapped },
		{ -EBUSY, hipErrorIllegalState },
		{ -EIO, hipErrorUnknown }, { -EINTR, hipErrorUnknown },
		{ EINVAL, hipErrorInvalidValue },	/* positive works too */
	};
	size_t i;
	int err;

	for (i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		EXPECT_EQ(map[i].hip, kfdpoolErrnoToHip(map[i].err))
			TH_LOG("errno %d", map[i].err);
	/* Every errno there is, either sign: the table's, or unknown. */
	for (err = 1; err < 4096; err++) {
		hipError_t want = hipErrorUnknown;

		for (i = 0; i < sizeof(map) / sizeof(map[0]); i++)
			if (map[i].err == -err)
				want = map[i].hip;
		EXPECT_EQ(want, kfdpoolErrnoToHip(-err)) TH_LOG("errno %d", err);
		EXPECT_EQ(want, kfdpoolErrnoToHip(err)) TH_LOG("errno %d", err);
	}
}

TEST(native_arguments)
{
	struct kfdpool_export e;
	struct kfdpool_revoke r;
	struct kfdpool_import im;
	struct kfdpool_release rl;
	char longname[64];
	int nfd = open("/dev/null", O_RDWR | O_CLOEXEC);

	ASSERT_LE(0, nfd);
	EXPECT_EQ(-EINVAL, kfdpool_query(nfd, NULL));
	EXPECT_EQ(-EINVAL, kfdpool_pool_stats(nfd, 0, NULL));
	EXPECT_EQ(-EINVAL, kfdpool_export(nfd, 1, 0, 1, NULL));
	EXPECT_EQ(-EINVAL, kfdpool_revoke(nfd, NULL));
	EXPECT_EQ(-EINVAL, kfdpool_import(nfd, NULL, 0, NULL));
	EXPECT_EQ(-EINVAL, kfdpool_handle_export(nfd, 0, 0, NULL));
	EXPECT_EQ(-EINVAL, kfdpool_pool_import_handle(nfd, NULL));
	EXPECT_EQ(-EINVAL, kfdpool_export_batch(nfd, NULL, 1));
	memset(longname, 'a', sizeof(longname));
	longname[sizeof(longname) - 1] = 0;
	EXPECT_EQ(-ENAMETOOLONG, kfdpool_pool_create(nfd, 0, 0, longname, NULL));
	/* Not a kfdpool fd: the kernel says so. */
	EXPECT_EQ(-ENOTTY, kfdpool_pool_export(nfd));
	EXPECT_EQ(-EBADF, kfdpool_release(-1, 1));
	/* Batches: nothing to do is 0; no array is -EINVAL. */
	EXPECT_EQ(0, kfdpool_exportv(nfd, NULL, 0));
	EXPECT_EQ(-EINVAL, kfdpool_exportv(nfd, NULL, 1));
	EXPECT_EQ(-EINVAL, kfdpool_revokev(nfd, NULL, 1));
	EXPECT_EQ(-EINVAL, kfdpool_importv(nfd, NULL, 1));
	EXPECT_EQ(-EINVAL, kfdpool_releasev(nfd, NULL, 1));
	(void)e; (void)r; (void)im; (void)rl;
	if (access(KFDPOOL_DEVICE_PATH, F_OK))
		EXPECT_EQ(-ENOENT, kfdpool_open());
	close(nfd);
}

TEST(batch_mode_switch)
{
	enum kfdpool_batch_mode old = kfdpool_set_batch_mode(KFDPOOL_BATCH_SINGLE);

	EXPECT_EQ(KFDPOOL_BATCH_SINGLE, kfdpool_set_batch_mode(KFDPOOL_BATCH_IOCTL));
	EXPECT_EQ(KFDPOOL_BATCH_IOCTL, kfdpool_set_batch_mode(old));
}

TEST_HARNESS_MAIN
