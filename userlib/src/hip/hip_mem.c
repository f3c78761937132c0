// SPDX-License-Identifier: MIT
/*
 * Allocating from a pool and freeing, in stream order (pool/order.h): the
 * HIP entry points over pool/mem.c.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include "hip_internal.h"

KFDPOOL_EXPORT hipError_t hipMallocFromPoolAsync(void **dev_ptr, size_t size,
						 hipMemPool_t mem_pool,
						 hipStream_t stream)
{
	const struct kp_runtime *rt;
	struct ihipMemPoolHandle_t *pool;
	struct kp_skey key;
	int ret, ours;

	/* Without a runtime (or without a device) there is no GPU work: no
	 * stream to follow.  A stream handle means a runtime made it: look
	 * for it once more. */
	if (!kp_rt_cached() && stream)
		kp_rt();
	rt = kp_rt_order();
	if (rt && kp_pool_ours(mem_pool) && dev_ptr && size) {
		hipError_t e = kp_stream_key(rt, stream, 0, &key);

		if (e)
			return e;
	}
	pool = kp_pool_lock_ours(mem_pool, &ours);
	if (!ours)
		KP_FORWARD(hipMallocFromPoolAsync,
			   (dev_ptr, size, mem_pool, stream));
	if (!pool)
		return hipErrorInvalidValue;
	if (!dev_ptr || !size || pool->imported) {
		kp_pool_unlock(pool);
		return hipErrorInvalidValue;
	}
	ret = kp_pool_alloc(pool, size, rt ? &key : NULL, stream, dev_ptr);
	kp_pool_put(pool);
	if (!ret)
		return hipSuccess;
	return ret == -ENOSPC || ret == -EDQUOT ? hipErrorOutOfMemory :
	       kfdpoolErrnoToHip(ret);
}

/*
 * hipFree waits for the device first (as clr does), then frees at once;
 * hipFreeAsync records a marker on the stream and the block waits for it
 * (pool/order.h).  Any other pointer is the runtime's.
 */
KFDPOOL_EXPORT hipError_t hipFree(void *ptr)
{
	hipError_t e = ptr ? kp_free(ptr, KP_SYNC) : KP_NOT_OURS;

	if (e != KP_NOT_OURS)
		return e;
	KP_FORWARD(hipFree, (ptr));
	return ptr ? hipErrorInvalidValue : hipSuccess;
}

KFDPOOL_EXPORT hipError_t hipFreeAsync(void *dev_ptr, hipStream_t stream)
{
	hipError_t e = dev_ptr ? kp_free(dev_ptr, stream) : KP_NOT_OURS;

	if (e != KP_NOT_OURS)
		return e;
	KP_FORWARD(hipFreeAsync, (dev_ptr, stream));
	return hipErrorInvalidValue;
}

/* hipFree for many: kfdpool's pointers in batches, any other one by the
 * runtime's hipFree. */
KFDPOOL_EXPORT hipError_t kfdpoolFreePointers(void *const *ptrs, size_t count,
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

/* Waits for the frees in the chunks it gives back (hipMemPoolTrimTo
 * synchronises first). */
KFDPOOL_EXPORT hipError_t hipMemPoolTrimTo(hipMemPool_t mem_pool,
					   size_t min_bytes_to_hold)
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
