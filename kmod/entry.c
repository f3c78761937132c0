// SPDX-License-Identifier: GPL-2.0-only
/*
 * Entries: PIN and UNPIN, the per-fd import counts that keep unpinned
 * entries draining, and freeing entries.
 */
#include <linux/dma-buf.h>
#include <linux/sched.h>
#include <linux/slab.h>

#include "kfdpool.h"

static struct kfdpool_entry *kfdpool_find_dmabuf(struct kfdpool_pool *pool,
						 struct dma_buf *dmabuf)
{
	struct kfdpool_entry *e;

	hash_for_each_possible(pool->dmabufs, e, hnode, (unsigned long)dmabuf)
		if (e->dmabuf == dmabuf)
			return e;
	return NULL;
}

/**
 * kfdpool_entry_insert_locked() - add an entry whose size is charged
 * @pool: the pool
 * @entry: the entry, its dma-buf and size set
 *
 * pool->lock held.  Return: 0 or -ENOMEM.
 */
int kfdpool_entry_insert_locked(struct kfdpool_pool *pool,
				struct kfdpool_entry *entry)
{
	int ret;

	lockdep_assert_held(&pool->lock);
	ret = xa_alloc_cyclic(&pool->entries, &entry->id, entry,
			      XA_LIMIT(1, U32_MAX), &pool->next_entry,
			      GFP_KERNEL_ACCOUNT);
	if (ret < 0)
		return ret;
	hash_add(pool->dmabufs, &entry->hnode, (unsigned long)entry->dmabuf);
	pool->reserved += entry->size;
	pool->reserved_high = max(pool->reserved_high, pool->reserved);
	pool->nr_entries++;
	return 0;
}

/**
 * kfdpool_entry_charge_locked() - charge a new entry of @dmabuf, @size
 *	bytes, to the pool and its user
 * @pool: the pool
 * @dmabuf: the dma-buf the entry will hold (its identity is what the
 *	global and per-user limits count, once per dma-buf)
 * @size: its bytes
 *
 * The one charge of PIN and ALLOC: the pool's entry cap and limit (which
 * counts each of its entries, and what ALLOCs are still populating), then
 * the global and per-user limits (kfdpool_charge()).  kfdpool_entry_free()
 * returns it; a caller that makes no entry returns it with
 * kfdpool_uncharge().  pool->lock held.
 *
 * Return: 0, -ENOSPC (entry cap, pool or global limit), -EDQUOT (per-user
 * limit at some level) or -ENOMEM.
 */
int kfdpool_entry_charge_locked(struct kfdpool_pool *pool,
				struct dma_buf *dmabuf, u64 size)
{
	lockdep_assert_held(&pool->lock);
	if (pool->nr_entries >= READ_ONCE(kfdpool_max_entries))
		return -ENOSPC;
	/* The pool's own figure: each of its entries, held ones included. */
	if (!kfdpool_pool_limit_fits(pool, size))
		return -ENOSPC;
	return kfdpool_charge(pool->user, dmabuf, size);
}

static int kfdpool_pin_locked(struct kfdpool_pool *pool,
			      struct kfdpool_entry *entry)
{
	int ret;

	lockdep_assert_held(&pool->lock);
	if (kfdpool_find_dmabuf(pool, entry->dmabuf))
		return -EEXIST;
	ret = kfdpool_entry_charge_locked(pool, entry->dmabuf, entry->size);
	if (ret)
		return ret;
	ret = kfdpool_entry_insert_locked(pool, entry);
	if (ret)
		kfdpool_uncharge(pool->user, entry->dmabuf);
	return ret;
}

long kfdpool_ioctl_pin(struct file *file, void *data,
		       struct kfdpool_fd_out *fdo)
{
	struct kfdpool_pin *args = data;
	struct kfdpool_file *pf = file->private_data;
	struct kfdpool_pool *pool = pf->pool;
	struct kfdpool_entry *entry;
	struct dma_buf *dmabuf;
	int ret;

	if (pf->mode != KFDPOOL_MODE_OWNER)
		return -EPERM;
	if (args->flags || args->pad)
		return -EINVAL;

	/* -EBADF for a closed fd, -EINVAL for a file that is no dma-buf. */
	dmabuf = dma_buf_get(args->dmabuf_fd);
	if (IS_ERR(dmabuf))
		return PTR_ERR(dmabuf);

	entry = kzalloc(sizeof(*entry), GFP_KERNEL_ACCOUNT);
	if (!entry) {
		ret = -ENOMEM;
		goto err_put;
	}
	entry->dmabuf = dmabuf;
	entry->size = dmabuf->size;
	entry->cookie = args->cookie;
	entry->cover.root = RB_ROOT;

	mutex_lock(&pool->lock);
	ret = kfdpool_pin_locked(pool, entry);
	mutex_unlock(&pool->lock);
	/*
	 * Held entries count against every limit until their last outside
	 * reference goes, which nothing signals: look now, and try once more.
	 */
	if ((ret == -ENOSPC || ret == -EDQUOT) && kfdpool_reap_all()) {
		mutex_lock(&pool->lock);
		ret = kfdpool_pin_locked(pool, entry);
		mutex_unlock(&pool->lock);
	}
	if (ret)
		goto err_free;

	args->size = entry->size;
	args->entry_id = entry->id;
	fdo->undo = kfdpool_pin_undo;
	fdo->pfile = pf;
	fdo->entry_id = entry->id;
	fdo->dmabuf = dmabuf;
	return 0;

err_free:
	kfree(entry);
err_put:
	dma_buf_put(dmabuf);
	return ret;
}

/*
 * Free an entry (no records left, no holders left, not busy); pool->lock
 * held.
 */
void kfdpool_entry_free(struct kfdpool_pool *pool, struct kfdpool_entry *entry)
{
	lockdep_assert_held(&pool->lock);
	WARN_ON(entry->records || entry->nr_records);
	WARN_ON(!RB_EMPTY_ROOT(&entry->cover.root));
	WARN_ON(entry->holders || entry->busy);

	xa_erase(&pool->entries, entry->id);
	if (entry->held)
		kfdpool_held_del(pool, entry);
	if (entry->draining) {
		pool->nr_draining--;
		pool->draining -= entry->size;
	} else {
		hash_del(&entry->hnode);
	}
	pool->reserved -= entry->size;
	pool->nr_entries--;
	/* Uncharge before dropping the reference the charge stands for. */
	kfdpool_uncharge(pool->user, entry->dmabuf);
	/* The last reference's release runs later, from task work. */
	dma_buf_put(entry->dmabuf);
	kfree(entry);
}

/*
 * Unpin @entry and revoke its records at once, in O(1): the records move
 * to @dead (they stay live in pool->records, where lookups see their entry
 * draining and answer -ENOENT, until kfdpool_recs_free_dead() erases them)
 * and the coverage tree to @bps.  pool->lock held.  Returns the records
 * revoked.
 */
static u32 kfdpool_entry_detach(struct kfdpool_pool *pool,
				struct kfdpool_entry *entry,
				u32 *dead, struct rb_root *bps)
{
	u32 n = entry->nr_records;

	lockdep_assert_held(&pool->lock);
	WARN_ON_ONCE(pool->cover_txn.n);
	*dead = entry->records;
	entry->records = 0;
	pool->used -= kfdpool_cover_take(&entry->cover, bps);
	pool->nr_records -= n;
	entry->nr_records = 0;
	kfdpool_records_uncharge(pool->user, n);

	/* It can no longer be exported or imported. */
	hash_del(&entry->hnode);
	entry->draining = true;
	pool->nr_draining++;
	pool->draining += entry->size;
	return n;
}

/*
 * Erase and free the records of @dead in batches, dropping pool->lock and
 * yielding between batches: an entry may have KFDPOOL_MAX_RECORDS records.
 * Called and returns with pool->lock held.
 */
static void kfdpool_recs_free_dead(struct kfdpool_pool *pool, u32 dead)
{
	struct kfdpool_rec *rec;
	unsigned int n;

	lockdep_assert_held(&pool->lock);
	while (dead) {
		for (n = 0; n < KFDPOOL_TEARDOWN_BATCH && dead; n++) {
			/* Only this walk takes records off the dead list. */
			rec = kfdpool_rectab_slot(&pool->records, dead);
			dead = rec->next;
			kfdpool_rectab_put(&pool->records, rec);
		}
		if (!dead)
			break;
		mutex_unlock(&pool->lock);
		cond_resched();
		mutex_lock(&pool->lock);
	}
}

/*
 * Unpin @entry: revoke its records, then free it, leave it draining while
 * imports of it are counted, or hold it.  pool->lock held; dropped and
 * retaken while many records are freed (the entry is busy meanwhile).  The
 * coverage tree goes to @bps, for the caller to free once unlocked.
 * Returns 1 when the entry stays.
 */
static u32 kfdpool_entry_unpin(struct kfdpool_pool *pool,
			       struct kfdpool_entry *entry, u32 *revoked,
			       struct rb_root *bps)
{
	u32 n, dead;

	n = kfdpool_entry_detach(pool, entry, &dead, bps);
	if (revoked)
		*revoked = n;
	entry->busy = true;
	kfdpool_recs_free_dead(pool, dead);
	entry->busy = false;
	if (entry->holders)
		return 1;
	return kfdpool_entry_settle(pool, entry);
}

/*
 * The pinner never learnt of the entry (the copy back failed): unpin it,
 * if the entry of that id still is this pin.  Also ALLOC's undo.
 */
void kfdpool_pin_undo(struct kfdpool_fd_out *fdo)
{
	struct kfdpool_pool *pool = fdo->pfile->pool;
	struct rb_root bps = RB_ROOT;
	struct kfdpool_entry *entry;

	mutex_lock(&pool->lock);
	entry = xa_load(&pool->entries, fdo->entry_id);
	if (entry && !entry->draining && entry->dmabuf == fdo->dmabuf)
		kfdpool_entry_unpin(pool, entry, NULL, &bps);
	mutex_unlock(&pool->lock);
	kfdpool_cover_free(&bps);
}

long kfdpool_ioctl_unpin(struct file *file, void *data,
			 struct kfdpool_fd_out *fdo)
{
	struct kfdpool_unpin *args = data;
	struct kfdpool_file *pf = file->private_data;
	struct kfdpool_pool *pool = pf->pool;
	struct rb_root bps = RB_ROOT;
	struct kfdpool_entry *entry;
	long ret = 0;

	if (pf->mode != KFDPOOL_MODE_OWNER)
		return -EPERM;
	if (args->flags)
		return -EINVAL;

	mutex_lock(&pool->lock);
	entry = xa_load(&pool->entries, args->entry_id);
	if (!entry || entry->draining) {
		ret = -ENOENT;
		goto out;
	}
	args->draining = kfdpool_entry_unpin(pool, entry, &args->revoked,
					     &bps);
out:
	mutex_unlock(&pool->lock);
	kfdpool_cover_free(&bps);
	return ret;
}

/**
 * kfdpool_import_get() - count one more import of @entry by @pf
 * @pf: the importing pool file
 * @entry: a live entry of its pool
 *
 * pool->lock held.
 *
 * Return: 0, -ENOMEM, or -EOVERFLOW past INT_MAX imports.
 */
int kfdpool_import_get(struct kfdpool_file *pf, struct kfdpool_entry *entry)
{
	struct kfdpool_pool *pool = pf->pool;
	void *old;
	unsigned long n;

	lockdep_assert_held(&pool->lock);
	old = xa_load(&pf->imports, entry->id);
	n = old ? xa_to_value(old) : 0;
	if (n >= INT_MAX)
		return -EOVERFLOW;
	old = xa_store(&pf->imports, entry->id, xa_mk_value(n + 1),
		       GFP_KERNEL_ACCOUNT);
	if (xa_is_err(old))
		return xa_err(old);
	if (!n) {
		entry->holders++;
		pf->nr_imports++;
		pf->imported += entry->size;
		pool->imported += entry->size;
	}
	return 0;
}

/* Drop all of @pf's imports of entry @id; pool->lock held. */
static void kfdpool_import_drop(struct kfdpool_file *pf, unsigned long id)
{
	struct kfdpool_pool *pool = pf->pool;
	struct kfdpool_entry *entry;

	xa_erase(&pf->imports, id);
	entry = xa_load(&pool->entries, id);
	if (WARN_ON(!entry))
		return;
	entry->holders--;
	pf->nr_imports--;
	pf->imported -= entry->size;
	pool->imported -= entry->size;
	if (!entry->holders && entry->draining && !entry->busy)
		kfdpool_entry_settle(pool, entry);
}

/**
 * kfdpool_import_put() - drop one import of entry @entry_id by @pf
 * @pf: the pool file
 * @entry_id: the entry
 *
 * The last import of a draining entry frees it.  pool->lock held.
 * Return: 0, or -ENOENT when @pf holds no import of the entry.
 */
int kfdpool_import_put(struct kfdpool_file *pf, u32 entry_id)
{
	void *old;
	unsigned long n;

	lockdep_assert_held(&pf->pool->lock);
	old = xa_load(&pf->imports, entry_id);
	if (!old)
		return -ENOENT;
	n = xa_to_value(old);
	if (n > 1) {
		/* Replacing a present slot allocates nothing. */
		xa_store(&pf->imports, entry_id, xa_mk_value(n - 1), GFP_NOWAIT);
		return 0;
	}
	kfdpool_import_drop(pf, entry_id);
	return 0;
}

/*
 * The file is closing: drop all of its imports.  pool->lock held; dropped
 * and retaken between batches.  The entries this file still holds imports
 * of cannot be freed by others meanwhile (their holders count this file).
 */
void kfdpool_file_drop_imports(struct kfdpool_file *pf)
{
	unsigned int n = 0;
	unsigned long id;
	void *v;

	lockdep_assert_held(&pf->pool->lock);
	xa_for_each(&pf->imports, id, v) {
		kfdpool_import_drop(pf, id);
		if (!(++n % KFDPOOL_TEARDOWN_BATCH)) {
			mutex_unlock(&pf->pool->lock);
			cond_resched();
			mutex_lock(&pf->pool->lock);
		}
	}
}

/*
 * The pool's last file closed: unpin every live entry, which frees it or
 * holds it.  No file is left, so only the reaper and debugfs take the lock,
 * which is dropped between batches.  What stays is held.
 */
void kfdpool_pool_free_all(struct kfdpool_pool *pool)
{
	struct kfdpool_entry *entry;
	struct rb_root bps;
	unsigned int n = 0;
	unsigned long id;

	mutex_lock(&pool->lock);
	xa_for_each(&pool->entries, id, entry) {
		if (WARN_ON(entry->holders))
			entry->holders = 0;
		if (entry->held)
			continue;
		bps = RB_ROOT;
		if (!entry->draining)
			kfdpool_entry_unpin(pool, entry, NULL, &bps);
		else
			kfdpool_entry_settle(pool, entry);
		if (!RB_EMPTY_ROOT(&bps) || !(++n % KFDPOOL_TEARDOWN_BATCH)) {
			mutex_unlock(&pool->lock);
			kfdpool_cover_free(&bps);
			cond_resched();
			mutex_lock(&pool->lock);
		}
	}
	WARN_ON(pool->used || pool->imported || pool->nr_records ||
		pool->reserved != pool->held_bytes ||
		pool->nr_entries != pool->nr_held);
	mutex_unlock(&pool->lock);
}
