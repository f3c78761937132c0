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
 * interposed to follow stream order and to give chunks back where the
 * program waits anyway (hip_stream.c), the last-error functions to answer
 * for kfdpool's calls, hipDeviceSetMemPool and hipMemSetMemPool to keep
 * kfdpool's pools from the runtime; all of them forward everything else.
 * KP_HIP_EXPORTS_NEW: names that runtimes older than their version lack
 * (Debian's 5.2 among them); symbols-check accepts their absence from the
 * installed runtime.
 */
#define KP_HIP_EXPORTS_OLD(X) \
	X(hipFree, "hip_4.2") \
	X(hipDeviceSynchronize, "hip_4.2") \
	X(hipEventDestroy, "hip_4.2") \
	X(hipEventRecord, "hip_4.2") \
	X(hipEventSynchronize, "hip_4.2") \
	X(hipGetErrorName, "hip_4.2") \
	X(hipGetErrorString, "hip_4.2") \
	X(hipGetLastError, "hip_4.2") \
	X(hipPeekAtLastError, "hip_4.2") \
	X(hipStreamDestroy, "hip_4.2") \
	X(hipStreamSynchronize, "hip_4.2") \
	X(hipStreamWaitEvent, "hip_4.2") \
	X(hipDeviceSetMemPool, "hip_5.1") \
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
	X(hipStreamSynchronize_spt, "hip_5.2") \
	X(hipStreamWaitEvent_spt, "hip_5.2")

#define KP_HIP_EXPORTS_NEW(X) \
	X(hipEventRecord_spt, "hip_5.2") \
	X(hipExtGetLastError, "hip_6.0") \
	X(hipGetProcAddress, "hip_6.1") \
	X(hipMemSetMemPool, "hip_7.2")

#define KP_HIP_EXPORTS(X) KP_HIP_EXPORTS_OLD(X) KP_HIP_EXPORTS_NEW(X)

/* Runtime functions kfdpool calls but does not define (_NEW: ones that
 * runtimes older than their version lack). */
#define KP_RT_ONLY_OLD(X) \
	X(hipDeviceGetAttribute, "hip_4.2") \
	X(hipDeviceGetByPCIBusId, "hip_4.2") \
	X(hipDeviceGetPCIBusId, "hip_4.2") \
	X(hipEventCreateWithFlags, "hip_4.2") \
	X(hipEventQuery, "hip_4.2") \
	X(hipExtMallocWithFlags, "hip_4.2") \
	X(hipGetDevice, "hip_4.2") \
	X(hipGetDeviceCount, "hip_4.2") \
	X(hipHostRegister, "hip_4.2") \
	X(hipHostUnregister, "hip_4.2") \
	X(hipRuntimeGetVersion, "hip_4.2") \
	X(hipSetDevice, "hip_4.2") \
	X(hipDestroyExternalMemory, "hip_4.3") \
	X(hipExternalMemoryGetMappedBuffer, "hip_4.3") \
	X(hipImportExternalMemory, "hip_4.3") \
	X(hipStreamIsCapturing, "hip_4.3") \
	X(hipThreadExchangeStreamCaptureMode, "hip_5.0") \
	X(hipMemAddressFree, "hip_5.1") \
	X(hipMemAddressReserve, "hip_5.1") \
	X(hipMemCreate, "hip_5.1") \
	X(hipMemExportToShareableHandle, "hip_5.1") \
	X(hipMemGetAllocationGranularity, "hip_5.1") \
	X(hipMemImportFromShareableHandle, "hip_5.1") \
	X(hipMemMap, "hip_5.1") \
	X(hipMemRelease, "hip_5.1") \
	X(hipMemSetAccess, "hip_5.1") \
	X(hipMemUnmap, "hip_5.1")

#define KP_RT_ONLY_NEW(X) \
	X(hipStreamGetDevice, "hip_4.2")

#define KP_RT_ONLY(X) KP_RT_ONLY_OLD(X) KP_RT_ONLY_NEW(X)

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

/* HIP_VERSION of the runtime (hipRuntimeGetVersion, asked once), or 0. */
int kp_rt_version(const struct kp_runtime *rt);

/*
 * Make device @dev current for the runtime calls that follow (device
 * selection is per thread), *@prev getting the one to put back with
 * kp_rt_dev_leave.  The runtime's error, unchanged.
 */
hipError_t kp_rt_dev_enter(const struct kp_runtime *rt, int dev, int *prev);
void kp_rt_dev_leave(const struct kp_runtime *rt, int dev, int prev);

/*
 * Set the calling thread's stream capture mode to relaxed around a runtime
 * call that clr refuses while a capture is under way, invalidating that
 * capture (CHECK_STREAM_CAPTURE_SUPPORTED: hipFree, hipHostRegister,
 * hipHostUnregister): kfdpool's own use of them is no work of the
 * captured streams.  Returns the mode to put back, or -1.
 */
int kp_rt_relax(const struct kp_runtime *rt);
void kp_rt_unrelax(const struct kp_runtime *rt, int mode);

/* ROCr's functions (libhsa-runtime64.so.1, loaded with the runtime): each
 * NULL when ROCr is not loaded or lacks it. */
struct kp_hsa {
	kp_hsa_export_dmabuf_fn export_dmabuf;	/* ROCr >= 5.6 */
	kp_hsa_close_dmabuf_fn close_dmabuf;
	kp_hsa_system_get_info_fn system_get_info;
	kp_hsa_pointer_info_fn pointer_info;
};
const struct kp_hsa *kp_hsa(void);

/*
 * A runtime error carried up through the layers below the HIP face, which
 * return 0 or -errno: -(KP_EHIP + error), turned back into the same
 * hipError_t at the face (kp_hip_of in hip_internal.h), never flattened.
 */
#define KP_EHIP 0x100000
static inline int kp_hip_errno(hipError_t e)
{
	return e == hipSuccess ? 0 : -(KP_EHIP + (int)e);
}

/*
 * The thread's last error, as the loaded runtime keeps it.  Up to HIP 6.4
 * clr's HIP_RETURN stores every call's result in it (hip_internal.hpp);
 * from HIP 7.0 (HIP_UPDATE_ERROR_STATE, ROCm/rocm-systems
 * projects/clr/hipamd/src/hip_internal.hpp) every result goes to the last
 * command's error (hipExtGetLastError's), and the last error
 * (hipGetLastError's, hipPeekAtLastError's) changes only on an error
 * other than hipErrorNotReady: a success leaves an earlier error there.
 * kfdpool's own calls leave both what clr would after the same call: their
 * own result, never that of a runtime call they made on the way.  Where
 * the runtime can be told the result it is (a success: hipGetLastError
 * resets the last error before 7.0, a succeeding call sets the last
 * command from 7.0; hipErrorInvalidValue: hipRuntimeGetVersion(NULL));
 * any other error is kept here, the runtime holding hipErrorInvalidValue
 * for it, and kfdpool's hipGetLastError, hipPeekAtLastError and
 * hipExtGetLastError answer it while the runtime still holds that.
 * Without a runtime the last error is kept here alone (every call's).
 */
struct kp_last {
	hipError_t err;		/* the last error kfdpool left */
	hipError_t cmd;		/* from 7.0: kfdpool's last command's result */
	int pending;		/* the runtime holds the stand-in for err */
	int cmd_pending;	/* ... for cmd, from 7.0 */
	int forwarded;		/* the call was the runtime's: leave it */
};
extern __thread struct kp_last kp_last
	__attribute__((tls_model("initial-exec")));
/* 1 when the runtime's last error is HIP 7.0's (asked once), else 0 or
 * -1 (not asked yet). */
extern int kp_rt_errstate7;
hipError_t kp_rt_ret_slow(hipError_t e);
static inline hipError_t kp_rt_ret(hipError_t e)
{
	if (kp_last.forwarded) {
		kp_last.forwarded = 0;
		return e;
	}
	if (!kp_rt_cached()) {
		kp_last.err = e;
		kp_last.pending = 0;
		return e;
	}
	return kp_rt_ret_slow(e);
}

/* A call that was forwarded: the runtime wrote its own answer (from 7.0
 * a success of its own leaves the last error, and with it kfdpool's,
 * where it was).  After kp_rt_forwarded, the next kp_rt_ret leaves it
 * alone (an entry point's wrapper); kp_rt_passed is for a call returned
 * straight away. */
static inline void kp_rt_passed(void)
{
	kp_last.cmd_pending = 0;
	if (__atomic_load_n(&kp_rt_errstate7, __ATOMIC_RELAXED) != 1)
		kp_last.pending = 0;
}

static inline void kp_rt_forwarded(void)
{
	kp_last.forwarded = 1;
	kp_rt_passed();
}
/* The last error, and reset it (@reset) as hipGetLastError does. */
hipError_t kp_rt_last_error(int reset, int ext);

/* Lock (1) or unlock (0) the runtime lookup around fork() (hip_fork.c). */
void kp_rt_fork(int prepare);

/* Print one line on stderr, the first time only for this @once. */
void kp_say_once(int *once, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif
