// SPDX-License-Identifier: GPL-2.0-only
/*
 * /sys/kernel/debug/kfdpool/pools: every pool, one a line; users: what each
 * user level is charged.  A debugging aid for root, not an interface:
 * monitors use POOL_LIST and fdinfo.  New columns go at the end.
 */
#include <linux/debugfs.h>
#include <linux/seq_file.h>
#include <linux/user_namespace.h>

#include "kfdpool.h"

static struct dentry *kfdpool_debugfs_dir;

static int kfdpool_pools_show(struct seq_file *m, void *unused)
{
	struct kfdpool_pool *pool;
	unsigned long idx;

	seq_puts(m, "# id name owner_pid uid limit reserved reserved_high used used_high draining entries records import_fds imported rec_pages persistent owner_fds age_s\n");
	mutex_lock(&kfdpool_pools_lock);
	xa_for_each(&kfdpool_pools, idx, pool) {
		mutex_lock(&pool->lock);
		if (!pool->ended)
			seq_printf(m, "%*phN %s %d %u %llu %llu %llu %llu %llu %llu %u %u %u %llu %u %u %u %llu\n",
				   KFDPOOL_ID_LEN, pool->id,
				   pool->name[0] ? pool->name : "-",
				   kfdpool_owner_pid(pool),
				   from_kuid_munged(seq_user_ns(m), pool->uid),
				   pool->limit, pool->reserved,
				   pool->reserved_high, pool->used,
				   pool->used_high, pool->draining,
				   pool->nr_entries, pool->nr_records,
				   pool->nr_import_fds, pool->imported,
				   pool->records.nr_pages,
				   !!(pool->flags & KFDPOOL_POOL_PERSIST),
				   pool->nr_owners,
				   div_u64(ktime_get_boottime_ns() -
					   pool->created, NSEC_PER_SEC));
		mutex_unlock(&pool->lock);
	}
	mutex_unlock(&kfdpool_pools_lock);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(kfdpool_pools);

static int kfdpool_users_dbg_show(struct seq_file *m, void *unused)
{
	kfdpool_users_show(m);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(kfdpool_users_dbg);

void kfdpool_debugfs_init(void)
{
	/* debugfs is for observation only: failures are not errors. */
	kfdpool_debugfs_dir = debugfs_create_dir("kfdpool", NULL);
	debugfs_create_file("pools", 0444, kfdpool_debugfs_dir, NULL,
			    &kfdpool_pools_fops);
	debugfs_create_file("users", 0444, kfdpool_debugfs_dir, NULL,
			    &kfdpool_users_dbg_fops);
}

void kfdpool_debugfs_exit(void)
{
	debugfs_remove_recursive(kfdpool_debugfs_dir);
}
