// SPDX-License-Identifier: MIT
/*
 * Allocating from a pool and freeing, in stream order (pool/order.h): the
 * HIP entry points over pool/mem.c.
 *
 * hipMallocFromPoolAsync and hipFreeAsync never wait for the device: a
 * chunk they need comes from calls that wait for no stream, and chunks
 * and imported mappings they would give back wait for a synchronising
 * call (pool/pool.h), with or without a runtime.  With a runtime that has a device,
 * their stream is the runtime's to judge first, as clr does: an invalid
 * one is refused, and so is one that captures (kfdpool's markers cannot
 * be part of a graph), the program's capture left as it was.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include "hip_internal.h"

hipError_t kp_stream_usable(const struct kp_runtime *rt, hipStream_t s,
			    int capture)
{
	hipStreamCaptureStatus st = hipStreamCaptureStatusNone;
	hipError_t e;

	if (!rt->hipStreamIsCapturing)
		return hipSuccess;
	e = rt->hipStreamIsCapturing(s, &st);
	if (e == hipErrorContextIsDestroyed)	/* clr's isValid said no */
		return kp_rt_version(rt) >= 60200000 ? hipErrorInvalidHandle :
		       hipErrorInvalidValue;
	if (!capture)
		return e == hipErrorStreamCaptureImplicit ? hipSuccess : e;
	if (e)		/* hipErrorStreamCaptureImplicit: the null stream */
		return e;
	if (st == hipStreamCaptureStatusActive)
		return hipErrorStreamCaptureUnsupported;
	if (st == hipStreamCaptureStatusInvalidated)
		return hipErrorStreamCaptureInvalidated;
	return hipSuccess;
}

static hipError_t malloc_from_pool(void **dev_ptr, size_t size,
				   hipMemPool_t mem_pool, hipStream_t stream)
{
	const struct kp_runtime *rt;
	struct ihipMemPoolHandle_t *pool;
	struct kp_skey key;
	hipError_t e;
	int ret, ours;

	/* Without a runtime (or without a device) there is no GPU work: no
	 * stream to follow.  A stream handle means a runtime made it: look
	 * for it once more. */
	if (!kp_rt_cached() && stream)
		kp_rt();
	rt = kp_rt_order();
	/* The runtime judges the stream first, as clr does (unlocked). */
	if (rt && kp_pool_ours(mem_pool) && dev_ptr) {
		e = kp_stream_usable(rt, stream, size != 0);
		if (!e && size)
			e = kp_stream_key(rt, stream, 0, &key);
		if (e)
			return e;
	}
	pool = kp_pool_lock_ours(mem_pool, &ours);
	if (!ours) {
		KP_FORWARD(hipMallocFromPoolAsync,
			   (dev_ptr, size, mem_pool, stream));
		return hipErrorInvalidValue;
	}
	if (!pool)
		return hipErrorInvalidValue;
	if (!dev_ptr || pool->imported) {
		kp_pool_unlock(pool);
		return hipErrorInvalidValue;
	}
	/* clr: no memory, and success. */
	if (!size) {
		kp_pool_unlock(pool);
		*dev_ptr = NULL;
		return hipSuccess;
	}
	ret = kp_pool_alloc(pool, size, rt ? &key : NULL, stream, dev_ptr);
	kp_pool_put(pool);
	if (!ret)
		return hipSuccess;
	/* Only a persistent pool's bytes are bound per user. */
	if (ret == -EDQUOT)
		kp_say_quota(KP_QUOTA_BYTES, size);
	return ret == -ENOSPC || ret == -EDQUOT ? hipErrorOutOfMemory :
	       kp_hip_of(ret);
}

KFDPOOL_EXPORT hipError_t hipMallocFromPoolAsync(void **dev_ptr, size_t size,
						 hipMemPool_t mem_pool,
						 hipStream_t stream)
{
	return kp_rt_ret(malloc_from_pool(dev_ptr, size, mem_pool, stream));
}

/*
 * hipFree waits for the device first (as clr does), then frees at once;
 * hipFreeAsync records a marker on the stream and the block waits for it
 * (pool/order.h).  Any other pointer is the runtime's.
 */
static hipError_t free_sync(void *ptr)
{
	hipError_t e = ptr ? kp_free(ptr, KP_SYNC) : KP_NOT_OURS;

	if (e != KP_NOT_OURS)
		return e;
	KP_FORWARD(hipFree, (ptr));
	return ptr ? hipErrorInvalidValue : hipSuccess;
}

KFDPOOL_EXPORT hipError_t hipFree(void *ptr)
{
	/* A synchronising call: what waited goes back (narrowed to the
	 * device it waits for, where there is one). */
	struct kp_rel prev = kp_rel_enter(KP_REL_ALL, -1);
	hipError_t e = free_sync(ptr);

	kp_rel_leave(prev);
	return kp_rt_ret(e);
}

static hipError_t free_async(void *dev_ptr, hipStream_t stream)
{
	const struct kp_runtime *rt;
	hipError_t e;

	/* NULL: the runtime's answer where there is one (clr 5.6 to 6.2
	 * says hipErrorInvalidValue, the newest hipSuccess), else the
	 * newest's. */
	if (!dev_ptr) {
		KP_FORWARD(hipFreeAsync, (dev_ptr, stream));
		return hipSuccess;
	}
	if (!kp_rt_cached() && stream)
		kp_rt();
	rt = kp_rt_order();
	if (rt && kp_addr_find(dev_ptr)) {
		e = kp_stream_usable(rt, stream, 1);
		if (e)
			return e;
	}
	e = kp_free(dev_ptr, stream);
	if (e != KP_NOT_OURS)
		return e;
	KP_FORWARD(hipFreeAsync, (dev_ptr, stream));
	return hipErrorInvalidValue;
}

KFDPOOL_EXPORT hipError_t hipFreeAsync(void *dev_ptr, hipStream_t stream)
{
	return kp_rt_ret(free_async(dev_ptr, stream));
}

/* hipFree for many: kfdpool's pointers in batches, any other one by the
 * runtime's hipFree. */
static hipError_t free_pointers(void *const *ptrs, size_t count,
				hipError_t *results)
{
	hipError_t first = hipSuccess, *res = results;
	const struct kp_runtime *rt = NULL;
	size_t i;

	if (!ptrs && count)
		return hipErrorInvalidValue;
	if (!count)
		return hipSuccess;
	if (!res) {
		res = malloc(count * sizeof(*res));
		if (!res)
			return hipErrorOutOfMemory;
	}
	for (i = 0; i < count; i++)
		res[i] = KP_NOT_OURS;
	kp_free_many(ptrs, count, res, 1, KP_SYNC);
	for (i = 0; i < count; i++) {
		if (res[i] != KP_NOT_OURS)
			continue;
		if (!rt)
			rt = kp_rt();
		res[i] = rt && rt->hipFree ? rt->hipFree(ptrs[i]) :
			 hipErrorInvalidValue;
	}
	for (i = 0; i < count && !first; i++)
		first = res[i];
	if (res != results)
		free(res);
	return first;
}

KFDPOOL_EXPORT hipError_t kfdpoolFreePointers(void *const *ptrs, size_t count,
					      hipError_t *results)
{
	struct kp_rel prev = kp_rel_enter(KP_REL_ALL, -1);
	hipError_t e = free_pointers(ptrs, count, results);

	kp_rel_leave(prev);
	return kp_rt_ret(e);
}

/* Waits for the frees in the chunks it gives back (hipMemPoolTrimTo
 * synchronises first). */
static hipError_t trim_to(hipMemPool_t mem_pool, size_t min_bytes_to_hold)
{
	struct ihipMemPoolHandle_t *pool;

	if (!kp_pool_ours(mem_pool))
		KP_FORWARD(hipMemPoolTrimTo, (mem_pool, min_bytes_to_hold));
	pool = kp_pool_lock(mem_pool);
	if (!pool)
		return hipErrorInvalidValue;
	if (!pool->imported)
		kp_pool_trim(pool, min_bytes_to_hold, 1);
	kp_pool_put(pool);
	return hipSuccess;
}

KFDPOOL_EXPORT hipError_t hipMemPoolTrimTo(hipMemPool_t mem_pool,
					   size_t min_bytes_to_hold)
{
	struct kp_rel prev = kp_rel_enter(KP_REL_ALL, -1);
	hipError_t e = trim_to(mem_pool, min_bytes_to_hold);

	kp_rel_leave(prev);
	return kp_rt_ret(e);
}
