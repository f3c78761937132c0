// SPDX-License-Identifier: MIT
/*
 * The program's stream and event calls that kfdpool follows: they are the
 * runtime's, forwarded unchanged, and noted after the runtime said yes.
 *
 *   hipEventRecord(_spt)      which stream an event was recorded on, when
 *                             (stream order, pool/order.h)
 *   hipStreamWaitEvent(_spt)  which stream now depends on that
 *                             (hipMemPoolReuseFollowEventDependencies)
 *   hipEventDestroy           forget the event (its address may come back)
 *   hipStreamDestroy          the pools' markers on the stream are waited
 *                             for first (clr's event keeps the stream's
 *                             address), then the stream is gone: a new
 *                             stream at the same address is another stream
 *   hipStreamSynchronize(_spt), hipEventSynchronize, hipDeviceSynchronize
 *                             the program waits: chunks and imported
 *                             mappings the pools marked are given back now,
 *                             as far as the call waited (clr's own pools
 *                             release memory there too: ReleaseFreedMemory)
 *   hipGetProcAddress         hands out this library's entry points for the
 *                             names it defines, so that a program that
 *                             looks functions up (ROCm >= 6.1) still
 *                             reaches kfdpool
 *
 * Without a runtime there are no streams or events: hipErrorInvalidHandle
 * (hipGetProcAddress: hipErrorNotSupported; hipDeviceSynchronize:
 * hipErrorNoDevice).
 */
#include <string.h>

#include "hip_internal.h"

static hipError_t record(hipEvent_t e, hipStream_t s, int spt)
{
	const struct kp_runtime *rt = kp_rt();
	__typeof__(hipEventRecord) *fn = rt ? (spt ? rt->hipEventRecord_spt :
						     rt->hipEventRecord) : NULL;
	struct kp_skey k;
	hipError_t err;

	if (!fn)
		return kp_rt_ret(rt ? hipErrorNotSupported :
				 hipErrorInvalidHandle);
	err = fn(e, s);
	if (!err && !kp_stream_key(rt, s, spt, &k))
		kp_stream_recorded(e, &k);
	/* (Asking for the device rewrote the runtime's last error.) */
	return kp_rt_ret(err);
}

KFDPOOL_EXPORT hipError_t hipEventRecord(hipEvent_t event, hipStream_t stream)
{
	return record(event, stream, 0);
}

KFDPOOL_EXPORT hipError_t hipEventRecord_spt(hipEvent_t event,
					     hipStream_t stream)
{
	return record(event, stream, 1);
}

static hipError_t wait_event(hipStream_t s, hipEvent_t e, unsigned int flags,
			     int spt)
{
	const struct kp_runtime *rt = kp_rt();
	__typeof__(hipStreamWaitEvent) *fn = rt ? (spt ?
		rt->hipStreamWaitEvent_spt : rt->hipStreamWaitEvent) : NULL;
	struct kp_skey k;
	hipError_t err;

	if (!fn)
		return kp_rt_ret(rt ? hipErrorNotSupported :
				 hipErrorInvalidHandle);
	err = fn(s, e, flags);
	if (!err && !kp_stream_key(rt, s, spt, &k))
		kp_stream_waited(&k, e);
	return kp_rt_ret(err);
}

KFDPOOL_EXPORT hipError_t hipStreamWaitEvent(hipStream_t stream,
					     hipEvent_t event,
					     unsigned int flags)
{
	return wait_event(stream, event, flags, 0);
}

KFDPOOL_EXPORT hipError_t hipStreamWaitEvent_spt(hipStream_t stream,
						 hipEvent_t event,
						 unsigned int flags)
{
	return wait_event(stream, event, flags, 1);
}

KFDPOOL_EXPORT hipError_t hipEventDestroy(hipEvent_t event)
{
	const struct kp_runtime *rt = kp_rt();
	hipError_t err;

	if (!rt || !rt->hipEventDestroy)
		return kp_rt_ret(hipErrorInvalidHandle);
	kp_rt_passed();
	err = rt->hipEventDestroy(event);
	if (!err)
		kp_event_destroyed(event);
	return err;
}

KFDPOOL_EXPORT hipError_t hipStreamDestroy(hipStream_t stream)
{
	const struct kp_runtime *rt = kp_rt();
	hipError_t err;

	if (!rt || !rt->hipStreamDestroy)
		return kp_rt_ret(hipErrorInvalidHandle);
	kp_stream_destroying(stream);
	kp_rt_passed();
	err = rt->hipStreamDestroy(stream);
	if (!err)
		kp_stream_destroyed(stream);
	return err;
}

/*
 * After a synchronising call of the program's: what the pools marked goes
 * back as far as the call allows (pool/pool.h): after a stream's or an
 * event's, only what the runtime gives back without waiting for a stream
 * (the program waited for one stream, never for the device's others);
 * after the device's (@dev, -1 when it failed), also what the runtime gives
 * back by waiting for that device's streams, which are idle now.  Without
 * a runtime, or one without a device, these calls answer with an error
 * (there are no streams) and still give back what the pools hold above
 * their thresholds: nothing of it waits.  The last error is the call's own
 * again.
 */
static hipError_t synced(hipError_t err, int dev)
{
	kp_rt_passed();
	kp_pools_settle(dev >= 0 ? KP_REL_DEV : KP_REL_NOWAIT, dev);
	return kp_rt_ret(err);
}

static hipError_t stream_sync(hipStream_t stream, int spt)
{
	const struct kp_runtime *rt = kp_rt();
	__typeof__(hipStreamSynchronize) *fn = rt ? (spt ?
		rt->hipStreamSynchronize_spt : rt->hipStreamSynchronize) : NULL;

	if (!fn)
		return synced(rt ? hipErrorNotSupported :
			      hipErrorInvalidHandle, -1);
	return synced(fn(stream), -1);
}

KFDPOOL_EXPORT hipError_t hipStreamSynchronize(hipStream_t stream)
{
	return stream_sync(stream, 0);
}

KFDPOOL_EXPORT hipError_t hipStreamSynchronize_spt(hipStream_t stream)
{
	return stream_sync(stream, 1);
}

KFDPOOL_EXPORT hipError_t hipEventSynchronize(hipEvent_t event)
{
	const struct kp_runtime *rt = kp_rt();

	if (!rt || !rt->hipEventSynchronize)
		return synced(hipErrorInvalidHandle, -1);
	return synced(rt->hipEventSynchronize(event), -1);
}

KFDPOOL_EXPORT hipError_t hipDeviceSynchronize(void)
{
	const struct kp_runtime *rt = kp_rt();
	hipError_t err;
	int dev = -1;

	if (!rt || !rt->hipDeviceSynchronize)
		return synced(hipErrorNoDevice, -1);
	err = rt->hipDeviceSynchronize();
	/* The device it waited for: the calling thread's. */
	if (!err && (!rt->hipGetDevice || rt->hipGetDevice(&dev)))
		dev = -1;
	return synced(err, err ? -1 : dev);
}

/*
 * The runtime's answer, except that a function this library defines is
 * replaced by ours: the runtime hands out its own, which would bypass
 * kfdpool for its pools and pointers and break stream order.  Which
 * variant the runtime chose (per-thread default stream or not) is kept:
 * the replacement is ours for exactly the function it returned.
 */
KFDPOOL_EXPORT hipError_t hipGetProcAddress(const char *symbol, void **pfn,
					    int hip_version, uint64_t flags,
					    hipDriverProcAddressQueryResult *st)
{
	const struct kp_runtime *rt = kp_rt();
	hipError_t err;

	if (!rt || !rt->hipGetProcAddress)
		return kp_rt_ret(hipErrorNotSupported);
	kp_rt_passed();
	err = rt->hipGetProcAddress(symbol, pfn, hip_version, flags, st);
	if (err || !pfn || !*pfn)
		return err;
#define KP_MINE(name, version) \
	if (*pfn == (void *)rt->name) \
		*pfn = (void *)name;
	KP_HIP_EXPORTS(KP_MINE)
#undef KP_MINE
	return err;
}
