// SPDX-License-Identifier: MIT
/*
 * The pool allocator: pools, their chunks, the address table, trimming.
 * (Allocation and free: pool/mem.c; importers' chunk mappings: pool/import.c.)
 *
 * A pool (struct ihipMemPoolHandle_t, what hipMemPool_t points to) holds
 * one kfdpool pool fd.  An owner pool reserves chunks from its backend, pins
 * each chunk as one entry and sub-allocates from it (pool/arena.c).  In a pool
 * with handle types every allocation is exported as one record when it is
 * made: the kernel's used_bytes is then exactly the allocated bytes (what
 * hipMemPoolAttrUsedMemCurrent means), and exporting the allocation's own
 * address costs no system call.  An interior address gets a record of its
 * own, made once and kept with the allocation.  Freeing revokes the
 * allocation's records.
 *
 * An imported pool holds an import fd.  The first pointer imported from a
 * chunk imports the chunk (a dma-buf fd) and maps it; later pointers into
 * the same chunk are validated only (KFDPOOL_IMPORT_VALIDATE).  The chunk
 * is released and unmapped when its last imported pointer is freed.
 *
 * One mutex (kp_mu) serialises the library's pool state; the memory itself
 * is never touched under it.  Addresses are found through one sorted table of
 * ranges (owner chunks and imported chunk mappings).
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
static struct range *g_ranges;
static size_t g_nranges, g_capranges;

/* Grow *arr (of *cap elements of @elem bytes) to hold @need. */
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

/* ---- the range table ---- */

/* Index of the first range with start > addr. */
static size_t range_upper(uintptr_t addr)
{
	size_t lo = 0, hi = g_nranges;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (g_ranges[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

struct range *kp_range_find(const void *p)
{
	uintptr_t addr = (uintptr_t)p;
	size_t i = range_upper(addr);

	if (!i || addr >= g_ranges[i - 1].end)
		return NULL;
	return &g_ranges[i - 1];
}

int kp_range_add(void *start, uint64_t len, int kind, void *obj)
{
	size_t i;

	if (KP_GROW(g_ranges, g_capranges, g_nranges + 1))
		return -ENOMEM;
	i = range_upper((uintptr_t)start);
	memmove(&g_ranges[i + 1], &g_ranges[i],
		(g_nranges - i) * sizeof(*g_ranges));
	g_ranges[i] = (struct range){ (uintptr_t)start,
				      (uintptr_t)start + len, kind, obj };
	g_nranges++;
	return 0;
}

void kp_range_del(void *start)
{
	struct range *r = kp_range_find(start);
	size_t i;

	if (!r)
		return;
	i = r - g_ranges;
	memmove(&g_ranges[i], &g_ranges[i + 1],
		(g_nranges - i - 1) * sizeof(*g_ranges));
	g_nranges--;
}

/* ---- pool handles ---- */

/*
 * Pool objects (what hipMemPool_t points to) live in slabs that are never
 * freed.  "Is this handle ours?" is then an address check that never reads
 * the handle, and it stays true for a handle of a pool that is gone: such
 * a handle gets hipErrorInvalidValue from us and is never passed to the
 * HIP runtime as if it were one of the runtime's.  Slots of finalized
 * pools are reused, as any allocator would reuse the memory.
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
		uintptr_t base = (uintptr_t)g_slabs[i];

		if (a >= base && a < base + SLAB_POOLS * sizeof(*g_slabs[i])) {
			*ours = 1;
			if ((a - base) % sizeof(*g_slabs[i]))
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
			slab[i].next = g_free_slots;
			g_free_slots = &slab[i];
		}
		g_slabs[g_nslabs] = slab;
		__atomic_store_n(&g_nslabs, g_nslabs + 1, __ATOMIC_RELEASE);
	}
	pool = g_free_slots;
	g_free_slots = pool->next;
	memset(pool, 0, sizeof(*pool));
	return pool;
}

void kp_pool_free(struct ihipMemPoolHandle_t *pool)
{
	memset(pool, 0, sizeof(*pool));
	pool->next = g_free_slots;
	g_free_slots = pool;
}

/* ---- pools ---- */

struct ihipMemPoolHandle_t *kp_pool_get(hipMemPool_t h)
{
	struct ihipMemPoolHandle_t *p;
	int ours;

	p = pool_slot(h, &ours);
	if (!p || p->magic != POOL_MAGIC || p->destroyed)
		return NULL;
	return p;
}

static void pool_unlink(struct ihipMemPoolHandle_t *pool)
{
	struct ihipMemPoolHandle_t **pp;

	for (pp = &kp_pools; *pp; pp = &(*pp)->next) {
		if (*pp == pool) {
			*pp = pool->next;
			return;
		}
	}
}

static void release_chunk(struct ihipMemPoolHandle_t *pool, size_t idx)
{
	struct kp_chunk *c = pool->chunks[idx];

	/* Empty: every record of it was revoked when its allocations were
	 * freed.  Imports elsewhere keep the memory (draining entry). */
	kfdpool_unpin(pool->fd, c->entry_id, NULL, NULL);
	kp_range_del(c->mem.addr);
	pool->be->free(&c->mem);
	kp_arena_fini(&c->arena);
	pool->reserved -= c->mem.size;
	memmove(&pool->chunks[idx], &pool->chunks[idx + 1],
		(pool->nchunks - idx - 1) * sizeof(*pool->chunks));
	pool->nchunks--;
	free(c);
}

/*
 * Give empty chunks back, newest first, as long as at least @keep bytes
 * stay reserved (hipMemPoolTrimTo's guarantee; the release threshold is
 * the same trim done after every free).
 */
void kp_pool_trim(struct ihipMemPoolHandle_t *pool, uint64_t keep)
{
	size_t i = pool->nchunks;

	while (i-- > 0) {
		struct kp_chunk *c = pool->chunks[i];

		if (pool->reserved <= keep)
			break;
		if (kp_arena_empty(&c->arena) &&
		    pool->reserved - c->mem.size >= keep)
			release_chunk(pool, i);
	}
}

/* A destroyed pool goes away once nothing of it is in use. */
void kp_pool_maybe_finalize(struct ihipMemPoolHandle_t *pool)
{
	size_t i;

	if (!pool->destroyed)
		return;
	if (pool->imported) {
		if (pool->nients)
			return;
	} else {
		for (i = 0; i < pool->nchunks; i++)
			if (!kp_arena_empty(&pool->chunks[i]->arena))
				return;
		kp_pool_trim(pool, 0);
	}
	pool_unlink(pool);
	close(pool->fd);
	free(pool->chunks);
	free(pool->ients);
	kp_pool_free(pool);
}
