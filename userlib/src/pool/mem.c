// SPDX-License-Identifier: MIT
/*
 * Allocating from a pool and freeing, in stream order (pool/order.h), with
 * the records of exported allocations revoked before their memory is
 * reused (see pool/pool.c for the design).
 *
 * The steady state of a pool (a pair that finds its block in the pool and
 * gives it back) is: the pool's lock, a constant-time fit in the arena, an
 * entry in the hash of used blocks, and, with a HIP runtime, a marker
 * event recorded on the freeing stream.  No system call, no malloc, no
 * walk over chunks; a pool's lock is its own.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pool/pool.h"

#define FOLLOW_SCAN 64		/* blocks looked at for a dependency */
#define WITHIN_SCAN 16		/* blocks of a request's own class */

/* ---- chunks ---- */

/* Give back a chunk's memory that never joined the pool (unlocked). */
static void chunk_drop(struct ihipMemPoolHandle_t *pool, struct kp_chunk *c,
		       int pinned)
{
	if (pinned)
		kfdpool_unpin(pool->fd, c->entry_id, NULL, NULL);
	kp_rocr_host_unregister(&c->mem);
	pool->be->free(&c->mem);
}

/* Host memory of a process whose runtime has a device is registered with
 * it, so that its kernels and hipPointerGetAttributes know the chunk. */
static int host_register(const struct ihipMemPoolHandle_t *pool,
			 struct kp_mem *m)
{
	if (pool->props.location.type != hipMemLocationTypeHost ||
	    !kp_rt_order())
		return 0;
	return kp_rocr_host_register(m);
}

/*
 * Reserve a chunk of @size bytes (pool locked; unlocks around the backend
 * and the pin).  The new chunk is one ready block.
 */
static int chunk_new(struct ihipMemPoolHandle_t *pool, uint64_t size,
		     struct kp_chunk **out)
{
	hipMemAccessDesc peers[MAX_DEVS];
	struct kp_chunk *c;
	uint64_t cookie;
	size_t npeers = 0;
	int ret, i, pinned = !!pool->be->alloc_pinned;

	if (pool->max_size && pool->reserved + size > pool->max_size)
		return -ENOSPC;
	/* Peers the pool was opened to get the new chunk too. */
	for (i = 0; i < MAX_DEVS && pool->be == &kp_backend_rocr; i++) {
		if (i == pool->dev || !pool->access[i])
			continue;
		peers[npeers].location.type = hipMemLocationTypeDevice;
		peers[npeers].location.id = i;
		peers[npeers++].flags = pool->access[i];
	}
	/* Counted now, so that threads reserving at once respect maxSize. */
	pool->reserved += size;
	cookie = ++pool->chunk_seq;
	kp_pool_leave(pool);
	c = kp_chunk_alloc();
	if (!c)
		ret = -ENOMEM;
	else if (pinned)	/* the module allocates and pins in one call */
		ret = pool->be->alloc_pinned(pool->fd, size, cookie, &c->mem,
					     &c->entry_id);
	else if (npeers)	/* mapped so that peers can be given access */
		ret = kp_rocr_alloc_va(pool->dev, size, &c->mem);
	else
		ret = pool->be->alloc(pool->dev, size, &c->mem);
	if (!ret && c->mem.size > size) {
		/* The backend's granularity made it larger. */
		uint64_t more = c->mem.size - size;

		kp_pool_enter(pool);
		pool->reserved += more;
		size += more;
		if (pool->max_size && pool->reserved > pool->max_size)
			ret = -ENOSPC;
		kp_pool_leave(pool);
		if (ret)
			chunk_drop(pool, c, pinned);
	}
	if (!ret && npeers) {
		ret = kp_rocr_set_access(&c->mem, peers, npeers);
		if (ret)
			chunk_drop(pool, c, pinned);
	}
	if (!ret) {
		ret = host_register(pool, &c->mem);
		if (ret)
			chunk_drop(pool, c, pinned);
	}
	if (!ret && !pinned) {
		/* What is pinned is shared: the dma-buf must be the chunk,
		 * no more (its exporter's other memory), no less. */
		int64_t got = kp_dmabuf_size(c->mem.dmabuf_fd);

		if (got != (int64_t)c->mem.size) {
			ret = got < 0 ? (int)got : -EOPNOTSUPP;
			chunk_drop(pool, c, pinned);
		}
	}
	if (!ret) {
		/*
		 * The cookie reaches every importer of the chunk (possibly of
		 * another uid): a count of this pool's chunks tells them
		 * nothing of this process's memory layout, as the chunk's
		 * address would.  Importers do not use it.
		 */
		if (!pinned)
			ret = kfdpool_pin(pool->fd, c->mem.dmabuf_fd, cookie,
					  NULL, &c->entry_id);
		/* The pin (and the mapping) hold the dma-buf. */
		if (c->mem.dmabuf_fd >= 0)
			close(c->mem.dmabuf_fd);
		c->mem.dmabuf_fd = -1;
		if (ret)
			chunk_drop(pool, c, 0);
	}
	kp_pool_enter(pool);
	if (!ret) {
		ret = kp_arena_add(&pool->arena, &c->reg, size);
		if (!ret) {
			c->range.start = (uintptr_t)c->mem.addr;
			c->range.end = c->range.start + size;
			c->range.kind = R_CHUNK;
			__atomic_store_n(&c->range.pool, pool, __ATOMIC_RELEASE);
			__atomic_store_n(&c->range.live, 1, __ATOMIC_RELEASE);
			ret = kp_addr_add(&c->range);
			if (ret) {
				__atomic_store_n(&c->range.live, 0,
						 __ATOMIC_RELEASE);
				kp_arena_remove(&pool->arena, &c->reg);
			}
		}
		if (ret) {
			kp_pool_leave(pool);
			chunk_drop(pool, c, 1);
			kp_pool_enter(pool);
		}
	}
	if (ret) {
		pool->reserved -= size;
		if (c) {
			__atomic_store_n(&c->range.pool, NULL, __ATOMIC_RELEASE);
			kp_chunk_free(c);
		}
		return ret;
	}
	c->prev = pool->chunks_tail;
	c->next = NULL;
	if (c->prev)
		c->prev->next = c;
	else
		pool->chunks = c;
	pool->chunks_tail = c;
	pool->nchunks++;
	*out = c;
	return 0;
}

/* The chunk to reserve for an allocation of @size: the pool's granule, an
 * allocation's own pages when it is larger, less near maxSize. */
static int chunk_size(const struct ihipMemPoolHandle_t *pool, uint64_t size,
		      uint64_t *csize)
{
	uint64_t c = pool->granularity;

	if (size > c) {
		c = (size + PAGE - 1) & ~(PAGE - 1);
	} else if (pool->max_size && pool->max_size > pool->reserved &&
		   pool->max_size - pool->reserved < c) {
		c = (pool->max_size - pool->reserved) & ~(PAGE - 1);
		if (c < size)
			return -ENOSPC;
	}
	*csize = c;
	return 0;
}

/* ---- allocation ---- */

struct follow_arg {
	uint64_t dep;
};

/* A pending block the allocating stream depends on: its marker was
 * recorded before the event the stream waited for. */
static int follows(struct kp_blk *b, void *arg)
{
	return ((struct kp_ev *)b->tag)->seq <
	       ((struct follow_arg *)arg)->dep;
}

/* First fit of @size among the pending blocks of @sq. */
static int any(struct kp_blk *b, void *arg)
{
	return 1;
}

/*
 * A block of another stream's queue made safe by a wait: the allocating
 * stream waits for the block's marker (hipStreamWaitEvent), as
 * hipMemPoolReuseAllowInternalDependencies allows.  Pool locked; unlocks
 * around the runtime.  NULL if none, or the wait failed.
 */
static struct kp_blk *take_with_wait(struct ihipMemPoolHandle_t *pool,
				     struct kp_sq *own, hipStream_t stream,
				     uint64_t size)
{
	const struct kp_runtime *rt = kp_rt_cached();
	struct kp_blk *b = NULL;
	struct kp_sq *sq;
	struct kp_ev *ev;
	hipError_t e;

	if (!rt->hipStreamWaitEvent)
		return NULL;
	for (sq = pool->queues; sq && !b; sq = sq->next)
		if (sq != own && sq->fl.nblk)
			b = kp_arena_scan(&pool->arena, &sq->fl, size, 1, any,
					  NULL);
	if (!b)
		return NULL;
	sq = ((struct kp_ev *)b->tag)->sq;
	ev = (struct kp_ev *)b->tag;
	ev->pins++;
	sq->pins++;
	b = kp_arena_take_block(&pool->arena, b, size);
	if (!b) {
		kp_ev_unpin(pool, ev);
		sq->pins--;
		return NULL;
	}
	kp_pool_leave(pool);
	e = rt->hipStreamWaitEvent(stream, ev->h, 0);
	kp_pool_enter(pool);
	if (e) {
		/* Not safe for this stream after all: pending again. */
		kp_arena_defer(&pool->arena, b, &sq->fl, &ev->tag);
		b = NULL;
	}
	sq->pins--;
	kp_ev_unpin(pool, ev);
	return b;
}

/* A block for @size in stream order (pool locked), or NULL. */
static struct kp_blk *take_ordered(struct ihipMemPoolHandle_t *pool,
				   struct kp_sq *own, hipStream_t stream,
				   uint64_t size)
{
	struct kp_arena *a = &pool->arena;
	struct kp_blk *b;
	struct kp_sq *sq;
	int polls = 2;

	for (;;) {
		/* Its own frees: stream order makes them safe. */
		b = kp_arena_take(a, &own->fl, size) ?:
		    kp_arena_take(a, &a->ready, size) ?:
		    kp_arena_take_within(a, &own->fl, size, WITHIN_SCAN) ?:
		    kp_arena_take_within(a, &a->ready, size, WITHIN_SCAN);
		if (b)
			return b;
		/* Frees it depends on through an event it waited for. */
		if (pool->reuse[hipMemPoolReuseFollowEventDependencies - 1]) {
			for (sq = pool->queues; sq; sq = sq->next) {
				struct follow_arg fa;

				if (sq == own || !sq->fl.nblk)
					continue;
				fa.dep = kp_stream_dep(own->st, sq->st);
				if (!fa.dep)
					continue;
				b = kp_arena_scan(a, &sq->fl, size, FOLLOW_SCAN,
						  follows, &fa);
				if (b)
					return kp_arena_take_block(a, b, size);
			}
		}
		/* Frees whose events have completed. */
		if (!pool->reuse[hipMemPoolReuseAllowOpportunistic - 1] ||
		    !polls-- || !kp_order_poll(pool, own, 1, 16))
			break;
	}
	if (pool->reuse[hipMemPoolReuseAllowInternalDependencies - 1])
		return take_with_wait(pool, own, stream, size);
	return NULL;
}

int kp_pool_alloc(struct ihipMemPoolHandle_t *pool, uint64_t size,
		  const struct kp_skey *k, hipStream_t stream, void **ptr)
{
	struct kp_arena *a = &pool->arena;
	struct kp_chunk *c;
	struct kp_blk *b;
	struct kp_sq *sq = NULL;
	uint64_t csize;
	int ret;

	size = kp_arena_round(a, size);
	if (!size)
		return -ENOMEM;
	if (k) {
		sq = kp_sq_get(pool, k);
		if (!sq)
			return -ENOMEM;
		sq->pins++;
	}
	for (;;) {
		b = sq ? take_ordered(pool, sq, stream, size) :
		     kp_arena_quick_take(a, size) ?:
		     kp_arena_take(a, &a->ready, size) ?:
		     kp_arena_take_within(a, &a->ready, size, WITHIN_SCAN);
		if (b)
			break;
		ret = chunk_size(pool, size, &csize);
		if (!ret)
			ret = chunk_new(pool, csize, &c);
		if (ret)
			goto out;
		/* The new chunk's one block: a dedicated chunk's size need
		 * not be a class bound that take would look in. */
		if (c->reg.first->state == KP_READY &&
		    c->reg.first->size >= size) {
			b = kp_arena_take_block(a, c->reg.first, size);
			if (b)
				break;
		}
	}
	ret = kp_map_put(&pool->map, kp_chunk_of(b->reg)->range.start +
			 b->off, b);
	if (ret) {
		kp_arena_put(a, b);
		goto out;
	}
	pool->used += size;
	if (pool->used > pool->used_high)
		pool->used_high = pool->used;
	*ptr = (char *)(uintptr_t)kp_chunk_of(b->reg)->range.start + b->off;
out:
	if (sq)
		sq->pins--;
	return ret;
}

/* ---- records of exported allocations ---- */

int kp_recs_find(const struct kp_blk *b, uint64_t off)
{
	const struct kp_recs *r = b->priv;
	uint32_t i;

	for (i = 0; r && i < r->n; i++)
		if (r->r[i].off == off)
			return (int)i;
	return -1;
}

int kp_recs_add(struct kp_blk *b, uint64_t off,
		const struct kfdpool_record *rec)
{
	struct kp_recs *r = b->priv;

	if (!r || r->n == r->cap) {
		uint32_t cap = r ? 2 * r->cap : 2;
		struct kp_recs *n = realloc(r, sizeof(*r) + cap * sizeof(r->r[0]));

		if (!n)
			return -ENOMEM;
		if (!r)
			n->n = 0;
		n->cap = cap;
		b->priv = r = n;
	}
	r->r[r->n].off = off;
	r->r[r->n].rec = *rec;
	r->n++;
	return 0;
}

struct kp_blk *kp_block_of(struct ihipMemPoolHandle_t *pool,
			   struct kp_chunk *c, const void *p)
{
	uint64_t off = (uintptr_t)p - c->range.start;
	struct kp_blk *b = kp_map_get(&pool->map, (uintptr_t)p);

	if (b)
		return b;
	/* An interior address (export only): walk the chunk's blocks. */
	for (b = c->reg.first; b; b = b->pnext)
		if (off >= b->off && off < b->off + b->size)
			return b->state == KP_USED &&
			       kp_map_get(&pool->map, c->range.start + b->off) ==
			       b ? b : NULL;
	return NULL;
}

/* ---- freeing ---- */

/* Revokes of one pool, sent as one batch before their blocks go back. */
struct revokes {
	struct kfdpool_revoke *ops;
	size_t n, cap;
	struct kp_blk **blk;	/* whose records they are, by op */
	size_t capblk;
};

static int queue_revokes(struct revokes *rv, struct kp_blk *b)
{
	struct kp_recs *r = b->priv;
	uint32_t i;

	if (KP_GROW(rv->ops, rv->cap, rv->n + r->n) ||
	    KP_GROW(rv->blk, rv->capblk, rv->n + r->n))
		return -ENOMEM;
	for (i = 0; i < r->n; i++) {
		memset(&rv->ops[rv->n], 0, sizeof(rv->ops[rv->n]));
		rv->ops[rv->n].record = r->r[i].rec;
		rv->blk[rv->n++] = b;
	}
	return 0;
}

/*
 * Send the revokes; a block whose record could not be revoked (anything
 * but "already gone") is never reused: a stale record must not import
 * memory handed to another allocation.  It stays allocated, out of the
 * map, until the pool's end unpins its chunk (which revokes everything).
 */
static void send_revokes(struct ihipMemPoolHandle_t *pool, struct revokes *rv)
{
	size_t i;
	int ret;

	if (!rv->n)
		return;
	ret = kfdpool_revokev(pool->fd, rv->ops, rv->n);
	for (i = 0; i < rv->n; i++) {
		int st = ret < 0 ? ret : i < (size_t)ret ? rv->ops[i].status : -EIO;

		if (st && st != -ENOENT && st != -ESTALE)
			rv->blk[i]->priv = (void *)(uintptr_t)1;	/* lost */
	}
	rv->n = 0;
}

/* A freed block whose records are revoked goes back in stream order. */
static void block_back(struct ihipMemPoolHandle_t *pool, struct kp_blk *b,
		       struct kp_sq *sq, struct kp_ev *ev)
{
	struct kp_chunk *c = kp_chunk_of(b->reg);

	if (b->priv == (void *)(uintptr_t)1) {
		b->priv = NULL;		/* lost: see send_revokes */
		return;
	}
	if (sq) {
		kp_arena_defer(&pool->arena, b, &sq->fl, &ev->tag);
	} else {
		kp_arena_put(&pool->arena, b);
	}
	if (!c->reg.nused)
		kp_chunk_maybe_release(pool, c);
}

/* Take @p's block out of the map (pool locked): nobody else can free or
 * export it any more.  NULL when @p is no allocation's start. */
static struct kp_blk *block_off(struct ihipMemPoolHandle_t *pool, void *p)
{
	struct kp_blk *b = kp_map_del(&pool->map, (uintptr_t)p);

	if (b)
		pool->used -= b->size;
	return b;
}

/* Queue the revokes of @b's records; they go before @b is reused. */
static void block_revoke(struct ihipMemPoolHandle_t *pool, struct kp_blk *b,
			 struct revokes *rv)
{
	struct kp_recs *r = b->priv;
	uint32_t i;

	if (!r)
		return;
	if (queue_revokes(rv, b)) {
		/* Cannot queue: revoke them one by one now. */
		for (i = 0; i < r->n; i++)
			kfdpool_revoke(pool->fd, &r->r[i].rec);
	}
	free(r);
	b->priv = NULL;
}

/* An imported pointer let go (pool locked): 0, or -EINVAL.  @ev: the
 * marker of an async free, kept until the chunk is unmapped. */
static int import_put(struct ihipMemPoolHandle_t *pool, struct kp_ientry *ie,
		      void *p, struct kp_sq *sq, struct kp_ev *ev)
{
	uint32_t i, j;

	for (j = 0; j < ie->nptrs; j++)
		if (ie->ptrs[j].ptr == p && ie->ptrs[j].refs)
			break;
	if (j == ie->nptrs)
		return -EINVAL;
	ie->ptrs[j].refs--;
	if (ev) {
		/* The stream's newer marker covers its older one. */
		for (i = 0; i < ie->nevs; i++)
			if (ie->evs[i].sq == sq)
				break;
		if (i < ie->nevs) {
			ie->evs[i].ev->irefs--;
			kp_ev_maybe_idle(pool, ie->evs[i].ev);
			ie->evs[i].ev = ev;
			ev->irefs++;
		} else if (!kp_grow32((void **)&ie->evs, &ie->capevs,
				      ie->nevs + 1, sizeof(*ie->evs))) {
			ie->evs[ie->nevs].sq = sq;
			ie->evs[ie->nevs].ev = ev;
			ie->nevs++;
			ev->irefs++;
		} else {
			/* Cannot remember it: the unmap waits for the
			 * device instead. */
			ie->sync_all = 1;
		}
	}
	if (--ie->refs == 0)
		kp_ientry_release(pool, ie);
	return 0;
}

/* What an async free needs from the runtime, got before the lock. */
struct freeing {
	const struct kp_runtime *rt;
	struct kp_skey key;
	hipStream_t stream;
	int dev;
};

/*
 * Record a marker for a free on @f's stream (pool locked; unlocks around
 * the runtime).  The event and its queue, or an error.
 */
static hipError_t marker(struct ihipMemPoolHandle_t *pool,
			 const struct freeing *f, struct kp_sq **sqp,
			 struct kp_ev **evp)
{
	struct kp_sq *sq = kp_sq_get(pool, &f->key);
	struct kp_ev *ev;
	uint64_t seq = 0;
	hipError_t e = hipSuccess;

	if (!sq)
		return hipErrorOutOfMemory;
	sq->pins++;
	ev = kp_ev_get(pool, f->dev);
	kp_pool_leave(pool);
	if (!ev)
		e = kp_ev_new(f->rt, f->dev, &ev);
	if (!e) {
		seq = kp_stream_next(sq->st);
		e = f->rt->hipEventRecord(ev->h, f->stream);
	}
	kp_pool_enter(pool);
	sq->pins--;
	if (e) {
		if (ev)
			kp_ev_put(pool, ev);
		return e;
	}
	kp_ev_queued(sq, ev, seq);
	*sqp = sq;
	*evp = ev;
	return hipSuccess;
}

/* Free @p (pool locked through @r). */
static hipError_t free_one(struct kp_range *r, void *p,
			   const struct freeing *f, struct revokes *rv,
			   struct kp_blk **pending)
{
	struct ihipMemPoolHandle_t *pool = r->pool;
	int async = f->rt && f->stream != KP_SYNC;
	struct kp_sq *sq = NULL;
	struct kp_ev *ev = NULL;
	struct kp_blk *b;
	hipError_t e;

	if (r->kind == R_IMPORT) {
		struct kp_ientry *ie = (struct kp_ientry *)r;
		uint32_t j;

		for (j = 0; j < ie->nptrs; j++)
			if (ie->ptrs[j].ptr == p && ie->ptrs[j].refs)
				break;
		if (j == ie->nptrs)
			return hipErrorInvalidValue;
		if (async) {
			e = marker(pool, f, &sq, &ev);
			if (e)
				return e;
		}
		/* (The lock was dropped: the pointer may be gone.) */
		e = __atomic_load_n(&r->live, __ATOMIC_RELAXED) &&
		    !import_put(pool, ie, p, sq, ev) ? hipSuccess :
		    hipErrorInvalidValue;
		if (ev)
			kp_ev_maybe_idle(pool, ev);
		return e;
	}
	/* Out of the map first: nobody else frees or exports it while the
	 * lock is dropped for the marker. */
	b = block_off(pool, p);
	if (!b)
		return hipErrorInvalidValue;
	if (async) {
		e = marker(pool, f, &sq, &ev);
		if (e) {
			/* Not freed. */
			kp_map_put(&pool->map, r->start + b->off, b);
			pool->used += b->size;
			return e;
		}
	}
	block_revoke(pool, b, rv);
	b->lnext = *pending;		/* back after the revokes are sent */
	b->fl = (struct kp_fl *)sq;
	b->tag = (struct kp_tag *)ev;
	*pending = b;
	return hipSuccess;
}

static void pending_back(struct ihipMemPoolHandle_t *pool,
			 struct kp_blk *pending)
{
	struct kp_blk *b;

	while ((b = pending)) {
		struct kp_sq *sq = (struct kp_sq *)b->fl;
		struct kp_ev *ev = (struct kp_ev *)b->tag;

		pending = b->lnext;
		b->lnext = NULL;
		b->fl = NULL;
		b->tag = NULL;
		block_back(pool, b, sq, ev);
		if (ev)
			kp_ev_maybe_idle(pool, ev);
	}
}

/* The device of @r's memory: its pool's, -1 for host memory (the
 * current device's work is what may use it). */
static int range_dev(struct kp_range *r)
{
	struct ihipMemPoolHandle_t *pool = __atomic_load_n(&r->pool,
							   __ATOMIC_ACQUIRE);

	if (pool && pool->props.location.type == hipMemLocationTypeDevice)
		return pool->dev;
	return -1;
}

/* Wait for device @dev (hipFree; -1: the current one), unlocked: the
 * device waited for, or -1. */
static int sync_device(const struct kp_runtime *rt, int dev)
{
	int cur = -1;

	if (!rt->hipDeviceSynchronize)
		return -1;
	if (rt->hipGetDevice && rt->hipGetDevice(&cur))
		cur = -1;
	if (dev >= 0 && cur >= 0 && cur != dev && rt->hipSetDevice &&
	    !rt->hipSetDevice(dev)) {
		if (rt->hipDeviceSynchronize())
			dev = -1;
		rt->hipSetDevice(cur);
		return dev;
	}
	return rt->hipDeviceSynchronize() ? -1 : cur;
}

hipError_t kp_free_many(void *const *ptrs, size_t n, hipError_t *res,
			int null_ok, hipStream_t stream)
{
	struct freeing f = { .stream = stream, .dev = -1 };
	struct revokes rv = { 0 };
	hipError_t first = hipSuccess;
	int synced = -2, keyed = 0;
	size_t i;

	if (!kp_rt_cached() && stream != KP_SYNC && stream)
		kp_rt();		/* loaded since we last looked? */
	f.rt = kp_rt_order();
	for (i = 0; i < n;) {
		struct ihipMemPoolHandle_t *pool;
		struct kp_blk *pending = NULL;
		struct kp_range *r;
		hipError_t e;
		int ours;

		if (!ptrs[i]) {
			e = null_ok ? hipSuccess : hipErrorInvalidValue;
			goto next;
		}
		r = f.rt ? kp_addr_find(ptrs[i]) : NULL;
		if (r && stream == KP_SYNC && range_dev(r) != synced) {
			/* Ours, it seems: wait for its device first; what
			 * goes back then may wait for that device only. */
			synced = range_dev(r);
			kp_rel.mode = KP_REL_DEV;
			kp_rel.dev = sync_device(f.rt, synced);
		} else if (r && stream != KP_SYNC && !keyed) {
			/* What the runtime must tell first, unlocked. */
			keyed = 1;
			e = kp_stream_key(f.rt, stream, 0, &f.key);
			if (e)
				return e;
			/* The marker is an event of the stream's device:
			 * clr records none on another device's stream. */
			e = kp_stream_device(f.rt, &f.key, &f.dev);
			if (e)
				return e;
		}
		r = kp_range_lock(ptrs[i], &ours);
		if (!r) {
			e = ours ? hipErrorInvalidValue : KP_NOT_OURS;
			goto next;
		}
		pool = r->pool;
		/* This pointer and every following one of the same pool:
		 * one lock, one batch of revokes. */
		for (;;) {
			e = free_one(r, ptrs[i], &f, &rv, &pending);
			if (res)
				res[i] = e;
			if (e && !first)
				first = e;
			if (++i == n || !ptrs[i])
				break;
			r = kp_addr_find(ptrs[i]);
			if (!r || __atomic_load_n(&r->pool, __ATOMIC_RELAXED) !=
			    pool || !r->live || (uintptr_t)ptrs[i] < r->start ||
			    (uintptr_t)ptrs[i] >= r->end)
				break;
		}
		send_revokes(pool, &rv);
		pending_back(pool, pending);
		kp_pool_put(pool);
		continue;
next:
		if (res)
			res[i] = e;
		if (e && e != KP_NOT_OURS && !first)
			first = e;
		i++;
	}
	free(rv.ops);
	free(rv.blk);
	return first;
}

/*
 * One pointer (hipFree, hipFreeAsync).  Without a runtime that has a
 * device there is no stream order to keep: the block goes back at once,
 * with no allocation and only the pool's lock; anything else takes the
 * general way.
 */
hipError_t kp_free(void *p, hipStream_t stream)
{
	struct ihipMemPoolHandle_t *pool;
	hipError_t e = KP_NOT_OURS, ret;
	struct kp_range *r;
	struct kp_chunk *c;
	struct kp_blk *b;
	int ours;

	if (kp_rt_cached() || (stream && stream != KP_SYNC))
		goto general;
	r = kp_range_lock(p, &ours);
	if (!r)
		return ours ? hipErrorInvalidValue : KP_NOT_OURS;
	pool = r->pool;
	if (r->kind != R_CHUNK) {
		kp_pool_unlock(pool);
		goto general;
	}
	b = block_off(pool, p);
	if (!b) {
		kp_pool_put(pool);
		return hipErrorInvalidValue;
	}
	c = kp_chunk_of(b->reg);
	if (b->priv) {
		struct revokes rv = { 0 };

		block_revoke(pool, b, &rv);
		send_revokes(pool, &rv);
		free(rv.ops);
		free(rv.blk);
		block_back(pool, b, NULL, NULL);
	} else if (!kp_arena_quick_put(&pool->arena, b)) {
		kp_arena_put(&pool->arena, b);
		if (!c->reg.nused)
			kp_chunk_maybe_release(pool, c);
	} else if (!c->reg.nused && !c->release_wanted &&
		   pool->reserved > pool->threshold) {
		/* (Marked already: it waits for a synchronising call.) */
		kp_chunk_maybe_release(pool, c);
	}
	kp_pool_put(pool);
	return hipSuccess;
general:
	ret = kp_free_many(&p, 1, &e, 0, stream);
	return e != KP_NOT_OURS || !ret ? e : ret;
}
