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
 * The paths are not recomputed as each record comes and goes: the
 * breakpoints a change stales are noted in the pool's transaction (struct
 * kfdpool_cover_txn) and kfdpool_cover_settle() recomputes every node on
 * their paths once, children first, before the pool's lock is dropped.  A
 * batch's records of one entry share most of their paths (a path is ~2
 * log2(n) nodes, and recomputing each in turn was most of an export's
 * cost).  Meanwhile every node whose summary is stale is on the path of a
 * noted breakpoint: a rotation gives the node taking another's place (the
 * same subtree) that one's summary and recomputes the other from its
 * children, which keeps that true; rb_erase_augmented()'s propagation only
 * notes where it would have started.
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
 * @dirty: noted in a transaction, or on the way to the root in a settle
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
	u32 refs:31;
	u32 dirty:1;
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

/* Recompute from @rb up to @stop. */
static void kfdpool_bp_walk(struct rb_node *rb, struct rb_node *stop)
{
	while (rb != stop) {
		kfdpool_bp_compute(kfdpool_bp_of(rb));
		rb = rb_parent(rb);
	}
}

/*
 * Note @rb in @t: its path to the root is stale.  @rb NULL: @c changed,
 * its bytes are to recount (even when no node is left to note).
 */
static void kfdpool_cover_note(struct kfdpool_cover_txn *t,
			       struct kfdpool_cover *c, struct rb_node *rb)
{
	struct kfdpool_bp *bp = kfdpool_bp_of(rb);

	if (bp && !t->deferred) {
		kfdpool_bp_walk(rb, NULL);
		return;
	}
	if (bp ? bp->dirty : c->noted)
		return;
	/* kfdpool_cover_txn_full() before each change leaves room. */
	if (WARN_ON_ONCE(t->n == KFDPOOL_COVER_DIRTY))
		return;
	if (bp)
		bp->dirty = 1;
	else
		c->noted = true;
	t->d[t->n].c = c;
	t->d[t->n].rb = rb;
	t->n++;
}

/* What rb_erase_augmented()'s propagation notes in: see kfdpool_cover_erase(). */
struct kfdpool_cover_erasing {
	struct kfdpool_cover_txn *t;
	struct kfdpool_cover *c;
};

static DEFINE_PER_CPU(struct kfdpool_cover_erasing *, kfdpool_cover_erasing);

/*
 * rb_erase_augmented()'s propagation, from @rb up to @stop: noted, to be
 * recomputed with the rest at settle.
 */
static void kfdpool_bp_propagate(struct rb_node *rb, struct rb_node *stop)
{
	struct kfdpool_cover_erasing *e = this_cpu_read(kfdpool_cover_erasing);

	if (!e->t->deferred)
		kfdpool_bp_walk(rb, stop);
	else if (rb && rb != stop)
		kfdpool_cover_note(e->t, e->c, rb);
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
static void kfdpool_cover_add_bp(struct kfdpool_cover_txn *t,
				 struct kfdpool_cover *c, u64 x, s32 delta,
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
			kfdpool_cover_note(t, c, &bp->rb);
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
	bp->dirty = 0;
	bp->seglen = succ ? succ->x - x : 0;
	bp->sum = delta;
	bp->minpref = delta;
	bp->minlen = bp->seglen;
	rb_link_node(&bp->rb, parent, link);
	rb_insert_augmented(&bp->rb, &c->root, &kfdpool_bp_callbacks);
	kfdpool_cover_note(t, c, &bp->rb);
	if (pred) {
		pred->seglen = x - pred->x;
		kfdpool_cover_note(t, c, &pred->rb);
	}
}

/* Erase @bp, noting in @t the nodes that become stale. */
static void kfdpool_cover_erase(struct kfdpool_cover_txn *t,
				struct kfdpool_cover *c, struct kfdpool_bp *bp)
{
	struct kfdpool_cover_erasing e = { .t = t, .c = c };
	unsigned int i;

	/* A node going must not stay noted. */
	if (bp->dirty) {
		for (i = 0; i < t->n && t->d[i].rb != &bp->rb; i++)
			;
		if (!WARN_ON_ONCE(i == t->n))
			t->d[i] = t->d[--t->n];
	}
	preempt_disable();
	this_cpu_write(kfdpool_cover_erasing, &e);
	rb_erase_augmented(&bp->rb, &c->root, &kfdpool_bp_callbacks);
	this_cpu_write(kfdpool_cover_erasing, NULL);
	preempt_enable();
}

/* Take @delta back at offset @x; the node goes when no record uses it. */
static void kfdpool_cover_del_bp(struct kfdpool_cover_txn *t,
				 struct kfdpool_cover *c, u64 x, s32 delta)
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
		kfdpool_cover_note(t, c, &bp->rb);
		return;
	}
	WARN_ON_ONCE(bp->delta);
	pred = kfdpool_bp_of(rb_prev(&bp->rb));
	kfdpool_cover_erase(t, c, bp);
	if (pred) {
		/* The predecessor's segment now runs to @bp's successor. */
		pred->seglen = bp->seglen ? pred->seglen + bp->seglen : 0;
		kfdpool_cover_note(t, c, &pred->rb);
	}
	kmem_cache_free(kfdpool_bp_cache, bp);
}

/**
 * kfdpool_bp_stash_take() - the spares of one kfdpool_cover_add()
 * @stash: the pool's unused breakpoints, emptied
 * @spare: filled from @stash, allocating what it lacked
 *
 * pool->lock held (it may sleep: a mutex).  An export needs at most two new
 * breakpoints and usually none (its start and end are breakpoints of other
 * records already), so taking them from the stash and giving back the
 * unused ones (kfdpool_bp_stash_keep()) spares the slab two allocations and
 * two frees per export.
 *
 * Return: 0 or -ENOMEM (then @stash holds what it held).
 */
int kfdpool_bp_stash_take(struct kfdpool_bp *stash[2],
			  struct kfdpool_bp *spare[2])
{
	int i;

	for (i = 0; i < 2; i++) {
		spare[i] = stash[i];
		stash[i] = NULL;
		if (!spare[i])
			spare[i] = kmem_cache_alloc(kfdpool_bp_cache,
						    GFP_KERNEL_ACCOUNT);
		if (!spare[i]) {
			kfdpool_bp_stash_keep(stash, spare);
			return -ENOMEM;
		}
	}
	return 0;
}

/* Put what kfdpool_cover_add() left of @spare back in @stash. */
void kfdpool_bp_stash_keep(struct kfdpool_bp *stash[2],
			   struct kfdpool_bp *spare[2])
{
	int i;

	for (i = 0; i < 2; i++) {
		if (!spare[i])
			continue;
		if (!stash[0])
			stash[0] = spare[i];
		else if (!stash[1])
			stash[1] = spare[i];
		else
			kmem_cache_free(kfdpool_bp_cache, spare[i]);
		spare[i] = NULL;
	}
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

/* Most nodes one kfdpool_cover_add() or _del() notes: see kfdpool_cover_txn_full(). */
#define KFDPOOL_COVER_NOTES	7

/* Up to this many noted nodes, kfdpool_cover_fixup() walks each to the root. */
#define KFDPOOL_COVER_WALK	4

/**
 * kfdpool_cover_txn_full() - whether @t must be settled before a change
 * @t: the pool's transaction
 *
 * Return: true when one more kfdpool_cover_add() or kfdpool_cover_del()
 * might not find room to note what it stales (the coverage, and per
 * breakpoint: itself, its predecessor, and where an erase's propagation
 * starts).
 */
bool kfdpool_cover_txn_full(const struct kfdpool_cover_txn *t)
{
	return t->n > KFDPOOL_COVER_DIRTY - KFDPOOL_COVER_NOTES;
}

/**
 * kfdpool_cover_add() - a record covers [@start, @start + @size)
 * @t: the pool's transaction, not full (kfdpool_cover_txn_full())
 * @c: the entry's coverage
 * @start: offset
 * @size: bytes, > 0
 * @spare: from kfdpool_bp_stash_take(); the nodes used are taken
 *
 * Return: how many bytes the coverage grew by; in a deferred transaction
 * 0, what it grew by is counted at kfdpool_cover_settle().
 */
u64 kfdpool_cover_add(struct kfdpool_cover_txn *t, struct kfdpool_cover *c,
		      u64 start, u64 size, struct kfdpool_bp *spare[2])
{
	u64 old = c->bytes;

	kfdpool_cover_add_bp(t, c, start, 1, &spare[0]);
	kfdpool_cover_add_bp(t, c, start + size, -1,
			     spare[0] ? &spare[0] : &spare[1]);
	if (t->deferred) {
		kfdpool_cover_note(t, c, NULL);
		return 0;
	}
	c->bytes = kfdpool_cover_bytes(c);
	return c->bytes - old;
}

/**
 * kfdpool_cover_del() - a record of [@start, @start + @size) goes
 * @t: the pool's transaction, not full (kfdpool_cover_txn_full())
 * @c: the entry's coverage
 * @start: offset, as added
 * @size: bytes, as added
 *
 * Return: how many bytes the coverage shrank by; in a deferred transaction
 * 0, what it shrank by is counted at kfdpool_cover_settle().
 */
u64 kfdpool_cover_del(struct kfdpool_cover_txn *t, struct kfdpool_cover *c,
		      u64 start, u64 size)
{
	u64 old = c->bytes;

	kfdpool_cover_del_bp(t, c, start, 1);
	kfdpool_cover_del_bp(t, c, start + size, -1);
	if (t->deferred) {
		kfdpool_cover_note(t, c, NULL);
		return 0;
	}
	c->bytes = kfdpool_cover_bytes(c);
	return old - c->bytes;
}

/*
 * Recompute the @n nodes of @rb (noted, of one tree) and every node on
 * their paths to the root, each once and after its children: the deepest
 * first, each handing on to its parent unless that is on its way already
 * (dirty).  A few nodes (one record's) walk up in turn instead: finding
 * depths costs more than the nodes that may be recomputed twice.  Clears
 * the nodes' dirty marks.
 */
static void kfdpool_cover_fixup(struct rb_node **rb, unsigned int n)
{
	unsigned int depth[KFDPOOL_COVER_DIRTY], deepest, i;
	struct rb_node *up;

	if (n <= KFDPOOL_COVER_WALK) {
		/*
		 * Latest first (a breakpoint a record added sits below the
		 * one before it), each up to where another waits (dirty):
		 * that one's walk goes on from there, after it.
		 */
		while (n--) {
			up = rb[n];
			do {
				kfdpool_bp_compute(kfdpool_bp_of(up));
				kfdpool_bp_of(up)->dirty = 0;
				up = rb_parent(up);
			} while (up && !kfdpool_bp_of(up)->dirty);
		}
		return;
	}
	for (i = 0; i < n; i++) {
		depth[i] = 0;
		for (up = rb_parent(rb[i]); up; up = rb_parent(up))
			depth[i]++;
	}
	while (n) {
		deepest = 0;
		for (i = 0; i < n; i++)
			deepest = max(deepest, depth[i]);
		for (i = 0; i < n;) {
			if (depth[i] != deepest) {
				i++;
				continue;
			}
			kfdpool_bp_compute(kfdpool_bp_of(rb[i]));
			kfdpool_bp_of(rb[i])->dirty = 0;
			up = rb_parent(rb[i]);
			if (up && !kfdpool_bp_of(up)->dirty) {
				kfdpool_bp_of(up)->dirty = 1;
				rb[i] = up;
				depth[i]--;
				i++;
			} else {
				n--;
				rb[i] = rb[n];
				depth[i] = depth[n];
			}
		}
	}
}

/**
 * kfdpool_cover_settle() - recompute what @t noted
 * @t: the pool's transaction, left empty
 *
 * Return: how many bytes the coverages it touched grew by (negative: shrank).
 */
s64 kfdpool_cover_settle(struct kfdpool_cover_txn *t)
{
	struct rb_node *rb[KFDPOOL_COVER_DIRTY];
	struct kfdpool_cover *c;
	unsigned int i, n;
	s64 grew = 0;
	u64 old;

	while (t->n) {
		/* The nodes of one coverage; the rest wait for a later turn. */
		c = t->d[0].c;
		for (i = 0, n = 0; i < t->n;) {
			if (t->d[i].c != c) {
				i++;
				continue;
			}
			if (t->d[i].rb)
				rb[n++] = t->d[i].rb;
			t->d[i] = t->d[--t->n];
		}
		kfdpool_cover_fixup(rb, n);
		c->noted = false;
		old = c->bytes;
		c->bytes = kfdpool_cover_bytes(c);
		grew += (s64)(c->bytes - old);
	}
	return grew;
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
