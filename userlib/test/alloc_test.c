// SPDX-License-Identifier: MIT
/*
 * The chunk allocator against a reference model: 100,000 random
 * allocations and frees, every result compared with what best fit over the
 * model's free gaps predicts, and the block structure checked for
 * coalescing after each step.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pool/arena.h"
#include "kselftest_harness.h"

#define ARENA (2u << 20)
#define ALIGN 256u

struct m_alloc {
	uint64_t off, size;
};

/* The model: live allocations sorted by offset. */
struct model {
	struct m_alloc *a;
	size_t n;
};

static uint64_t rnd(uint64_t *s)
{
	/* xorshift64*: reproducible from the printed seed */
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545F4914F6CDD1DULL;
}

/* Best fit over the model's gaps: smallest gap >= size, lowest offset. */
static int model_predict(const struct model *m, uint64_t size, uint64_t *off)
{
	uint64_t best_size = UINT64_MAX, prev_end = 0;
	size_t i;
	int found = 0;

	for (i = 0; i <= m->n; i++) {
		uint64_t start = i < m->n ? m->a[i].off : ARENA;
		uint64_t gap = start - prev_end;

		if (gap >= size && gap < best_size) {
			best_size = gap;
			*off = prev_end;
			found = 1;
		}
		if (i < m->n)
			prev_end = m->a[i].off + m->a[i].size;
	}
	return found ? 0 : -ENOMEM;
}

static void model_insert(struct model *m, uint64_t off, uint64_t size)
{
	size_t i = 0;

	while (i < m->n && m->a[i].off < off)
		i++;
	memmove(&m->a[i + 1], &m->a[i], (m->n - i) * sizeof(*m->a));
	m->a[i] = (struct m_alloc){ off, size };
	m->n++;
}

static void model_remove(struct model *m, size_t i)
{
	memmove(&m->a[i], &m->a[i + 1], (m->n - i - 1) * sizeof(*m->a));
	m->n--;
}

/* Blocks tile the arena; used blocks are the model's; no two free
 * neighbours (coalescing). */
static int structure_ok(const struct kp_arena *ar, const struct model *m)
{
	uint64_t pos = 0, used = 0;
	size_t i, k = 0;

	for (i = 0; i < ar->nblk; i++) {
		const struct kp_block *b = &ar->blk[i];

		if (b->off != pos || !b->size)
			return 0;
		if (b->used) {
			if (k >= m->n || m->a[k].off != b->off ||
			    m->a[k].size != b->size)
				return 0;
			used += b->size;
			k++;
		} else if (i > 0 && !ar->blk[i - 1].used) {
			return 0;
		}
		pos += b->size;
	}
	return pos == ARENA && k == m->n && used == ar->used &&
	       m->n == ar->nused;
}

TEST(init_rejects_bad_arguments)
{
	struct kp_arena a;

	EXPECT_EQ(-EINVAL, kp_arena_init(&a, 0, ALIGN));
	EXPECT_EQ(-EINVAL, kp_arena_init(&a, ARENA, 0));
	EXPECT_EQ(-EINVAL, kp_arena_init(&a, ARENA, 384));
	EXPECT_EQ(-EINVAL, kp_arena_init(&a, ARENA + 1, ALIGN));
}

TEST(basic)
{
	struct kp_arena a;
	uint64_t off, st, sz, o[3];
	void *p = NULL;

	ASSERT_EQ(0, kp_arena_init(&a, ARENA, ALIGN));
	EXPECT_EQ(-ENOMEM, kp_arena_alloc(&a, 0, &off));
	EXPECT_EQ(-ENOMEM, kp_arena_alloc(&a, ARENA + 1, &off));
	ASSERT_EQ(0, kp_arena_alloc(&a, 1, &o[0]));
	EXPECT_EQ(0, o[0]);
	ASSERT_EQ(0, kp_arena_alloc(&a, 300, &o[1]));
	EXPECT_EQ(ALIGN, o[1]);		/* 1 byte took one aligned unit */
	ASSERT_EQ(0, kp_arena_alloc(&a, ALIGN, &o[2]));
	EXPECT_EQ(3 * ALIGN, o[2]);	/* 300 took two */
	/* Any address inside a used block finds it. */
	ASSERT_EQ(0, kp_arena_find(&a, o[1] + 299, &st, &sz, NULL));
	EXPECT_EQ(o[1], st);
	EXPECT_EQ(2 * ALIGN, sz);
	EXPECT_EQ(-ENOENT, kp_arena_find(&a, 4 * ALIGN, &st, &sz, NULL));
	EXPECT_EQ(-ENOENT, kp_arena_find(&a, ARENA, &st, &sz, NULL));
	/* Only a used block's start frees it, once. */
	EXPECT_EQ(-EINVAL, kp_arena_free(&a, o[1] + ALIGN, NULL));
	EXPECT_EQ(0, kp_arena_free(&a, o[1], &sz));
	EXPECT_EQ(2 * ALIGN, sz);
	EXPECT_EQ(-EINVAL, kp_arena_free(&a, o[1], NULL));
	EXPECT_EQ(-EINVAL, kp_arena_free(&a, ARENA, NULL));
	/* Priv data follows the block. */
	EXPECT_EQ(0, kp_arena_set_priv(&a, o[2], &a));
	EXPECT_EQ(-EINVAL, kp_arena_set_priv(&a, o[1], &a));
	ASSERT_EQ(0, kp_arena_find(&a, o[2], &st, &sz, &p));
	EXPECT_EQ(&a, p);
	EXPECT_EQ(0, kp_arena_free(&a, o[0], NULL));
	EXPECT_EQ(0, kp_arena_free(&a, o[2], NULL));
	/* All coalesced back into one free block. */
	EXPECT_EQ(1, a.nblk);
	EXPECT_EQ(ARENA, kp_arena_largest_free(&a));
	EXPECT_TRUE(kp_arena_empty(&a));
	kp_arena_fini(&a);
}

TEST(exhaust_and_refill)
{
	struct kp_arena a;
	uint64_t off, i, n = ARENA / (64 * 1024);

	ASSERT_EQ(0, kp_arena_init(&a, ARENA, ALIGN));
	for (i = 0; i < n; i++) {
		ASSERT_EQ(0, kp_arena_alloc(&a, 64 * 1024, &off));
		EXPECT_EQ(i * 64 * 1024, off);
	}
	EXPECT_EQ(-ENOMEM, kp_arena_alloc(&a, 1, &off));
	EXPECT_EQ(0, kp_arena_largest_free(&a));
	/* Free every other block: 64 KiB holes, no 128 KiB one. */
	for (i = 0; i < n; i += 2)
		ASSERT_EQ(0, kp_arena_free(&a, i * 64 * 1024, NULL));
	EXPECT_EQ(-ENOMEM, kp_arena_alloc(&a, 64 * 1024 + 1, &off));
	EXPECT_EQ(64 * 1024, kp_arena_largest_free(&a));
	for (i = 1; i < n; i += 2)
		ASSERT_EQ(0, kp_arena_free(&a, i * 64 * 1024, NULL));
	EXPECT_EQ(1, a.nblk);
	ASSERT_EQ(0, kp_arena_alloc(&a, ARENA, &off));
	EXPECT_EQ(0, off);
	kp_arena_fini(&a);
}

TEST(random_against_model)
{
	const unsigned long ops = 100000;
	uint64_t seed = 0x6b66647031ULL, s;
	unsigned long i, nalloc = 0, nfree = 0, nfail = 0, nbad = 0;
	struct model m = { 0 };
	struct kp_arena a;
	size_t peak = 0;

	if (getenv("KFDPOOL_SEED"))
		seed = strtoull(getenv("KFDPOOL_SEED"), NULL, 0);
	s = seed;
	ksft_print_msg("seed %#llx (KFDPOOL_SEED reproduces)\n",
		       (unsigned long long)seed);
	m.a = calloc(ARENA / ALIGN, sizeof(*m.a));
	ASSERT_NE(NULL, m.a);
	ASSERT_EQ(0, kp_arena_init(&a, ARENA, ALIGN));
	for (i = 0; i < ops; i++) {
		uint64_t r = rnd(&s);
		/* Allocate more often while few are live, so the arena
		 * runs full and fragments. */
		int do_alloc = m.n == 0 || (r % 100) < (m.n < 200 ? 60 : 45);

		if (do_alloc) {
			/* Mostly small sizes, some large: 1 B .. 256 KiB. */
			uint64_t size = (r >> 8) % 100 < 90 ?
					1 + (r >> 16) % 16384 :
					1 + (r >> 16) % (256 * 1024);
			uint64_t rs = (size + ALIGN - 1) & ~(uint64_t)(ALIGN - 1);
			uint64_t want = 0, got = 0;
			int pe = model_predict(&m, rs, &want);
			int ge = kp_arena_alloc(&a, size, &got);

			ASSERT_EQ(pe, ge) TH_LOG("op %lu alloc %llu", i,
						 (unsigned long long)size);
			if (!ge) {
				ASSERT_EQ(want, got) TH_LOG("op %lu", i);
				model_insert(&m, got, rs);
				nalloc++;
			} else {
				nfail++;
			}
		} else {
			size_t k = (r >> 8) % m.n;
			uint64_t sz = 0, st, fs;

			/* A wrong address inside the block is refused. */
			if (m.a[k].size > ALIGN) {
				EXPECT_EQ(-EINVAL, kp_arena_free(&a,
					m.a[k].off + ALIGN, NULL));
				nbad++;
			}
			/* Any byte of it finds the block. */
			ASSERT_EQ(0, kp_arena_find(&a, m.a[k].off +
				  (r >> 20) % m.a[k].size, &st, &fs, NULL));
			ASSERT_EQ(m.a[k].off, st);
			ASSERT_EQ(m.a[k].size, fs);
			ASSERT_EQ(0, kp_arena_free(&a, m.a[k].off, &sz));
			ASSERT_EQ(m.a[k].size, sz);
			/* Twice is refused. */
			ASSERT_EQ(-EINVAL, kp_arena_free(&a, m.a[k].off, NULL));
			model_remove(&m, k);
			nfree++;
		}
		if (m.n > peak)
			peak = m.n;
		ASSERT_TRUE(structure_ok(&a, &m)) TH_LOG("op %lu", i);
	}
	ksft_print_msg("%lu ops: %lu allocs, %lu frees, %lu refused (full), %lu bad frees, peak %zu live\n",
		       ops, nalloc, nfree, nfail, nbad, peak);
	EXPECT_LT(0, nfail);	/* the arena did run full */
	while (m.n) {
		ASSERT_EQ(0, kp_arena_free(&a, m.a[0].off, NULL));
		model_remove(&m, 0);
	}
	EXPECT_EQ(1, a.nblk);
	EXPECT_EQ(0, a.used);
	kp_arena_fini(&a);
	free(m.a);
}

TEST_HARNESS_MAIN
