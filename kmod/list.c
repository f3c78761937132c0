// SPDX-License-Identifier: GPL-2.0-only
/*
 * POOL_LIST on the control device: the pools the caller may see, a page at
 * a time, for kfdpool-stat and other monitors (debugfs is only a debugging
 * aid: root-only, and not a stable interface).
 *
 * A page is read into a kernel buffer under kfdpool_pools_lock (and each
 * pool's lock, briefly), then copied out with no lock held.  The cursor is
 * a pool's serial: serials only grow and the list is in serial order, so a
 * pool that lives through the whole listing is reported exactly once.  A
 * call starts at the first pool whose serial is at least the cursor (the
 * pool it names may be gone), found in kfdpool_pools_by_serial in
 * O(log pools), and goes on along the list from there.
 *
 * Zombies (pools whose files are all closed, kept by held entries) are
 * listed, marked KFDPOOL_POOL_INFO_ZOMBIE: what they hold is charged to
 * their user and the global limit, and a monitor must be able to see where
 * that memory is.
 *
 * One call looks at no more than KFDPOOL_POOL_LIST_SCAN pools past the
 * cursor, visible or not, so that the global lock is not held for the
 * whole of a listing however many pools other users have; the caller goes
 * on from @next_cursor.  The pools before the cursor are not looked at:
 * a listing of P pools costs O(P log P) in all, whatever the page size.
 */
#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/mm.h>
#include <linux/overflow.h>
#include <linux/pid.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/user_namespace.h>

#include "kfdpool.h"

/* The largest element a caller may describe: a page. */
#define KFDPOOL_POOL_INFO_MAX_SIZE	4096

/* Pools one call looks at, listed or skipped. */
#define KFDPOOL_POOL_LIST_SCAN		1024

static bool kfdpool_list_visible(const struct kfdpool_pool *pool, bool all)
{
	return all || uid_eq(pool->uid, current_euid());
}

/* Fill @info from @pool; pool->lock held. */
static void kfdpool_info_fill(struct kfdpool_pool *pool,
			      struct kfdpool_pool_info *info)
{
	lockdep_assert_held(&pool->lock);
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
	info->held_bytes = pool->held_bytes;
	info->held_entries = pool->nr_held;
	info->state = pool->zombie ? KFDPOOL_POOL_INFO_ZOMBIE : 0;
}

/* The first pool whose serial is @cursor or more; kfdpool_pools_lock held. */
static struct kfdpool_pool *kfdpool_list_seek(u64 cursor)
{
	struct rb_node *n = kfdpool_pools_by_serial.rb_node;
	struct kfdpool_pool *pool, *first = NULL;

	lockdep_assert_held(&kfdpool_pools_lock);
	while (n) {
		pool = rb_entry(n, struct kfdpool_pool, serial_node);
		if (pool->serial >= cursor) {
			first = pool;
			n = n->rb_left;
		} else {
			n = n->rb_right;
		}
	}
	return first;
}

/*
 * Read up to @max pools from @cursor on into @buf; returns how many, and
 * sets *@next to the serial of the first visible pool left out, or of the
 * first pool not looked at (0: none).
 */
static u32 kfdpool_list_page(struct kfdpool_pool_info *buf, u32 max,
			     u64 cursor, bool all, u64 *next)
{
	struct kfdpool_pool *pool;
	u32 n = 0, scanned = 0;

	*next = 0;
	mutex_lock(&kfdpool_pools_lock);
	pool = kfdpool_list_seek(cursor);
	if (!pool)
		goto out;
	list_for_each_entry_from(pool, &kfdpool_pools, node) {
		if (scanned++ == KFDPOOL_POOL_LIST_SCAN) {
			*next = pool->serial;
			break;
		}
		if (!kfdpool_list_visible(pool, all))
			continue;
		if (n == max) {
			*next = pool->serial;
			break;
		}
		mutex_lock(&pool->lock);
		kfdpool_info_fill(pool, &buf[n]);
		mutex_unlock(&pool->lock);
		n++;
	}
out:
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
	size_t copy;
	bool all;
	u64 next;
	u32 i, n;

	BUILD_BUG_ON(offsetof(struct kfdpool_pool_info, held_bytes) !=
		     KFDPOOL_POOL_INFO_SIZE_VER0);
	if (args->flags || args->pad || args->count > KFDPOOL_POOL_LIST_MAX ||
	    args->info_size < KFDPOOL_POOL_INFO_SIZE_VER0 ||
	    args->info_size > KFDPOOL_POOL_INFO_MAX_SIZE)
		return -EINVAL;

	all = capable(CAP_SYS_ADMIN);
	/* Held entries nobody references any more are not listed. */
	kfdpool_reap_all();
	if (args->count) {
		buf = kvmalloc_array(args->count, ksize, GFP_KERNEL);
		if (!buf)
			return -ENOMEM;
	}
	n = kfdpool_list_page(buf, args->count, args->cursor, all, &next);

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
