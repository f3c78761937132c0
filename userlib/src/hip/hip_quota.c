// SPDX-License-Identifier: MIT
/*
 * The module refuses with EDQUOT at the bounds it keeps per user (persistent
 * pools, their bytes, export records) and at the node's default_pool_limit.
 * hipErrorOutOfMemory alone reads like the machine's memory: say once which
 * bound it was, and what lifts it, as for RLIMIT_MEMLOCK (backend_module.c).
 */
#include <stdio.h>

#include "hip_internal.h"

void kp_say_quota(enum kp_quota what, uint64_t size)
{
	static int said[KP_QUOTA_RECORDS + 1];
	struct kfdpool_query q;
	int ctl = kfdpool_ctl(NULL);

	/* The figures of now, not the cached ones. */
	if (ctl < 0 || kfdpool_query(ctl, &q))
		return;
	if (what == KP_QUOTA_POOL && q.default_pool_limit &&
	    size > q.default_pool_limit)
		kp_say_once(&said[what], "kfdpool: a pool of maxSize %llu: over this node's default_pool_limit (%llu bytes)",
			    (unsigned long long)size,
			    (unsigned long long)q.default_pool_limit);
	else if (what == KP_QUOTA_POOL && !q.max_user_persistent)
		kp_say_once(&said[what], "kfdpool: persistent pools are off on this node (module parameter max_user_persistent is 0; an administrator enables them: kfdpool(4))");
	else if (what == KP_QUOTA_POOL)
		kp_say_once(&said[what], "kfdpool: this user keeps %u persistent pool(s), as many as max_user_persistent allows (kfdpool-stat lists them; kfdpool-stat --destroy ID ends one)",
			    q.user_persistent);
	else if (what == KP_QUOTA_BYTES)
		kp_say_once(&said[what], "kfdpool: %llu KiB more: this user's persistent pools hold %llu KiB, and max_user_persistent_bytes allows %llu KiB",
			    (unsigned long long)size >> 10,
			    (unsigned long long)q.user_persistent_bytes >> 10,
			    (unsigned long long)q.max_user_persistent_bytes >> 10);
	else
		kp_say_once(&said[what], "kfdpool: this user holds %u export records, as many as max_user_records allows: free or revoke exported pointers",
			    q.user_records);
}
