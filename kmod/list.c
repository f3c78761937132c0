// SPDX-License-Identifier: GPL-2.0-only
/*
 * POOL_LIST on the control device: the pools the caller may see, a page at
 * a time, for monitors.  A page is read under kfdpool_pools_lock into a
 * kernel buffer, then copied out unlocked.  The cursor is a pool's serial,
 * which only grows until it wraps at 2^32 pools: a pool that lives through
 * a whole listing is listed exactly once.  One call looks at a bounded
 * number of pools, visible or not, so that the lock is not held for a
 * listing of every user's pools.
 */
#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/user_namespace.h>

#include "kfdpool.h"

/* Elements one call fills, and pools one call looks at. */
#define KFDPOOL_POOL_LIST_PAGE	256
#define KFDPOOL_POOL_LIST_SCAN	1024

/* Fill @info from @pool; pool->lock held. */
static void kfdpool_info_fill(struct kfdpool_pool *pool,
			      struct kfdpool_pool_info *info)
{
	memset(info, 0, sizeof(*info));
	memcpy(info->id, pool->id, sizeof(info->id));
	memcpy(info->name, pool->name, sizeof(info->name));
	info->limit = pool->limit;
	info->handle_types = pool->handle_types;
	info->owner_pid = kfdpool_owner_pid(pool);
	info->uid = from_kuid_munged(current_user_ns(), pool->uid);
	info->entries = pool->nr_entries;
	info->reserved_bytes = pool->reserved;
	info->reserved_high = pool->reserved_high;
	info->used_bytes = pool->used;
	info->used_high = pool->used_high;
	info->draining_bytes = pool->draining;
	info->imported_bytes = pool->imported;
	info->draining_entries = pool->nr_draining;
	info->records = pool->nr_records;
	info->import_fds = pool->nr_import_fds;
	info->flags = pool->flags;
	info->owner_fds = pool->nr_owners;
	info->age_ns = ktime_get_boottime_ns() - pool->created;
}

/*
 * Read up to @max pools from serial @cursor on into @buf; returns how
 * many, and sets *@next to where the next call starts (0: nothing left).
 */
static u32 kfdpool_list_page(struct kfdpool_pool_info *buf, u32 max,
			     unsigned long cursor, bool all, u64 *next)
{
	struct kfdpool_pool *pool;
	unsigned long idx = cursor;
	u32 n = 0, scanned = 0;

	*next = 0;
	mutex_lock(&kfdpool_pools_lock);
	xa_for_each_start(&kfdpool_pools, idx, pool, cursor) {
		if (scanned++ == KFDPOOL_POOL_LIST_SCAN ||
		    (n == max && (all || uid_eq(pool->uid, current_euid())))) {
			*next = idx;
			break;
		}
		if (!all && !uid_eq(pool->uid, current_euid()))
			continue;
		mutex_lock(&pool->lock);
		if (!pool->ended)
			kfdpool_info_fill(pool, &buf[n++]);
		mutex_unlock(&pool->lock);
	}
	mutex_unlock(&kfdpool_pools_lock);
	return n;
}

long kfdpool_ioctl_pool_list(struct file *file, void *data,
			     struct kfdpool_fd_out *fdo)
{
	struct kfdpool_pool_list *args = data;
	const size_t ksize = sizeof(struct kfdpool_pool_info);
	struct kfdpool_pool_info *buf = NULL;
	void __user *dst = u64_to_user_ptr(args->pools);
	u32 i, n, max = min(args->count, KFDPOOL_POOL_LIST_PAGE);
	size_t copy;
	bool all;
	u64 next;

	if (args->flags || args->pad || args->info_size < ksize ||
	    args->info_size > KFDPOOL_ELEM_MAX)
		return -EINVAL;
	/* Serials are 32-bit: a larger cursor is past every pool. */
	if (args->cursor > U32_MAX)
		max = 0;

	all = capable(CAP_SYS_ADMIN);
	if (max) {
		buf = kvmalloc_array(max, ksize, GFP_KERNEL);
		if (!buf)
			return -ENOMEM;
	}
	n = 0;
	next = 0;
	if (args->cursor <= U32_MAX)
		n = kfdpool_list_page(buf, max, args->cursor, all, &next);

	/* Each element at the caller's stride; what it has past ours is 0. */
	copy = min_t(size_t, args->info_size, ksize);
	for (i = 0; i < n; i++, dst += args->info_size) {
		if (copy_to_user(dst, &buf[i], copy) ||
		    clear_user(dst + copy, args->info_size - copy)) {
			kvfree(buf);
			return -EFAULT;
		}
	}
	kvfree(buf);

	args->count = n;
	args->next_cursor = next;
	args->scope = all ? KFDPOOL_POOL_LIST_ALL : KFDPOOL_POOL_LIST_OWN;
	return 0;
}
