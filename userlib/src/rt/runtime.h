/* SPDX-License-Identifier: MIT */
/*
 * The HIP runtime of the process (libamdhip64), found at run time and never
 * linked: what kfdpool forwards every call it does not own to, and what
 * its device memory will come from.
 *
 * KP_HIP_EXPORTS lists the hip* names libkfdpool-hip defines, with the
 * version node the runtime gives each (clr's hip_hcc.map; the version
 * script userlib/libkfdpool-hip.map must agree, and
 * userlib/test/symbols-check compares both with libamdhip64).
 * KP_RT_ONLY lists runtime functions kfdpool calls without defining them.
 *
 * To call one more runtime function: add X(name, "version") to KP_RT_ONLY
 * (its prototype must be in scope: kfdpool_hip.h's, or one declared
 * below), then use kp_rt()->name, which is NULL when that runtime lacks
 * the function.  Never call the runtime with kp_mu held: it may call back
 * into hip* names that are ours.
 */
#ifndef KFDPOOL_RT_RUNTIME_H
#define KFDPOOL_RT_RUNTIME_H

#ifndef KFDPOOL_HIP_OWN_TYPES
#define KFDPOOL_HIP_OWN_TYPES
#endif
#include "rt/types.h"

/*
 * The hip* names this library defines.  The mempool and error functions
 * are kfdpool's for its own objects; the stream and event functions are
 * interposed only to follow stream order (hip_stream.c) and always
 * forwarded.  KP_HIP_EXPORTS_NEW: names that runtimes older than their
 * version lack (Debian's 5.2 among them); symbols-check accepts their
 * absence from the installed runtime.
 */
#define KP_HIP_EXPORTS_OLD(X) \
	X(hipFree, "hip_4.2") \
	X(hipEventDestroy, "hip_4.2") \
	X(hipEventRecord, "hip_4.2") \
	X(hipGetErrorName, "hip_4.2") \
	X(hipGetErrorString, "hip_4.2") \
	X(hipStreamDestroy, "hip_4.2") \
	X(hipStreamWaitEvent, "hip_4.2") \
	X(hipFreeAsync, "hip_5.1") \
	X(hipMallocFromPoolAsync, "hip_5.1") \
	X(hipMemPoolCreate, "hip_5.1") \
	X(hipMemPoolDestroy, "hip_5.1") \
	X(hipMemPoolExportPointer, "hip_5.1") \
	X(hipMemPoolExportToShareableHandle, "hip_5.1") \
	X(hipMemPoolGetAccess, "hip_5.1") \
	X(hipMemPoolGetAttribute, "hip_5.1") \
	X(hipMemPoolImportFromShareableHandle, "hip_5.1") \
	X(hipMemPoolImportPointer, "hip_5.1") \
	X(hipMemPoolSetAccess, "hip_5.1") \
	X(hipMemPoolSetAttribute, "hip_5.1") \
	X(hipMemPoolTrimTo, "hip_5.1") \
	X(hipStreamWaitEvent_spt, "hip_5.2")

#define KP_HIP_EXPORTS_NEW(X) \
	X(hipEventRecord_spt, "hip_5.2") \
	X(hipGetProcAddress, "hip_6.1")

#define KP_HIP_EXPORTS(X) KP_HIP_EXPORTS_OLD(X) KP_HIP_EXPORTS_NEW(X)

/* Runtime functions kfdpool calls but does not define. */
#define KP_RT_ONLY(X) \
	X(hipDeviceGetByPCIBusId, "hip_4.2") \
	X(hipDeviceGetPCIBusId, "hip_4.2") \
	X(hipDeviceSynchronize, "hip_4.2") \
	X(hipEventCreateWithFlags, "hip_4.2") \
	X(hipEventQuery, "hip_4.2") \
	X(hipEventSynchronize, "hip_4.2") \
	X(hipExtMallocWithFlags, "hip_4.2") \
	X(hipGetDevice, "hip_4.2") \
	X(hipGetDeviceCount, "hip_4.2") \
	X(hipRuntimeGetVersion, "hip_4.2") \
	X(hipSetDevice, "hip_4.2") \
	X(hipDestroyExternalMemory, "hip_4.3") \
	X(hipExternalMemoryGetMappedBuffer, "hip_4.3") \
	X(hipImportExternalMemory, "hip_4.3") \
	X(hipMemAddressFree, "hip_5.1") \
	X(hipMemAddressReserve, "hip_5.1") \
	X(hipMemCreate, "hip_5.1") \
	X(hipMemExportToShareableHandle, "hip_5.1") \
	X(hipMemGetAllocationGranularity, "hip_5.1") \
	X(hipMemMap, "hip_5.1") \
	X(hipMemRelease, "hip_5.1") \
	X(hipMemSetAccess, "hip_5.1") \
	X(hipMemUnmap, "hip_5.1")

#define KP_RT_FUNCS(X) KP_HIP_EXPORTS(X) KP_RT_ONLY(X)

/* The runtime's functions, each NULL when the runtime lacks it. */
struct kp_runtime {
	const char *path;	/* the runtime's file, for messages */
#define KP_RT_MEMBER(name, version) __typeof__(name) *name;
	KP_RT_FUNCS(KP_RT_MEMBER)
#undef KP_RT_MEMBER
};

/*
 * The HIP runtime of this process, or NULL when there is none.  Looked up
 * on first use (the next object that defines the names, RTLD_NEXT, else an
 * already loaded libamdhip64 by its soname); once found it is kept, and
 * while none is found the lookup is repeated only after the process has
 * loaded another object.  Thread-safe.
 */
const struct kp_runtime *kp_rt(void);

/*
 * The runtime stream order works with: the runtime, when it has a device
 * (one without, like Debian's 5.2 on a machine without a GPU, runs no GPU
 * work and makes no event).  NULL otherwise.  Asks the runtime once
 * (hipGetDeviceCount): not with a pool's lock held the first time.
 */
const struct kp_runtime *kp_rt_order_slow(void);

/* The runtime if one was found already: no search, one load (the
 * allocation path's check). */
extern const struct kp_runtime *kp_rt_found;
static inline const struct kp_runtime *kp_rt_cached(void)
{
	return __atomic_load_n(&kp_rt_found, __ATOMIC_ACQUIRE);
}

static inline const struct kp_runtime *kp_rt_order(void)
{
	return kp_rt_cached() ? kp_rt_order_slow() : NULL;
}

/* Lock (1) or unlock (0) the runtime lookup around fork() (hip_fork.c). */
void kp_rt_fork(int prepare);

/* Print one line on stderr, the first time only for this @once. */
void kp_say_once(int *once, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif
