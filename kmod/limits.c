// SPDX-License-Identifier: GPL-2.0-only
/*
 * What the module charges, and to whom: pinned bytes against global_limit
 * and user_limit, live export records against max_user_records.
 *
 * Users.  A user is a euid at one user-namespace level, as the kernel's
 * ucounts count it: a user of namespace N is charged at N's level and again,
 * as N's owner, at N's parent's level, and so on up to init_user_ns, each
 * level against the same limit.  Creating user namespaces therefore mints
 * no fresh quota: whatever a namespace's users pin is also charged to its
 * owner.  The ucounts functions are not exported to modules (6.1 and 6.12
 * export none of alloc_ucounts, get/put_ucounts, inc_ucount,
 * inc_rlimit_ucounts), so the same chain is kept here, one kfdpool_user per
 * (namespace, euid) that has pools, linked to its parent level through the
 * namespace's parent and owner.
 *
 * Objects.  Bytes are charged per object (a dma-buf), not per entry: the
 * first charge of an object at a level adds its size there, later charges
 * of the same object at the same level only count references, and the last
 * uncharge takes the size back.  The global figure is the level above every
 * user.  So a dma-buf pinned in N pools counts once globally and once at
 * each level of each user pinning it, however many pools of theirs pin it;
 * two users pinning one dma-buf are each charged once (each alone keeps it
 * alive; no charge ever moves to a user who did not ask for it).
 *
 * The charge of (object, level) pairs lives in kfdpool_charges, an
 * rhashtable under kfdpool_limits_lock.  Records are counted per level with
 * atomics, without the lock: EXPORT is the hot path.
 */
#include <linux/fs.h>
#include <linux/hashtable.h>
#include <linux/refcount.h>
#include <linux/rhashtable.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/user_namespace.h>

#include "kfdpool.h"

/**
 * struct kfdpool_user - one euid at one user-namespace level
 * @hnode: in kfdpool_users, under kfdpool_limits_lock
 * @ns: the namespace; the user holds a reference
 * @uid: the euid
 * @parent: the level above: (@ns->parent, @ns->owner); NULL at
 *	init_user_ns.  The user holds a reference.
 * @ref: pools of the user, and users of the level below
 * @pinned: bytes of the distinct objects charged at this level, under
 *	kfdpool_limits_lock
 * @records: live export records charged at this level
 */
struct kfdpool_user {
	struct hlist_node hnode;
	struct user_namespace *ns;
	kuid_t uid;
	struct kfdpool_user *parent;
	refcount_t ref;
	u64 pinned;
	atomic_long_t records;
};

/**
 * struct kfdpool_charge_key - what a charge is of
 * @obj: the object (a dma-buf); only its identity is used
 * @user: the level: a user, or NULL for the global figure
 */
struct kfdpool_charge_key {
	const void *obj;
	const struct kfdpool_user *user;
};

/**
 * struct kfdpool_charge - one object charged at one level
 * @node: in kfdpool_charges
 * @key: object and level
 * @size: the object's bytes, charged once at this level
 * @refs: charges of the object at this level not yet returned
 */
struct kfdpool_charge {
	struct rhash_head node;
	struct kfdpool_charge_key key;
	u64 size;
	unsigned long refs;
};

static const struct rhashtable_params kfdpool_charge_params = {
	.key_len = sizeof(struct kfdpool_charge_key),
	.key_offset = offsetof(struct kfdpool_charge, key),
	.head_offset = offsetof(struct kfdpool_charge, node),
	.automatic_shrinking = true,
};

/*
 * Innermost lock: taken under pool->lock, never sleeps (the nonblocking
 * io_uring paths may free entries, and so uncharge).
 */
static DEFINE_SPINLOCK(kfdpool_limits_lock);
static DEFINE_HASHTABLE(kfdpool_users, 8);
static struct rhashtable kfdpool_charges;
static u64 kfdpool_global_pinned;

/* Levels a user is charged at: its own and one per ancestor namespace. */
static unsigned int kfdpool_user_levels(const struct kfdpool_user *u)
{
	return u->ns->level + 1;
}

static unsigned long kfdpool_user_hash(const struct user_namespace *ns,
				       kuid_t uid)
{
	return (unsigned long)ns ^ __kuid_val(uid);
}

static struct kfdpool_user *kfdpool_user_find(const struct user_namespace *ns,
					      kuid_t uid)
{
	struct kfdpool_user *u;

	lockdep_assert_held(&kfdpool_limits_lock);
	hash_for_each_possible(kfdpool_users, u, hnode,
			       kfdpool_user_hash(ns, uid))
		if (u->ns == ns && uid_eq(u->uid, uid))
			return u;
	return NULL;
}

/**
 * kfdpool_user_get() - the user @uid of namespace @ns, with a reference
 * @ns: a namespace the caller keeps alive
 * @uid: the euid
 *
 * Creates the user, and the levels above it, on first use.  Recursion goes
 * one level per ancestor namespace: at most 33 (user namespaces nest 32
 * deep).
 *
 * Return: the user, or NULL without memory.
 */
struct kfdpool_user *kfdpool_user_get(struct user_namespace *ns, kuid_t uid)
{
	struct kfdpool_user *u, *parent = NULL, *fresh;

	spin_lock(&kfdpool_limits_lock);
	u = kfdpool_user_find(ns, uid);
	if (u)
		refcount_inc(&u->ref);
	spin_unlock(&kfdpool_limits_lock);
	if (u)
		return u;

	if (ns->parent) {
		parent = kfdpool_user_get(ns->parent, ns->owner);
		if (!parent)
			return NULL;
	}
	fresh = kzalloc(sizeof(*fresh), GFP_KERNEL_ACCOUNT);
	if (!fresh) {
		kfdpool_user_put(parent);
		return NULL;
	}

	spin_lock(&kfdpool_limits_lock);
	u = kfdpool_user_find(ns, uid);
	if (u) {
		refcount_inc(&u->ref);
	} else {
		u = fresh;
		fresh = NULL;
		u->ns = get_user_ns(ns);
		u->uid = uid;
		u->parent = parent;
		parent = NULL;
		refcount_set(&u->ref, 1);
		atomic_long_set(&u->records, 0);
		hash_add(kfdpool_users, &u->hnode, kfdpool_user_hash(ns, uid));
	}
	spin_unlock(&kfdpool_limits_lock);
	kfree(fresh);
	kfdpool_user_put(parent);
	return u;
}

/* Drop a reference to @u (NULL is fine), and to its levels above if last. */
void kfdpool_user_put(struct kfdpool_user *u)
{
	while (u && refcount_dec_and_lock(&u->ref, &kfdpool_limits_lock)) {
		struct kfdpool_user *parent = u->parent;

		WARN_ON(u->pinned || atomic_long_read(&u->records));
		hash_del(&u->hnode);
		spin_unlock(&kfdpool_limits_lock);
		put_user_ns(u->ns);
		kfree(u);
		u = parent;
	}
}

/*
 * Charge @obj at level @user (NULL: global) with @spare for a first charge
 * there; *spare is consumed (set to NULL) when used.  Return: 0 or -errno
 * of the hash table.
 */
static int kfdpool_charge_one(const void *obj, struct kfdpool_user *user,
			      u64 size, struct kfdpool_charge **spare)
{
	struct kfdpool_charge_key key = { .obj = obj, .user = user };
	struct kfdpool_charge *c;
	int ret;

	c = rhashtable_lookup_fast(&kfdpool_charges, &key,
				   kfdpool_charge_params);
	if (c) {
		WARN_ON_ONCE(c->size != size);
		c->refs++;
		return 0;
	}
	c = *spare;
	c->key = key;
	c->size = size;
	c->refs = 1;
	ret = rhashtable_insert_fast(&kfdpool_charges, &c->node,
				     kfdpool_charge_params);
	if (ret)	/* the table could not grow in atomic context */
		return -ENOMEM;
	*spare = NULL;
	if (user)
		user->pinned += size;
	else
		kfdpool_global_pinned += size;
	return 0;
}

/* Undo one kfdpool_charge_one(); returns the charge to free, if last. */
static struct kfdpool_charge *kfdpool_uncharge_one(const void *obj,
						   struct kfdpool_user *user)
{
	struct kfdpool_charge_key key = { .obj = obj, .user = user };
	struct kfdpool_charge *c;

	c = rhashtable_lookup_fast(&kfdpool_charges, &key,
				   kfdpool_charge_params);
	if (WARN_ON_ONCE(!c) || --c->refs)
		return NULL;
	rhashtable_remove_fast(&kfdpool_charges, &c->node,
			       kfdpool_charge_params);
	if (user)
		user->pinned -= c->size;
	else
		kfdpool_global_pinned -= c->size;
	return c;
}

/* Is @obj not yet charged at @user's level (NULL: global)? */
static bool kfdpool_charge_is_new(const void *obj,
				  const struct kfdpool_user *user)
{
	struct kfdpool_charge_key key = { .obj = obj, .user = user };

	return !rhashtable_lookup_fast(&kfdpool_charges, &key,
				       kfdpool_charge_params);
}

static bool kfdpool_over(u64 have, u64 size, u64 limit)
{
	return limit && (size > limit || have > limit - size);
}

/*
 * Return the charges of @obj taken at the global level and at the levels
 * from @u up to (not including) @stop.
 */
static void kfdpool_uncharge_levels(struct kfdpool_user *u,
				    struct kfdpool_user *stop,
				    const void *obj, bool global)
{
	struct kfdpool_charge *c;

	lockdep_assert_held(&kfdpool_limits_lock);
	if (global) {
		c = kfdpool_uncharge_one(obj, NULL);
		kfree(c);
	}
	for (; u != stop; u = u->parent) {
		c = kfdpool_uncharge_one(obj, u);
		kfree(c);
	}
}

/**
 * kfdpool_charge() - charge @size bytes of @obj to @u and to the global
 *	figure, once per object at each level
 * @u: the user
 * @obj: the object's identity (a dma-buf); every charge of one object has
 *	the same @size
 * @size: its bytes
 *
 * Every level is checked before any is charged.  Each successful call
 * counts one reference of @obj at each level, which kfdpool_uncharge()
 * returns.
 *
 * Return: 0, -ENOSPC over global_limit, -EDQUOT over user_limit at some
 * level, or -ENOMEM.
 */
int kfdpool_charge(struct kfdpool_user *u, const void *obj, u64 size)
{
	u64 glimit = READ_ONCE(kfdpool_global_limit);
	u64 ulimit = READ_ONCE(kfdpool_user_limit);
	unsigned int i, nr = kfdpool_user_levels(u) + 1;
	struct kfdpool_charge **spare;
	struct kfdpool_user *n;
	int ret = 0;

	/* A first charge needs one node per level: allocate before locking. */
	spare = kcalloc(nr, sizeof(*spare), GFP_KERNEL);
	if (!spare)
		return -ENOMEM;
	for (i = 0; i < nr; i++) {
		spare[i] = kmalloc(sizeof(**spare), GFP_KERNEL_ACCOUNT);
		if (!spare[i]) {
			ret = -ENOMEM;
			goto out;
		}
	}

	spin_lock(&kfdpool_limits_lock);
	if (kfdpool_charge_is_new(obj, NULL) &&
	    kfdpool_over(kfdpool_global_pinned, size, glimit)) {
		ret = -ENOSPC;
		goto unlock;
	}
	for (n = u; n; n = n->parent) {
		if (kfdpool_charge_is_new(obj, n) &&
		    kfdpool_over(n->pinned, size, ulimit)) {
			ret = -EDQUOT;
			goto unlock;
		}
	}

	ret = kfdpool_charge_one(obj, NULL, size, &spare[0]);
	if (ret)
		goto unlock;
	for (n = u, i = 1; n; n = n->parent, i++) {
		ret = kfdpool_charge_one(obj, n, size, &spare[i]);
		if (ret) {
			kfdpool_uncharge_levels(u, n, obj, true);
			break;
		}
	}
unlock:
	spin_unlock(&kfdpool_limits_lock);
out:
	for (i = 0; i < nr; i++)
		kfree(spare[i]);
	kfree(spare);
	return ret;
}

/**
 * kfdpool_uncharge() - return one kfdpool_charge() of @obj by @u
 * @u: the user
 * @obj: the object
 */
void kfdpool_uncharge(struct kfdpool_user *u, const void *obj)
{
	spin_lock(&kfdpool_limits_lock);
	kfdpool_uncharge_levels(u, NULL, obj, true);
	spin_unlock(&kfdpool_limits_lock);
}

/**
 * kfdpool_charge_outside_refs() - does @file have references beyond the
 *	charges of @obj?
 * @obj: a charged object
 * @file: its file, on which every charge of @obj stands for one reference
 *	its holder keeps (a pool entry holds one on its dma-buf's file)
 *
 * Both counts are read under the lock that charges and uncharges take.  A
 * holder takes its file reference before charging and uncharges before
 * dropping it, so a reference in transit shows as outside, never the
 * reverse.  When the answer is no, nobody but the charge holders can reach
 * the file: no new reference can appear except through them.
 *
 * Return: true if someone else holds a reference to @file.
 */
bool kfdpool_charge_outside_refs(const void *obj, struct file *file)
{
	struct kfdpool_charge_key key = { .obj = obj, .user = NULL };
	struct kfdpool_charge *c;
	bool outside;

	spin_lock(&kfdpool_limits_lock);
	c = rhashtable_lookup_fast(&kfdpool_charges, &key,
				   kfdpool_charge_params);
	outside = file_count(file) > (c ? c->refs : 0);
	spin_unlock(&kfdpool_limits_lock);
	return outside;
}

/**
 * kfdpool_records_charge() - charge one live record to @u at every level
 * @u: the pool's user
 *
 * Return: 0, or -EDQUOT when a level holds max_user_records already.
 */
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

/* Return @nr records charged to @u. */
void kfdpool_records_uncharge(struct kfdpool_user *u, unsigned long nr)
{
	for (; u && nr; u = u->parent)
		WARN_ON(atomic_long_sub_return(nr, &u->records) < 0);
}

/**
 * kfdpool_user_figures() - what is charged now
 * @ns: the caller's user namespace
 * @uid: the caller's euid
 * @global: bytes charged globally
 * @pinned: bytes charged to the user at its own level (0 if it has none)
 * @records: records charged to the user at its own level
 */
void kfdpool_user_figures(const struct user_namespace *ns, kuid_t uid,
			  u64 *global, u64 *pinned, u64 *records)
{
	struct kfdpool_user *u;

	spin_lock(&kfdpool_limits_lock);
	*global = kfdpool_global_pinned;
	u = kfdpool_user_find(ns, uid);
	*pinned = u ? u->pinned : 0;
	*records = u ? atomic_long_read(&u->records) : 0;
	spin_unlock(&kfdpool_limits_lock);
}

/* debugfs: one line per user level. */
void kfdpool_users_show(struct seq_file *m)
{
	struct kfdpool_user *u;
	unsigned int bkt;

	seq_puts(m, "# userns level uid owner_uid pinned records\n");
	spin_lock(&kfdpool_limits_lock);
	hash_for_each(kfdpool_users, bkt, u, hnode)
		seq_printf(m, "%u %d %u %u %llu %ld\n", u->ns->ns.inum,
			   u->ns->level,
			   from_kuid_munged(seq_user_ns(m), u->uid),
			   from_kuid_munged(seq_user_ns(m), u->ns->owner),
			   u->pinned, atomic_long_read(&u->records));
	spin_unlock(&kfdpool_limits_lock);
}

int kfdpool_limits_init(void)
{
	return rhashtable_init(&kfdpool_charges, &kfdpool_charge_params);
}

void kfdpool_limits_exit(void)
{
	WARN_ON(kfdpool_global_pinned || !hash_empty(kfdpool_users));
	rhashtable_destroy(&kfdpool_charges);
}
