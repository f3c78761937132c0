// SPDX-License-Identifier: MIT
/*
 * Allocating from a pool and freeing, with the records an allocation
 * carries (see hip_pool.c for the design) revoked in batches.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hip_internal.h"

/* ---- allocation ---- */

static int chunk_new(struct ihipMemPoolHandle_t *pool, uint64_t size,
		     int dedicated, struct kp_chunk **out)
{
	struct kp_chunk *c;
	int ret;

	if (pool->max_size && pool->reserved + size > pool->max_size)
		return -ENOSPC;
	if (KP_GROW(pool->chunks, pool->capchunks, pool->nchunks + 1))
		return -ENOMEM;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->pool = pool;
	c->dedicated = dedicated;
	ret = kp_arena_init(&c->arena, size, ALLOC_ALIGN);
	if (ret)
		goto out_free;
	if (pool->be->alloc_pinned) {
		ret = pool->be->alloc_pinned(pool->fd, size, &c->mem,
					     &c->entry_id);
		if (ret)
			goto out_arena;
	} else {
		ret = pool->be->alloc(pool->dev, size, &c->mem);
		if (ret)
			goto out_arena;
		ret = kfdpool_pin(pool->fd, c->mem.dmabuf_fd,
				  (uintptr_t)c->mem.addr, NULL, &c->entry_id);
	}
	/* The pin (and the mapping) hold the dma-buf: one fd fewer per
	 * chunk. */
	close(c->mem.dmabuf_fd);
	c->mem.dmabuf_fd = -1;
	if (ret)
		goto out_mem;
	ret = kp_range_add(c->mem.addr, size, R_CHUNK, c);
	if (ret) {
		kfdpool_unpin(pool->fd, c->entry_id, NULL, NULL);
		goto out_mem;
	}
	pool->chunks[pool->nchunks++] = c;
	pool->reserved += size;
	*out = c;
	return 0;
out_mem:
	pool->be->free(&c->mem);
out_arena:
	kp_arena_fini(&c->arena);
out_free:
	free(c);
	return ret;
}

int kp_alloc_add_record(struct kp_alloc *a, uint64_t off,
			    const struct kfdpool_record *rec)
{
	if (kp_grow32((void **)&a->rec, &a->caprec, a->nrec + 1, sizeof(*a->rec)))
		return -ENOMEM;
	/* rec_off grows with rec: same capacity. */
	{
		uint64_t *p = realloc(a->rec_off, a->caprec * sizeof(*p));

		if (!p)
			return -ENOMEM;
		a->rec_off = p;
	}
	a->rec[a->nrec] = *rec;
	a->rec_off[a->nrec] = off;
	a->nrec++;
	return 0;
}

static void alloc_destroy(struct kp_alloc *a)
{
	free(a->rec);
	free(a->rec_off);
	free(a);
}

static int pool_alloc(struct ihipMemPoolHandle_t *pool, uint64_t size,
		      void **ptr)
{
	struct kp_chunk *c = NULL;
	struct kfdpool_record rec;
	struct kp_alloc *a;
	uint64_t off, csize;
	size_t i;
	int ret;

	if (size > UINT64_MAX - PAGE)
		return -ENOMEM;
	size = (size + ALLOC_ALIGN - 1) & ~(uint64_t)(ALLOC_ALIGN - 1);
	a = calloc(1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	if (size > pool->granularity) {
		ret = chunk_new(pool, (size + PAGE - 1) & ~(PAGE - 1), 1, &c);
		if (ret)
			goto out_free;
		ret = kp_arena_alloc(&c->arena, size, &off);
	} else {
		ret = -ENOMEM;
		for (i = 0; i < pool->nchunks && ret; i++) {
			if (pool->chunks[i]->dedicated)
				continue;
			ret = kp_arena_alloc(&pool->chunks[i]->arena, size, &off);
			if (!ret)
				c = pool->chunks[i];
		}
		if (ret) {
			csize = pool->granularity;
			/* Near maxSize, a smaller chunk may still fit. */
			if (pool->max_size &&
			    pool->max_size - pool->reserved < csize)
				csize = (pool->max_size - pool->reserved) &
					~(PAGE - 1);
			if (csize < size) {
				ret = -ENOSPC;
				goto out_free;
			}
			ret = chunk_new(pool, csize, 0, &c);
			if (ret)
				goto out_free;
			ret = kp_arena_alloc(&c->arena, size, &off);
		}
	}
	if (ret)
		goto out_trim;
	a->chunk = c;
	a->off = off;
	a->size = size;
	kp_arena_set_priv(&c->arena, off, a);
	if (pool->handle_types) {
		ret = kfdpool_export(pool->fd, c->entry_id, off, size, &rec);
		if (!ret) {
			ret = kp_alloc_add_record(a, off, &rec);
			if (ret)	/* nobody will know the record */
				kfdpool_revoke(pool->fd, &rec);
		}
		if (ret) {
			kp_arena_free(&c->arena, off, NULL);
			goto out_trim;
		}
	}
	pool->used += size;
	if (pool->used > pool->used_high)
		pool->used_high = pool->used;
	*ptr = (char *)c->mem.addr + off;
	return 0;
out_trim:
	kp_pool_trim(pool, pool->threshold);
out_free:
	free(a->rec);
	free(a->rec_off);
	free(a);
	return ret;
}

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
	ret = pool_alloc(pool, size, dev_ptr);
	pthread_mutex_unlock(&kp_mu);
	return ret == -ENOSPC || ret == -EDQUOT ? hipErrorOutOfMemory :
	       kfdpoolErrnoToHip(ret);
}

/* ---- freeing, batched ---- */

/* Pending revokes or releases of one pool fd, flushed as one batch. */
struct pending {
	int fd;
	size_t n, cap;
	struct kfdpool_revoke *rev;
	size_t nrel, caprel;
	struct kfdpool_release *rel;
};

static void pending_flush(struct pending *pd)
{
	if (pd->n)
		kfdpool_revokev(pd->fd, pd->rev, pd->n);
	if (pd->nrel)
		kfdpool_releasev(pd->fd, pd->rel, pd->nrel);
	pd->n = pd->nrel = 0;
}

static int pending_fd(struct pending *pd, int fd)
{
	if (pd->fd != fd) {
		pending_flush(pd);
		pd->fd = fd;
	}
	return 0;
}

static void free_ientry(struct kp_ientry *ie)
{
	struct ihipMemPoolHandle_t *pool = ie->pool;
	size_t i;

	kp_range_del(ie->mem.addr);
	if (pool->be)
		pool->be->unmap_import(&ie->mem);
	else
		kp_host_unmap_import(&ie->mem);
	for (i = 0; i < pool->nients; i++) {
		if (pool->ients[i] == ie) {
			memmove(&pool->ients[i], &pool->ients[i + 1],
				(pool->nients - i - 1) * sizeof(*pool->ients));
			pool->nients--;
			break;
		}
	}
	free(ie->ptrs);
	free(ie);
}

/*
 * Free @n pointers.  Pass 1 finds each pointer's allocation or import and
 * queues its revokes (owner) or its chunk's release (importer, last
 * pointer); pass 2 sends them a batch per pool fd; pass 3 gives the memory
 * back.  Called with kp_mu held.
 */
static hipError_t free_many(void *const *ptrs, size_t n, hipError_t *res,
			    int null_ok)
{
	struct pending pd = { .fd = -1 };
	void **done = NULL;	/* kp_alloc or kp_ientry, by index */
	int *kind = NULL;
	hipError_t first = hipSuccess;
	size_t i, j;

	done = calloc(n ? n : 1, sizeof(*done));
	kind = calloc(n ? n : 1, sizeof(*kind));
	if (!done || !kind) {
		free(done);
		free(kind);
		return hipErrorOutOfMemory;
	}
	for (i = 0; i < n; i++) {
		hipError_t e = hipSuccess;
		struct range *r;

		if (!ptrs[i]) {
			e = null_ok ? hipSuccess : hipErrorInvalidValue;
			goto next;
		}
		r = kp_range_find(ptrs[i]);
		if (!r) {
			e = hipErrorInvalidValue;
		} else if (r->kind == R_CHUNK) {
			struct kp_chunk *c = r->obj;
			uint64_t off = (uintptr_t)ptrs[i] - r->start, st, sz;
			struct kp_alloc *a;

			if (kp_arena_find(&c->arena, off, &st, &sz,
					  (void **)&a) || st != off ||
			    a->dying) {
				e = hipErrorInvalidValue;
				goto next;
			}
			a->dying = 1;
			done[i] = a;
			kind[i] = R_CHUNK;
			pending_fd(&pd, c->pool->fd);
			for (j = 0; j < a->nrec; j++) {
				if (KP_GROW(pd.rev, pd.cap, pd.n + 1)) {
					/* Unpin at chunk release revokes
					 * what we cannot queue. */
					break;
				}
				memset(&pd.rev[pd.n], 0, sizeof(*pd.rev));
				pd.rev[pd.n++].record = a->rec[j];
			}
		} else {
			struct kp_ientry *ie = r->obj;

			for (j = 0; j < ie->nptrs; j++)
				if (ie->ptrs[j].ptr == ptrs[i] &&
				    ie->ptrs[j].refs)
					break;
			if (j == ie->nptrs) {
				e = hipErrorInvalidValue;
				goto next;
			}
			ie->ptrs[j].refs--;
			if (--ie->refs == 0) {
				done[i] = ie;
				kind[i] = R_IMPORT;
				pending_fd(&pd, ie->pool->fd);
				if (!KP_GROW(pd.rel, pd.caprel, pd.nrel + 1)) {
					memset(&pd.rel[pd.nrel], 0,
					       sizeof(*pd.rel));
					pd.rel[pd.nrel++].entry_id =
						ie->entry_id;
				}
			}
		}
next:
		if (res)
			res[i] = e;
		if (e && !first)
			first = e;
	}
	pending_flush(&pd);

	for (i = 0; i < n; i++) {
		if (kind[i] == R_CHUNK) {
			struct kp_alloc *a = done[i];
			struct ihipMemPoolHandle_t *pool = a->chunk->pool;

			kp_arena_free(&a->chunk->arena, a->off, NULL);
			pool->used -= a->size;
			alloc_destroy(a);
			kp_pool_trim(pool, pool->destroyed ? 0 : pool->threshold);
			kp_pool_maybe_finalize(pool);
		} else if (kind[i] == R_IMPORT) {
			struct kp_ientry *ie = done[i];
			struct ihipMemPoolHandle_t *pool = ie->pool;

			free_ientry(ie);
			kp_pool_maybe_finalize(pool);
		}
	}
	free(pd.rev);
	free(pd.rel);
	free(done);
	free(kind);
	return first;
}

KFDPOOL_EXPORT hipError_t hipFree(void *ptr)
{
	hipError_t e;

	if (!ptr)
		return hipSuccess;
	pthread_mutex_lock(&kp_mu);
	e = free_many(&ptr, 1, NULL, 1);
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
	e = free_many(&dev_ptr, 1, NULL, 0);
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
	e = free_many(ptrs, count, results, 1);
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

