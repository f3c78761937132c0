// SPDX-License-Identifier: MIT
/*
 * The pool's sub-allocator (arena.h): segregated free lists over the
 * blocks of every chunk, ready and pending blocks, and the hash of used
 * blocks by address.
 *
 * Classes: a size of u units (alignment units) below KP_SL is class u of
 * row 0, exactly.  Above, row r >= 1 holds [2^f, 2^(f+1)) with f = r + 2,
 * split into KP_SL equal subclasses.  A request is rounded up to the next
 * subclass boundary, so every block of the class found holds it: the
 * search is two bitmap lookups, never a walk over blocks or chunks.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"

#define SLAB_BLKS 64

#define cls_of kp_cls_of

/* The first class all of whose blocks hold @u units. */
static uint32_t cls_search(uint64_t u)
{
	unsigned int f;

	if (u < KP_SL)
		return (uint32_t)u;
	f = 63 - __builtin_clzll(u);
	return cls_of(u + (1ULL << (f - KP_SL_SHIFT)) - 1);
}

/* The lowest non-empty class at or above @cls, or -1. */
static int find_cls(const struct kp_fl *fl, uint32_t cls)
{
	uint32_t row = cls / KP_SL, sl = cls % KP_SL;
	unsigned int slm;
	uint64_t flm;

	if (row >= KP_FL)
		return -1;
	slm = fl->slmap[row] & (0xffu << sl) & 0xffu;
	if (!slm) {
		flm = row + 1 < 64 ? fl->flmap & (~0ULL << (row + 1)) : 0;
		if (!flm)
			return -1;
		row = __builtin_ctzll(flm);
		slm = fl->slmap[row];
	}
	return (int)(row * KP_SL + __builtin_ctz(slm));
}

static inline __attribute__((always_inline)) void
fl_insert(struct kp_arena *a, struct kp_fl *fl, struct kp_blk *b)
{
	uint32_t cls = cls_of(b->size >> a->shift);
	struct kp_blk **h = &fl->head[cls / KP_SL][cls % KP_SL];

	b->cls = cls;
	b->fl = fl;
	b->lprev = NULL;
	b->lnext = *h;
	if (*h)
		(*h)->lprev = b;
	*h = b;
	fl->slmap[cls / KP_SL] |= 1u << (cls % KP_SL);
	fl->flmap |= 1ULL << (cls / KP_SL);
	fl->bytes += b->size;
	fl->nblk++;
}

static inline __attribute__((always_inline)) void fl_remove(struct kp_blk *b)
{
	struct kp_fl *fl = b->fl;
	uint32_t row = b->cls / KP_SL, sl = b->cls % KP_SL;

	if (b->lnext)
		b->lnext->lprev = b->lprev;
	if (b->lprev) {
		b->lprev->lnext = b->lnext;
	} else {
		fl->head[row][sl] = b->lnext;
		if (!b->lnext) {
			fl->slmap[row] &= ~(1u << sl);
			if (!fl->slmap[row])
				fl->flmap &= ~(1ULL << row);
		}
	}
	fl->bytes -= b->size;
	fl->nblk--;
	b->fl = NULL;
	b->lnext = b->lprev = NULL;
}

/* ---- descriptors ---- */

static struct kp_blk *desc_get(struct kp_arena *a)
{
	struct kp_blk *s, *b;
	void **ns;
	size_t i;

	if (!a->spare) {
		if (a->nslabs == a->capslabs) {
			size_t cap = a->capslabs ? 2 * a->capslabs : 16;

			ns = realloc(a->slabs, cap * sizeof(*ns));
			if (!ns)
				return NULL;
			a->slabs = ns;
			a->capslabs = cap;
		}
		s = malloc(SLAB_BLKS * sizeof(*s));
		if (!s)
			return NULL;
		a->slabs[a->nslabs++] = s;
		for (i = 0; i < SLAB_BLKS; i++) {
			s[i].lnext = a->spare;
			a->spare = &s[i];
		}
	}
	/* Every field is set by the caller that uses it. */
	b = a->spare;
	a->spare = b->lnext;
	b->tag = NULL;
	b->tnext = b->tprev = NULL;
	b->priv = NULL;
	return b;
}

static void desc_put(struct kp_arena *a, struct kp_blk *b)
{
	b->state = 0;
	b->lnext = a->spare;
	a->spare = b;
}

/* ---- tags ---- */

static void tag_link(struct kp_blk *b, struct kp_tag *t)
{
	b->tag = t;
	b->tprev = NULL;
	b->tnext = t->blocks;
	if (t->blocks)
		t->blocks->tprev = b;
	t->blocks = b;
	t->refs++;
}

static void tag_unlink(struct kp_arena *a, struct kp_blk *b)
{
	struct kp_tag *t = b->tag;

	if (b->tnext)
		b->tnext->tprev = b->tprev;
	if (b->tprev)
		b->tprev->tnext = b->tnext;
	else
		t->blocks = b->tnext;
	b->tag = NULL;
	b->tnext = b->tprev = NULL;
	if (!--t->refs && a->tag_idle)
		a->tag_idle(a, t);
}

/* ---- the arena ---- */

void kp_arena_init(struct kp_arena *a, unsigned int shift)
{
	memset(a, 0, sizeof(*a));
	a->shift = shift;
}

void kp_arena_fini(struct kp_arena *a)
{
	size_t i;

	for (i = 0; i < a->nslabs; i++)
		free(a->slabs[i]);
	free(a->slabs);
	memset(a, 0, sizeof(*a));
}

int kp_arena_add(struct kp_arena *a, struct kp_region *r, uint64_t size)
{
	struct kp_blk *b;

	if (!size || (size & ((1ULL << a->shift) - 1)) ||
	    cls_of(size >> a->shift) >= KP_FL * KP_SL)
		return -EINVAL;
	b = desc_get(a);
	if (!b)
		return -ENOMEM;
	memset(r, 0, sizeof(*r));
	r->size = size;
	r->first = b;
	b->reg = r;
	b->off = 0;
	b->size = size;
	b->pnext = b->pprev = NULL;
	b->state = KP_READY;
	fl_insert(a, &a->ready, b);
	return 0;
}

void kp_arena_remove(struct kp_arena *a, struct kp_region *r)
{
	struct kp_blk *b = r->first;

	fl_remove(b);
	desc_put(a, b);
	r->first = NULL;
}

struct kp_blk *kp_arena_take_block(struct kp_arena *a, struct kp_blk *b,
				   uint64_t size)
{
	struct kp_region *r = b->reg;
	struct kp_fl *fl = b->fl;
	struct kp_blk *n;

	size = kp_arena_round(a, size);
	if (b->size > size) {
		/* The rest stays where the block was, in the same state. */
		n = desc_get(a);
		if (!n)
			return NULL;
		fl_remove(b);
		n->reg = r;
		n->off = b->off + size;
		n->size = b->size - size;
		n->state = b->state;
		n->pprev = b;
		n->pnext = b->pnext;
		if (b->pnext)
			b->pnext->pprev = n;
		b->pnext = n;
		b->size = size;
		if (n->state == KP_PENDING) {
			tag_link(n, b->tag);
			r->npending++;
		}
		fl_insert(a, fl, n);
	} else {
		fl_remove(b);
	}
	if (b->state == KP_PENDING) {
		r->npending--;
		tag_unlink(a, b);
	}
	b->state = KP_USED;
	b->priv = NULL;
	r->nused++;
	return b;
}

struct kp_blk *kp_arena_take(struct kp_arena *a, struct kp_fl *fl,
			     uint64_t size)
{
	uint64_t u;
	struct kp_blk *b;
	int c;

	size = kp_arena_round(a, size);
	u = size >> a->shift;
	if (!u)
		return NULL;
	if (fl == &a->ready && (b = kp_arena_quick_take(a, size)))
		return b;
	c = find_cls(fl, cls_search(u));
	if (c < 0 && fl == &a->ready && a->quick_total) {
		kp_arena_flush(a);
		c = find_cls(fl, cls_search(u));
	}
	if (c < 0)
		return NULL;
	return kp_arena_take_block(a, fl->head[c / KP_SL][c % KP_SL], size);
}

struct kp_blk *kp_arena_take_within(struct kp_arena *a, struct kp_fl *fl,
				    uint64_t size, unsigned int limit)
{
	uint64_t u;
	struct kp_blk *b;
	uint32_t c;

	size = kp_arena_round(a, size);
	u = size >> a->shift;
	if (!u)
		return NULL;
	c = cls_of(u);
	if (c / KP_SL >= KP_FL)
		return NULL;
	for (b = fl->head[c / KP_SL][c % KP_SL]; b && limit; b = b->lnext, limit--)
		if (b->size >= size)
			return kp_arena_take_block(a, b, size);
	return NULL;
}

struct kp_blk *kp_arena_scan(struct kp_arena *a, struct kp_fl *fl,
			     uint64_t size, unsigned int limit,
			     int (*fn)(struct kp_blk *b, void *arg), void *arg)
{
	uint64_t u = kp_arena_round(a, size) >> a->shift;
	unsigned int seen = 0;
	struct kp_blk *b;
	int c;

	if (!u)
		return NULL;
	for (c = find_cls(fl, cls_search(u)); c >= 0 && seen < limit;
	     c = find_cls(fl, (uint32_t)c + 1)) {
		for (b = fl->head[c / KP_SL][c % KP_SL]; b && seen < limit;
		     b = b->lnext, seen++)
			if (fn(b, arg))
				return b;
		if ((uint32_t)c + 1 >= KP_FL * KP_SL)
			break;
	}
	return NULL;
}

/* @b (not in any index) becomes ready: merged with ready neighbours. */
static void make_ready(struct kp_arena *a, struct kp_blk *b)
{
	struct kp_blk *n = b->pnext, *p = b->pprev;

	b->state = KP_READY;
	if (n && n->state == KP_READY) {
		fl_remove(n);
		b->size += n->size;
		b->pnext = n->pnext;
		if (n->pnext)
			n->pnext->pprev = b;
		desc_put(a, n);
	}
	if (p && p->state == KP_READY) {
		fl_remove(p);
		p->size += b->size;
		p->pnext = b->pnext;
		if (b->pnext)
			b->pnext->pprev = p;
		desc_put(a, b);
		b = p;
	}
	if (!b->pprev)
		b->reg->first = b;
	fl_insert(a, &a->ready, b);
}

void kp_arena_put(struct kp_arena *a, struct kp_blk *b)
{
	if (kp_arena_quick_put(a, b))
		return;
	b->reg->nused--;
	b->priv = NULL;
	make_ready(a, b);
}

void kp_arena_flush(struct kp_arena *a)
{
	struct kp_blk *b;
	uint32_t cls;

	for (cls = 0; a->quick_total && cls < KP_FL * KP_SL; cls++) {
		while ((b = a->quick[cls])) {
			a->quick[cls] = b->lnext;
			a->nquick[cls]--;
			a->quick_total--;
			b->reg->nquick--;
			b->lnext = NULL;
			make_ready(a, b);
		}
	}
}

void kp_arena_defer(struct kp_arena *a, struct kp_blk *b, struct kp_fl *q,
		    struct kp_tag *t)
{
	b->reg->nused--;
	b->reg->npending++;
	b->priv = NULL;
	b->state = KP_PENDING;
	tag_link(b, t);
	fl_insert(a, q, b);
}

void kp_arena_settle(struct kp_arena *a, struct kp_blk *b)
{
	fl_remove(b);
	b->reg->npending--;
	tag_unlink(a, b);
	make_ready(a, b);
}

void kp_arena_settle_tag(struct kp_arena *a, struct kp_tag *t)
{
	while (t->blocks) {
		int last = t->refs == 1;

		/* The last one may end the tag (tag_idle). */
		kp_arena_settle(a, t->blocks);
		if (last)
			break;
	}
}

/* ---- used blocks by address ---- */

int kp_map_grow(struct kp_map *m)
{
	uint32_t cap = m->t ? 2 * (m->mask + 1) : 64, i;
	struct kp_map old = *m;

	m->t = calloc(cap, sizeof(*m->t));
	if (!m->t) {
		*m = old;
		return -ENOMEM;
	}
	m->mask = cap - 1;
	m->n = 0;
	for (i = 0; old.t && i <= old.mask; i++)
		if (old.t[i].key)
			kp_map_put(m, old.t[i].key, old.t[i].blk);
	free(old.t);
	return 0;
}

void kp_map_fini(struct kp_map *m)
{
	free(m->t);
	memset(m, 0, sizeof(*m));
}
