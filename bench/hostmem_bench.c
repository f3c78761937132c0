// SPDX-License-Identifier: GPL-2.0-only
/*
 * hostmem_bench: host memory from the module (KFDPOOL_IOC_ALLOC) against
 * the system dma heap, for a 2 MiB chunk and a 64 MiB one, each step of
 * hostmem.h's round (the module's mapped also with MAP_POPULATE, as
 * libkfdpool maps chunks).  Medians of BENCH_ROUNDS.  Then the two figures
 * tools/bench holds targets against: the module's allocation over the
 * heap's (the worse of the two sizes) and an importer's mmap and touch of
 * a 2 MiB module chunk.  Prints figures only; nothing is asserted.
 */
#include "hostmem.h"

int main(void)
{
	static const size_t lens[] = { 2ul << 20, 64ul << 20 };
	static const char *const names[] = { "module", "module MAP_POPULATE",
					     "dma-heap" };
	int rounds = env_int("BENCH_ROUNDS", 7), r, m;
	double *v[8], alloc[2][3], worst = 0;
	struct hm_pools p;
	unsigned int l, k;
	char row[64];

	for (k = 0; k < 8; k++)
		v[k] = calloc(rounds, sizeof(double));
	hm_setup(&p);

	for (l = 0; l < 2; l++) {
		for (m = 0; m < 3; m++) {
			for (r = 0; r < rounds; r++) {
				struct hm_cost c;

				hm_round(&p, lens[l], m < 2, m == 1, &c);
				v[0][r] = c.alloc;
				v[1][r] = c.map;
				v[2][r] = c.touch;
				v[3][r] = c.imp_map;
				v[4][r] = c.imp_touch;
				v[5][r] = c.unmap;
				v[6][r] = c.reg;
				v[7][r] = c.imp_map + c.imp_touch;
			}
			snprintf(row, sizeof(row), "%s %zu MiB", names[m],
				 lens[l] >> 20);
			alloc[l][m] = median(v[0], rounds);
			figure("host memory", row, "allocate ns", alloc[l][m], "ns");
			figure("host memory", row, "mmap ns", median(v[1], rounds), "ns");
			figure("host memory", row, "first touch ns", median(v[2], rounds), "ns");
			figure("host memory", row, "importer mmap ns", median(v[3], rounds), "ns");
			figure("host memory", row, "importer touch ns", median(v[4], rounds), "ns");
			figure("host memory", row, "importer mmap + touch ns",
			       median(v[7], rounds), "ns");
			figure("host memory", row, "munmap ns", median(v[5], rounds), "ns");
			if (v[6][0] >= 0)
				figure("host memory", row, "io_uring register ns",
				       median(v[6], rounds), "ns");
		}
		snprintf(row, sizeof(row), "%zu MiB", lens[l] >> 20);
		figure("host memory: module over dma-heap", row,
		       "allocate (module / dma-heap)",
		       alloc[l][0] / alloc[l][2], "x");
		if (alloc[l][0] / alloc[l][2] > worst)
			worst = alloc[l][0] / alloc[l][2];
	}
	figure("host memory: module over dma-heap", "worst of 2 MiB and 64 MiB",
	       "allocate (module / dma-heap)", worst, "x");
	hm_teardown(&p);
	return 0;
}
