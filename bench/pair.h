/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A steady-state hipMallocFromPoolAsync + hipFreeAsync pair, shared by
 * alloc_bench (the figures) and bench_budget (make check's instruction
 * budgets).
 *
 * Steady state: PAIR_WARMUP pairs before the clock starts reserve the chunk
 * and take the kernel's record ids (cyclic, so the xarray indexing the
 * records grows with them: the first thousands of exports of a pool are
 * cheaper than the ones after) to where they stay.  What is
 * measured is then the allocator and whatever the pool's handle types add
 * (an IPC pool makes a record only when a pointer is exported, so a pair
 * that exports nothing costs what a plain pool's does).  The pool's
 * release threshold is the maximum (pair_pool) or HIP's default, 0
 * (pair_pool_threshold): a pair on one stream reuses the block it freed,
 * and the chunk goes back only at a synchronising call, which the loop
 * never makes, so the two cost the same.
 */
#ifndef KFDPOOL_PAIR_H
#define KFDPOOL_PAIR_H

#include <kfdpool_hip.h>

#include "bench.h"

#define PAIR_WARMUP 5000

#define PAIR_CHECK(call) do {						\
	hipError_t e_ = (call);						\
	if (e_ != hipSuccess)						\
		die("%s: %s", #call, hipGetErrorName(e_));		\
} while (0)

/* A host pool; @ipc: with hipMemHandleTypePosixFileDescriptor; its
 * release threshold @threshold (0: HIP's default, left as it is). */
static inline hipMemPool_t pair_pool_threshold(int ipc, uint64_t threshold)
{
	hipMemPoolProps props;
	hipMemPool_t pool;

	memset(&props, 0, sizeof(props));
	props.allocType = hipMemAllocationTypePinned;
	props.handleTypes = ipc ? hipMemHandleTypePosixFileDescriptor :
				  hipMemHandleTypeNone;
	props.location.type = hipMemLocationTypeHost;
	PAIR_CHECK(hipMemPoolCreate(&pool, &props));
	if (threshold)
		PAIR_CHECK(hipMemPoolSetAttribute(pool,
			   hipMemPoolAttrReleaseThreshold, &threshold));
	return pool;
}

/* The release threshold at the maximum, as an application that keeps a
 * pool's memory asks. */
static inline hipMemPool_t pair_pool(int ipc)
{
	return pair_pool_threshold(ipc, UINT64_MAX);
}

/* @n pairs of @size bytes; the clock's reading (ns, or instructions). */
static inline uint64_t pair_round(hipMemPool_t pool, size_t size, unsigned int n)
{
	uint64_t t0 = now_ns();
	unsigned int i;
	void *p;

	for (i = 0; i < n; i++) {
		PAIR_CHECK(hipMallocFromPoolAsync(&p, size, pool, NULL));
		PAIR_CHECK(hipFreeAsync(p, NULL));
	}
	return now_ns() - t0;
}

/* What two back-to-back clock readings cost, to take off single timings. */
static inline double clock_cost(void)
{
	double v[101];
	unsigned int i;

	for (i = 0; i < 101; i++) {
		uint64_t t0 = now_ns();

		v[i] = (double)(now_ns() - t0);
	}
	return median(v, 101);
}

/*
 * The cost of one pair, two ways, from @rounds rounds of @n pairs each
 * timed alone:
 *   @mean: per round, the pairs' total over @n, median over the rounds:
 *	what a pair costs with the rare expensive ones counted (on an IPC
 *	pool about one pair in ten costs twice the typical one, and one in
 *	thousands millions of instructions: deferred kernel work, whose
 *	share of a round varies from run to run);
 *   @typical: the median of the single pairs: the cost of the common path,
 *	exact under icount (it is the budget make check holds).
 */
struct pair_figures {
	double mean, typical;
};

static inline void pair_cost(hipMemPool_t pool, size_t size, unsigned int n,
			     unsigned int rounds, struct pair_figures *f)
{
	double *one = calloc((size_t)n * rounds, sizeof(*one));
	double per_round[64], clk = clock_cost();
	unsigned int r, i;
	void *p;

	if (!one)
		die("out of memory");
	if (rounds > 64)
		rounds = 64;
	pair_round(pool, size, PAIR_WARMUP);
	for (r = 0; r < rounds; r++) {
		double sum = 0;

		for (i = 0; i < n; i++) {
			uint64_t t0 = now_ns();

			PAIR_CHECK(hipMallocFromPoolAsync(&p, size, pool, NULL));
			PAIR_CHECK(hipFreeAsync(p, NULL));
			one[r * n + i] = (double)(now_ns() - t0) - clk;
			sum += one[r * n + i];
		}
		per_round[r] = sum / n;
	}
	f->mean = median(per_round, rounds);
	f->typical = median(one, n * rounds);
	free(one);
}

#endif /* KFDPOOL_PAIR_H */
