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

KFDPOOL_EXPORT hipError_t hipFree(void *ptr)
{
	hipError_t e;

	if (!ptr)
		return hipSuccess;
	pthread_mutex_lock(&kp_mu);
	e = kp_free_many(&ptr, 1, NULL, 1);
	pthread_mutex_unlock(&kp_mu);
	return e;
}

KFDPOOL_EXPORT hipError_t hipFreeAsync(void *dev_ptr, hipStream_t stream)
{
	hipError_t e;

	(void)stream;
	if (!dev_ptr)
		return hipErrorInvalidValue;
	pthread_mutex_lock(&kp_mu);
	e = kp_free_many(&dev_ptr, 1, NULL, 0);
	pthread_mutex_unlock(&kp_mu);
	return e;
}

KFDPOOL_EXPORT hipError_t kfdpoolFreePointers(void *const *ptrs, size_t count,
					      hipError_t *results)
{
	hipError_t e;

	if (!ptrs && count)
		return hipErrorInvalidValue;
	pthread_mutex_lock(&kp_mu);
	e = kp_free_many(ptrs, count, results, 1);
	pthread_mutex_unlock(&kp_mu);
	return e;
}

KFDPOOL_EXPORT hipError_t hipMemPoolTrimTo(hipMemPool_t mem_pool,
					   size_t min_bytes_to_hold)
{
	struct ihipMemPoolHandle_t *pool;

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

