// SPDX-License-Identifier: GPL-2.0-only
/*
 * What the module keeps for a user and bounds per user: live records
 * (max_user_records) and the record table pages that hold them, and
 * persistent pools and their bytes.  Memory itself is
 * bounded by the kernel's own limits (RLIMIT_MEMLOCK, memcg), not here.  A
 * user is a euid at one user-namespace level, as ucounts (not exported to
 * modules) counts it: charged there and, as its namespace's owner, at each
 * level up, so a namespace mints no fresh quota.
 */
#include <linux/debugfs.h>
#include <linux/hashtable.h>
#include <linux/refcount.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/user_namespace.h>

#include "kfdpool.h"

/*
 * One euid at one user-namespace level, held by its pools and the level
 * below.  persistent* are under kfdpool_persist_lock.
 */
struct kfdpool_user {
	struct hlist_node hnode;
	struct user_namespace *ns;	/* referenced */
	kuid_t uid;
	struct kfdpool_user *parent;	/* (ns->parent, ns->owner) */
	refcount_t ref;
	atomic_long_t records;
	atomic_long_t rec_pages;	/* of the record tables */
	u32 persistent;			/* pools */
	u64 persistent_bytes;		/* of their live entries */
};

/* Users by (namespace, euid), and their references. */
static DEFINE_MUTEX(kfdpool_users_lock);
static DEFINE_HASHTABLE(kfdpool_users, 8);

/* Every level's persistent counts; taken under pool->lock. */
static DEFINE_SPINLOCK(kfdpool_persist_lock);

static unsigned long kfdpool_user_hash(const struct user_namespace *ns,
				       kuid_t uid)
{
	return (unsigned long)ns ^ __kuid_val(uid);
}

static struct kfdpool_user *kfdpool_user_find(const struct user_namespace *ns,
					      kuid_t uid)
{
	struct kfdpool_user *u;

	hash_for_each_possible(kfdpool_users, u, hnode,
			       kfdpool_user_hash(ns, uid))
		if (u->ns == ns && uid_eq(u->uid, uid))
			return u;
	return NULL;
}

/* Drop a reference to @u, and to each level above that it held last. */
static void kfdpool_user_put_locked(struct kfdpool_user *u)
{
	struct kfdpool_user *parent;

	for (; u && refcount_dec_and_test(&u->ref); u = parent) {
		parent = u->parent;
		WARN_ON(atomic_long_read(&u->records) ||
			atomic_long_read(&u->rec_pages) || u->persistent ||
			u->persistent_bytes);
		hash_del(&u->hnode);
		put_user_ns(u->ns);
		kfree(u);
	}
}

/* @uid of @ns, referenced, each level found or made top down; NULL: ENOMEM. */
struct kfdpool_user *kfdpool_user_get(struct user_namespace *ns, kuid_t uid)
{
	struct kfdpool_user *u, *parent = NULL;
	struct user_namespace *n;
	kuid_t id;
	int level;

	mutex_lock(&kfdpool_users_lock);
	for (level = 0; level <= ns->level; level++) {
		for (n = ns, id = uid; n->level > level; n = n->parent)
			id = n->owner;
		u = kfdpool_user_find(n, id);
		if (u) {
			/* @u holds its own reference to @parent. */
			if (parent)
				refcount_dec(&parent->ref);
			refcount_inc(&u->ref);
		} else {
			u = kzalloc(sizeof(*u), GFP_KERNEL_ACCOUNT);
			if (!u) {
				kfdpool_user_put_locked(parent);
				parent = NULL;
				break;
			}
			u->ns = get_user_ns(n);
			u->uid = id;
			u->parent = parent;	/* takes our reference */
			refcount_set(&u->ref, 1);
			hash_add(kfdpool_users, &u->hnode,
				 kfdpool_user_hash(n, id));
		}
		parent = u;
	}
	mutex_unlock(&kfdpool_users_lock);
	return parent;
}

void kfdpool_user_put(struct kfdpool_user *u)
{
	mutex_lock(&kfdpool_users_lock);
	kfdpool_user_put_locked(u);
	mutex_unlock(&kfdpool_users_lock);
}

/* One more of counter @at (an offset in the user) at every level, or -EDQUOT. */
static __always_inline int kfdpool_user_inc(struct kfdpool_user *u, size_t at, long cap)
{
	struct kfdpool_user *n, *undo;

	for (n = u; n; n = n->parent) {
		if (atomic_long_inc_return((void *)n + at) > cap && cap) {
			for (undo = u; undo != n->parent; undo = undo->parent)
				atomic_long_dec((void *)undo + at);
			return -EDQUOT;
		}
	}
	return 0;
}

static void kfdpool_user_sub(struct kfdpool_user *u, size_t at,
			     unsigned long nr)
{
	for (; u && nr; u = u->parent)
		WARN_ON(atomic_long_sub_return(nr, (void *)u + at) < 0);
}

/* Charge a live record to @u at every level: 0, or -EDQUOT at the cap. */
int kfdpool_records_charge(struct kfdpool_user *u)
{
	return kfdpool_user_inc(u, offsetof(struct kfdpool_user, records),
				READ_ONCE(kfdpool_max_user_records));
}

void kfdpool_records_uncharge(struct kfdpool_user *u, unsigned long nr)
{
	kfdpool_user_sub(u, offsetof(struct kfdpool_user, records), nr);
}

/*
 * Charge a record table page to @u: one live record keeps a page of 73, so
 * records alone would not bound the memory.  The pages max_user_records
 * full records need, twice over: 0, or -EDQUOT.
 */
int kfdpool_rec_pages_charge(struct kfdpool_user *u)
{
	long cap = DIV_ROUND_UP(READ_ONCE(kfdpool_max_user_records),
				KFDPOOL_RECS_PER_PAGE) * 2;

	return kfdpool_user_inc(u, offsetof(struct kfdpool_user, rec_pages),
				cap);
}

void kfdpool_rec_pages_uncharge(struct kfdpool_user *u)
{
	kfdpool_user_sub(u, offsetof(struct kfdpool_user, rec_pages), 1);
}

/* QUERY: what the caller's own level holds. */
void kfdpool_user_figures(struct user_namespace *ns, kuid_t uid,
			  struct kfdpool_query *q)
{
	struct kfdpool_user *u;

	mutex_lock(&kfdpool_users_lock);
	u = kfdpool_user_find(ns, uid);
	if (u) {
		spin_lock(&kfdpool_persist_lock);
		q->user_persistent = u->persistent;
		q->user_persistent_bytes = u->persistent_bytes;
		spin_unlock(&kfdpool_persist_lock);
		q->user_records = min_t(long, atomic_long_read(&u->records),
					U32_MAX);
	}
	mutex_unlock(&kfdpool_users_lock);
}

/* Would @pools more persistent pools and @bytes more bytes pass a cap? */
static bool kfdpool_persist_over(const struct kfdpool_user *n, u32 pools,
				 u64 bytes)
{
	u32 maxp = READ_ONCE(kfdpool_max_user_persistent);
	u64 maxb = READ_ONCE(kfdpool_max_user_persistent_bytes);

	if (pools && (pools > maxp || n->persistent > maxp - pools))
		return true;
	return bytes && maxb && (bytes > maxb || n->persistent_bytes > maxb - bytes);
}

/**
 * kfdpool_persist_user_charge() - charge persistent pools and bytes to @u
 * @u: the pool's user
 * @pools: persistent pools, against max_user_persistent (0: none allowed)
 * @bytes: bytes of their entries, against max_user_persistent_bytes
 *
 * Return: 0, or -EDQUOT when a level would pass a cap, nothing charged.
 */
int kfdpool_persist_user_charge(struct kfdpool_user *u, u32 pools, u64 bytes)
{
	struct kfdpool_user *n;
	int ret = 0;

	spin_lock(&kfdpool_persist_lock);
	for (n = u; n; n = n->parent) {
		if (kfdpool_persist_over(n, pools, bytes)) {
			ret = -EDQUOT;
			goto out;
		}
	}
	for (n = u; n; n = n->parent) {
		n->persistent += pools;
		n->persistent_bytes += bytes;
	}
out:
	spin_unlock(&kfdpool_persist_lock);
	return ret;
}

void kfdpool_persist_user_uncharge(struct kfdpool_user *u, u32 pools,
				   u64 bytes)
{
	spin_lock(&kfdpool_persist_lock);
	for (; u; u = u->parent) {
		WARN_ON(u->persistent < pools || u->persistent_bytes < bytes);
		u->persistent -= pools;
		u->persistent_bytes -= bytes;
	}
	spin_unlock(&kfdpool_persist_lock);
}

/* debugfs, for root: one line per user level. */
static int kfdpool_users_show(struct seq_file *m, void *unused)
{
	struct kfdpool_user *u;
	unsigned int bkt;
	u64 pbytes;
	u32 persistent;

	seq_puts(m, "# userns level uid owner_uid records rec_pages persistent persistent_bytes\n");
	mutex_lock(&kfdpool_users_lock);
	hash_for_each(kfdpool_users, bkt, u, hnode) {
		spin_lock(&kfdpool_persist_lock);
		persistent = u->persistent;
		pbytes = u->persistent_bytes;
		spin_unlock(&kfdpool_persist_lock);
		seq_printf(m, "%u %d %u %u %ld %ld %u %llu\n", u->ns->ns.inum,
			   u->ns->level,
			   from_kuid_munged(seq_user_ns(m), u->uid),
			   from_kuid_munged(seq_user_ns(m), u->ns->owner),
			   atomic_long_read(&u->records),
			   atomic_long_read(&u->rec_pages), persistent, pbytes);
	}
	mutex_unlock(&kfdpool_users_lock);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(kfdpool_users);

static struct dentry *kfdpool_debugfs_dir;

void kfdpool_debugfs_init(void)
{
	/* debugfs is for observation only: failures are not errors. */
	kfdpool_debugfs_dir = debugfs_create_dir("kfdpool", NULL);
	debugfs_create_file("users", 0444, kfdpool_debugfs_dir, NULL,
			    &kfdpool_users_fops);
}

void kfdpool_debugfs_exit(void)
{
	debugfs_remove_recursive(kfdpool_debugfs_dir);
}

void kfdpool_users_exit(void)
{
	WARN_ON(!hash_empty(kfdpool_users));
}
