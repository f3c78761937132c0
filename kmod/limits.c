// SPDX-License-Identifier: GPL-2.0-only
/*
 * Global and per-uid accounting of pinned bytes, against the module
 * parameters global_limit and user_limit.  A pool charges the uid that
 * created it when it pins an entry and uncharges it when the entry is freed
 * (unpinned without imports, last import released, or pool destroyed).
 */
#include <linux/hashtable.h>
#include <linux/refcount.h>
#include <linux/slab.h>
#include <linux/spinlock.h>

#include "kfdpool.h"

/**
 * struct kfdpool_user - pinned bytes of one uid
 * @uid: the uid
 * @ref: one per pool of the uid
 * @pinned: bytes pinned in pools of the uid, under kfdpool_limits_lock
 * @hnode: in kfdpool_users, under kfdpool_limits_lock
 */
struct kfdpool_user {
	kuid_t uid;
	refcount_t ref;
	u64 pinned;
	struct hlist_node hnode;
};

static DEFINE_SPINLOCK(kfdpool_limits_lock);
static DEFINE_HASHTABLE(kfdpool_users, 6);
static u64 kfdpool_global_pinned;

static struct kfdpool_user *kfdpool_user_find(kuid_t uid)
{
	struct kfdpool_user *u;

	lockdep_assert_held(&kfdpool_limits_lock);
	hash_for_each_possible(kfdpool_users, u, hnode, __kuid_val(uid))
		if (uid_eq(u->uid, uid))
			return u;
	return NULL;
}

/* The accounting of @uid, created on first use; NULL without memory. */
struct kfdpool_user *kfdpool_user_get(kuid_t uid)
{
	struct kfdpool_user *u, *fresh;

	fresh = kzalloc(sizeof(*fresh), GFP_KERNEL);
	if (!fresh)
		return NULL;

	spin_lock(&kfdpool_limits_lock);
	u = kfdpool_user_find(uid);
	if (u) {
		refcount_inc(&u->ref);
	} else {
		u = fresh;
		fresh = NULL;
		u->uid = uid;
		refcount_set(&u->ref, 1);
		hash_add(kfdpool_users, &u->hnode, __kuid_val(uid));
	}
	spin_unlock(&kfdpool_limits_lock);
	kfree(fresh);
	return u;
}

void kfdpool_user_put(struct kfdpool_user *u)
{
	if (!refcount_dec_and_lock(&u->ref, &kfdpool_limits_lock))
		return;
	WARN_ON(u->pinned);
	hash_del(&u->hnode);
	spin_unlock(&kfdpool_limits_lock);
	kfree(u);
}

/**
 * kfdpool_charge() - account @size more pinned bytes to @u
 * @u: the pool's user
 * @size: bytes
 *
 * Return: 0, -ENOSPC over the global limit, -EDQUOT over the per-uid limit.
 */
int kfdpool_charge(struct kfdpool_user *u, u64 size)
{
	u64 glimit = READ_ONCE(kfdpool_global_limit);
	u64 ulimit = READ_ONCE(kfdpool_user_limit);
	int ret = 0;

	spin_lock(&kfdpool_limits_lock);
	if (glimit && (size > glimit || kfdpool_global_pinned > glimit - size))
		ret = -ENOSPC;
	else if (ulimit && (size > ulimit || u->pinned > ulimit - size))
		ret = -EDQUOT;
	if (!ret) {
		kfdpool_global_pinned += size;
		u->pinned += size;
	}
	spin_unlock(&kfdpool_limits_lock);
	return ret;
}

void kfdpool_uncharge(struct kfdpool_user *u, u64 size)
{
	spin_lock(&kfdpool_limits_lock);
	WARN_ON(kfdpool_global_pinned < size || u->pinned < size);
	kfdpool_global_pinned -= size;
	u->pinned -= size;
	spin_unlock(&kfdpool_limits_lock);
}

/* Pinned bytes now: in all pools, and in the pools of @uid. */
void kfdpool_pinned(kuid_t uid, u64 *global, u64 *user)
{
	struct kfdpool_user *u;

	spin_lock(&kfdpool_limits_lock);
	*global = kfdpool_global_pinned;
	u = kfdpool_user_find(uid);
	*user = u ? u->pinned : 0;
	spin_unlock(&kfdpool_limits_lock);
}
