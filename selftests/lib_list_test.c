// SPDX-License-Identifier: GPL-2.0-only
/*
 * libkfdpool's kfdpool_pool_list(): pages with a cursor, "up to count"
 * beyond the kernel's page limit, argument errors, and the same pools as
 * the ioctl.
 */
#include <stdlib.h>

#include <kfdpool.h>

#include "kfdpool_format.h"
#include "kselftest_harness.h"

#define NPOOLS	3

FIXTURE(liblist) {
	int ctl;
	int pool[NPOOLS];
	uint8_t id[NPOOLS][KFDPOOL_ID_LEN];
};

FIXTURE_SETUP(liblist)
{
	int i;

	for (i = 0; i < NPOOLS; i++)
		self->pool[i] = -1;
	self->ctl = kfdpool_open();
	if (self->ctl < 0)
		SKIP(return, "/dev/kfdpool: %s", strerror(-self->ctl));
	for (i = 0; i < NPOOLS; i++) {
		self->pool[i] = kfdpool_pool_create(self->ctl, 0, 0, "liblist",
						    self->id[i]);
		ASSERT_LE(0, self->pool[i]);
	}
}

FIXTURE_TEARDOWN(liblist)
{
	int i;

	for (i = 0; i < NPOOLS; i++)
		if (self->pool[i] >= 0)
			close(self->pool[i]);
	if (self->ctl >= 0)
		close(self->ctl);
}

static int seen(const struct kfdpool_pool_info *p, int n, const uint8_t *id)
{
	int i, c = 0;

	for (i = 0; i < n; i++)
		c += !memcmp(p[i].id, id, KFDPOOL_ID_LEN);
	return c;
}

TEST_F(liblist, pages_of_one)
{
	struct kfdpool_pool_info all[64];
	uint64_t cursor = 0;
	uint32_t scope = 0;
	int n = 0, r, i;

	do {
		ASSERT_GT(64, n);
		r = kfdpool_pool_list(self->ctl, &all[n], 1, &cursor, &scope);
		ASSERT_LE(0, r);
		ASSERT_GE(1, r);
		n += r;
	} while (cursor);
	for (i = 0; i < NPOOLS; i++)
		EXPECT_EQ(1, seen(all, n, self->id[i]));
	EXPECT_NE(0, scope);
}

/* More than the kernel's page: what fits, and a cursor for the rest. */
TEST_F(liblist, count_beyond_page_limit)
{
	/* One over the kernel's limit (the boundary) and well over it. */
	const uint32_t counts[] = { KFD_POOL_LIST_PAGE + 1,
				    KFD_POOL_LIST_PAGE + 10 };
	struct kfdpool_pool_info *all = calloc(counts[1], sizeof(*all));
	unsigned int i;

	ASSERT_NE(NULL, all);
	for (i = 0; i < 2; i++) {
		uint64_t cursor = 0;
		int r = kfdpool_pool_list(self->ctl, all, counts[i], &cursor,
					  NULL);

		EXPECT_LE(NPOOLS, r) TH_LOG("count %u", counts[i]);
		EXPECT_GE(KFD_POOL_LIST_PAGE, r) TH_LOG("count %u", counts[i]);
	}
	free(all);
}

TEST_F(liblist, argument_errors)
{
	struct kfdpool_pool_info one;
	uint64_t cursor = 0;

	EXPECT_EQ(-EINVAL, kfdpool_pool_list(self->ctl, &one, 1, NULL, NULL));
	EXPECT_EQ(-EINVAL, kfdpool_pool_list(self->ctl, NULL, 1, &cursor, NULL));
	/* count 0: nothing written, the cursor says whether pools exist */
	EXPECT_EQ(0, kfdpool_pool_list(self->ctl, NULL, 0, &cursor, NULL));
	EXPECT_NE(0, cursor);
	/* not the control device */
	cursor = 0;
	EXPECT_EQ(-ENOTTY, kfdpool_pool_list(self->pool[0], &one, 1, &cursor, NULL));
	EXPECT_EQ(-EBADF, kfdpool_pool_list(-1, &one, 1, &cursor, NULL));
}

TEST_HARNESS_MAIN
