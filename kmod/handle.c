// SPDX-License-Identifier: GPL-2.0-only
/*
 * Pool handles: 64 bytes presented on /dev/kfdpool for an import fd, whose
 * secret is a MAC, under the pool's two SipHash keys, of their fields and the
 * kernel id their policy admits (the exporter's kuid, a kgid, or none).  No
 * state per handle: import recomputes the MAC from the caller's own ids,
 * whatever namespace numbers them, and HANDLE_ROTATE's new key kills them all.
 * Owner handles (own magic, UID policy of the pool's user only) adopt a
 * persistent pool (persist.c), never import.
 */
#include <crypto/algapi.h>
#include <linux/cred.h>
#include <linux/file.h>
#include <linux/random.h>
#include <linux/sched.h>
#include <linux/siphash.h>
#include <linux/string.h>
#include <linux/uidgid.h>

#include "kfdpool.h"

#define KFDPOOL_HANDLE_MAGIC	0x6b667048	/* "Hpfk" */
#define KFDPOOL_OWNER_HANDLE_MAGIC	0x6b66704f	/* "Opfk" */
#define KFDPOOL_SECRET_LEN	16

/* The bytes of a handle (docs/uapi.md): the module's, not ABI. */
struct kfdpool_handle_fmt {
	u8 pool_id[KFDPOOL_ID_LEN];
	u32 magic;
	u32 policy;
	u32 gid;
	u32 uid;
	u8 secret[KFDPOOL_SECRET_LEN];
	u8 pad[16];
};

static_assert(sizeof(struct kfdpool_handle_fmt) == KFDPOOL_HANDLE_SIZE);

/* Tell the two halves of the secret apart. */
#define KFDPOOL_HANDLE_TWEAK0	0x6b667068616e6430ULL
#define KFDPOOL_HANDLE_TWEAK1	0x6b667068616e6431ULL

/* The id a policy that admits anyone admits. */
#define KFDPOOL_HANDLE_KID_NONE	((u32)-1)

/* What a secret is a MAC of: the handle's first 32 bytes, and more. */
struct kfdpool_handle_msg {
	u8 fields[32];
	u32 kid;
	u32 zero;
	u64 tweak;
};

/* Copy the pool's key under its lock (rotate replaces it); false: ended. */
static bool kfdpool_handle_key_get(struct kfdpool_pool *pool,
				   siphash_key_t key[2])
{
	bool live;

	mutex_lock(&pool->lock);
	memcpy(key, pool->handle_key, sizeof(pool->handle_key));
	live = !pool->ended;
	mutex_unlock(&pool->lock);
	return live;
}

static void kfdpool_handle_mac(const siphash_key_t key[2],
			       const struct kfdpool_handle_fmt *h, u32 kid,
			       u8 secret[KFDPOOL_SECRET_LEN])
{
	struct kfdpool_handle_msg msg = { .kid = kid };
	u64 half[2];

	BUILD_BUG_ON(offsetof(struct kfdpool_handle_fmt, secret) !=
		     sizeof(msg.fields));
	memcpy(msg.fields, h, sizeof(msg.fields));
	msg.tweak = KFDPOOL_HANDLE_TWEAK0;
	half[0] = siphash(&msg, sizeof(msg), &key[0]);
	msg.tweak = KFDPOOL_HANDLE_TWEAK1;
	half[1] = siphash(&msg, sizeof(msg), &key[1]);
	memcpy(secret, half, KFDPOOL_SECRET_LEN);
	memzero_explicit(half, sizeof(half));
}

/* Is @h's secret the MAC of its fields admitting @kid?  Constant time. */
static bool kfdpool_handle_mac_ok(const siphash_key_t key[2],
				  const struct kfdpool_handle_fmt *h, u32 kid)
{
	u8 secret[KFDPOOL_SECRET_LEN];
	bool ok;

	kfdpool_handle_mac(key, h, kid, secret);
	ok = !crypto_memneq(secret, h->secret, sizeof(secret));
	memzero_explicit(secret, sizeof(secret));
	return ok;
}

/* A known policy, and a gid only under the GID policy. */
static bool kfdpool_handle_policy_ok(u32 policy, u32 gid)
{
	return policy <= KFDPOOL_HANDLE_POLICY_ANY &&
	       (!gid || policy == KFDPOOL_HANDLE_POLICY_GID);
}

/**
 * kfdpool_handle_make() - a handle of @pool
 * @pool: the pool, its user's own for an owner handle
 * @owner: an owner handle (UID policy), else an import handle
 * @policy: KFDPOOL_HANDLE_POLICY_*, checked
 * @gid: the group of the GID policy in the caller's namespace, checked
 * @out: the handle
 */
void kfdpool_handle_make(struct kfdpool_pool *pool, bool owner, u32 policy,
			 u32 gid, struct kfdpool_pool_handle *out)
{
	struct kfdpool_handle_fmt fmt = {}, *h = &fmt;
	struct user_namespace *ns = current_user_ns();
	u32 kid = __kuid_val(current_euid());
	siphash_key_t key[2];

	if (policy == KFDPOOL_HANDLE_POLICY_GID)
		kid = __kgid_val(make_kgid(ns, gid));
	else if (policy == KFDPOOL_HANDLE_POLICY_ANY)
		kid = KFDPOOL_HANDLE_KID_NONE;
	memcpy(h->pool_id, pool->id, sizeof(h->pool_id));
	h->magic = owner ? KFDPOOL_OWNER_HANDLE_MAGIC : KFDPOOL_HANDLE_MAGIC;
	h->policy = policy;
	h->gid = gid;
	/* Our own euid is always mapped in our own namespace. */
	h->uid = from_kuid(ns, current_euid());

	/* Rotation replaces the key: copy it under the lock. */
	mutex_lock(&pool->lock);
	memcpy(key, pool->handle_key, sizeof(pool->handle_key));
	mutex_unlock(&pool->lock);
	kfdpool_handle_mac(key, h, kid, h->secret);
	memzero_explicit(key, sizeof(key));
	memcpy(out->data, h, sizeof(*h));
}

long kfdpool_ioctl_handle_export(struct file *file, unsigned int nr, void *data,
				 struct kfdpool_fd_out *fdo)
{
	struct kfdpool_handle_export *args = data;
	struct kfdpool_file *pf = file->private_data;
	struct kfdpool_pool *pool = pf->pool;
	bool owner = args->flags & KFDPOOL_HANDLE_EXPORT_OWNER;
	u32 policy = args->policy;

	if (pf->mode != KFDPOOL_MODE_OWNER)
		return -EPERM;
	if ((args->flags & ~KFDPOOL_HANDLE_EXPORT_OWNER) || args->pad ||
	    !kfdpool_handle_policy_ok(policy, args->gid) ||
	    (owner && policy != KFDPOOL_HANDLE_POLICY_UID))
		return -EINVAL;
	/* An owner handle admits the pool's own user, and only that user. */
	if (owner && !(pool->flags & KFDPOOL_POOL_PERSIST))
		return -EOPNOTSUPP;
	if (owner && !uid_eq(current_euid(), pool->uid))
		return -EPERM;
	if (policy == KFDPOOL_HANDLE_POLICY_GID &&
	    !gid_valid(make_kgid(current_user_ns(), args->gid)))
		return -EINVAL;
	if (policy == KFDPOOL_HANDLE_POLICY_ANY &&
	    !READ_ONCE(kfdpool_allow_any_handles))
		return -EPERM;
	if (!owner && !(pool->handle_types & KFDPOOL_HANDLE_TYPE_FABRIC))
		return -EOPNOTSUPP;
	if (kfdpool_lock(pf))
		return -ENODEV;
	mutex_unlock(&pool->lock);
	kfdpool_handle_make(pool, owner, policy, args->gid, &args->handle);
	return 0;
}

long kfdpool_ioctl_handle_rotate(struct file *file, unsigned int nr, void *data,
				 struct kfdpool_fd_out *fdo)
{
	struct kfdpool_handle_rotate *args = data;
	struct kfdpool_file *pf = file->private_data;
	struct kfdpool_pool *pool = pf->pool;

	if (pf->mode != KFDPOOL_MODE_OWNER)
		return -EPERM;
	if (args->flags || args->pad)
		return -EINVAL;
	if (!(pool->handle_types & KFDPOOL_HANDLE_TYPE_FABRIC) &&
	    !(pool->flags & KFDPOOL_POOL_PERSIST))
		return -EOPNOTSUPP;

	if (kfdpool_lock(pf))
		return -ENODEV;
	get_random_bytes(pool->handle_key, sizeof(pool->handle_key));
	mutex_unlock(&pool->lock);
	return 0;
}

/* Does @h, made under @key, admit the caller?  No lock held. */
static bool kfdpool_handle_admits(const siphash_key_t key[2],
				  const struct kfdpool_handle_fmt *h)
{
	const struct cred *cred = current_cred();
	const struct group_info *gi;
	int i;

	switch (h->policy) {
	case KFDPOOL_HANDLE_POLICY_UID:
		return kfdpool_handle_mac_ok(key, h, __kuid_val(cred->euid));
	case KFDPOOL_HANDLE_POLICY_GID:
		if (kfdpool_handle_mac_ok(key, h, __kgid_val(cred->egid)))
			return true;
		gi = cred->group_info;
		for (i = 0; i < gi->ngroups; i++) {
			if (kfdpool_handle_mac_ok(key, h, __kgid_val(gi->gid[i])))
				return true;
			if (!(i % 256))
				cond_resched();
		}
		return false;
	case KFDPOOL_HANDLE_POLICY_ANY:
		return kfdpool_handle_mac_ok(key, h, KFDPOOL_HANDLE_KID_NONE);
	}
	return false;
}

/**
 * kfdpool_handle_resolve() - the pool a handle names, if it admits the caller
 * @uh: the handle
 * @owner: an owner handle is wanted, else an import handle
 * @poolp: returns the pool, referenced
 *
 * Return: 0; -EINVAL for bytes no handle of that kind has, -EPERM for an
 * ANY handle where they are off, -ENOENT for no such pool, -EACCES for a
 * handle not made for the pool or that does not admit the caller.
 */
int kfdpool_handle_resolve(const struct kfdpool_pool_handle *uh, bool owner,
			   struct kfdpool_pool **poolp)
{
	struct kfdpool_handle_fmt fmt, *h = &fmt;
	struct kfdpool_pool *pool;
	siphash_key_t key[2];
	bool admitted = false;

	memcpy(h, uh->data, sizeof(*h));
	if (memchr_inv(h->pad, 0, sizeof(h->pad)) ||
	    h->magic != (owner ? KFDPOOL_OWNER_HANDLE_MAGIC :
			 KFDPOOL_HANDLE_MAGIC) ||
	    !kfdpool_handle_policy_ok(h->policy, h->gid) ||
	    (owner && h->policy != KFDPOOL_HANDLE_POLICY_UID))
		return -EINVAL;
	/* Bearer tokens are off: every ANY handle given out stops working. */
	if (h->policy == KFDPOOL_HANDLE_POLICY_ANY &&
	    !READ_ONCE(kfdpool_allow_any_handles))
		return -EPERM;

	pool = kfdpool_pool_find(h->pool_id);
	if (!pool)
		return -ENOENT;

	/* A pool that allows no such handle never made one: it is forged. */
	if (owner ? pool->flags & KFDPOOL_POOL_PERSIST :
	    pool->handle_types & KFDPOOL_HANDLE_TYPE_FABRIC) {
		kfdpool_handle_key_get(pool, key);
		admitted = kfdpool_handle_admits(key, h);
		memzero_explicit(key, sizeof(key));
	}
	if (!admitted) {
		kfdpool_pool_put(pool);
		return -EACCES;
	}
	*poolp = pool;
	return 0;
}

long kfdpool_ioctl_pool_import_handle(struct file *file, unsigned int nr,
				      void *data, struct kfdpool_fd_out *fdo)
{
	struct kfdpool_pool_import_handle *args = data;
	struct kfdpool_pool *pool;
	int ret;

	if (args->flags)
		return -EINVAL;
	ret = kfdpool_handle_resolve(&args->handle, false, &pool);
	if (ret)
		return ret;
	ret = kfdpool_file_prepare(pool, KFDPOOL_MODE_IMPORT, fdo,
				   offsetof(struct kfdpool_pool_import_handle,
					    fd));
	if (!ret)
		args->fd = -1;
	kfdpool_pool_put(pool);	/* the file holds its own */
	return ret;
}
