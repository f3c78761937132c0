// SPDX-License-Identifier: MIT
/*
 * The address table (pool/addr.c) against a plain list: random ranges of
 * 1 page to 64 MiB, aligned and not, added and removed in random order;
 * after each step, addresses inside, at the edges and just outside every
 * live range, and in removed ones, find exactly what the list says.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pool/pool.h"
#include "kselftest_harness.h"

#define N 200
#define P 4096ULL

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545F4914F6CDD1DULL;
}

static struct kp_range r[N];
static int live[N];

/* What the list says holds @a. */
static struct kp_range *expect(uintptr_t a)
{
	int i;

	for (i = 0; i < N; i++)
		if (live[i] && r[i].start <= a && a < r[i].end)
			return &r[i];
	return NULL;
}

static int overlaps(uintptr_t s, uintptr_t e)
{
	int i;

	for (i = 0; i < N; i++)
		if (live[i] && s < r[i].end && r[i].start < e)
			return 1;
	return 0;
}

TEST(bad_ranges)
{
	struct kp_range b = { .start = 4096, .end = 4096 };

	EXPECT_EQ(-EINVAL, kp_addr_add(&b));
	b.start = 4097;
	b.end = 8192;
	EXPECT_EQ(-EINVAL, kp_addr_add(&b));
	b.start = 1ULL << 57;
	b.end = b.start + 4096;
	EXPECT_EQ(-EINVAL, kp_addr_add(&b));
	EXPECT_EQ(NULL, kp_addr_find((void *)(uintptr_t)(1ULL << 60)));
}

TEST(random_against_list)
{
	uint64_t s = 0xadd7e55, checks = 0;
	unsigned long op;
	int i;

	for (op = 0; op < 20000; op++) {
		uint64_t x = rnd(&s);

		i = x % N;
		if (live[i]) {
			kp_addr_del(&r[i]);
			live[i] = 0;
		} else {
			/* Some 2 MiB-aligned (one entry high up), most not;
			 * in a 64 GiB window, so that neighbours touch. */
			uint64_t pages = (x >> 8) % 4 ? 1 + (x >> 12) % 1024 :
					 1 + (x >> 12) % 16384;
			uintptr_t start = 0x100000000000ULL +
				((x >> 28) % (1u << 24)) * P;

			if ((x >> 52) % 3 == 0)
				start &= ~((2ULL << 20) - 1);
			if (overlaps(start, start + pages * P))
				continue;
			r[i].start = start;
			r[i].end = start + pages * P;
			ASSERT_EQ(0, kp_addr_add(&r[i]));
			live[i] = 1;
		}
		/* Every range's edges and a byte past them. */
		for (int k = 0; k < N; k++) {
			uintptr_t pts[4] = { r[k].start, r[k].end - 1, r[k].end,
					     r[k].start - 1 };

			if (!r[k].end)
				continue;
			for (int j = 0; j < 4; j++) {
				ASSERT_EQ(expect(pts[j]),
					  kp_addr_find((void *)pts[j]))
					TH_LOG("op %lu addr %#lx", op,
					       (unsigned long)pts[j]);
				checks++;
			}
		}
	}
	ksft_print_msg("%llu lookups checked\n", (unsigned long long)checks);
	for (i = 0; i < N; i++)
		if (live[i])
			kp_addr_del(&r[i]);
}

TEST_HARNESS_MAIN
