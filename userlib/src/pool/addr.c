// SPDX-License-Identifier: MIT
/*
 * The address table: which chunk (of ours or imported) holds an address,
 * looked up without a lock.
 *
 * A radix tree over 4 KiB page numbers, five levels of 512 entries (57-bit
 * addresses), like a page table: an entry is empty, a node, or a range
 * (low bit set) that covers everything under it, so a 2 MiB-aligned chunk
 * costs one entry per 2 MiB, not 512.  Writers (adding or removing a
 * chunk, never the allocation path) take kp_addr_mu; readers load entries
 * with acquire order.  Nodes are never freed and ranges live in memory
 * that is never freed, so a reader racing with a removal reads a stale but
 * valid range, which kp_range_lock then refuses under the pool's lock.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pool/pool.h"

#define LEVELS 5
#define BITS 9
#define FANOUT (1u << BITS)
#define PAGE_SHIFT 12

static pthread_mutex_t kp_addr_mu = PTHREAD_MUTEX_INITIALIZER;
static uintptr_t g_top[FANOUT];

static uintptr_t load(const uintptr_t *e)
{
	return __atomic_load_n(e, __ATOMIC_ACQUIRE);
}

static void store(uintptr_t *e, uintptr_t v)
{
	__atomic_store_n(e, v, __ATOMIC_RELEASE);
}

/* One level down: the range, the next node, or NULL (in *stop). */
#define DOWN(node, pn, l) ({						\
	uintptr_t e_ = load(&(node)[((pn) >> ((l) * BITS)) & (FANOUT - 1)]); \
	if (!e_ || (e_ & 1))						\
		return (struct kp_range *)(e_ & ~(uintptr_t)1);		\
	(const uintptr_t *)e_;						\
})

struct kp_range *kp_addr_find(const void *p)
{
	uint64_t pn = (uintptr_t)p >> PAGE_SHIFT;
	const uintptr_t *n;

	if (pn >> (LEVELS * BITS))
		return NULL;
	n = DOWN(g_top, pn, 4);
	n = DOWN(n, pn, 3);
	n = DOWN(n, pn, 2);
	n = DOWN(n, pn, 1);
	return (struct kp_range *)(load(&n[pn & (FANOUT - 1)]) &
				   ~(uintptr_t)1);
}

/*
 * Set the entries for pages [lo, hi) under @node (level @l, whose first
 * page is @base) to @v (a tagged range, or 0), making nodes as needed.
 */
static int set(uintptr_t *node, int l, uint64_t base, uint64_t lo,
	       uint64_t hi, uintptr_t v)
{
	uint64_t span = 1ULL << (l * BITS), i;

	for (i = (lo - base) / span; i < FANOUT && base + i * span < hi; i++) {
		uint64_t s = base + i * span, e = s + span;
		uintptr_t cur = load(&node[i]);
		uintptr_t *child;

		if (lo <= s && e <= hi) {
			store(&node[i], v);
			continue;
		}
		if (!cur) {
			if (!v)
				continue;
			child = calloc(FANOUT, sizeof(*child));
			if (!child)
				return -ENOMEM;
			store(&node[i], (uintptr_t)child);
			cur = (uintptr_t)child;
		}
		if (cur & 1)
			continue;	/* a bigger range here: not ours to change */
		if (set((uintptr_t *)cur, l - 1, s, lo > s ? lo : s,
			hi < e ? hi : e, v))
			return -ENOMEM;
	}
	return 0;
}

int kp_addr_add(struct kp_range *r)
{
	uint64_t lo = r->start >> PAGE_SHIFT, hi = r->end >> PAGE_SHIFT;
	int ret;

	if ((r->start | r->end) & ((1u << PAGE_SHIFT) - 1) || lo >= hi ||
	    hi > (1ULL << (LEVELS * BITS)))
		return -EINVAL;
	pthread_mutex_lock(&kp_addr_mu);
	ret = set(g_top, LEVELS - 1, 0, lo, hi, (uintptr_t)r | 1);
	if (ret)
		set(g_top, LEVELS - 1, 0, lo, hi, 0);
	pthread_mutex_unlock(&kp_addr_mu);
	return ret;
}

void kp_addr_del(struct kp_range *r)
{
	pthread_mutex_lock(&kp_addr_mu);
	set(g_top, LEVELS - 1, 0, r->start >> PAGE_SHIFT,
	    r->end >> PAGE_SHIFT, 0);
	pthread_mutex_unlock(&kp_addr_mu);
}

/* ---- ranges: memory never given back ---- */

#define SLAB 64

struct forever {
	void *free;		/* first word of a free object: the next */
	size_t size;
};

static void *forever_alloc(struct forever *f)
{
	void *o;
	char *slab;
	size_t i;

	pthread_mutex_lock(&kp_addr_mu);
	if (!f->free) {
		slab = calloc(SLAB, f->size);
		if (!slab) {
			pthread_mutex_unlock(&kp_addr_mu);
			return NULL;
		}
		for (i = 0; i < SLAB; i++) {
			*(void **)(slab + i * f->size + sizeof(struct kp_range)) =
				f->free;
			f->free = slab + i * f->size;
		}
	}
	o = f->free;
	f->free = *(void **)((char *)o + sizeof(struct kp_range));
	pthread_mutex_unlock(&kp_addr_mu);
	/* The range part stays as it was: a stale reader may read it. */
	memset((char *)o + sizeof(struct kp_range), 0,
	       f->size - sizeof(struct kp_range));
	return o;
}

static void forever_free(struct forever *f, void *o)
{
	pthread_mutex_lock(&kp_addr_mu);
	*(void **)((char *)o + sizeof(struct kp_range)) = f->free;
	f->free = o;
	pthread_mutex_unlock(&kp_addr_mu);
}

static struct forever g_chunks = { NULL, sizeof(struct kp_chunk) };
static struct forever g_ients = { NULL, sizeof(struct kp_ientry) };

struct kp_chunk *kp_chunk_alloc(void)
{
	return forever_alloc(&g_chunks);
}

void kp_chunk_free(struct kp_chunk *c)
{
	forever_free(&g_chunks, c);
}

struct kp_ientry *kp_ientry_alloc(void)
{
	return forever_alloc(&g_ients);
}

void kp_ientry_free_obj(struct kp_ientry *ie)
{
	forever_free(&g_ients, ie);
}

/* ---- finding and locking ---- */

struct kp_range *kp_range_lock(const void *p, int *ours)
{
	struct ihipMemPoolHandle_t *pool;
	struct kp_range *r;
	uintptr_t a = (uintptr_t)p;

	*ours = 0;
	for (;;) {
		r = kp_addr_find(p);
		if (!r)
			return NULL;
		pool = __atomic_load_n(&r->pool, __ATOMIC_ACQUIRE);
		if (!pool)
			continue;	/* being set up or torn down */
		kp_lock(&pool->mu);
		if (__atomic_load_n(&r->pool, __ATOMIC_RELAXED) == pool &&
		    __atomic_load_n(&r->live, __ATOMIC_RELAXED) &&
		    r->start <= a && a < r->end) {
			if (!pool->forked)
				return r;
			kp_unlock(&pool->mu);
			*ours = 1;
			return NULL;
		}
		kp_unlock(&pool->mu);
		if (kp_addr_find(p) == r)
			return NULL;	/* still there, but not live: going */
	}
}

/* Held across fork() (hip/hip_fork.c). */
void kp_addr_fork(int prepare)
{
	if (prepare)
		pthread_mutex_lock(&kp_addr_mu);
	else
		pthread_mutex_unlock(&kp_addr_mu);
}
