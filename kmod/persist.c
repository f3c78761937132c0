// SPDX-License-Identifier: GPL-2.0-only
/*
 * A KFDPOOL_POOL_PERSIST pool holds itself and the module, so that its entries
 * stay pinned and its records importable with no file open, until an owner or
 * an administrator destroys it.  Its user is charged the pool
 * (max_user_persistent) and its entries' bytes (max_user_persistent_bytes).
 * Adoption gives an owner file to such a pool with none open (by owner handle
 * or by id, to its own user or an administrator), so that two producers never
 * replace each other's entries unknowingly.  As with SysV shm, the pool's uid
 * can always end or adopt it: nothing a crash leaves needs root.
 */
#include <linux/capability.h>
#include <linux/module.h>
#include <linux/pid.h>
#include <linux/sched.h>

#include "kfdpool.h"

/* The creator never learnt of its persistent pool: it must not stay. */
static void kfdpool_persist_undo(struct kfdpool_fd_out *fdo)
{
	kfdpool_pool_end(fdo->pfile->pool);
}

/**
 * kfdpool_persist_begin() - make @pool hold itself
 * @pool: a new pool created with KFDPOOL_POOL_PERSIST
 * @fdo: the command's output, holding the pool's first owner file
 *
 * Listed already, the pool may have been ended by id: then it must not hold
 * itself, as its end dropped nothing.
 *
 * Return: 0 (kept, or ended), or -EDQUOT (max_user_persistent), nothing done.
 */
int kfdpool_persist_begin(struct kfdpool_pool *pool, struct kfdpool_fd_out *fdo)
{
	bool ended;
	int ret;

	ret = kfdpool_persist_user_charge(pool->user, 1, 0);
	if (ret)
		return ret;
	mutex_lock(&pool->lock);
	ended = pool->ended;
	if (!ended) {
		/* Called from an ioctl of the module: it is live. */
		__module_get(THIS_MODULE);
		kref_get(&pool->ref);
		pool->kept = true;
	}
	mutex_unlock(&pool->lock);
	if (ended) {
		kfdpool_persist_user_uncharge(pool->user, 1, 0);
		return 0;
	}
	fdo->undo = kfdpool_persist_undo;
	fdo->pfile = fdo->file->private_data;
	return 0;
}

/* @pool ended.  The caller holds a file of ours: not the last module_put. */
void kfdpool_persist_end(struct kfdpool_pool *pool)
{
	bool kept;

	mutex_lock(&pool->lock);
	kept = pool->kept;
	pool->kept = false;
	mutex_unlock(&pool->lock);
	if (!kept)
		return;
	kfdpool_persist_user_uncharge(pool->user, 1, 0);
	module_put(THIS_MODULE);
	kfdpool_pool_put(pool);
}

/*
 * The pool of id @id, referenced, for its own user or an administrator:
 * 0, or -ENOENT (none the caller may act on; whether another user's pool
 * exists is not told).
 */
static int kfdpool_find_by_id(const u8 *id, struct kfdpool_pool **poolp)
{
	struct kfdpool_pool *pool = kfdpool_pool_find(id);

	/* As ipcrm: the pool's own uid, or CAP_SYS_ADMIN, asked last. */
	if (pool && !uid_eq(pool->uid, current_euid()) &&
	    !capable(CAP_SYS_ADMIN)) {
		kfdpool_pool_put(pool);
		pool = NULL;
	}
	*poolp = pool;
	return pool ? 0 : -ENOENT;
}

/*
 * The adopter becomes owner_pid; the pool's user stays its creator's, charges
 * included.  -ENOENT: ended, -EOPNOTSUPP: not persistent, -EBUSY: an owner
 * file is open, or -errno.
 */
static int kfdpool_persist_adopt(struct kfdpool_pool *pool,
				 struct kfdpool_fd_out *fdo, size_t fd_off)
{
	struct pid *old = NULL;
	int ret = 0;

	mutex_lock(&pool->lock);
	if (pool->ended)
		ret = -ENOENT;
	else if (!pool->kept)
		ret = -EOPNOTSUPP;
	else if (pool->nr_owners)
		ret = -EBUSY;
	else	/* Hold the place: a second adopter sees an owner. */
		pool->nr_owners++;
	mutex_unlock(&pool->lock);
	if (ret)
		return ret;

	ret = kfdpool_file_prepare(pool, KFDPOOL_MODE_OWNER, fdo, fd_off);

	mutex_lock(&pool->lock);
	pool->nr_owners--;	/* the pool is kept: it does not end here */
	if (!ret) {
		old = pool->owner_pid;
		pool->owner_pid = get_pid(task_tgid(current));
	}
	mutex_unlock(&pool->lock);
	put_pid(old);
	return ret;
}

long kfdpool_ioctl_pool_adopt(struct file *file, unsigned int nr, void *data,
			      struct kfdpool_fd_out *fdo)
{
	struct kfdpool_pool_adopt *args = data;
	struct kfdpool_pool *pool;
	int ret;

	if (args->flags & ~KFDPOOL_ADOPT_BY_ID)
		return -EINVAL;
	if (args->flags & KFDPOOL_ADOPT_BY_ID) {
		if (memchr_inv(&args->handle, 0, sizeof(args->handle)))
			return -EINVAL;
		ret = kfdpool_find_by_id(args->id, &pool);
	} else {
		if (memchr_inv(args->id, 0, sizeof(args->id)))
			return -EINVAL;
		ret = kfdpool_handle_resolve(&args->handle, true, &pool);
	}
	if (ret)
		return ret;
	ret = kfdpool_persist_adopt(pool, fdo,
				    offsetof(struct kfdpool_pool_adopt, fd));
	kfdpool_pool_put(pool);
	args->fd = -1;
	return ret;
}

long kfdpool_ioctl_pool_destroy(struct file *file, unsigned int nr,
				void *data, struct kfdpool_fd_out *fdo)
{
	struct kfdpool_pool_destroy *args = data;
	struct kfdpool_file *pf = file->private_data;
	int ret;

	if (pf->mode != KFDPOOL_MODE_OWNER)
		return -EPERM;
	if (args->flags || args->pad)
		return -EINVAL;
	ret = kfdpool_lock(pf);
	if (ret)
		return ret;
	mutex_unlock(&pf->pool->lock);
	kfdpool_pool_end(pf->pool);
	return 0;
}

long kfdpool_ioctl_pool_destroy_id(struct file *file, unsigned int nr,
				   void *data, struct kfdpool_fd_out *fdo)
{
	struct kfdpool_pool_destroy_id *args = data;
	struct kfdpool_pool *pool;
	int ret;

	if (args->flags || args->pad)
		return -EINVAL;
	ret = kfdpool_find_by_id(args->id, &pool);
	if (ret)
		return ret;
	kfdpool_pool_end(pool);
	kfdpool_pool_put(pool);
	return 0;
}
