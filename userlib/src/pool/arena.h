/* SPDX-License-Identifier: MIT */
/*
 * The sub-allocator of one pool: the blocks of all its chunks (regions),
 * found in constant time through segregated free lists (TLSF: two-level
 * size classes with bitmaps), and kept in stream order.
 *
 * A block is used, ready or pending:
 *   - ready: free for any stream.  Ready neighbours are always merged, so
 *     a region whose blocks are all ready is one block.  Ready blocks are
 *     in the arena's own index (a->ready).
 *   - pending: freed on a stream whose marker event (a tag) may not have
 *     completed.  It sits in that stream's queue index (a struct kp_fl the
 *     caller owns) and is reused by that stream at once, by another only
 *     when the caller decides so (the event completed, a dependency, a
 *     wait it added); it becomes ready when settled.  Pending blocks are
 *     never merged: each keeps its own event.
 *
 * Fit: a request of n units takes the head (the most recently inserted
 * block) of the lowest non-empty class all of whose blocks hold n units
 * ("good fit"), and splits off the rest, which stays in the same state.
 *
 * Quick lists: a freed ready block (not a whole region) is first kept
 * as it is on a short LIFO list of its class (at most KP_QUICK per
 * class), and a request of exactly its size takes it back without a
 * split or a merge: the steady state of a pool (the same sizes freed and
 * allocated again) costs a push and a pop.  The lists are merged into
 * the ready space (flushed, classes in ascending order, each list from
 * its head) when a request finds nothing else, and before a region is
 * given back.
 * Block descriptors come from slabs the arena keeps: allocation and free
 * make no call to malloc once the arena has seen its working set.
 *
 * Not thread-safe: the pool's lock protects it.
 */
#ifndef KFDPOOL_ARENA_H
#define KFDPOOL_ARENA_H

#include <stddef.h>
#include <stdint.h>

#define KP_SL_SHIFT	3
#define KP_SL		(1u << KP_SL_SHIFT)	/* subclasses per class */
#define KP_FL		40	/* classes: blocks up to 2^(KP_FL+2) units */
#define KP_QUICK	8	/* blocks on a class's quick list */

struct kp_blk;
struct kp_region;

/* A free-list index: what the ready blocks and each stream queue have. */
struct kp_fl {
	uint64_t flmap;			/* classes with a non-empty subclass */
	uint8_t slmap[KP_FL];		/* non-empty subclasses of a class */
	struct kp_blk *head[KP_FL][KP_SL];
	uint64_t bytes;			/* bytes of the blocks in it */
	uint32_t nblk;
};

/*
 * The event a pending block waits for, as the arena sees it: the caller
 * embeds it in its own event object.  The arena links the blocks that
 * reference it and counts them; when the count drops to 0 it calls
 * arena->tag_idle.
 */
struct kp_tag {
	uint32_t refs;
	struct kp_blk *blocks;
};

enum { KP_USED = 1, KP_READY = 2, KP_PENDING = 3, KP_QUICK_FREE = 4 };

struct kp_blk {
	struct kp_blk *lnext, *lprev;	/* free-list links */
	struct kp_blk *pnext, *pprev;	/* neighbours in the region */
	struct kp_blk *tnext, *tprev;	/* pending: the tag's blocks */
	struct kp_region *reg;
	uint64_t off, size;		/* bytes, in the region */
	uint32_t state;
	uint32_t cls;			/* free: class * KP_SL + subclass */
	struct kp_fl *fl;		/* free: the index it is in */
	struct kp_tag *tag;		/* pending: its event */
	void *priv;			/* used: the owner's data */
};

/* A chunk as the arena sees it.  The caller embeds it. */
struct kp_region {
	uint64_t size;
	uint32_t nused, npending, nquick;	/* blocks */
	struct kp_blk *first;
};

struct kp_arena {
	unsigned int shift;		/* log2 of the alignment */
	struct kp_fl ready;
	struct kp_blk *quick[KP_FL * KP_SL];	/* by class, newest first */
	uint8_t nquick[KP_FL * KP_SL];
	uint32_t quick_total;
	struct kp_blk *spare;		/* unused descriptors */
	void **slabs;
	size_t nslabs, capslabs;
	void (*tag_idle)(struct kp_arena *a, struct kp_tag *t);
};

/* @shift: log2 of the alignment every block starts and ends on. */
void kp_arena_init(struct kp_arena *a, unsigned int shift);
void kp_arena_fini(struct kp_arena *a);

/* Add @r (@size bytes, a multiple of the alignment) as one ready block.
 * 0, -EINVAL (size), -ENOMEM. */
int kp_arena_add(struct kp_arena *a, struct kp_region *r, uint64_t size);
/* Whether every block of @r is ready (then @r is one block). */
static inline int kp_region_idle(const struct kp_region *r)
{
	return !r->nused && !r->npending && !r->nquick;
}
/* Merge every quick-list block into the ready space. */
void kp_arena_flush(struct kp_arena *a);
/* Take an idle region out of the arena. */
void kp_arena_remove(struct kp_arena *a, struct kp_region *r);

/*
 * Take @size bytes (rounded up to the alignment) from the blocks of @fl
 * (&a->ready, or a stream queue): the block, now used, or NULL (none fits,
 * or no descriptor for the split could be had).
 */
struct kp_blk *kp_arena_take(struct kp_arena *a, struct kp_fl *fl,
			     uint64_t size);
/*
 * What good fit misses: a block of @fl in the class of @size itself (which
 * holds blocks smaller than @size too) that holds @size bytes, among the
 * first @limit of that class.  A freed block of a size that is no class
 * bound (a whole chunk of its own, say) is then found again by a request
 * of its own size, instead of a new chunk being made.  NULL if none.
 */
struct kp_blk *kp_arena_take_within(struct kp_arena *a, struct kp_fl *fl,
				    uint64_t size, unsigned int limit);
/* Take @size bytes from the start of the free block @b (in any index). */
struct kp_blk *kp_arena_take_block(struct kp_arena *a, struct kp_blk *b,
				   uint64_t size);
/*
 * Visit the free blocks of @fl that hold @size bytes, in the order take
 * would consider their classes, at most @limit of them; the first for
 * which @fn returns non-zero is returned (NULL if none).
 */
struct kp_blk *kp_arena_scan(struct kp_arena *a, struct kp_fl *fl,
			     uint64_t size, unsigned int limit,
			     int (*fn)(struct kp_blk *b, void *arg), void *arg);

/* Free the used block @b: ready at once (on its class's quick list, or
 * merged with ready neighbours). */
void kp_arena_put(struct kp_arena *a, struct kp_blk *b);
/* Free the used block @b as pending in the queue @q until @t completes. */
void kp_arena_defer(struct kp_arena *a, struct kp_blk *b, struct kp_fl *q,
		    struct kp_tag *t);
/* A pending block becomes ready (its event completed, or the caller
 * waited for it). */
void kp_arena_settle(struct kp_arena *a, struct kp_blk *b);
/* Every block waiting for @t becomes ready. */
void kp_arena_settle_tag(struct kp_arena *a, struct kp_tag *t);

/* The class of a size of @u units (arena.c says how classes are cut). */
static inline __attribute__((always_inline)) uint32_t kp_cls_of(uint64_t u)
{
	unsigned int f;

	if (u < KP_SL)
		return (uint32_t)u;
	f = 63 - __builtin_clzll(u);
	return (f - KP_SL_SHIFT + 1) * KP_SL +
	       (uint32_t)((u >> (f - KP_SL_SHIFT)) & (KP_SL - 1));
}

/* The quick list's share of kp_arena_take from the ready space, and of
 * kp_arena_put: inline, for the steady state.  @size is rounded. */
static inline struct kp_blk *kp_arena_quick_take(struct kp_arena *a,
						 uint64_t size)
{
	uint32_t cls = kp_cls_of(size >> a->shift);
	struct kp_blk *b;

	if (cls >= KP_FL * KP_SL)
		return NULL;
	b = a->quick[cls];
	if (!b || b->size != size)
		return NULL;
	a->quick[cls] = b->lnext;
	a->nquick[cls]--;
	a->quick_total--;
	b->reg->nquick--;
	b->reg->nused++;
	b->state = KP_USED;
	return b;
}

static inline int kp_arena_quick_put(struct kp_arena *a, struct kp_blk *b)
{
	uint32_t cls = kp_cls_of(b->size >> a->shift);

	/* A whole region gains nothing from the list: nothing to merge. */
	if ((!b->pnext && !b->pprev) || a->nquick[cls] >= KP_QUICK)
		return 0;
	b->reg->nused--;
	b->priv = NULL;
	b->state = KP_QUICK_FREE;
	b->lnext = a->quick[cls];
	a->quick[cls] = b;
	a->nquick[cls]++;
	a->quick_total++;
	b->reg->nquick++;
	return 1;
}

/* The request a size maps to: the rounded size, for tests and callers
 * that account bytes. */
static inline uint64_t kp_arena_round(const struct kp_arena *a, uint64_t size)
{
	uint64_t m = (1ULL << a->shift) - 1;

	return (size + m) & ~m;
}

/*
 * Used blocks by their address: an open-addressing hash (linear probing,
 * deletion by backward shift), what hipFree and pointer export look an
 * address up in.  Grows at half load; never shrinks.
 */
struct kp_map_ent {
	uintptr_t key;			/* 0: empty */
	struct kp_blk *blk;
};

struct kp_map {
	struct kp_map_ent *t;
	uint32_t mask, n;
};

int kp_map_grow(struct kp_map *m);
void kp_map_fini(struct kp_map *m);

static inline uint32_t kp_map_home(const struct kp_map *m, uintptr_t key)
{
	return (uint32_t)(((uint64_t)(key >> 8) * 0x9E3779B97F4A7C15ULL) >> 32) &
	       m->mask;
}

static inline int kp_map_put(struct kp_map *m, uintptr_t key, struct kp_blk *b)
{
	uint32_t i;

	if ((!m->t || 2 * (m->n + 1) > m->mask + 1) && kp_map_grow(m))
		return -12;	/* -ENOMEM */
	for (i = kp_map_home(m, key); m->t[i].key; i = (i + 1) & m->mask)
		if (m->t[i].key == key)
			return -17;	/* -EEXIST */
	m->t[i].key = key;
	m->t[i].blk = b;
	m->n++;
	return 0;
}

static inline struct kp_blk *kp_map_get(const struct kp_map *m, uintptr_t key)
{
	uint32_t i;

	if (!m->t || !key)
		return NULL;
	for (i = kp_map_home(m, key); m->t[i].key; i = (i + 1) & m->mask)
		if (m->t[i].key == key)
			return m->t[i].blk;
	return NULL;
}

static inline struct kp_blk *kp_map_del(struct kp_map *m, uintptr_t key)
{
	struct kp_blk *b;
	uint32_t i, j, k;

	if (!m->t || !key)
		return NULL;
	for (i = kp_map_home(m, key); m->t[i].key != key; i = (i + 1) & m->mask)
		if (!m->t[i].key)
			return NULL;
	b = m->t[i].blk;
	/* Backward shift: move up every entry the hole would hide. */
	for (j = (i + 1) & m->mask; m->t[j].key; j = (j + 1) & m->mask) {
		k = kp_map_home(m, m->t[j].key);
		if ((j > i && (k <= i || k > j)) ||
		    (j < i && k <= i && k > j)) {
			m->t[i] = m->t[j];
			i = j;
		}
	}
	m->t[i].key = 0;
	m->t[i].blk = NULL;
	m->n--;
	return b;
}

#endif
