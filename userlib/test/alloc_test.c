// SPDX-License-Identifier: MIT
/*
 * The pool's sub-allocator (pool/arena.c) against a reference model.
 *
 * The model keeps, per region, the live allocations and the free gaps
 * (maximal runs of ready bytes), each gap stamped when it was last
 * created, and predicts every allocation from the fit rule alone, without
 * the allocator's bitmaps: a request of u units goes to the lowest size
 * class whose every block holds u units (class bounds computed here from
 * their definition), and in that class to the gap made most recently;
 * before that, to the newest block of the quick list of the request's
 * class if it has exactly the request's size, and when no gap fits, the
 * quick lists are merged back (ascending classes, newest first) and the
 * gaps tried again.  100,000 random operations over several regions, with
 * frees deferred to stream queues and settled in random order; after each
 * step the blocks must tile every region, used and quick blocks be the
 * model's, and no two ready blocks be neighbours (coalescing).  The
 * address hash is checked against a plain array.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pool/arena.h"
#include "kselftest_harness.h"

#define SHIFT 8u
#define ALIGN (1u << SHIFT)
#define NREG 3
#define NQ 3

static uint64_t rnd(uint64_t *s)
{
	/* xorshift64*: reproducible from the printed seed */
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545F4914F6CDD1DULL;
}

/* The lower bound of the class holding @u units: below 8 units one class
 * per size; above, [2^f, 2^(f+1)) cut in 8 equal steps. */
static uint64_t class_low(uint64_t u)
{
	unsigned int f;
	uint64_t step;

	if (u < 8)
		return u;
	for (f = 0; (2ULL << f) <= u; f++)
		;
	step = 1ULL << (f - 3);
	return u / step * step;
}

/* The lowest class bound at or above @u: every block of that class (and
 * above) holds u units. */
static uint64_t class_need(uint64_t u)
{
	uint64_t low = class_low(u), step;
	unsigned int f;

	if (low == u)
		return u;
	for (f = 0; (2ULL << f) <= u; f++)
		;
	step = 1ULL << (f - 3);
	return low + step;
}

/* ---- the model ---- */

enum { M_USED = 1, M_GAP, M_PEND, M_QUICK };

struct seg {
	int reg;
	uint64_t off, size;
	int kind;
	uint64_t stamp;		/* gap, pending, quick: when put in its list */
	int q;			/* pending: queue */
	struct kp_blk *blk;	/* used/pending: the allocator's block */
};

struct model {
	struct seg *s;
	size_t n, cap;
	uint64_t clock;
};

static void m_add(struct model *m, struct seg s)
{
	if (m->n == m->cap) {
		m->cap = m->cap ? 2 * m->cap : 256;
		m->s = realloc(m->s, m->cap * sizeof(*m->s));
	}
	m->s[m->n++] = s;
}

static void m_del(struct model *m, size_t i)
{
	m->s[i] = m->s[--m->n];
}

/* The free segment (index) the fit rule chooses for @u units among the
 * gaps (@q < 0) or the pending blocks of queue @q, or -1. */
static long m_predict(const struct model *m, uint64_t u, int q)
{
	uint64_t need = class_need(u), best = UINT64_MAX;
	long pick = -1;
	size_t i;

	for (i = 0; i < m->n; i++) {
		const struct seg *g = &m->s[i];
		uint64_t c;

		if (q < 0 ? g->kind != M_GAP : g->kind != M_PEND || g->q != q)
			continue;
		c = class_low(g->size / ALIGN);
		if (c < need)
			continue;
		if (c < best || (c == best && g->stamp > m->s[pick].stamp)) {
			best = c;
			pick = (long)i;
		}
	}
	return pick;
}

/* Merge the gap @i with the gaps touching it (as freeing does). */
static void m_merge(struct model *m, size_t i)
{
	size_t j;

	for (j = 0; j < m->n; j++) {
		struct seg *g = &m->s[j];

		if (j == i || g->kind != M_GAP || g->reg != m->s[i].reg)
			continue;
		if (g->off + g->size == m->s[i].off) {
			m->s[i].off = g->off;
			m->s[i].size += g->size;
		} else if (m->s[i].off + m->s[i].size == g->off) {
			m->s[i].size += g->size;
		} else {
			continue;
		}
		m_del(m, j);
		if (i == m->n)
			i = j;
		j = (size_t)-1;		/* start over */
	}
	m->s[i].stamp = ++m->clock;
}

struct fixture_state {
	struct kp_arena a;
	struct kp_region reg[NREG];
	struct kp_fl q[NQ];
	struct kp_tag tag[NQ];
	int idle[NQ];
	struct model m;
};

static struct fixture_state *cur;

static void on_idle(struct kp_arena *a, struct kp_tag *t)
{
	cur->idle[t - cur->tag]++;
}

/* The model's segments by (region, offset), rebuilt for each check. */
#define IDX_SIZE 16384
static long idx[IDX_SIZE];

static uint32_t idx_home(int reg, uint64_t off)
{
	return (uint32_t)(((off / ALIGN) * 0x9E3779B97F4A7C15ULL + reg) >> 40) %
	       IDX_SIZE;
}

static long idx_find(const struct model *m, int reg, uint64_t off)
{
	uint32_t h;

	for (h = idx_home(reg, off); idx[h] >= 0; h = (h + 1) % IDX_SIZE)
		if (m->s[idx[h]].reg == reg && m->s[idx[h]].off == off)
			return idx[h];
	return -1;
}

/* The allocator's blocks against the model. */
static int structure_ok(struct fixture_state *f)
{
	const struct model *m = &f->m;
	size_t i, nseen = 0;
	int r;

	if (m->n > IDX_SIZE / 2)
		return 0;
	memset(idx, 0xff, sizeof(idx));
	for (i = 0; i < m->n; i++) {
		uint32_t h = idx_home(m->s[i].reg, m->s[i].off);

		while (idx[h] >= 0)
			h = (h + 1) % IDX_SIZE;
		idx[h] = (long)i;
	}
	for (r = 0; r < NREG; r++) {
		const struct kp_blk *b, *prev = NULL;
		uint64_t pos = 0;
		uint32_t nu = 0, np = 0;

		for (b = f->reg[r].first; b; prev = b, b = b->pnext) {
			int kind = b->state == KP_USED ? M_USED :
				   b->state == KP_READY ? M_GAP :
				   b->state == KP_QUICK_FREE ? M_QUICK : M_PEND;
			long k;

			if (b->off != pos || !b->size || b->pprev != prev ||
			    b->reg != &f->reg[r])
				return 0;
			if (kind == M_GAP && prev && prev->state == KP_READY)
				return 0;	/* not merged */
			k = idx_find(m, r, b->off);
			if (k < 0 || m->s[k].kind != kind ||
			    m->s[k].size != b->size)
				return 0;
			if (kind == M_PEND && b->fl != &f->q[m->s[k].q])
				return 0;
			if (kind == M_USED && m->s[k].blk != b)
				return 0;
			nu += kind == M_USED;
			np += kind == M_PEND;
			pos += b->size;
			nseen++;
		}
		if (pos != f->reg[r].size || nu != f->reg[r].nused ||
		    np != f->reg[r].npending)
			return 0;
		{
			uint32_t nq = 0;

			for (b = f->reg[r].first; b; b = b->pnext)
				nq += b->state == KP_QUICK_FREE;
			if (nq != f->reg[r].nquick)
				return 0;
		}
	}
	return nseen == m->n;
}

FIXTURE(arena) {
	struct fixture_state f;
};

FIXTURE_SETUP(arena)
{
	static const uint64_t sizes[NREG] = { 2u << 20, 1u << 20, 192u << 10 };
	int r;

	memset(&self->f, 0, sizeof(self->f));
	cur = &self->f;
	kp_arena_init(&self->f.a, SHIFT);
	self->f.a.tag_idle = on_idle;
	for (r = 0; r < NREG; r++) {
		ASSERT_EQ(0, kp_arena_add(&self->f.a, &self->f.reg[r], sizes[r]));
		m_add(&self->f.m, (struct seg){ .reg = r, .size = sizes[r],
			.kind = M_GAP, .stamp = ++self->f.m.clock });
	}
}

FIXTURE_TEARDOWN(arena)
{
	kp_arena_fini(&self->f.a);
	free(self->f.m.s);
}

TEST_F(arena, bad_regions)
{
	struct kp_region r;

	EXPECT_EQ(-EINVAL, kp_arena_add(&self->f.a, &r, 0));
	EXPECT_EQ(-EINVAL, kp_arena_add(&self->f.a, &r, ALIGN + 1));
	EXPECT_EQ(-EINVAL, kp_arena_add(&self->f.a, &r, 1ULL << 62));
	EXPECT_EQ(NULL, kp_arena_take(&self->f.a, &self->f.a.ready, 0));
	EXPECT_EQ(NULL, kp_arena_take(&self->f.a, &self->f.a.ready, 4u << 20));
}

TEST_F(arena, split_merge_and_idle_regions)
{
	struct kp_arena *a = &self->f.a;
	struct kp_blk *b[3];

	/* 1 byte takes one unit; the newest fitting gap is the last region
	 * added, in the smallest class that holds the request. */
	b[0] = kp_arena_take(a, &a->ready, 1);
	ASSERT_NE(NULL, b[0]);
	EXPECT_EQ(ALIGN, b[0]->size);
	EXPECT_EQ(&self->f.reg[2], b[0]->reg);
	b[1] = kp_arena_take(a, &a->ready, 300);
	ASSERT_NE(NULL, b[1]);
	EXPECT_EQ(2 * ALIGN, b[1]->size);
	EXPECT_EQ(ALIGN, b[1]->off);
	/* Larger than that region: the 1 MiB one. */
	b[2] = kp_arena_take(a, &a->ready, 512u << 10);
	ASSERT_NE(NULL, b[2]);
	EXPECT_EQ(&self->f.reg[1], b[2]->reg);
	EXPECT_EQ(0, b[2]->off);
	EXPECT_FALSE(kp_region_idle(&self->f.reg[2]));
	kp_arena_put(a, b[0]);
	kp_arena_put(a, b[1]);
	/* Kept as they are for reuse (quick lists): the same size comes
	 * back at once, without a split. */
	EXPECT_EQ(KP_QUICK_FREE, b[1]->state);
	EXPECT_FALSE(kp_region_idle(&self->f.reg[2]));
	EXPECT_EQ(b[1], kp_arena_take(a, &a->ready, 2 * ALIGN));
	kp_arena_put(a, b[1]);
	kp_arena_flush(a);
	/* Merged back into one block: the region is idle and removable. */
	EXPECT_TRUE(kp_region_idle(&self->f.reg[2]));
	EXPECT_EQ(NULL, self->f.reg[2].first->pnext);
	EXPECT_EQ(192u << 10, self->f.reg[2].first->size);
	kp_arena_remove(a, &self->f.reg[2]);
	EXPECT_EQ(NULL, self->f.reg[2].first);
	kp_arena_put(a, b[2]);
	kp_arena_flush(a);
	EXPECT_EQ(3u << 20, a->ready.bytes);
	EXPECT_EQ(2, a->ready.nblk);
}

TEST_F(arena, pending_blocks_stay_with_their_stream)
{
	struct kp_arena *a = &self->f.a;
	struct kp_tag *t = &self->f.tag[0];
	struct kp_blk *b, *c, *d;

	b = kp_arena_take(a, &a->ready, 8192);
	c = kp_arena_take(a, &a->ready, 8192);
	ASSERT_NE(NULL, b);
	ASSERT_NE(NULL, c);
	kp_arena_defer(a, b, &self->f.q[0], t);
	kp_arena_defer(a, c, &self->f.q[0], t);
	EXPECT_EQ(2, t->refs);
	EXPECT_EQ(2, b->reg->npending);
	/* Pending neighbours are not merged, nor given to the ready index. */
	EXPECT_EQ(KP_PENDING, b->pnext->state);
	EXPECT_EQ(NULL, kp_arena_take(a, &self->f.q[1], 4096));
	/* The stream itself reuses one, split: the rest stays pending with
	 * the same event. */
	d = kp_arena_take(a, &self->f.q[0], 4096);
	ASSERT_NE(NULL, d);
	EXPECT_EQ(KP_USED, d->state);
	EXPECT_EQ(KP_PENDING, d->pnext->state);
	EXPECT_EQ(t, d->pnext->tag);
	EXPECT_EQ(2, t->refs);
	EXPECT_EQ(0, self->f.idle[0]);
	/* The event completes: all of its blocks merge into the ready free
	 * space around them, and the tag goes idle once. */
	kp_arena_settle_tag(a, t);
	EXPECT_EQ(0, t->refs);
	EXPECT_EQ(1, self->f.idle[0]);
	EXPECT_EQ(0, self->f.q[0].nblk);
	EXPECT_EQ(KP_READY, d->pnext->state);
	EXPECT_EQ(NULL, d->pnext->pnext);
	kp_arena_put(a, d);
	kp_arena_flush(a);
	EXPECT_TRUE(kp_region_idle(d->reg));
}

/* The scan visits blocks in class order and stops at @limit. */
static int pick_second(struct kp_blk *b, void *arg)
{
	return ++*(int *)arg == 2;
}

TEST_F(arena, scan_in_class_order_with_a_limit)
{
	struct kp_arena *a = &self->f.a;
	struct kp_blk *b[4], *got;
	int i, n = 0;

	for (i = 0; i < 4; i++) {
		b[i] = kp_arena_take(a, &a->ready, (i + 1) * 4096);
		ASSERT_NE(NULL, b[i]);
	}
	for (i = 0; i < 4; i++)
		kp_arena_defer(a, b[i], &self->f.q[1], &self->f.tag[1]);
	got = kp_arena_scan(a, &self->f.q[1], 8192, 16, pick_second, &n);
	EXPECT_EQ(b[2], got);	/* 8 KiB, then 12 KiB */
	n = 0;
	EXPECT_EQ(NULL, kp_arena_scan(a, &self->f.q[1], 8192, 1, pick_second, &n));
	n = 0;
	EXPECT_EQ(NULL, kp_arena_scan(a, &self->f.q[1], 16384 + 1, 16,
				      pick_second, &n));
	kp_arena_settle_tag(a, &self->f.tag[1]);
}

/* The quick block a request of @u units takes back, or -1. */
static long m_quick(const struct model *m, uint64_t u)
{
	uint64_t c = class_low(u);
	long k = -1;
	size_t i;

	for (i = 0; i < m->n; i++)
		if (m->s[i].kind == M_QUICK && class_low(m->s[i].size / ALIGN) == c &&
		    (k < 0 || m->s[i].stamp > m->s[k].stamp))
			k = (long)i;
	return k >= 0 && m->s[k].size == u * ALIGN ? k : -1;
}

/* Every quick block back into the ready space: ascending classes, each
 * class's list from its newest. */
static void m_flush(struct model *m)
{
	for (;;) {
		long k = -1;
		size_t i;

		for (i = 0; i < m->n; i++) {
			if (m->s[i].kind != M_QUICK)
				continue;
			if (k < 0 || kp_cls_of(m->s[i].size / ALIGN) <
				     kp_cls_of(m->s[k].size / ALIGN) ||
			    (kp_cls_of(m->s[i].size / ALIGN) ==
			     kp_cls_of(m->s[k].size / ALIGN) &&
			     m->s[i].stamp > m->s[k].stamp))
				k = (long)i;
		}
		if (k < 0)
			return;
		m->s[k].kind = M_GAP;
		m->s[k].blk = NULL;
		m_merge(m, (size_t)k);
	}
}

/* What freeing a used block to the ready space does: onto its class's
 * quick list (not a whole region, fewer than KP_QUICK there) or merged. */
static void m_put(struct model *m, size_t k, const uint64_t *regsize)
{
	size_t i, nq = 0;
	uint32_t cls = kp_cls_of(m->s[k].size / ALIGN);

	for (i = 0; i < m->n; i++)
		nq += m->s[i].kind == M_QUICK &&
		      kp_cls_of(m->s[i].size / ALIGN) == cls;
	if (!(m->s[k].off == 0 && m->s[k].size == regsize[m->s[k].reg]) &&
	    nq < KP_QUICK) {
		m->s[k].kind = M_QUICK;
		m->s[k].stamp = ++m->clock;
		return;
	}
	m->s[k].kind = M_GAP;
	m->s[k].blk = NULL;
	m_merge(m, k);
}

/* A queue's event completes: its blocks settle newest-linked first (the
 * tag's list), each merged with the ready space around it. */
static void m_settle(struct model *m, int q)
{
	for (;;) {
		long k = -1;
		size_t i;

		for (i = 0; i < m->n; i++)
			if (m->s[i].kind == M_PEND && m->s[i].q == q &&
			    (k < 0 || m->s[i].stamp > m->s[k].stamp))
				k = (long)i;
		if (k < 0)
			return;
		m->s[k].kind = M_GAP;
		m->s[k].blk = NULL;
		m_merge(m, (size_t)k);
	}
}

TEST_F(arena, random_against_model)
{
	const unsigned long ops = 100000;
	uint64_t seed = 0x6b66647031ULL, s;
	static const uint64_t regsize[NREG] = { 2u << 20, 1u << 20, 192u << 10 };
	unsigned long i, nalloc = 0, nfree = 0, ndefer = 0, nsettle = 0,
		      nfail = 0, nqtake = 0, nquick = 0;
	struct fixture_state *f = &self->f;
	struct kp_arena *a = &f->a;
	struct model *m = &f->m;

	if (getenv("KFDPOOL_SEED"))
		seed = strtoull(getenv("KFDPOOL_SEED"), NULL, 0);
	s = seed;
	ksft_print_msg("seed %#llx (KFDPOOL_SEED reproduces)\n",
		       (unsigned long long)seed);
	for (i = 0; i < ops; i++) {
		uint64_t r = rnd(&s);
		unsigned int what = r % 100;
		size_t k, nlive = 0, npend = 0;

		for (k = 0; k < m->n; k++) {
			nlive += m->s[k].kind == M_USED;
			npend += m->s[k].kind == M_PEND;
		}
		if (what < 50 || !nlive || (what >= 75 && !npend)) {
			/* From the ready space, or (one time in eight) from
			 * a queue's own pending blocks, as its stream does.
			 * Mostly small sizes, some large: 1 B .. 512 KiB. */
			int q = npend && (r >> 40) % 8 == 0 ? (int)((r >> 44) % NQ) : -1;
			uint64_t size = (r >> 8) % 100 < 85 ?
					1 + (r >> 16) % 16384 :
					1 + (r >> 16) % (512 * 1024);
			uint64_t u = (size + ALIGN - 1) / ALIGN;
			long g = q < 0 ? m_quick(m, u) : -1;
			struct kp_blk *b = kp_arena_take(a, q < 0 ? &a->ready :
							 &f->q[q], size);
			struct seg *gap;

			if (g >= 0) {
				ASSERT_EQ(m->s[g].blk, b) TH_LOG("op %lu quick", i);
				m->s[g].kind = M_USED;
				nquick++;
				goto check;
			}
			g = m_predict(m, u, q);
			if (g < 0 && q < 0) {
				m_flush(m);
				g = m_predict(m, u, q);
			}
			ASSERT_EQ(g < 0, b == NULL) TH_LOG("op %lu take %llu q %d",
				i, (unsigned long long)size, q);
			if (!b) {
				nfail += q < 0;
				goto check;
			}
			gap = &m->s[g];
			ASSERT_EQ(&f->reg[gap->reg], b->reg) TH_LOG("op %lu", i);
			ASSERT_EQ(gap->off, b->off) TH_LOG("op %lu", i);
			ASSERT_EQ(u * ALIGN, b->size);
			m_add(m, (struct seg){ .reg = gap->reg, .off = gap->off,
				.size = u * ALIGN, .kind = M_USED, .blk = b });
			gap = &m->s[g];
			if (gap->size == u * ALIGN) {
				m_del(m, g);
			} else {
				/* The rest stays in its index, newest. */
				gap->off += u * ALIGN;
				gap->size -= u * ALIGN;
				gap->stamp = ++m->clock;
				if (q >= 0)
					gap->blk = b->pnext;
			}
			if (q < 0)
				nalloc++;
			else
				nqtake++;
		} else if (what < 85) {
			/* Free a live block: ready at once, or pending on a
			 * queue. */
			size_t pick = (r >> 8) % nlive;
			int q = (r >> 24) % (NQ + 1);

			for (k = 0; k < m->n; k++)
				if (m->s[k].kind == M_USED && !pick--)
					break;
			if (q == NQ) {
				kp_arena_put(a, m->s[k].blk);
				m_put(m, k, regsize);
				nfree++;
			} else {
				kp_arena_defer(a, m->s[k].blk, &f->q[q], &f->tag[q]);
				m->s[k].kind = M_PEND;
				m->s[k].q = q;
				m->s[k].stamp = ++m->clock;
				ndefer++;
			}
		} else {
			/* A queue's event completes. */
			int q = (r >> 8) % NQ;

			kp_arena_settle_tag(a, &f->tag[q]);
			m_settle(m, q);
			ASSERT_EQ(0, f->tag[q].refs);
			nsettle++;
		}
check:
		ASSERT_TRUE(structure_ok(f)) TH_LOG("op %lu", i);
	}
	ksft_print_msg("%lu ops: %lu takes (%lu from quick lists), %lu refused (full), %lu frees, %lu deferred, %lu reused by their stream, %lu settles\n",
		       ops, nalloc + nquick, nquick, nfail, nfree, ndefer, nqtake,
		       nsettle);
	EXPECT_LT(0, nfail);	/* the regions did run full */
	EXPECT_LT(0, nqtake);
	EXPECT_LT(0, nquick);
	/* Everything back: every region idle, one block each. */
	for (int q = 0; q < NQ; q++)
		kp_arena_settle_tag(a, &f->tag[q]);
	for (size_t k = 0; k < m->n; k++)
		if (m->s[k].kind == M_USED)
			kp_arena_put(a, m->s[k].blk);
	kp_arena_flush(a);
	for (int rr = 0; rr < NREG; rr++) {
		EXPECT_TRUE(kp_region_idle(&f->reg[rr]));
		EXPECT_EQ(NULL, f->reg[rr].first->pnext);
	}
	EXPECT_EQ(NREG, a->ready.nblk);
}

TEST(map_against_array)
{
	enum { N = 5000 };
	static uintptr_t keys[N];
	static struct kp_blk blks[N];
	static int live[N];
	struct kp_map m = { 0 };
	uint64_t s = 0x5eed;
	unsigned long i;
	int k;

	for (k = 0; k < N; k++)
		keys[k] = 0x7f0000000000ULL + (rnd(&s) % (1u << 24)) * ALIGN + ALIGN;
	/* Keys may repeat: only distinct ones are put. */
	for (i = 0; i < 200000; i++) {
		uint64_t r = rnd(&s);

		k = r % N;
		if (live[k]) {
			ASSERT_EQ(&blks[k], kp_map_get(&m, keys[k]));
			if ((r >> 20) % 2) {
				ASSERT_EQ(&blks[k], kp_map_del(&m, keys[k]));
				live[k] = 0;
				ASSERT_EQ(NULL, kp_map_get(&m, keys[k]));
			}
		} else {
			int j, dup = 0;

			for (j = 0; j < N; j++)
				if (live[j] && keys[j] == keys[k])
					dup = 1;
			if (dup)
				continue;
			ASSERT_EQ(NULL, kp_map_get(&m, keys[k]));
			ASSERT_EQ(0, kp_map_put(&m, keys[k], &blks[k]));
			EXPECT_EQ(-EEXIST, kp_map_put(&m, keys[k], &blks[k]));
			live[k] = 1;
		}
	}
	for (k = 0; k < N; k++)
		if (live[k])
			EXPECT_EQ(&blks[k], kp_map_del(&m, keys[k]));
	EXPECT_EQ(0, m.n);
	EXPECT_EQ(NULL, kp_map_del(&m, keys[0]));
	kp_map_fini(&m);
}

TEST_HARNESS_MAIN
