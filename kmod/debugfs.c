// SPDX-License-Identifier: GPL-2.0-only
/*
 * /sys/kernel/debug/kfdpool/pools: every pool on the system, one a line,
 * zombies (pools whose files are closed but which hold entries) included.
 * A debugging aid for root (the tests count pools with it), not an
 * interface: monitors use KFDPOOL_IOC_POOL_LIST and fdinfo.  Ids are the
 * reader's numbers (pid namespace, and the user namespace of the opener),
 * as in fdinfo; owner_pid is 0 once the creator is gone.  New columns go at
 * the end.
 *
 * /sys/kernel/debug/kfdpool/users: what each user is charged, one user
 * namespace level a line, uids in the opener's user namespace.
 */
#include <linux/debugfs.h>
#include <linux/pid.h>
#include <linux/seq_file.h>
#include <linux/user_namespace.h>

#include "kfdpool.h"

static struct dentry *kfdpool_debugfs_dir;

static int kfdpool_pools_show(struct seq_file *m, void *unused)
{
	struct kfdpool_pool *pool;

	kfdpool_reap_all();
	seq_puts(m, "# id name owner_pid uid limit reserved reserved_high used used_high draining entries records import_fds imported held rec_pages\n");
	mutex_lock(&kfdpool_pools_lock);
	list_for_each_entry(pool, &kfdpool_pools, node) {
		mutex_lock(&pool->lock);
		seq_printf(m, "%*phN %s %d %u %llu %llu %llu %llu %llu %llu %u %u %u %llu %llu %u\n",
			   KFDPOOL_ID_LEN, pool->id,
			   pool->name[0] ? pool->name : "-",
			   kfdpool_owner_pid(pool),
			   from_kuid_munged(seq_user_ns(m), pool->uid),
			   pool->limit, pool->reserved, pool->reserved_high,
			   pool->used, pool->used_high, pool->draining,
			   pool->nr_entries, pool->nr_records,
			   pool->nr_import_fds, pool->imported,
			   pool->held_bytes, pool->records.nr_pages);
		mutex_unlock(&pool->lock);
	}
	mutex_unlock(&kfdpool_pools_lock);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(kfdpool_pools);

static int kfdpool_users_dbg_show(struct seq_file *m, void *unused)
{
	kfdpool_reap_all();
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
	kfdpool_debugfs_dir = NULL;
}
