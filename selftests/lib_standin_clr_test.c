// SPDX-License-Identifier: GPL-2.0-only
/*
 * libkfdpool-hip's entry points as clr answers the same calls, against the
 * TEST-ONLY STAND-IN for the HIP runtime (hiprt_standin.c, which behaves
 * as clr's sources it cites do):
 *
 *   hipGetLastError after a call of kfdpool's answers what clr's would
 *     after the same call (before HIP 7.0 the call's result; from 7.0 an
 *     error stays through later successes), never a runtime call it made
 *     on the way (an event polled: hipErrorNotReady), and after the
 *     runtime's calls what they answered;
 *   a free on a stream of another device than the current one: the marker
 *     is an event of the stream's device (clr refuses another device's);
 *   stream capture: kfdpool's calls on a capturing stream are refused with
 *     hipErrorStreamCaptureUnsupported and leave the capture as it was, on
 *     a stream whose capture was invalidated with
 *     hipErrorStreamCaptureInvalidated;
 *     a marker whose stream captures is never asked about;
 *   hipDeviceSetMemPool and hipMemSetMemPool never hand a kfdpool pool to
 *     the runtime; hipMemSetMemPool answers for one as the runtime does for
 *     a pool not its own, capture included;
 *   size 0 allocates nothing and succeeds; invalid streams are refused as
 *     the runtime's version answers them;
 *   hipMemPoolImportFromShareableHandle refuses a pool fd said to be of
 *     another handle type;
 *   host pools are registered with the runtime (hipPointerGetAttributes
 *     knows their memory), in both processes of a pool.
 */
#include <pthread.h>
#include <stdint.h>

#include "lib_hip_util.h"
#include "hiprt_standin.h"
#include "kselftest_harness.h"

#define SZ (64 << 10)

static char logs[1 << 16];

static const char *standin_log(void)
{
	kfdpool_standin_log(logs, sizeof(logs));
	return logs;
}

FIXTURE(clr) {
	hipMemPool_t pool;
	hipStream_t a, b;
	hipEvent_t ev;
};

FIXTURE_SETUP(clr)
{
	uint64_t keep = UINT64_MAX;
	int zero = 0;
	hipError_t e;

	self->pool = NULL;
	if (access("/dev/kfdpool", F_OK))
		SKIP(return, "/dev/kfdpool missing (module not loaded)");
	ksft_print_msg("runtime: TEST-ONLY STAND-IN (selftests/hiprt_standin.c), "
		       "not HIP's runtime\n");
	e = lh_pool(&self->pool, hipMemHandleTypePosixFileDescriptor, SZ);
	if (e == hipErrorNoDevice)
		SKIP(return, "no host dma-buf exporter");
	ASSERT_EQ(hipSuccess, e);
	ASSERT_EQ(hipSuccess, kfdpoolMemPoolSetGranularity(self->pool, SZ));
	ASSERT_EQ(hipSuccess, hipMemPoolSetAttribute(self->pool,
		  hipMemPoolAttrReleaseThreshold, &keep));
	/* Another stream gets a freed block once its free completed (the
	 * marker is polled), never by waiting for it. */
	ASSERT_EQ(hipSuccess, hipMemPoolSetAttribute(self->pool,
		  hipMemPoolReuseAllowInternalDependencies, &zero));
	ASSERT_EQ(hipSuccess, hipStreamCreate(&self->a));
	ASSERT_EQ(hipSuccess, hipStreamCreate(&self->b));
	ASSERT_EQ(hipSuccess, hipEventCreateWithFlags(&self->ev, 0));
	standin_log();
}

FIXTURE_TEARDOWN(clr)
{
	if (!self->pool)
		return;
	kfdpool_standin_run(self->a);
	kfdpool_standin_run(self->b);
	EXPECT_EQ(hipSuccess, hipMemPoolDestroy(self->pool));
	hipEventDestroy(self->ev);
	hipStreamDestroy(self->a);
	hipStreamDestroy(self->b);
}

/* ---- the last error ---- */

TEST_F(clr, last_error_is_the_calls_own)
{
	/* From HIP 7.0 a success leaves the last error as it was
	 * (HIP_UPDATE_ERROR_STATE); before, every call's result is it. */
	int v7 = KFDPOOL_STANDIN_SINCE(7, 0);
	void *p, *q;

	kfdpool_standin_hold(self->a, 1);
	ASSERT_EQ(hipSuccess, hipMallocFromPoolAsync(&p, SZ, self->pool,
						     self->a));
	ASSERT_EQ(hipSuccess, hipFreeAsync(p, self->a));
	/* B polls A's marker (not ready) and finds no room. */
	EXPECT_EQ(hipErrorOutOfMemory, hipMallocFromPoolAsync(&q, SZ,
		  self->pool, self->b));
	EXPECT_EQ(hipErrorOutOfMemory, hipPeekAtLastError());
	EXPECT_EQ(hipErrorOutOfMemory, hipGetLastError());
	EXPECT_EQ(hipSuccess, hipGetLastError());
	/* A success after a polled marker: hipSuccess, not NotReady. */
	ASSERT_EQ(hipSuccess, hipMallocFromPoolAsync(&q, SZ, self->pool,
						     self->a));
	EXPECT_EQ(hipSuccess, hipGetLastError());
	/* After the runtime's own failure, kfdpool's success is the answer,
	 * as after any call of clr's before 7.0; from 7.0 the failure stays. */
	EXPECT_EQ(hipErrorInvalidDevice, hipSetDevice(99));
	ASSERT_EQ(hipSuccess, hipFreeAsync(q, self->a));
	EXPECT_EQ(v7 ? hipErrorInvalidDevice : hipSuccess, hipPeekAtLastError());
	EXPECT_EQ(v7 ? hipErrorInvalidDevice : hipSuccess, hipGetLastError());
	/* kfdpool's error, then the runtime's success: the success before
	 * 7.0, kfdpool's error from 7.0. */
	EXPECT_EQ(hipErrorInvalidValue, hipMallocFromPoolAsync(NULL, SZ,
		  self->pool, self->a));
	EXPECT_EQ(hipSuccess, hipSetDevice(0));
	EXPECT_EQ(v7 ? hipErrorInvalidValue : hipSuccess, hipGetLastError());
	/* kfdpool's error, then the runtime's other failure: the runtime's. */
	ASSERT_EQ(hipSuccess, hipMallocFromPoolAsync(&p, SZ, self->pool,
						     self->a));
	EXPECT_EQ(hipErrorOutOfMemory, hipMallocFromPoolAsync(&q, SZ,
		  self->pool, self->b));
	EXPECT_EQ(hipErrorInvalidDevice, hipSetDevice(99));
	EXPECT_EQ(hipErrorInvalidDevice, hipGetLastError());
	kfdpool_standin_run(self->a);
	EXPECT_EQ(hipSuccess, hipFree(p));
	EXPECT_EQ(hipSuccess, hipGetLastError());
}

/*
 * A program's error, then kfdpool's calls and the calls it interposes,
 * all succeeding: from HIP 7.0 hipGetLastError still answers the error
 * (a failed launch is still seen after hipDeviceSynchronize), and
 * hipExtGetLastError the last call's success; before, the successes reset
 * it.  kfdpool's own error is kept from 7.0 through the runtime's
 * successes, and hipExtGetLastError answers it right after the call.
 */
TEST_F(clr, an_earlier_error_survives_kfdpools_successes)
{
	int v7 = KFDPOOL_STANDIN_SINCE(7, 0);
	hipEvent_t e;
	void *p, *q;

	ASSERT_EQ(hipSuccess, hipEventCreateWithFlags(&e, 0));
	EXPECT_EQ(hipErrorInvalidDevice, hipSetDevice(99));
	ASSERT_EQ(hipSuccess, hipMallocFromPoolAsync(&p, SZ, self->pool,
						     self->a));
	ASSERT_EQ(hipSuccess, hipEventRecord(e, self->a));
	ASSERT_EQ(hipSuccess, hipStreamWaitEvent(self->b, e, 0));
	ASSERT_EQ(hipSuccess, hipFreeAsync(p, self->a));
	ASSERT_EQ(hipSuccess, hipStreamSynchronize(self->a));
	ASSERT_EQ(hipSuccess, hipEventSynchronize(e));
	ASSERT_EQ(hipSuccess, hipDeviceSynchronize());
	EXPECT_EQ(v7 ? hipErrorInvalidDevice : hipSuccess, hipPeekAtLastError());
	if (v7)
		EXPECT_EQ(hipErrorInvalidDevice, hipExtGetLastError());
	EXPECT_EQ(v7 ? hipErrorInvalidDevice : hipSuccess, hipGetLastError());
	EXPECT_EQ(hipSuccess, hipGetLastError());
	/* kfdpool's own error (one the runtime cannot hold), then
	 * successes of the runtime's and of kfdpool's. */
	ASSERT_EQ(hipSuccess, hipMallocFromPoolAsync(&p, SZ, self->pool,
						     self->a));
	kfdpool_standin_hold(self->a, 1);
	ASSERT_EQ(hipSuccess, hipFreeAsync(p, self->a));
	EXPECT_EQ(hipErrorOutOfMemory, hipMallocFromPoolAsync(&q, SZ,
		  self->pool, self->b));
	if (v7)
		EXPECT_EQ(hipErrorOutOfMemory, hipExtGetLastError());
	EXPECT_EQ(hipSuccess, hipSetDevice(0));
	ASSERT_EQ(hipSuccess, hipEventRecord(e, self->b));
	ASSERT_EQ(hipSuccess, hipDeviceSynchronize());
	EXPECT_EQ(v7 ? hipErrorOutOfMemory : hipSuccess, hipGetLastError());
	EXPECT_EQ(hipSuccess, hipGetLastError());
	kfdpool_standin_run(self->a);
	EXPECT_EQ(hipSuccess, hipEventDestroy(e));
}

/* ---- the marker's device ---- */

TEST_F(clr, a_free_on_another_devices_stream)
{
	hipStream_t s1;
	void *p, *q;
	int dev = -1;

	ASSERT_EQ(hipSuccess, hipSetDevice(1));
	ASSERT_EQ(hipSuccess, hipStreamCreate(&s1));
	ASSERT_EQ(hipSuccess, hipSetDevice(0));
	kfdpool_standin_hold(s1, 1);
	ASSERT_EQ(hipSuccess, hipMallocFromPoolAsync(&p, SZ, self->pool, s1));
	ASSERT_EQ(hipSuccess, hipFreeAsync(p, s1));
	EXPECT_EQ(NULL, strstr(standin_log(), "refused")) TH_LOG("%s", logs);
	EXPECT_TRUE(strstr(logs, "dev1") != NULL) TH_LOG("%s", logs);
	/* Freed: the same stream has it back at once; the current device
	 * is as it was. */
	ASSERT_EQ(hipSuccess, hipMallocFromPoolAsync(&q, SZ, self->pool, s1));
	EXPECT_EQ(p, q);
	EXPECT_EQ(hipSuccess, hipGetDevice(&dev));
	EXPECT_EQ(0, dev);
	ASSERT_EQ(hipSuccess, hipFreeAsync(q, s1));
	kfdpool_standin_run(s1);
	EXPECT_EQ(hipSuccess, hipStreamDestroy(s1));
}

/* ---- stream capture ---- */

static hipStreamCaptureStatus capture_status(hipStream_t s)
{
	hipStreamCaptureStatus st = (hipStreamCaptureStatus)-1;

	hipStreamIsCapturing(s, &st);
	return st;
}

TEST_F(clr, calls_on_a_capturing_stream_are_refused_and_leave_it_capturing)
{
	hipGraph_t g;
	void *p, *q = NULL;

	ASSERT_EQ(hipSuccess, hipMallocFromPoolAsync(&p, SZ / 2, self->pool,
						     self->b));
	ASSERT_EQ(hipSuccess, hipStreamBeginCapture(self->a,
		  hipStreamCaptureModeGlobal));
	EXPECT_EQ(hipErrorStreamCaptureUnsupported,
		  hipMallocFromPoolAsync(&q, SZ / 2, self->pool, self->a));
	EXPECT_EQ(NULL, q);
	EXPECT_EQ(hipErrorStreamCaptureUnsupported, hipFreeAsync(p, self->a));
	EXPECT_EQ(hipErrorStreamCaptureUnsupported, hipGetLastError());
	/* The legacy null stream would wait for the capturing one. */
	EXPECT_EQ(hipErrorStreamCaptureImplicit, hipFreeAsync(p, NULL));
	/* Another stream still works, without touching the capture. */
	ASSERT_EQ(hipSuccess, hipFreeAsync(p, self->b));
	ASSERT_EQ(hipSuccess, hipMallocFromPoolAsync(&q, SZ / 2, self->pool,
						     self->b));
	EXPECT_EQ(hipStreamCaptureStatusActive, capture_status(self->a));
	EXPECT_EQ(hipSuccess, hipStreamEndCapture(self->a, &g));
	EXPECT_EQ(hipSuccess, hipFreeAsync(q, self->b));
}

/*
 * A capture the runtime invalidated (an unsafe call in global mode): clr's
 * STREAM_CAPTURE (hip_internal.hpp) answers calls on that stream
 * hipErrorStreamCaptureInvalidated until the capture ends, and so do
 * kfdpool's.
 */
TEST_F(clr, calls_on_an_invalidated_capture_say_so)
{
	hipGraph_t g;
	void *p, *q = NULL, *m = NULL;

	ASSERT_EQ(hipSuccess, hipMallocFromPoolAsync(&p, SZ / 2, self->pool,
						     self->b));
	ASSERT_EQ(hipSuccess, hipStreamBeginCapture(self->a,
		  hipStreamCaptureModeGlobal));
	EXPECT_EQ(hipErrorStreamCaptureUnsupported, hipMalloc(&m, 4096));
	ASSERT_EQ(hipStreamCaptureStatusInvalidated, capture_status(self->a));
	EXPECT_EQ(hipErrorStreamCaptureInvalidated,
		  hipMallocFromPoolAsync(&q, SZ / 2, self->pool, self->a));
	EXPECT_EQ(NULL, q);
	EXPECT_EQ(hipErrorStreamCaptureInvalidated, hipFreeAsync(p, self->a));
	EXPECT_EQ(hipErrorStreamCaptureInvalidated, hipGetLastError());
	EXPECT_EQ(hipErrorStreamCaptureInvalidated,
		  hipStreamEndCapture(self->a, &g));
	/* Over: the stream works again, and the block was not freed. */
	EXPECT_EQ(hipSuccess, hipFreeAsync(p, self->a));
}

TEST_F(clr, a_marker_of_a_stream_that_captures_is_not_asked_about)
{
	hipGraph_t g;
	void *p, *q;

	/* A free on A, pending; then A captures. */
	kfdpool_standin_hold(self->a, 1);
	ASSERT_EQ(hipSuccess, hipMallocFromPoolAsync(&p, SZ, self->pool,
						     self->a));
	ASSERT_EQ(hipSuccess, hipFreeAsync(p, self->a));
	ASSERT_EQ(hipSuccess, hipStreamBeginCapture(self->a,
		  hipStreamCaptureModeRelaxed));
	/* B would poll A's marker: clr would invalidate A's capture. */
	EXPECT_EQ(hipErrorOutOfMemory, hipMallocFromPoolAsync(&q, SZ,
		  self->pool, self->b));
	/* Nor waited for: the chunk stays. */
	EXPECT_EQ(hipSuccess, hipMemPoolTrimTo(self->pool, 0));
	EXPECT_EQ(SZ, lh_attr(self->pool, hipMemPoolAttrReservedMemCurrent));
	EXPECT_EQ(NULL, strstr(standin_log(), "invalidates")) TH_LOG("%s", logs);
	EXPECT_EQ(hipStreamCaptureStatusActive, capture_status(self->a));
	EXPECT_EQ(hipSuccess, hipStreamEndCapture(self->a, &g));
	/* Capture over, the marker is asked about again. */
	kfdpool_standin_run(self->a);
	ASSERT_EQ(hipSuccess, hipMallocFromPoolAsync(&q, SZ, self->pool,
						     self->b));
	EXPECT_EQ(p, q);
	EXPECT_EQ(hipSuccess, hipFreeAsync(q, self->b));
}

/* A new host chunk (registered with the runtime) while another stream
 * captures in global mode: the registration does not end the capture. */
TEST_F(clr, a_new_chunk_leaves_another_streams_capture)
{
	hipMemPool_t pool2;
	hipGraph_t g;
	void *p;

	ASSERT_EQ(hipSuccess, lh_pool(&pool2,
				      hipMemHandleTypePosixFileDescriptor, 0));
	ASSERT_EQ(hipSuccess, hipStreamBeginCapture(self->a,
		  hipStreamCaptureModeGlobal));
	ASSERT_EQ(hipSuccess, hipMallocFromPoolAsync(&p, SZ, pool2, self->b));
	EXPECT_EQ(NULL, strstr(standin_log(), "invalidates")) TH_LOG("%s", logs);
	EXPECT_EQ(hipStreamCaptureStatusActive, capture_status(self->a));
	EXPECT_EQ(hipSuccess, hipStreamEndCapture(self->a, &g));
	EXPECT_EQ(hipSuccess, hipFree(p));
	EXPECT_EQ(hipSuccess, hipMemPoolDestroy(pool2));
}

/* ---- pools and the runtime ---- */

TEST_F(clr, set_mem_pool_keeps_kfdpools_pools_from_the_runtime)
{
	hipMemPool_t def, cur;

	EXPECT_EQ(hipErrorInvalidValue, hipDeviceSetMemPool(0, self->pool));
	EXPECT_EQ(hipErrorInvalidValue, hipGetLastError());
	ASSERT_EQ(hipSuccess, hipDeviceGetMemPool(&cur, 0));
	EXPECT_NE(self->pool, cur);
	/* The runtime's own pools are the runtime's. */
	ASSERT_EQ(hipSuccess, hipDeviceGetDefaultMemPool(&def, 0));
	EXPECT_EQ(hipSuccess, hipDeviceSetMemPool(0, def));
	EXPECT_EQ(hipErrorInvalidDevice, hipDeviceSetMemPool(1, def));
}

TEST_F(clr, mem_set_mem_pool_answers_for_kfdpools_pools_as_the_runtime)
{
	hipMemLocation loc = { hipMemLocationTypeDevice, 0 };
	hipMemPool_t def, cur;
	hipGraph_t g;

	EXPECT_EQ(hipErrorInvalidValue, hipMemSetMemPool(&loc,
		  hipMemAllocationTypePinned, self->pool));
	EXPECT_EQ(hipErrorInvalidValue, hipGetLastError());
	EXPECT_EQ(NULL, strstr(standin_log(), "no pool of this runtime"))
		TH_LOG("%s", logs);
	ASSERT_EQ(hipSuccess, hipMemGetMemPool(&cur, &loc,
					       hipMemAllocationTypePinned));
	EXPECT_NE(self->pool, cur);
	/* In a capture of an unsafe mode the runtime fails it first. */
	ASSERT_EQ(hipSuccess, hipStreamBeginCapture(self->a,
		  hipStreamCaptureModeGlobal));
	EXPECT_EQ(hipErrorStreamCaptureUnsupported, hipMemSetMemPool(&loc,
		  hipMemAllocationTypePinned, self->pool));
	EXPECT_EQ(hipStreamCaptureStatusInvalidated, capture_status(self->a));
	hipStreamEndCapture(self->a, &g);
	/* The runtime's own pools are the runtime's. */
	ASSERT_EQ(hipSuccess, hipDeviceGetDefaultMemPool(&def, 0));
	EXPECT_EQ(hipSuccess, hipMemSetMemPool(&loc,
		  hipMemAllocationTypePinned, def));
	loc.id = 1;
	EXPECT_EQ(hipErrorInvalidValue, hipMemSetMemPool(&loc,
		  hipMemAllocationTypePinned, def));
	EXPECT_EQ(hipErrorInvalidValue, hipMemSetMemPool(NULL,
		  hipMemAllocationTypePinned, def));
}

TEST_F(clr, size_0_allocates_nothing)
{
	void *p = &p;

	EXPECT_EQ(hipSuccess, hipMallocFromPoolAsync(&p, 0, self->pool,
						     self->a));
	EXPECT_EQ(NULL, p);
	EXPECT_EQ(0, lh_attr(self->pool, hipMemPoolAttrUsedMemCurrent));
}

static hipError_t alloc_on(hipMemPool_t pool, hipStream_t s)
{
	void *p = NULL;
	hipError_t e = hipMallocFromPoolAsync(&p, SZ, pool, s);

	if (!e)
		hipFree(p);
	return e;
}

/* As clr 6.2 answers (hip_mempool.cpp): hipErrorInvalidHandle. */
TEST_F(clr, invalid_streams_are_refused)
{
	hipStream_t gone;
	void *p;

	EXPECT_EQ(hipErrorInvalidHandle, alloc_on(self->pool,
		  (hipStream_t)(uintptr_t)0x1234));
	ASSERT_EQ(hipSuccess, hipStreamCreate(&gone));
	ASSERT_EQ(hipSuccess, hipStreamDestroy(gone));
	EXPECT_EQ(hipErrorInvalidHandle, alloc_on(self->pool, gone));
	ASSERT_EQ(hipSuccess, hipMallocFromPoolAsync(&p, SZ, self->pool,
						     self->a));
	EXPECT_EQ(hipErrorInvalidHandle, hipFreeAsync(p, gone));
	/* Not freed. */
	EXPECT_EQ(SZ, lh_attr(self->pool, hipMemPoolAttrUsedMemCurrent));
	EXPECT_EQ(hipSuccess, hipFreeAsync(p, self->a));
}

/* Before 6.2, clr answered an invalid stream with hipErrorInvalidValue. */
static int old_invalid_stream_child(void)
{
	hipMemPool_t pool;

	if (lh_pool(&pool, hipMemHandleTypePosixFileDescriptor, 0))
		return 2;
	if (alloc_on(pool, (hipStream_t)(uintptr_t)0x1234) !=
	    hipErrorInvalidValue)
		return 3;
	hipMemPoolDestroy(pool);
	return 0;
}

TEST(invalid_streams_before_6_2)
{
	if (access("/dev/kfdpool", F_OK))
		SKIP(return, "/dev/kfdpool missing (module not loaded)");
	EXPECT_EQ(0, lh_exec_self("old-stream", "KFDPOOL_STANDIN_VERSION",
				  "60102000"));
}

TEST_F(clr, a_pool_fd_of_another_handle_type_is_refused)
{
	hipMemPool_t imp = NULL;
	int fd;

	ASSERT_EQ(hipSuccess, hipMemPoolExportToShareableHandle(&fd, self->pool,
		  hipMemHandleTypePosixFileDescriptor, 0));
	standin_log();
	EXPECT_EQ(hipErrorInvalidValue, hipMemPoolImportFromShareableHandle(
		  &imp, (void *)(intptr_t)fd, hipMemHandleTypeNone, 0));
	EXPECT_EQ(hipErrorInvalidValue, hipMemPoolImportFromShareableHandle(
		  &imp, (void *)(intptr_t)fd, (hipMemAllocationHandleType)0x10,
		  0));
	EXPECT_EQ(hipErrorNotSupported, hipMemPoolImportFromShareableHandle(
		  &imp, (void *)(intptr_t)fd, hipMemHandleTypeWin32, 0));
	EXPECT_EQ(NULL, imp);
	/* None of them went to the runtime. */
	EXPECT_EQ(NULL, strstr(standin_log(),
			       "hipMemPoolImportFromShareableHandle"));
	EXPECT_EQ(hipSuccess, hipMemPoolImportFromShareableHandle(&imp,
		  (void *)(intptr_t)fd, hipMemHandleTypePosixFileDescriptor, 0));
	close(fd);
	EXPECT_EQ(hipSuccess, hipMemPoolDestroy(imp));
}

/* ---- host pools are the runtime's to know ---- */

TEST_F(clr, host_pools_are_registered_with_the_runtime)
{
	hipPointerAttribute_t at;
	hipMemPoolPtrExportData d;
	hipMemPool_t imp;
	void *p, *q;
	int fd;

	ASSERT_EQ(hipSuccess, hipMallocFromPoolAsync(&p, SZ, self->pool,
						     self->a));
	ASSERT_EQ(hipSuccess, hipPointerGetAttributes(&at, p));
	EXPECT_EQ(hipMemoryTypeHost, at.type);
	EXPECT_EQ(p, at.hostPointer);
	EXPECT_TRUE(strstr(standin_log(), "hipHostRegister") != NULL)
		TH_LOG("%s", logs);
	/* The importer's mapping too (here the same process's). */
	ASSERT_EQ(hipSuccess, hipMemPoolExportToShareableHandle(&fd, self->pool,
		  hipMemHandleTypePosixFileDescriptor, 0));
	ASSERT_EQ(hipSuccess, hipMemPoolImportFromShareableHandle(&imp,
		  (void *)(intptr_t)fd, hipMemHandleTypePosixFileDescriptor, 0));
	close(fd);
	ASSERT_EQ(hipSuccess, hipMemPoolExportPointer(&d, p));
	ASSERT_EQ(hipSuccess, hipMemPoolImportPointer(&q, imp, &d));
	ASSERT_EQ(hipSuccess, hipPointerGetAttributes(&at, q));
	EXPECT_EQ(hipMemoryTypeHost, at.type);
	EXPECT_EQ(hipSuccess, hipFree(q));
	EXPECT_EQ(hipSuccess, hipMemPoolDestroy(imp));
	ASSERT_EQ(hipSuccess, hipPointerGetAttributes(&at, q));
	EXPECT_EQ(hipMemoryTypeUnregistered, at.type);
	/* Unregistered where the runtime waits anyway: not in hipFreeAsync. */
	ASSERT_EQ(hipSuccess, hipFreeAsync(p, self->a));
	standin_log();
	ASSERT_EQ(hipSuccess, hipMemPoolTrimTo(self->pool, 0));
	EXPECT_TRUE(strstr(standin_log(), "hipHostUnregister") != NULL)
		TH_LOG("%s", logs);
	ASSERT_EQ(hipSuccess, hipPointerGetAttributes(&at, p));
	EXPECT_EQ(hipMemoryTypeUnregistered, at.type);
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "--old-stream"))
		return old_invalid_stream_child();
	return test_harness_run(argc, argv);
}
