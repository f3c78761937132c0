/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * TEST-ONLY STAND-IN for the HIP runtime (libamdhip64): what the library
 * tests of stream order and of the runtime's device path run against.
 * It is not a runtime, runs no GPU work, and is never installed.  See
 * hiprt_standin.c.
 *
 * Besides the hip* functions it defines (with HIP's prototypes, in
 * <kfdpool_hip.h>'s and rt/types.h's types), it has these controls for
 * the tests:
 */
#ifndef HIPRT_STANDIN_H
#define HIPRT_STANDIN_H

#ifndef KFDPOOL_HIP_OWN_TYPES
#define KFDPOOL_HIP_OWN_TYPES
#endif
#include <kfdpool_hip.h>
#include "rt/types.h"

/*
 * The clr release modelled (its HIP_VERSION, as hipRuntimeGetVersion
 * answers it): KFDPOOL_STANDIN_VERSION, "X.Y" of selftests/standin-versions
 * (tools/vm/suite runs each lib_standin_* program once per release there)
 * or a HIP_VERSION number; 6.2 when unset.  Behaviours that differ between
 * releases follow it; KFDPOOL_STANDIN_SINCE(7, 0) tests it.
 */
int kfdpool_standin_clr(void);
#define KFDPOOL_STANDIN_SINCE(major, minor) \
	(kfdpool_standin_clr() >= (major) * 10000000 + (minor) * 100000)

/* Events recorded on a held stream stay incomplete until it is run. */
void kfdpool_standin_hold(hipStream_t s, int hold);
/* Complete everything recorded on @s so far. */
void kfdpool_standin_run(hipStream_t s);
/* Work recorded on @s that has not completed (0: idle). */
int kfdpool_standin_pending(hipStream_t s);
/* The number the log calls @s by ("s3"). */
int kfdpool_standin_stream_id(hipStream_t s);
/*
 * The calls made so far, one line each ("hipEventRecord e3 s1", ...),
 * copied into @buf (NUL-terminated, truncated to @len), and forgotten.
 */
size_t kfdpool_standin_log(char *buf, size_t len);
/* The device whose memory @p is (allocated or imported here), or -1. */
int kfdpool_standin_device_of(const void *p);
/*
 * The driver object (ROCr's KFD allocation: a block of the fragment
 * allocator, a hipMemCreate handle) that device memory at @p lies in: a
 * number that is never given to another object, or 0 when @p is no
 * device memory of this process.  *@base and *@size (may be NULL) get the
 * object's address and size.
 */
uint64_t kfdpool_standin_object_of(const void *p, void **base, size_t *size);
/* Open file descriptors the stand-in holds (its driver objects' dma-bufs). */
int kfdpool_standin_fds(void);
/*
 * The call of the stand-in's function @name that follows @skip more calls
 * of it answers @err instead of doing anything (for
 * hsa_amd_portable_export_dmabuf, @err is its HSA status); NULL forgets a
 * failure not yet made.  KFDPOOL_STANDIN_WRONG makes that call succeed
 * with a wrong answer instead, one a runtime could give:
 * hipMemExportToShareableHandle hands out an fd that is no dma-buf (a
 * memfd), hsa_amd_portable_export_dmabuf a dma-buf holding more than the
 * range asked for (a nonzero offset).  Returns whether the failure set
 * before was made.
 */
#define KFDPOOL_STANDIN_WRONG (-1)
int kfdpool_standin_fail(const char *name, int skip, int err);

/* The rest of the runtime the tests use. */
#define hipMemcpyHostToDevice 1
#define hipMemcpyDeviceToHost 2
#define hipMemcpyDeviceToDevice 3
typedef struct ihipGraph *hipGraph_t;
hipError_t hipStreamCreate(hipStream_t *s);
hipError_t hipStreamBeginCapture(hipStream_t s, hipStreamCaptureMode mode);
hipError_t hipStreamEndCapture(hipStream_t s, hipGraph_t *graph);
hipError_t hipMemcpy(void *dst, const void *src, size_t n, int kind);
hipError_t hipMemset(void *p, int v, size_t n);
hipError_t hipMalloc(void **p, size_t size);
hipError_t hipEventCreate(hipEvent_t *e);
hipError_t hipDeviceGetDefaultMemPool(hipMemPool_t *pool, int device);
hipError_t hipDeviceGetMemPool(hipMemPool_t *pool, int device);
hipError_t hipMemGetMemPool(hipMemPool_t *pool, hipMemLocation *location,
			    hipMemAllocationType type);

/* HIP 6.x's hipPointerGetAttributes (hip_runtime_api.h). */
enum { hipMemoryTypeUnregistered = 0, hipMemoryTypeHost = 1,
       hipMemoryTypeDevice = 2 };
typedef struct hipPointerAttribute_t {
	int type;
	int device;
	void *devicePointer;
	void *hostPointer;
	int isManaged;
	unsigned int allocationFlags;
} hipPointerAttribute_t;
hipError_t hipPointerGetAttributes(hipPointerAttribute_t *attr, const void *p);

/* ROCr's (the stand-in's libhsa-runtime64.so.1), hsa_ext_amd.h. */
#define HSA_STATUS_ERROR_INVALID_ALLOCATION 0x1002
int hsa_amd_portable_export_dmabuf(const void *ptr, size_t size, int *dmabuf,
				   uint64_t *offset);
int hsa_amd_pointer_info(const void *ptr, void *info, void *(*alloc)(size_t),
			 uint32_t *naccessible, void **accessible);

#endif
