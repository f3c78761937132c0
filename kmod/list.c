// SPDX-License-Identifier: GPL-2.0-only
/*
 * POOL_LIST, for monitors.  Its cursor is a serial: pools are listed in
 * serial order, so a pool that lives through a listing is listed once.
 * Pools are found under RCU: a listing holds no global lock.
 */
#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/user_namespace.h>

#include "kfdpool.h"

/* Elements one call fills, and pools it looks at. */
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
	info->serial = pool->serial;
	info->flags = pool->flags;
	info->owner_fds = pool->nr_owners;
	info->age_ns = ktime_get_boottime_ns() - pool->created;
}

/* Fill @buf from serial @cursor on; *@next: where the next call starts or 0. */
static u32 kfdpool_list_page(struct kfdpool_pool_info *buf, u32 max,
			     unsigned long cursor, bool all, u64 *next)
{
	struct kfdpool_pool *pool;
	unsigned long idx = cursor;
	u32 n = 0, scanned = 0;
	bool shown;

	*next = 0;
	for (; (pool = kfdpool_pool_next(&idx)); idx++) {
		shown = all || uid_eq(pool->uid, current_euid());
		if (scanned++ == KFDPOOL_POOL_LIST_SCAN || (shown && n == max)) {
			*next = idx;
			kfdpool_pool_put(pool);
			break;
		}
		if (shown) {
			mutex_lock(&pool->lock);
			if (!pool->ended)
				kfdpool_info_fill(pool, &buf[n++]);
			mutex_unlock(&pool->lock);
		}
		kfdpool_pool_put(pool);
		cond_resched();
	}
	return n;
}

long kfdpool_ioctl_pool_list(struct file *file, unsigned int nr, void *data,
			     struct kfdpool_fd_out *fdo)
{
	struct kfdpool_pool_list *args = data;
	const size_t ksize = sizeof(struct kfdpool_pool_info);
	struct kfdpool_pool_info *buf = NULL;
	void __user *dst = u64_to_user_ptr(args->pools);
	u32 i, n = 0, max = min(args->count, KFDPOOL_POOL_LIST_PAGE);
	u64 next = 0;
	size_t copy;
	bool all;

	/* An older caller's element: its first version's fields, at least. */
	if (args->flags || args->pad ||
	    args->info_size < offsetofend(struct kfdpool_pool_info, age_ns) ||
	    args->info_size > KFDPOOL_ELEM_MAX)
		return -EINVAL;
	/* Serials are 32-bit: a larger cursor is past every pool. */
	if (args->cursor > U32_MAX)
		max = 0;

	/* Which pools to show, not whether to: no denial to audit. */
	all = ns_capable_noaudit(&init_user_ns, CAP_SYS_ADMIN);
	if (max) {
		buf = kvmalloc_array(max, ksize, GFP_KERNEL);
		if (!buf)
			return -ENOMEM;
	}
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
