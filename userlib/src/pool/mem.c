// SPDX-License-Identifier: MIT
/*
 * Allocating from a pool and freeing, with the records an allocation
 * carries (see pool/pool.c for the design) revoked in batches.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pool/pool.h"

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
	/*
	 * The cookie reaches every importer of the chunk (possibly of another
	 * uid): a count of this pool's chunks tells them nothing of this
	 * process's memory layout, as the chunk's address would.  Importers
	 * do not use it.
	 */
	if (pool->be->alloc_pinned) {
		ret = pool->be->alloc_pinned(pool->fd, size, ++pool->chunk_seq,
					     &c->mem, &c->entry_id);
		if (ret)
			goto out_arena;
	} else {
		ret = pool->be->alloc(pool->dev, size, &c->mem);
		if (ret)
			goto out_arena;
		ret = kfdpool_pin(pool->fd, c->mem.dmabuf_fd, ++pool->chunk_seq,
				  NULL, &c->entry_id);
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

int kp_pool_alloc(struct ihipMemPoolHandle_t *pool, uint64_t size,
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


/*
 * Free @n pointers.  Pass 1 finds each pointer's allocation or import and
 * queues its revokes (owner) or its chunk's release (importer, last
 * pointer); pass 2 sends them a batch per pool fd; pass 3 gives the memory
 * back.  Called with kp_mu held.
 */
hipError_t kp_free_many(void *const *ptrs, size_t n, hipError_t *res,
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

			kp_ientry_free(ie);
			kp_pool_maybe_finalize(pool);
		}
	}
	free(pd.rev);
	free(pd.rel);
	free(done);
	free(kind);
	return first;
}
