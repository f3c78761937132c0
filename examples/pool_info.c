// SPDX-License-Identifier: MIT
/*
 * pool_info: the smallest program over libkfdpool's native API, the one
 * HACKING.md builds by hand and runs in the VM (tools/vm/add-check).  It
 * asks the module what it offers, creates a pool, and lists the pools it
 * can see.  It links libkfdpool alone: cc pool_info.c $(pkg-config --cflags
 * --libs kfdpool).
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <kfdpool.h>

int main(void)
{
	struct kfdpool_pool_info pools[16];
	struct kfdpool_query q;
	uint64_t cursor = 0;
	int ctl, pool, n, i;

	ctl = kfdpool_open();
	if (ctl < 0) {
		fprintf(stderr, "pool_info: /dev/kfdpool: %s\n", strerror(-ctl));
		return 1;
	}
	if (kfdpool_query(ctl, &q) < 0)
		return 1;
	printf("kfdpool ABI %u, features 0x%x, max batch %u\n",
	       q.abi_version, q.features, q.max_batch);
	pool = kfdpool_pool_create(ctl, 1 << 20, KFDPOOL_HANDLE_TYPE_FD,
				   "pool_info", NULL);
	if (pool < 0) {
		fprintf(stderr, "pool_info: create: %s\n", strerror(-pool));
		return 1;
	}
	do {
		n = kfdpool_pool_list(ctl, pools, 16, &cursor, NULL);
		if (n < 0) {
			fprintf(stderr, "pool_info: list: %s\n", strerror(-n));
			return 1;
		}
		for (i = 0; i < n; i++)
			printf("pool %s: limit %llu, owner pid %d\n",
			       pools[i].name, (unsigned long long)pools[i].limit,
			       pools[i].owner_pid);
	} while (cursor);
	close(pool);
	close(ctl);
	return 0;
}
