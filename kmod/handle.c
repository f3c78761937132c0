// SPDX-License-Identifier: GPL-2.0-only
/*
 * Pool handles: a pool exported as 64 bytes that any process may present
 * on /dev/kfdpool to get an import fd, without passing fds around.
 *
 * A handle holds the pool's id, an access policy (the exporter's uid, a
 * group, or anyone) and a 128-bit secret.  The secret is a MAC of the other
 * fields under the pool's handle key (two independent SipHash-2-4 keys, 256
 * bits in all, one per 64-bit half of the secret).  Nothing is stored per
 * handle: handles of many policies coexist, import recomputes the MAC, and
 * a new key (HANDLE_ROTATE) kills every handle given out before.  The
 * policy and ids are inside the MAC, so a holder cannot widen a handle's
 * policy or retarget it at another user.
 *
 * The uid and gid in a handle are kernel-wide ids (as the initial user
 * namespace numbers them), so that admission depends on who the caller is,
 * not on how its user namespace numbers it: root of a container whose root
 * is uid 100000 is uid 100000 here, and the same user in two namespaces is
 * the same user.
 */
#include <crypto/algapi.h>
#include <linux/cred.h>
#include <linux/file.h>
#include <linux/random.h>
#include <linux/siphash.h>
#include <linux/string.h>
#include <linux/uidgid.h>

#include "kfdpool.h"

/* Tweaks of the two halves of the secret ("kfdpool handle 0/1" in spirit). */
#define KFDPOOL_HANDLE_TWEAK0	0x6b667068616e6430ULL
#define KFDPOOL_HANDLE_TWEAK1	0x6b667068616e6431ULL

/**
 * struct kfdpool_handle_msg - what the secret of a handle is a MAC of
 * @id: the pool's id
 * @magic: KFDPOOL_HANDLE_MAGIC
 * @policy: KFDPOOL_HANDLE_POLICY_*
 * @gid: the handle's gid (kernel-wide), 0 unless the GID policy
 * @uid: the exporter's kernel-wide euid
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
	u64 tweak;
};

void kfdpool_handle_key_init(struct kfdpool_pool *pool)
{
	get_random_bytes(pool->handle_key, sizeof(pool->handle_key));
}

/*
 * The secret of a handle of @pool with @policy, kernel-wide @gid and @uid;
 * pool->lock held (it guards the key against a concurrent rotate).
 */
static void kfdpool_handle_mac(struct kfdpool_pool *pool, u32 policy,
			       u32 gid, u32 uid,
			       u8 secret[KFDPOOL_SECRET_LEN])
{
	struct kfdpool_handle_msg msg = {};
	u64 half[2];

	lockdep_assert_held(&pool->lock);
	BUILD_BUG_ON(sizeof(msg) != 40);
	BUILD_BUG_ON(sizeof(half) != KFDPOOL_SECRET_LEN);
	BUILD_BUG_ON(sizeof(msg.id) != KFDPOOL_ID_LEN);

	memcpy(msg.id, pool->id, sizeof(msg.id));
	msg.magic = KFDPOOL_HANDLE_MAGIC;
	msg.policy = policy;
	msg.gid = gid;
	msg.uid = uid;
	msg.tweak = KFDPOOL_HANDLE_TWEAK0;
	half[0] = siphash(&msg, sizeof(msg), &pool->handle_key[0]);
	msg.tweak = KFDPOOL_HANDLE_TWEAK1;
	half[1] = siphash(&msg, sizeof(msg), &pool->handle_key[1]);
	memcpy(secret, half, KFDPOOL_SECRET_LEN);
	memzero_explicit(half, sizeof(half));
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
	struct kfdpool_pool_handle *h = &args->handle;
	kuid_t kuid = current_euid();
	kgid_t kgid = GLOBAL_ROOT_GID;
	u32 policy = args->policy;
	u32 gid = args->gid;
	int ret;

	if (pf->mode != KFDPOOL_MODE_OWNER)
		return -EPERM;
	if (args->flags || args->pad)
		return -EINVAL;
	ret = kfdpool_handle_policy_check(policy, gid);
	if (ret)
		return ret;
	if (policy == KFDPOOL_HANDLE_POLICY_GID) {
		kgid = make_kgid(ns, gid);
		if (!gid_valid(kgid))
			return -EINVAL;
	}
	if (!(pool->handle_types & KFDPOOL_HANDLE_TYPE_FABRIC))
		return -EOPNOTSUPP;

	memset(h, 0, sizeof(*h));
	memcpy(h->pool_id, pool->id, sizeof(h->pool_id));
	h->magic = KFDPOOL_HANDLE_MAGIC;
	h->policy = policy;
	h->gid = policy == KFDPOOL_HANDLE_POLICY_GID ?
		from_kgid(&init_user_ns, kgid) : 0;
	h->uid = from_kuid(&init_user_ns, kuid);

	mutex_lock(&pool->lock);
	kfdpool_handle_mac(pool, policy, h->gid, h->uid, h->secret);
	mutex_unlock(&pool->lock);
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
	if (!(pool->handle_types & KFDPOOL_HANDLE_TYPE_FABRIC))
		return -EOPNOTSUPP;

	mutex_lock(&pool->lock);
	kfdpool_handle_key_init(pool);
	mutex_unlock(&pool->lock);
	return 0;
}

/*
 * Is @h a handle the kernel made for @pool, and does its policy admit the
 * caller?  pool->lock held.
 */
static bool kfdpool_handle_admits(struct kfdpool_pool *pool,
				  const struct kfdpool_pool_handle *h)
{
	kuid_t kuid = make_kuid(&init_user_ns, h->uid);
	kgid_t kgid = make_kgid(&init_user_ns, h->gid);
	u8 secret[KFDPOOL_SECRET_LEN];
	bool match;

	lockdep_assert_held(&pool->lock);
	/* A pool that allows no handles never made one: the handle is forged. */
	if (!(pool->handle_types & KFDPOOL_HANDLE_TYPE_FABRIC))
		return false;
	kfdpool_handle_mac(pool, h->policy, h->gid, h->uid, secret);
	match = !crypto_memneq(secret, h->secret, sizeof(secret));
	memzero_explicit(secret, sizeof(secret));
	if (!match)
		return false;

	switch (h->policy) {
	case KFDPOOL_HANDLE_POLICY_UID:
		return uid_eq(current_euid(), kuid);
	case KFDPOOL_HANDLE_POLICY_GID:
		return in_egroup_p(kgid);
	case KFDPOOL_HANDLE_POLICY_ANY:
		return true;
	}
	return false;
}

long kfdpool_ioctl_pool_import_handle(struct file *file, void *data,
				      struct kfdpool_fd_out *fdo)
{
	struct kfdpool_pool_import_handle *args = data;
	const struct kfdpool_pool_handle *h = &args->handle;
	struct kfdpool_pool *pool;
	bool admitted;
	int fd, ret;

	if (args->flags ||
	    !kfdpool_mem_is_zero(h->pad, sizeof(h->pad)) ||
	    h->magic != KFDPOOL_HANDLE_MAGIC)
		return -EINVAL;
	ret = kfdpool_handle_policy_check(h->policy, h->gid);
	if (ret)
		return ret;

	pool = kfdpool_pool_find_id(h->pool_id);
	if (!pool)
		return -ENOENT;

	mutex_lock(&pool->lock);
	admitted = kfdpool_handle_admits(pool, h);
	mutex_unlock(&pool->lock);
	if (!admitted) {
		ret = -EACCES;
		goto out_put;
	}

	/* The new file takes its own pool reference. */
	fd = kfdpool_file_prepare(pool, KFDPOOL_MODE_IMPORT, fdo);
	if (fd < 0) {
		ret = fd;
		goto out_put;
	}
	args->fd = fd;
	ret = 0;
out_put:
	kfdpool_pool_put(pool);
	return ret;
}
