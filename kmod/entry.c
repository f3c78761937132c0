// SPDX-License-Identifier: GPL-2.0-only
/*
 * Entries: PIN and UNPIN, the per-fd import counts that keep unpinned
 * entries draining, and freeing entries.
 */
#include <linux/dma-buf.h>
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

static int kfdpool_pin_locked(struct kfdpool_pool *pool,
			      struct kfdpool_entry *entry)
{
	u64 size = entry->size;
	int ret;

	lockdep_assert_held(&pool->lock);
	if (kfdpool_find_dmabuf(pool, entry->dmabuf))
		return -EEXIST;
	if (pool->nr_entries >= READ_ONCE(kfdpool_max_entries))
		return -ENOSPC;
	if (!kfdpool_pool_limit_fits(pool, size))
		return -ENOSPC;
	ret = kfdpool_charge(pool->user, size);
	if (ret)
		return ret;
	ret = kfdpool_entry_insert_locked(pool, entry);
	if (ret)
		kfdpool_uncharge(pool->user, size);
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
	INIT_LIST_HEAD(&entry->records);

	mutex_lock(&pool->lock);
	ret = kfdpool_pin_locked(pool, entry);
	mutex_unlock(&pool->lock);
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

/* Free an entry (no records left, no holders left); pool->lock held. */
void kfdpool_entry_free(struct kfdpool_pool *pool, struct kfdpool_entry *entry)
{
	lockdep_assert_held(&pool->lock);
	WARN_ON(!list_empty(&entry->records));
	WARN_ON(entry->holders);

	xa_erase(&pool->entries, entry->id);
	if (entry->draining) {
		pool->nr_draining--;
		pool->draining -= entry->size;
	} else {
		hash_del(&entry->hnode);
	}
	pool->reserved -= entry->size;
	pool->nr_entries--;
	kfdpool_uncharge(pool->user, entry->size);
	/* The last reference's release runs later, from task work. */
	dma_buf_put(entry->dmabuf);
	kfree(entry);
}

/* Revoke every record of @entry; pool->lock held.  Returns how many. */
static u32 kfdpool_entry_revoke_all(struct kfdpool_pool *pool,
				    struct kfdpool_entry *entry)
{
	struct kfdpool_rec *rec, *tmp;
	u32 n = 0;

	list_for_each_entry_safe(rec, tmp, &entry->records, node) {
		kfdpool_rec_free(pool, rec);
		n++;
	}
	return n;
}

/*
 * Take @entry out of the pool once its records are gone: freed, or left
 * draining while imports of it live.  pool->lock held.  Returns 1 when
 * draining.
 */
static u32 kfdpool_entry_unpin_locked(struct kfdpool_pool *pool,
				      struct kfdpool_entry *entry)
{
	if (!entry->holders) {
		kfdpool_entry_free(pool, entry);
		return 0;
	}
	/* Imports keep it alive; it can no longer be imported. */
	hash_del(&entry->hnode);
	entry->draining = true;
	pool->nr_draining++;
	pool->draining += entry->size;
	return 1;
}

/*
 * The pinner never learnt of the entry (the copy back failed): unpin it,
 * if the entry of that id still is this pin.  Also ALLOC's undo.
 */
void kfdpool_pin_undo(struct kfdpool_fd_out *fdo)
{
	struct kfdpool_pool *pool = fdo->pfile->pool;
	struct kfdpool_entry *entry;

	mutex_lock(&pool->lock);
	entry = xa_load(&pool->entries, fdo->entry_id);
	if (entry && !entry->draining && entry->dmabuf == fdo->dmabuf) {
		kfdpool_entry_revoke_all(pool, entry);
		kfdpool_entry_unpin_locked(pool, entry);
	}
	mutex_unlock(&pool->lock);
}

long kfdpool_ioctl_unpin(struct file *file, void *data,
			 struct kfdpool_fd_out *fdo)
{
	struct kfdpool_unpin *args = data;
	struct kfdpool_file *pf = file->private_data;
	struct kfdpool_pool *pool = pf->pool;
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
	args->revoked = kfdpool_entry_revoke_all(pool, entry);
	args->draining = kfdpool_entry_unpin_locked(pool, entry);
out:
	mutex_unlock(&pool->lock);
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
	if (!entry->holders && entry->draining)
		kfdpool_entry_free(pool, entry);
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

/* The file is closing: drop all of its imports.  pool->lock held. */
void kfdpool_file_drop_imports(struct kfdpool_file *pf)
{
	unsigned long id;
	void *v;

	lockdep_assert_held(&pf->pool->lock);
	xa_for_each(&pf->imports, id, v)
		kfdpool_import_drop(pf, id);
}

/* The pool's last file closed: free every record and entry. */
void kfdpool_pool_free_all(struct kfdpool_pool *pool)
{
	struct kfdpool_entry *entry;
	struct kfdpool_rec *rec;
	unsigned long id;

	mutex_lock(&pool->lock);
	xa_for_each(&pool->records, id, rec)
		kfdpool_rec_free(pool, rec);
	xa_for_each(&pool->entries, id, entry) {
		WARN_ON(entry->holders);
		entry->holders = 0;
		kfdpool_entry_free(pool, entry);
	}
	WARN_ON(pool->reserved || pool->used || pool->imported ||
		pool->nr_entries || pool->nr_records);
	mutex_unlock(&pool->lock);
}
