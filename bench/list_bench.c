// SPDX-License-Identifier: GPL-2.0-only
/*
 * list_bench: what one POOL_LIST call costs as the number of pools grows,
 * listing every pool in pages of one (the worst case for finding where the
 * previous call left off).  A call that walked the list up to its cursor
 * would cost O(pools) and the whole listing O(pools^2); a call that finds
 * the cursor in an index costs O(log pools).
 *
 * Figures, per number of pools (BENCH_LIST_MAX, default 8000, the largest):
 * the median over the rounds of the mean time of one call in a whole
 * listing, and the largest of the ratios to the smallest level's figure.
 * Under tools/bench's icount pass the times are guest instructions.
 */
#include <sys/resource.h>

#include "bench.h"

#define LEVELS		4
#define MAX_ROUNDS	64

static unsigned int pages_of_one(int ctl, unsigned int expect)
{
	struct kfdpool_pool_list l = { 0 };
	struct kfdpool_pool_info info;
	unsigned int n = 0;

	do {
		l.pools = (uintptr_t)&info;
		l.count = 1;
		l.info_size = sizeof(info);
		l.cursor = l.next_cursor;
		if (xioctl(ctl, KFDPOOL_IOC_POOL_LIST, &l))
			die("POOL_LIST: %s", strerror(errno));
		n += l.count;
	} while (l.next_cursor);
	if (n < expect)
		die("listed %u pools, made %u", n, expect);
	return n;
}

int main(void)
{
	unsigned int max = (unsigned int)env_int("BENCH_LIST_MAX", 8000);
	unsigned int rounds = (unsigned int)env_int("BENCH_ROUNDS", 7);
	unsigned int level[LEVELS], made = 0, i, r, n;
	double per_call[LEVELS], v[MAX_ROUNDS];
	struct rlimit rl;
	char row[64];
	int ctl, *fds;

	if (max < 64 || rounds < 1 || rounds > MAX_ROUNDS)
		die("BENCH_LIST_MAX >= 64, 1 <= BENCH_ROUNDS <= %d", MAX_ROUNDS);
	for (i = 0; i < LEVELS; i++)
		level[i] = max >> (2 * (LEVELS - 1 - i));	/* max/64 .. max */
	rl.rlim_cur = rl.rlim_max = max + 64;
	if (setrlimit(RLIMIT_NOFILE, &rl))
		die("RLIMIT_NOFILE %u: %s", max + 64, strerror(errno));
	ctl = open("/dev/kfdpool", O_RDWR | O_CLOEXEC);
	if (ctl < 0)
		die("/dev/kfdpool: %s", strerror(errno));
	fds = calloc(max, sizeof(*fds));
	if (!fds)
		die("out of memory");

	for (i = 0; i < LEVELS; i++) {
		for (; made < level[i]; made++) {
			struct kfdpool_pool_create pc = { 0 };

			strcpy(pc.name, "list_bench");
			if (xioctl(ctl, KFDPOOL_IOC_POOL_CREATE, &pc))
				die("pool %u: %s", made, strerror(errno));
			fds[made] = pc.fd;
		}
		pages_of_one(ctl, made);	/* warm up */
		for (r = 0; r < rounds; r++) {
			uint64_t t0 = now_ns();

			n = pages_of_one(ctl, made);
			v[r] = (double)(now_ns() - t0) / n;
		}
		per_call[i] = median(v, (int)rounds);
		snprintf(row, sizeof(row), "%u pools", level[i]);
		figure("pool listing in pages of 1", row, "per call", per_call[i], "ns");
		figure("pool listing in pages of 1", row, "vs fewest pools",
		       per_call[i] / per_call[0], "x");
		printf("# %u pools: %.0f ns per call, %.2fx the %u-pool figure (pools %.0fx)\n",
		       level[i], per_call[i], per_call[i] / per_call[0], level[0],
		       (double)level[i] / level[0]);
	}
	for (i = 0; i < made; i++)
		close(fds[i]);
	free(fds);
	close(ctl);
	return 0;
}
