// SPDX-License-Identifier: MIT
/*
 * The program's stream and event calls that stream order follows
 * (pool/order.h): they are the runtime's, forwarded unchanged, and noted
 * after the runtime said yes.
 *
 *   hipEventRecord(_spt)      which stream an event was recorded on, when
 *   hipStreamWaitEvent(_spt)  which stream now depends on that
 *                             (hipMemPoolReuseFollowEventDependencies)
 *   hipEventDestroy           forget the event (its address may come back)
 *   hipStreamDestroy          the stream is gone: a new stream at the same
 *                             address is another stream
 *   hipGetProcAddress         hands out this library's entry points for the
 *                             names it defines, so that a program that
 *                             looks functions up (ROCm >= 6.1) still
 *                             reaches kfdpool
 *
 * Without a runtime there are no streams or events: hipErrorInvalidHandle
 * (hipGetProcAddress: hipErrorNotSupported).
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
		return rt ? hipErrorNotSupported : hipErrorInvalidHandle;
	err = fn(e, s);
	if (!err && !kp_stream_key(rt, s, spt, &k))
		kp_stream_recorded(e, &k);
	return err;
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
		return rt ? hipErrorNotSupported : hipErrorInvalidHandle;
	err = fn(s, e, flags);
	if (!err && !kp_stream_key(rt, s, spt, &k))
		kp_stream_waited(&k, e);
	return err;
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
		return hipErrorInvalidHandle;
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
		return hipErrorInvalidHandle;
	err = rt->hipStreamDestroy(stream);
	if (!err)
		kp_stream_destroyed(stream);
	return err;
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
		return hipErrorNotSupported;
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
