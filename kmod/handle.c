// SPDX-License-Identifier: GPL-2.0-only
/*
 * Pool handles: a pool exported as 64 bytes that any process may present
 * on /dev/kfdpool to get an import fd, without passing fds around.
 *
 * A handle holds the pool's id, an access policy (the exporter's uid, a
 * group, or, where the administrator allows it, anyone) and a 128-bit
 * secret.  The secret is a MAC under the pool's handle key (two independent
 * SipHash-2-4 keys, 256 bits in all, one per 64-bit half of the secret) of
 * the handle's fields and of the kernel-wide id the policy admits: the
 * exporter's kuid, or the group's kgid.  Nothing is stored per handle:
 * handles of many policies coexist, import recomputes the MAC, and a new
 * key (HANDLE_ROTATE) kills every handle given out before.  The policy and
 * ids are inside the MAC, so a holder cannot widen a handle's policy or
 * retarget it at another user or group.
 *
 * User namespaces.  The uid and gid fields are the numbers the exporter's
 * own user namespace gives them (the exporter sees its own numbering;
 * nobody is shown a host id), and they only say what the exporter chose:
 * admission goes by kernel-wide ids, which the handle does not contain.
 * The importing kernel recomputes the MAC with the caller's own kuid (UID
 * policy) or with each of the caller's kgids (GID policy: its egid and
 * supplementary groups, as in_egroup_p() would), so it admits exactly the
 * exporter's user or the group's members, however their namespaces number
 * them: root of a container whose root is uid 100000 on the host is that
 * user here, and the same user in two namespaces is the same user. *
 * Owner handles of persistent pools are made and checked the same way,
 * with a magic of their own and the UID policy of the pool's user only:
 * they adopt the pool (persist.c) and never import it.
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
/* An owner handle: adopts a persistent pool (persist.c), never imports. */
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

/* Tweaks of the two halves of the secret ("kfdpool handle 0/1" in spirit). */
#define KFDPOOL_HANDLE_TWEAK0	0x6b667068616e6430ULL
#define KFDPOOL_HANDLE_TWEAK1	0x6b667068616e6431ULL

/* The admitted id of a policy that admits no particular id (ANY). */
#define KFDPOOL_HANDLE_KID_NONE	((u32)-1)

/**
 * struct kfdpool_handle_msg - what the secret of a handle is a MAC of
 * @id: the pool's id
 * @magic: KFDPOOL_HANDLE_MAGIC
 * @policy: KFDPOOL_HANDLE_POLICY_*
 * @gid: the handle's gid field, as the exporter's namespace numbers it
 * @uid: the handle's uid field, as the exporter's namespace numbers it
 * @kid: the kernel-wide id the policy admits: a kuid (UID), a kgid (GID),
 *	or KFDPOOL_HANDLE_KID_NONE (ANY); never in the handle itself
 * @zero: 0
 * @tweak: tells the two halves of the secret apart
 *
 * Every member is 64- or 32-bit and naturally aligned, so the struct has no
 * holes and siphash() may read it whole.
 */
struct kfdpool_handle_msg {
	u64 id[2];
	u32 magic;
	u32 policy;
	u32 gid;
	u32 uid;
	u32 kid;
	u32 zero;
	u64 tweak;
};

/* A copy of the pool's key, taken under its lock (rotate replaces it). */
static void kfdpool_handle_key_get(struct kfdpool_pool *pool,
				   siphash_key_t key[2])
{
	mutex_lock(&pool->lock);
	memcpy(key, pool->handle_key, sizeof(pool->handle_key));
	mutex_unlock(&pool->lock);
}

/* The secret of handle @h (its fields but the secret) admitting @kid. */
static void kfdpool_handle_mac(const siphash_key_t key[2],
			       const struct kfdpool_handle_fmt *h, u32 kid,
			       u8 secret[KFDPOOL_SECRET_LEN])
{
	struct kfdpool_handle_msg msg = {};
	u64 half[2];

	BUILD_BUG_ON(sizeof(msg) != 48);
	BUILD_BUG_ON(sizeof(half) != KFDPOOL_SECRET_LEN);
	BUILD_BUG_ON(sizeof(msg.id) != KFDPOOL_ID_LEN);

	memcpy(msg.id, h->pool_id, sizeof(msg.id));
	msg.magic = h->magic;
	msg.policy = h->policy;
	msg.gid = h->gid;
	msg.uid = h->uid;
	msg.kid = kid;
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

/* Field checks shared by export and import: -EINVAL on a bad value. */
static int kfdpool_handle_policy_check(u32 policy, u32 gid)
{
	if (policy > KFDPOOL_HANDLE_POLICY_ANY)
		return -EINVAL;
	/* A gid means something only under the GID policy. */
	if (gid && policy != KFDPOOL_HANDLE_POLICY_GID)
		return -EINVAL;
	return 0;
}

long kfdpool_ioctl_handle_export(struct file *file, void *data,
				 struct kfdpool_fd_out *fdo)
{
	struct kfdpool_handle_export *args = data;
	struct kfdpool_file *pf = file->private_data;
	struct kfdpool_pool *pool = pf->pool;
	struct user_namespace *ns = current_user_ns();
	struct kfdpool_handle_fmt fmt = {}, *h = &fmt;
	kuid_t kuid = current_euid();
	u32 policy = args->policy;
	u32 gid = args->gid;
	u32 kid = __kuid_val(kuid);
	bool owner = args->flags & KFDPOOL_HANDLE_EXPORT_OWNER;
	siphash_key_t key[2];
	int ret;

	if (pf->mode != KFDPOOL_MODE_OWNER)
		return -EPERM;
	if ((args->flags & ~KFDPOOL_HANDLE_EXPORT_OWNER) || args->pad)
		return -EINVAL;
	ret = kfdpool_handle_policy_check(policy, gid);
	if (ret)
		return ret;
	/* An owner handle admits the pool's own user, and only that user. */
	if (owner) {
		if (policy != KFDPOOL_HANDLE_POLICY_UID)
			return -EINVAL;
		if (!(pool->flags & KFDPOOL_POOL_PERSIST))
			return -EOPNOTSUPP;
		if (!uid_eq(kuid, pool->uid))
			return -EPERM;
	}
	if (policy == KFDPOOL_HANDLE_POLICY_GID) {
		kgid_t kgid = make_kgid(ns, gid);

		if (!gid_valid(kgid))
			return -EINVAL;
		kid = __kgid_val(kgid);
	} else if (policy == KFDPOOL_HANDLE_POLICY_ANY) {
		if (!READ_ONCE(kfdpool_allow_any_handles))
			return -EPERM;
		kid = KFDPOOL_HANDLE_KID_NONE;
	}
	if (!owner && !(pool->handle_types & KFDPOOL_HANDLE_TYPE_FABRIC))
		return -EOPNOTSUPP;

	memcpy(h->pool_id, pool->id, sizeof(h->pool_id));
	h->magic = owner ? KFDPOOL_OWNER_HANDLE_MAGIC : KFDPOOL_HANDLE_MAGIC;
	h->policy = policy;
	h->gid = gid;
	/* Our own euid is always mapped in our own namespace. */
	h->uid = from_kuid(ns, kuid);

	kfdpool_handle_key_get(pool, key);
	kfdpool_handle_mac(key, h, kid, h->secret);
	memzero_explicit(key, sizeof(key));
	memcpy(args->handle.data, h, sizeof(*h));
	return 0;
}

long kfdpool_ioctl_handle_rotate(struct file *file, void *data,
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

	mutex_lock(&pool->lock);
	get_random_bytes(pool->handle_key, sizeof(pool->handle_key));
	mutex_unlock(&pool->lock);
	return 0;
}

/*
 * Is @h a handle the kernel made for the pool of @key, and does its policy
 * admit the caller?  No lock held: a GID caller with many groups costs
 * only itself.
 */
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
 * @owner: an owner handle (KFDPOOL_HANDLE_EXPORT_OWNER) is wanted, else an
 *	import handle
 * @poolp: returns the pool, with a reference
 *
 * Return: 0; -EINVAL for bytes no handle of that kind has, -EPERM for an
 * ANY handle where they are off, -ENOENT when no such pool exists, or
 * -EACCES when the handle was not made for the pool or does not admit the
 * caller.
 */
int kfdpool_handle_resolve(const struct kfdpool_pool_handle *uh, bool owner,
			   struct kfdpool_pool **poolp)
{
	struct kfdpool_handle_fmt fmt, *h = &fmt;
	struct kfdpool_pool *pool;
	siphash_key_t key[2];
	bool admitted = false;
	int ret;

	memcpy(h, uh->data, sizeof(*h));
	if (!kfdpool_mem_is_zero(h->pad, sizeof(h->pad)) ||
	    h->magic != (owner ? KFDPOOL_OWNER_HANDLE_MAGIC :
			 KFDPOOL_HANDLE_MAGIC) ||
	    (owner && h->policy != KFDPOOL_HANDLE_POLICY_UID))
		return -EINVAL;
	ret = kfdpool_handle_policy_check(h->policy, h->gid);
	if (ret)
		return ret;
	/* Bearer tokens are off: every ANY handle given out stops working. */
	if (h->policy == KFDPOOL_HANDLE_POLICY_ANY &&
	    !READ_ONCE(kfdpool_allow_any_handles))
		return -EPERM;

	pool = kfdpool_pool_find_id(h->pool_id);
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

long kfdpool_ioctl_pool_import_handle(struct file *file, void *data,
				      struct kfdpool_fd_out *fdo)
{
	struct kfdpool_pool_import_handle *args = data;
	struct kfdpool_pool *pool;
	int ret;

	if (args->flags)
		return -EINVAL;
	ret = kfdpool_handle_resolve(&args->handle, false, &pool);
	if (ret)
		return ret;
	/* The new file takes its own pool reference. */
	ret = kfdpool_file_prepare(pool, KFDPOOL_MODE_IMPORT, fdo,
				   offsetof(struct kfdpool_pool_import_handle,
					    fd));
	if (!ret)
		args->fd = -1;
	kfdpool_pool_put(pool);
	return ret;
}
