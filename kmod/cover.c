// SPDX-License-Identifier: GPL-2.0-only
/*
 * Coverage of an entry by its records: how many bytes of the entry at least
 * one record covers, so that a pool's used bytes count overlapping records
 * (interior pointers of one allocation, a pointer exported twice) once.
 *
 * The tree holds the entry's breakpoints: the offsets where records start or
 * end, in offset order.  A breakpoint's delta is the records starting there
 * minus those ending there, so the running sum of deltas up to a breakpoint
 * is the depth (records covering) of the segment from it to the next
 * breakpoint.  Each node also summarises its subtree (sum of deltas, least
 * running sum, bytes of segments at that least depth): the covered bytes are
 * the span from the first breakpoint to the last minus the bytes at depth 0,
 * read from the root.  Adding or removing a record touches two breakpoints
 * and their paths to the root: O(log n), whatever the records overlap.
 *
 * Memory: 64 bytes per distinct breakpoint, so at most 128 per record and
 * none for a record whose start and end are breakpoints already (the same
 * pointer exported again, an allocation next to another).
 */
#include <linux/rbtree_augmented.h>
#include <linux/sched.h>
#include <linux/slab.h>

#include "kfdpool.h"

/**
 * struct kfdpool_bp - a breakpoint: an offset where records start or end
 * @rb: in kfdpool_cover.root, by @x
 * @x: the offset
 * @seglen: bytes from @x to the next breakpoint, 0 for the last
 * @delta: records starting at @x minus records ending at @x
 * @refs: records starting or ending at @x
 * @sum: of the subtree: sum of @delta
 * @minpref: of the subtree: least running sum of @delta, taken after each
 *	breakpoint in offset order
 * @minlen: of the subtree: @seglen total of the breakpoints after which the
 *	running sum is @minpref
 */
struct kfdpool_bp {
	struct rb_node rb;
	u64 x;
	u64 seglen;
	s32 delta;
	u32 refs;
	s32 sum;
	s32 minpref;
	u64 minlen;
};

static struct kmem_cache *kfdpool_bp_cache;

static inline struct kfdpool_bp *kfdpool_bp_of(struct rb_node *rb)
{
	return rb ? rb_entry(rb, struct kfdpool_bp, rb) : NULL;
}

/* The summary of @bp's subtree from its children's and its own fields. */
static void kfdpool_bp_compute(struct kfdpool_bp *bp)
{
	struct kfdpool_bp *l = kfdpool_bp_of(bp->rb.rb_left);
	struct kfdpool_bp *r = kfdpool_bp_of(bp->rb.rb_right);
	s32 sum = l ? l->sum : 0;
	s32 minpref;
	u64 minlen;

	sum += bp->delta;
	if (!l || sum < l->minpref) {
		minpref = sum;
		minlen = bp->seglen;
	} else {
		minpref = l->minpref;
		minlen = l->minlen + (sum == l->minpref ? bp->seglen : 0);
	}
	if (r) {
		s32 rmin = sum + r->minpref;

		if (rmin < minpref) {
			minpref = rmin;
			minlen = r->minlen;
		} else if (rmin == minpref) {
			minlen += r->minlen;
		}
		sum += r->sum;
	}
	bp->sum = sum;
	bp->minpref = minpref;
	bp->minlen = minlen;
}

/*
 * Recompute from @rb up to @stop.  No early exit when a summary comes out
 * unchanged: after an insertion the ancestors are recomputed from scratch.
 */
static void kfdpool_bp_propagate(struct rb_node *rb, struct rb_node *stop)
{
	while (rb != stop) {
		kfdpool_bp_compute(kfdpool_bp_of(rb));
		rb = rb_parent(rb);
	}
}

static void kfdpool_bp_copy(struct rb_node *rb_old, struct rb_node *rb_new)
{
	struct kfdpool_bp *old = kfdpool_bp_of(rb_old);
	struct kfdpool_bp *new = kfdpool_bp_of(rb_new);

	new->sum = old->sum;
	new->minpref = old->minpref;
	new->minlen = old->minlen;
}

static void kfdpool_bp_rotate(struct rb_node *rb_old, struct rb_node *rb_new)
{
	kfdpool_bp_copy(rb_old, rb_new);
	kfdpool_bp_compute(kfdpool_bp_of(rb_old));
}

static const struct rb_augment_callbacks kfdpool_bp_callbacks = {
	.propagate = kfdpool_bp_propagate,
	.copy = kfdpool_bp_copy,
	.rotate = kfdpool_bp_rotate,
};

/**
 * kfdpool_cover_bytes() - bytes of the entry that records cover
 * @c: the coverage
 *
 * Return: the span from the first breakpoint to the last, minus the bytes
 * no record covers inside it.  The running sum after the last breakpoint is
 * 0 and depths are never negative, so the root's least running sum is 0 and
 * its @minlen is those bytes.
 */
static u64 kfdpool_cover_bytes(const struct kfdpool_cover *c)
{
	struct kfdpool_bp *root = kfdpool_bp_of(c->root.rb_node);

	if (!root)
		return 0;
	return kfdpool_bp_of(rb_last(&c->root))->x -
	       kfdpool_bp_of(rb_first(&c->root))->x - root->minlen;
}

/*
 * Add @delta at offset @x, with the spare node @spare if @x is new (it is
 * then consumed: *spare set to NULL).
 */
static void kfdpool_cover_add_bp(struct kfdpool_cover *c, u64 x, s32 delta,
				 struct kfdpool_bp **spare)
{
	struct rb_node **link = &c->root.rb_node, *parent = NULL;
	struct kfdpool_bp *bp, *pred = NULL, *succ = NULL;

	while (*link) {
		parent = *link;
		bp = kfdpool_bp_of(parent);
		if (x == bp->x) {
			bp->delta += delta;
			bp->refs++;
			kfdpool_bp_propagate(&bp->rb, NULL);
			return;
		}
		if (x < bp->x) {
			succ = bp;
			link = &parent->rb_left;
		} else {
			pred = bp;
			link = &parent->rb_right;
		}
	}

	bp = *spare;
	*spare = NULL;
	bp->x = x;
	bp->delta = delta;
	bp->refs = 1;
	bp->seglen = succ ? succ->x - x : 0;
	bp->sum = delta;
	bp->minpref = delta;
	bp->minlen = bp->seglen;
	rb_link_node(&bp->rb, parent, link);
	rb_insert_augmented(&bp->rb, &c->root, &kfdpool_bp_callbacks);
	/* Rotations left the new node's ancestors stale: recompute them. */
	kfdpool_bp_propagate(&bp->rb, NULL);
	if (pred) {
		pred->seglen = x - pred->x;
		kfdpool_bp_propagate(&pred->rb, NULL);
	}
}

/* Take @delta back at offset @x; the node goes when no record uses it. */
static void kfdpool_cover_del_bp(struct kfdpool_cover *c, u64 x, s32 delta)
{
	struct rb_node *rb = c->root.rb_node;
	struct kfdpool_bp *bp = NULL, *pred;

	while (rb) {
		bp = kfdpool_bp_of(rb);
		if (x == bp->x)
			break;
		rb = x < bp->x ? rb->rb_left : rb->rb_right;
	}
	if (WARN_ON_ONCE(!rb))
		return;

	bp->delta -= delta;
	if (--bp->refs) {
		kfdpool_bp_propagate(&bp->rb, NULL);
		return;
	}
	WARN_ON_ONCE(bp->delta);
	pred = kfdpool_bp_of(rb_prev(&bp->rb));
	rb_erase_augmented(&bp->rb, &c->root, &kfdpool_bp_callbacks);
	if (pred) {
		/* The predecessor's segment now runs to @bp's successor. */
		pred->seglen = bp->seglen ? pred->seglen + bp->seglen : 0;
		kfdpool_bp_propagate(&pred->rb, NULL);
	}
	kmem_cache_free(kfdpool_bp_cache, bp);
}

/**
 * kfdpool_cover_prepare() - allocate what kfdpool_cover_add() may need
 * @spare: two node slots, filled
 *
 * Called before taking the pool's lock; kfdpool_cover_release() returns
 * what was not used.
 *
 * Return: 0 or -ENOMEM.
 */
int kfdpool_cover_prepare(struct kfdpool_bp *spare[2])
{
	spare[0] = kmem_cache_alloc(kfdpool_bp_cache, GFP_KERNEL_ACCOUNT);
	spare[1] = kmem_cache_alloc(kfdpool_bp_cache, GFP_KERNEL_ACCOUNT);
	if (spare[0] && spare[1])
		return 0;
	kfdpool_cover_release(spare);
	return -ENOMEM;
}

void kfdpool_cover_release(struct kfdpool_bp *spare[2])
{
	if (spare[0])
		kmem_cache_free(kfdpool_bp_cache, spare[0]);
	if (spare[1])
		kmem_cache_free(kfdpool_bp_cache, spare[1]);
	spare[0] = NULL;
	spare[1] = NULL;
}

/**
 * kfdpool_cover_add() - a record covers [@start, @start + @size)
 * @c: the entry's coverage
 * @start: offset
 * @size: bytes, > 0
 * @spare: from kfdpool_cover_prepare(); the nodes used are taken
 *
 * Return: how many bytes the coverage grew by.
 */
u64 kfdpool_cover_add(struct kfdpool_cover *c, u64 start, u64 size,
		      struct kfdpool_bp *spare[2])
{
	u64 old = c->bytes;

	kfdpool_cover_add_bp(c, start, 1, &spare[0]);
	kfdpool_cover_add_bp(c, start + size, -1,
			     spare[0] ? &spare[0] : &spare[1]);
	c->bytes = kfdpool_cover_bytes(c);
	return c->bytes - old;
}

/**
 * kfdpool_cover_del() - a record of [@start, @start + @size) goes
 * @c: the entry's coverage
 * @start: offset, as added
 * @size: bytes, as added
 *
 * Return: how many bytes the coverage shrank by.
 */
u64 kfdpool_cover_del(struct kfdpool_cover *c, u64 start, u64 size)
{
	u64 old = c->bytes;

	kfdpool_cover_del_bp(c, start, 1);
	kfdpool_cover_del_bp(c, start + size, -1);
	c->bytes = kfdpool_cover_bytes(c);
	return old - c->bytes;
}

/**
 * kfdpool_cover_take() - move all of @c's breakpoints to @out
 * @c: the coverage, left empty
 * @out: receives the tree, to free with kfdpool_cover_free() without locks
 *
 * Return: the bytes @c covered.
 */
u64 kfdpool_cover_take(struct kfdpool_cover *c, struct rb_root *out)
{
	u64 bytes = c->bytes;

	*out = c->root;
	c->root = RB_ROOT;
	c->bytes = 0;
	return bytes;
}

/* Free a tree from kfdpool_cover_take(), yielding the CPU now and then. */
void kfdpool_cover_free(struct rb_root *root)
{
	struct kfdpool_bp *bp, *next;
	unsigned int n = 0;

	rbtree_postorder_for_each_entry_safe(bp, next, root, rb) {
		kmem_cache_free(kfdpool_bp_cache, bp);
		if (!(++n % KFDPOOL_TEARDOWN_BATCH))
			cond_resched();
	}
	*root = RB_ROOT;
}

int kfdpool_cover_init(void)
{
	BUILD_BUG_ON(sizeof(struct kfdpool_bp) != 64);
	kfdpool_bp_cache = KMEM_CACHE(kfdpool_bp, SLAB_ACCOUNT);
	return kfdpool_bp_cache ? 0 : -ENOMEM;
}

void kfdpool_cover_exit(void)
{
	kmem_cache_destroy(kfdpool_bp_cache);
}
