// SPDX-License-Identifier: MIT
/*
 * Allocating from a pool and freeing, with the records an allocation
 * carries (see pool/pool.c): the HIP entry points over pool/mem.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hip_internal.h"

KFDPOOL_EXPORT hipError_t hipMallocFromPoolAsync(void **dev_ptr, size_t size,
						 hipMemPool_t mem_pool,
						 hipStream_t stream)
{
	struct ihipMemPoolHandle_t *pool;
	int ret;

	if (!kp_pool_ours(mem_pool))
		KP_FORWARD(hipMallocFromPoolAsync,
			   (dev_ptr, size, mem_pool, stream));
	/* Completes before it returns: no stream order (yet). */
	(void)stream;
	if (!dev_ptr || !size)
		return hipErrorInvalidValue;
	pthread_mutex_lock(&kp_mu);
	pool = kp_pool_get(mem_pool);
	if (!pool || pool->imported) {
		pthread_mutex_unlock(&kp_mu);
		return hipErrorInvalidValue;
	}
	ret = kp_pool_alloc(pool, size, dev_ptr);
	pthread_mutex_unlock(&kp_mu);
	return ret == -ENOSPC || ret == -EDQUOT ? hipErrorOutOfMemory :
	       kfdpoolErrnoToHip(ret);
}

/*
 * Free @ptr if it is kfdpool's (an allocation of one of our pools, or a
 * pointer imported into one): 1 and the result in *e.  0 for any other
 * pointer, which is the runtime's business.
 */
static int free_if_ours(void *ptr, int null_ok, hipError_t *e)
{
	int ours;

	pthread_mutex_lock(&kp_mu);
	ours = ptr && kp_range_find(ptr);
	if (ours)
		*e = kp_free_many(&ptr, 1, NULL, null_ok);
	pthread_mutex_unlock(&kp_mu);
	return ours;
}

KFDPOOL_EXPORT hipError_t hipFree(void *ptr)
{
	hipError_t e;

	if (free_if_ours(ptr, 1, &e))
		return e;
	KP_FORWARD(hipFree, (ptr));
	return ptr ? hipErrorInvalidValue : hipSuccess;
}

KFDPOOL_EXPORT hipError_t hipFreeAsync(void *dev_ptr, hipStream_t stream)
{
	hipError_t e;

	/* Completes before it returns: the stream is not waited for. */
	if (free_if_ours(dev_ptr, 0, &e))
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
	const struct kp_runtime *rt;
	void **mine = NULL;
	size_t i, nforeign = 0;

	if (!ptrs && count)
		return hipErrorInvalidValue;
	if (count) {
		mine = malloc(count * sizeof(*mine));
		if (!res)
			res = malloc(count * sizeof(*res));
		if (!mine || !res) {
			free(mine);
			if (res != results)
				free(res);
			return hipErrorOutOfMemory;
		}
	}
	pthread_mutex_lock(&kp_mu);
	for (i = 0; i < count; i++) {
		res[i] = hipErrorOutOfMemory;	/* if kp_free_many cannot run */
		mine[i] = ptrs[i] && kp_range_find(ptrs[i]) ? ptrs[i] : NULL;
		if (ptrs[i] && !mine[i])
			nforeign++;
	}
	kp_free_many(mine, count, res, 1);
	pthread_mutex_unlock(&kp_mu);
	rt = nforeign ? kp_rt() : NULL;
	for (i = 0; nforeign && i < count; i++)
		if (ptrs[i] && !mine[i])
			res[i] = rt && rt->hipFree ? rt->hipFree(ptrs[i]) :
				 hipErrorInvalidValue;
	for (i = 0; i < count && !first; i++)
		first = res[i];
	free(mine);
	if (res != results)
		free(res);
	return first;
}

KFDPOOL_EXPORT hipError_t hipMemPoolTrimTo(hipMemPool_t mem_pool,
					   size_t min_bytes_to_hold)
{
	struct ihipMemPoolHandle_t *pool;

	if (!kp_pool_ours(mem_pool))
		KP_FORWARD(hipMemPoolTrimTo, (mem_pool, min_bytes_to_hold));
	pthread_mutex_lock(&kp_mu);
	pool = kp_pool_get(mem_pool);
	if (!pool) {
		pthread_mutex_unlock(&kp_mu);
		return hipErrorInvalidValue;
	}
	if (!pool->imported)
		kp_pool_trim(pool, min_bytes_to_hold);
	pthread_mutex_unlock(&kp_mu);
	return hipSuccess;
}
