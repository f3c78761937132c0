// SPDX-License-Identifier: GPL-2.0-only
/*
 * global_limit; per user, user_limit, max_user_records and the persistent caps.
 * A user is a euid at one user-namespace level, as ucounts (not exported to
 * modules) counts it: charged there and, as its namespace's owner, at each
 * level up, so a namespace mints no fresh quota.  A level charges an object
 * (a dma-buf, or ALLOC's memory) once, however many entries hold it.  A charge
 * checks all levels, then uses nodes allocated before: it cannot fail half-way.
 */
#include <linux/hashtable.h>
#include <linux/refcount.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/user_namespace.h>

#include "kfdpool.h"

/* What is charged at one level: the objects, and their bytes. */
struct kfdpool_level {
	struct rb_root charges;
	u64 pinned;
};

/*
 * One euid at one user-namespace level, held by its pools, ALLOC's buffers and
 * the level below.  lvl and persistent* are under kfdpool_charge_lock.
 */
struct kfdpool_user {
	struct hlist_node hnode;
	struct user_namespace *ns;	/* referenced */
	kuid_t uid;
	struct kfdpool_user *parent;	/* (ns->parent, ns->owner) */
	refcount_t ref;
	struct kfdpool_level lvl;
	atomic_long_t records;
	u32 persistent;			/* pools */
	u64 persistent_bytes;		/* of their entries */
};

/* One object charged at one level, with its holders there; or a spare. */
struct kfdpool_charge {
	struct rb_node node;
	const void *obj;
	u64 size;
	union {
		unsigned long refs;
		struct kfdpool_charge *next;
	};
};

/* Users by (namespace, euid), and their references. */
static DEFINE_MUTEX(kfdpool_users_lock);
static DEFINE_HASHTABLE(kfdpool_users, 8);

/* Every level's charges; taken under pool->lock. */
static DEFINE_SPINLOCK(kfdpool_charge_lock);
static struct kfdpool_level kfdpool_global = { .charges = RB_ROOT };

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
		WARN_ON(u->lvl.pinned || atomic_long_read(&u->records) ||
			u->persistent || u->persistent_bytes);
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
			u->lvl.charges = RB_ROOT;
			hash_add(kfdpool_users, &u->hnode,
				 kfdpool_user_hash(n, id));
		}
		parent = u;
	}
	mutex_unlock(&kfdpool_users_lock);
	return parent;
}

/* Another reference to @u, whose caller holds one. */
void kfdpool_user_hold(struct kfdpool_user *u)
{
	refcount_inc(&u->ref);
}

void kfdpool_user_put(struct kfdpool_user *u)
{
	mutex_lock(&kfdpool_users_lock);
	kfdpool_user_put_locked(u);
	mutex_unlock(&kfdpool_users_lock);
}

/* The tree nodes a charge of @u may need: one per level, and global. */
struct kfdpool_charge *kfdpool_charge_prepare(struct kfdpool_user *u)
{
	struct kfdpool_charge *head = NULL, *c;
	int i;

	for (i = 0; i < u->ns->level + 2; i++) {
		c = kmalloc(sizeof(*c), GFP_KERNEL_ACCOUNT);
		if (!c) {
			kfdpool_charge_finish(head);
			return NULL;
		}
		c->next = head;
		head = c;
	}
	return head;
}

/* Free the spares kfdpool_charge() did not use. */
void kfdpool_charge_finish(struct kfdpool_charge *spares)
{
	struct kfdpool_charge *c;

	while (spares) {
		c = spares;
		spares = c->next;
		kfree(c);
	}
}

static int kfdpool_charge_cmp(const void *obj, const struct rb_node *n)
{
	const void *o = rb_entry(n, struct kfdpool_charge, node)->obj;

	return obj < o ? -1 : obj > o;
}

static bool kfdpool_charge_less(struct rb_node *a, const struct rb_node *b)
{
	return rb_entry(a, struct kfdpool_charge, node)->obj <
	       rb_entry(b, struct kfdpool_charge, node)->obj;
}

static struct kfdpool_charge *kfdpool_level_find(struct kfdpool_level *lvl,
						 const void *obj)
{
	struct rb_node *n = rb_find(obj, &lvl->charges, kfdpool_charge_cmp);

	return n ? rb_entry(n, struct kfdpool_charge, node) : NULL;
}

/* Would @size more bytes of @obj pass @limit at @lvl? */
static bool kfdpool_level_over(struct kfdpool_level *lvl, const void *obj,
			       u64 size, u64 limit)
{
	return limit && !kfdpool_level_find(lvl, obj) &&
	       (size > limit || lvl->pinned > limit - size);
}

static void kfdpool_level_get(struct kfdpool_level *lvl, const void *obj,
			      u64 size, unsigned int refs,
			      struct kfdpool_charge **spares)
{
	struct kfdpool_charge *c = kfdpool_level_find(lvl, obj);

	if (!c) {
		c = *spares;
		*spares = c->next;
		c->obj = obj;
		c->size = size;
		c->refs = 0;
		rb_add(&c->node, &lvl->charges, kfdpool_charge_less);
		lvl->pinned += size;
	}
	c->refs += refs;
}

static void kfdpool_level_put(struct kfdpool_level *lvl, const void *obj)
{
	struct kfdpool_charge *c = kfdpool_level_find(lvl, obj);

	if (WARN_ON_ONCE(!c) || --c->refs)
		return;
	rb_erase(&c->node, &lvl->charges);
	lvl->pinned -= c->size;
	kfree(c);
}

/**
 * kfdpool_charge() - charge @obj to @u's levels and the global figure
 * @u: the user
 * @obj: the object's identity; every charge of it has the same @size
 * @size: its bytes, charged at a level that has none of it yet
 * @refs: holders this stands for; kfdpool_uncharge() returns one
 * @spares: from kfdpool_charge_prepare(); those used are taken off
 *
 * Return: 0, or -ENOSPC (global_limit) or -EDQUOT (user_limit), none charged.
 */
int kfdpool_charge(struct kfdpool_user *u, const void *obj, u64 size,
		   unsigned int refs, struct kfdpool_charge **spares)
{
	u64 ulimit = READ_ONCE(kfdpool_user_limit);
	struct kfdpool_user *n;
	int ret = 0;

	spin_lock(&kfdpool_charge_lock);
	if (kfdpool_level_over(&kfdpool_global, obj, size,
			       READ_ONCE(kfdpool_global_limit))) {
		ret = -ENOSPC;
		goto out;
	}
	for (n = u; n; n = n->parent) {
		if (kfdpool_level_over(&n->lvl, obj, size, ulimit)) {
			ret = -EDQUOT;
			goto out;
		}
	}
	kfdpool_level_get(&kfdpool_global, obj, size, refs, spares);
	for (n = u; n; n = n->parent)
		kfdpool_level_get(&n->lvl, obj, size, refs, spares);
out:
	spin_unlock(&kfdpool_charge_lock);
	return ret;
}

/* Return one holder's charge of @obj to @u's levels and the global figure. */
void kfdpool_uncharge(struct kfdpool_user *u, const void *obj)
{
	spin_lock(&kfdpool_charge_lock);
	kfdpool_level_put(&kfdpool_global, obj);
	for (; u; u = u->parent)
		kfdpool_level_put(&u->lvl, obj);
	spin_unlock(&kfdpool_charge_lock);
}

/* Charge a live record to @u at every level: 0, or -EDQUOT at the cap. */
int kfdpool_records_charge(struct kfdpool_user *u)
{
	long cap = READ_ONCE(kfdpool_max_user_records);
	struct kfdpool_user *n, *undo;

	for (n = u; n; n = n->parent) {
		if (atomic_long_inc_return(&n->records) > cap && cap) {
			for (undo = u; undo != n->parent; undo = undo->parent)
				atomic_long_dec(&undo->records);
			return -EDQUOT;
		}
	}
	return 0;
}

void kfdpool_records_uncharge(struct kfdpool_user *u, unsigned long nr)
{
	for (; u && nr; u = u->parent)
		WARN_ON(atomic_long_sub_return(nr, &u->records) < 0);
}

/* QUERY: the global figure and what the caller's own level holds. */
void kfdpool_user_figures(struct user_namespace *ns, kuid_t uid,
			  struct kfdpool_query *q)
{
	struct kfdpool_user *u;

	mutex_lock(&kfdpool_users_lock);
	u = kfdpool_user_find(ns, uid);
	spin_lock(&kfdpool_charge_lock);
	q->global_pinned = kfdpool_global.pinned;
	if (u) {
		q->user_pinned = u->lvl.pinned;
		q->user_persistent = u->persistent;
		q->user_persistent_bytes = u->persistent_bytes;
	}
	spin_unlock(&kfdpool_charge_lock);
	if (u)
		q->user_records = min_t(long, atomic_long_read(&u->records),
					U32_MAX);
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

	spin_lock(&kfdpool_charge_lock);
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
	spin_unlock(&kfdpool_charge_lock);
	return ret;
}

void kfdpool_persist_user_uncharge(struct kfdpool_user *u, u32 pools,
				   u64 bytes)
{
	spin_lock(&kfdpool_charge_lock);
	for (; u; u = u->parent) {
		WARN_ON(u->persistent < pools || u->persistent_bytes < bytes);
		u->persistent -= pools;
		u->persistent_bytes -= bytes;
	}
	spin_unlock(&kfdpool_charge_lock);
}

/* debugfs: one line per user level. */
void kfdpool_users_show(struct seq_file *m)
{
	struct kfdpool_user *u;
	unsigned int bkt;
	u64 pinned, pbytes;
	u32 persistent;

	seq_puts(m, "# userns level uid owner_uid pinned records persistent persistent_bytes\n");
	mutex_lock(&kfdpool_users_lock);
	hash_for_each(kfdpool_users, bkt, u, hnode) {
		spin_lock(&kfdpool_charge_lock);
		pinned = u->lvl.pinned;
		persistent = u->persistent;
		pbytes = u->persistent_bytes;
		spin_unlock(&kfdpool_charge_lock);
		seq_printf(m, "%u %d %u %u %llu %ld %u %llu\n", u->ns->ns.inum,
			   u->ns->level,
			   from_kuid_munged(seq_user_ns(m), u->uid),
			   from_kuid_munged(seq_user_ns(m), u->ns->owner),
			   pinned, atomic_long_read(&u->records), persistent,
			   pbytes);
	}
	mutex_unlock(&kfdpool_users_lock);
}

void kfdpool_limits_exit(void)
{
	WARN_ON(kfdpool_global.pinned || !hash_empty(kfdpool_users));
}
