// SPDX-License-Identifier: MIT
/*
 * The pool allocator: pools and their handles, chunks, giving chunks back.
 * (Allocation and free: pool/mem.c; importers' chunk mappings:
 * pool/import.c; stream order: pool/order.c; the address table:
 * pool/addr.c; the sub-allocator: pool/arena.c.)
 *
 * A pool (struct ihipMemPoolHandle_t, what hipMemPool_t points to) holds
 * one kfdpool pool fd.  An owner pool reserves chunks from its backend,
 * pins each chunk as one entry and sub-allocates from all of them at once
 * (pool/arena.c).  A pointer's record is made when the pointer is first
 * exported (hipMemPoolExportPointer, kfdpoolExportPointers), kept with the
 * allocation, and revoked when it is freed, before the memory can be
 * handed out again: allocation and free make no system call in the steady
 * state, IPC pool or not.
 *
 * Each pool has its own lock: threads on different pools share none.
 * The memory itself is never touched under a lock.
 *
 * Pools do not survive fork(): a child must not use its parent's pools.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pool/pool.h"

pthread_mutex_t kp_mu = PTHREAD_MUTEX_INITIALIZER;
struct ihipMemPoolHandle_t *kp_pools;
__thread struct kp_rel kp_rel __attribute__((tls_model("initial-exec")));
int kp_deferred;

int kp_grow(void **arr, size_t *cap, size_t need, size_t elem)
{
	size_t ncap = *cap ? *cap : 8;
	void *p;

	if (need <= *cap)
		return 0;
	while (ncap < need)
		ncap *= 2;
	p = realloc(*arr, ncap * elem);
	if (!p)
		return -ENOMEM;
	*arr = p;
	*cap = ncap;
	return 0;
}

int kp_grow32(void **arr, uint32_t *cap, size_t need, size_t elem)
{
	size_t c = *cap;
	int ret = kp_grow(arr, &c, need, elem);

	*cap = (uint32_t)c;
	return ret;
}

/* ---- pool handles ---- */

/*
 * Pool objects (what hipMemPool_t points to) live in slabs that are never
 * freed.  "Is this handle ours?" is then an address check that never reads
 * the handle, and it stays true for a handle of a pool that is gone: such
 * a handle gets hipErrorInvalidValue from us and is never passed to the
 * HIP runtime as if it were one of the runtime's.  Each slot's lock is
 * made once and never reset: a thread that raced with a pool's end may
 * still take it, and finds the pool gone.
 */
#define SLAB_POOLS	64
#define MAX_SLABS	1024
static struct ihipMemPoolHandle_t *g_slabs[MAX_SLABS];
static unsigned int g_nslabs;		/* published with release order */
static struct ihipMemPoolHandle_t *g_free_slots;	/* through ->next */

/* The slab slot @h is, or NULL.  *ours tells whether @h points into a
 * slab at all (a misaligned address inside one is ours, and invalid). */
static struct ihipMemPoolHandle_t *pool_slot(const void *h, int *ours)
{
	unsigned int i, n = __atomic_load_n(&g_nslabs, __ATOMIC_ACQUIRE);
	uintptr_t a = (uintptr_t)h;

	for (i = 0; i < n; i++) {
		uintptr_t off = a - (uintptr_t)g_slabs[i];

		/* (Below the slab, off wraps around to a huge value.) */
		if (off < SLAB_POOLS * sizeof(*g_slabs[i])) {
			*ours = 1;
			if (off % sizeof(*g_slabs[i]))
				return NULL;
			return (struct ihipMemPoolHandle_t *)a;
		}
	}
	*ours = 0;
	return NULL;
}

int kp_pool_ours(const void *h)
{
	int ours;

	pool_slot(h, &ours);
	return ours;
}

/* Everything after the lock goes back to zero. */
static void pool_reset(struct ihipMemPoolHandle_t *pool)
{
	memset((char *)pool + sizeof(pool->mu), 0,
	       sizeof(*pool) - sizeof(pool->mu));
}

/* A new pool object, unlinked (kp_mu held). */
struct ihipMemPoolHandle_t *kp_pool_new(void)
{
	struct ihipMemPoolHandle_t *pool, *slab;
	unsigned int i;

	if (!g_free_slots) {
		if (g_nslabs == MAX_SLABS)
			return NULL;
		slab = calloc(SLAB_POOLS, sizeof(*slab));
		if (!slab)
			return NULL;
		for (i = SLAB_POOLS; i-- > 0;) {
			kp_lock_init(&slab[i].mu);
			slab[i].next = g_free_slots;
			g_free_slots = &slab[i];
		}
		g_slabs[g_nslabs] = slab;
		__atomic_store_n(&g_nslabs, g_nslabs + 1, __ATOMIC_RELEASE);
	}
	pool = g_free_slots;
	g_free_slots = pool->next;
	kp_lock(&pool->mu);
	pool_reset(pool);
	kp_arena_init(&pool->arena, ALLOC_SHIFT);
	pool->arena.tag_idle = kp_ev_idle;
	kp_unlock(&pool->mu);
	return pool;
}

struct ihipMemPoolHandle_t *kp_pool_lock(hipMemPool_t h)
{
	int ours;

	return kp_pool_lock_ours(h, &ours);
}

struct ihipMemPoolHandle_t *kp_pool_lock_ours(hipMemPool_t h, int *ours)
{
	struct ihipMemPoolHandle_t *p;

	p = pool_slot(h, ours);
	if (!p)
		return NULL;
	kp_lock(&p->mu);
	if (p->magic != POOL_MAGIC || p->destroyed || p->forked) {
		kp_unlock(&p->mu);
		return NULL;
	}
	return p;
}

/* ---- chunks ---- */

static void chunk_unlink(struct ihipMemPoolHandle_t *pool, struct kp_chunk *c)
{
	if (c->prev)
		c->prev->next = c->next;
	else
		pool->chunks = c->next;
	if (c->next)
		c->next->prev = c->prev;
	else
		pool->chunks_tail = c->prev;
	pool->nchunks--;
}

/* Give an idle chunk back (pool locked; unlocks around the backend). */
static void release_chunk(struct ihipMemPoolHandle_t *pool, struct kp_chunk *c)
{
	if (c->release_wanted) {
		c->release_wanted = 0;
		pool->nrelease--;
	}
	/* Unfindable first: a reader that raced finds it not live. */
	__atomic_store_n(&c->range.live, 0, __ATOMIC_RELEASE);
	kp_addr_del(&c->range);
	kp_arena_remove(&pool->arena, &c->reg);
	chunk_unlink(pool, c);
	pool->reserved -= c->mem.size;
	/* Empty: every record of it was revoked when its allocations were
	 * freed.  Imports elsewhere keep the memory (draining entry). */
	kfdpool_unpin(pool->fd, c->entry_id, NULL, NULL);
	kp_pool_leave(pool);
	kp_rocr_host_unregister(&c->mem);
	pool->be->free(&c->mem);
	__atomic_store_n(&c->range.pool, NULL, __ATOMIC_RELEASE);
	kp_chunk_free(c);
	kp_pool_enter(pool);
}

/* Release @c if it is empty and its pending frees have completed (asking
 * the runtime, or waiting when @sync).  1 if released. */
static int try_release(struct ihipMemPoolHandle_t *pool, struct kp_chunk *c,
		       int sync)
{
	if (c->reg.nused || !kp_rel_may(&c->mem))
		return 0;
	if (c->reg.nquick)
		kp_arena_flush(&pool->arena);
	if (c->reg.npending) {
		if (sync)
			kp_order_sync_chunk(pool, c);
		else
			kp_order_chunk_done(pool, c);
		/* The lock was dropped: the chunk may be in use again. */
		if (!kp_region_idle(&c->reg))
			return 0;
	}
	release_chunk(pool, c);
	return 1;
}

void kp_pool_trim(struct ihipMemPoolHandle_t *pool, uint64_t keep, int sync)
{
	struct kp_chunk *c;
	size_t rounds = 2 * pool->nchunks + 2;

	/* Blocks kept for quick reuse go back to their chunks first. */
	kp_arena_flush(&pool->arena);
again:
	for (c = pool->chunks_tail; c && pool->reserved > keep; c = c->prev) {
		if (c->reg.nused || pool->reserved - c->reg.size < keep ||
		    !kp_rel_may(&c->mem))
			continue;
		if (kp_region_idle(&c->reg))
			release_chunk(pool, c);
		else
			try_release(pool, c, sync);
		/* The lock was dropped: the list may have changed. */
		if (rounds--)
			goto again;
		return;
	}
}

void kp_chunk_maybe_release(struct ihipMemPoolHandle_t *pool,
			    struct kp_chunk *c)
{
	uint64_t t = pool->destroyed ? 0 : pool->threshold;

	/* (Marked already: kp_pool_put's caller gives it back where it
	 * may.) */
	if (c->reg.nused || c->release_wanted || pool->reserved <= t ||
	    pool->reserved - c->reg.size < t)
		return;
	if (!kp_rel_may(&c->mem)) {
		/* Not in this call: it stays whole (a quick block too) for
		 * reuse until a synchronising call gives it back. */
		c->release_wanted = 1;
		pool->nrelease++;
		kp_rel_marked();
		return;
	}
	if (c->reg.nquick)
		kp_arena_flush(&pool->arena);
	if (kp_region_idle(&c->reg)) {
		release_chunk(pool, c);
	} else {
		/* Waits for the events of its frees: looked at again by
		 * trims and synchronising calls. */
		c->release_wanted = 1;
		pool->nrelease++;
		kp_rel_marked();
	}
}

/* Chunks waiting for their frees' events: give back those now done. */
void kp_pool_release_wanted(struct ihipMemPoolHandle_t *pool)
{
	struct kp_chunk *c;
	size_t rounds = pool->nrelease + 1;

	if (pool->imported) {
		kp_ientry_release_wanted(pool, pool->destroyed);
		return;
	}
again:
	for (c = pool->chunks; c && pool->nrelease; c = c->next) {
		if (!c->release_wanted)
			continue;
		if (c->reg.nused) {
			c->release_wanted = 0;
			pool->nrelease--;
			continue;
		}
		if (try_release(pool, c, 0) && rounds--)
			goto again;
		if (!rounds)
			return;
	}
}

/* ---- the end of a pool ---- */

static int pool_in_use(const struct ihipMemPoolHandle_t *pool)
{
	const struct kp_chunk *c;

	if (pool->busy || pool->refs > 0 || pool->ients)
		return 1;
	for (c = pool->chunks; c; c = c->next)
		if (c->reg.nused)
			return 1;
	return 0;
}

static void pool_finalize(struct ihipMemPoolHandle_t *pool)
{
	const struct kp_runtime *rt = kp_rt_cached();

	/* Everything is free: give all back, waiting for the last frees
	 * where the call may wait. */
	kp_pool_trim(pool, 0, kp_rel_may_wait());
	if (pool_in_use(pool) || pool->chunks) {
		kp_rel_marked();	/* the rest at a later call */
		kp_unlock(&pool->mu);
		return;		/* someone else finishes */
	}
	pool->magic = 0;
	kp_unlock(&pool->mu);
	kp_order_fini(pool, rt);
	pthread_mutex_lock(&kp_mu);
	{
		struct ihipMemPoolHandle_t **pp;

		for (pp = &kp_pools; *pp; pp = &(*pp)->next) {
			if (*pp == pool) {
				*pp = pool->next;
				break;
			}
		}
	}
	kp_lock(&pool->mu);
	kp_fd_close(pool->fd);
	kp_arena_fini(&pool->arena);
	kp_map_fini(&pool->map);
	pool_reset(pool);
	kp_unlock(&pool->mu);
	pool->next = g_free_slots;
	g_free_slots = pool;
	pthread_mutex_unlock(&kp_mu);
}

void kp_pool_put_slow(struct ihipMemPoolHandle_t *pool)
{
	if (pool->nrelease)
		kp_pool_release_wanted(pool);
	if (pool->destroyed && pool->magic == POOL_MAGIC && !pool_in_use(pool)) {
		pool_finalize(pool);
		return;
	}
	if (pool->nrelease || pool->destroyed)
		kp_rel_marked();	/* what this call could not give back */
	kp_unlock(&pool->mu);
}

void kp_pools_each(void (*fn)(struct ihipMemPoolHandle_t *pool, void *arg),
		   void *arg)
{
	struct ihipMemPoolHandle_t *p, **all = NULL;
	size_t n = 0, cap = 0, i;

	/* Listed under kp_mu, each kept (busy) while the others are done. */
	pthread_mutex_lock(&kp_mu);
	for (p = kp_pools; p; p = p->next) {
		if (KP_GROW(all, cap, n + 1))
			break;		/* the rest next time */
		kp_lock(&p->mu);
		p->busy++;
		kp_unlock(&p->mu);
		all[n++] = p;
	}
	pthread_mutex_unlock(&kp_mu);
	for (i = 0; i < n; i++) {
		p = all[i];
		kp_lock(&p->mu);
		p->busy--;
		if (p->magic == POOL_MAGIC && !p->forked)
			fn(p, arg);
		kp_pool_put(p);
	}
	free(all);
}

static void settle_one(struct ihipMemPoolHandle_t *pool, void *arg)
{
	/* kp_pool_put gives back what waited. */
}

void kp_pools_settle(int mode, int dev)
{
	struct kp_rel prev;

	if (!__atomic_exchange_n(&kp_deferred, 0, __ATOMIC_RELAXED))
		return;
	prev = kp_rel_enter(mode, dev);
	kp_pools_each(settle_one, NULL);
	kp_rel_leave(prev);
}

/* ---- the library's pool fds (pool.h: fork) ---- */

static pthread_mutex_t g_fd_mu = PTHREAD_MUTEX_INITIALIZER;
static int *g_fds;
static size_t g_nfds, g_capfds;

void kp_fd_lock(void)
{
	pthread_mutex_lock(&g_fd_mu);
}

int kp_fd_made(int fd)
{
	if (fd >= 0 && KP_GROW(g_fds, g_capfds, g_nfds + 1)) {
		close(fd);
		fd = -ENOMEM;
	} else if (fd >= 0) {
		g_fds[g_nfds++] = fd;
	}
	pthread_mutex_unlock(&g_fd_mu);
	return fd;
}

void kp_fd_close(int fd)
{
	size_t i;

	pthread_mutex_lock(&g_fd_mu);
	for (i = 0; i < g_nfds; i++) {
		if (g_fds[i] == fd) {
			g_fds[i] = g_fds[--g_nfds];
			break;
		}
	}
	close(fd);
	pthread_mutex_unlock(&g_fd_mu);
}

void kp_fd_fork(int prepare)
{
	if (prepare)
		pthread_mutex_lock(&g_fd_mu);
	else
		pthread_mutex_unlock(&g_fd_mu);
}

/*
 * In a fork child: the parent's pools are unusable (a thread of the parent
 * may have held their locks or been halfway through a change).  Their
 * locks are made anew; the objects stay, so that their handles and
 * pointers are still told from the runtime's and refused.  Their fds, and
 * any other the library had open, are closed: the pools are the parent's
 * (they end when it closes its fds, its imports count as its own), whether
 * or not the child calls exec (which closes them too: O_CLOEXEC).  What
 * the child had mapped of them stays mapped until it exits or calls exec.
 * The fd lock is held here (kp_fd_fork).
 */
void kp_pools_fork_child(void)
{
	struct ihipMemPoolHandle_t *p;
	unsigned int i, j;
	size_t k;

	for (i = 0; i < g_nslabs; i++) {
		for (j = 0; j < SLAB_POOLS; j++) {
			p = &g_slabs[i][j];
			kp_lock_init(&p->mu);
		}
	}
	for (p = kp_pools; p; p = p->next) {
		p->forked = 1;
		p->fd = -1;
	}
	for (k = 0; k < g_nfds; k++)
		close(g_fds[k]);
	g_nfds = 0;
}
