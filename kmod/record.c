// SPDX-License-Identifier: GPL-2.0-only
/*
 * Export records: EXPORT, REVOKE, IMPORT, RELEASE.  The kfdpool_do_*()
 * functions work on kernel copies of one element and are shared by the
 * single ioctls, the batch ioctls and io_uring.
 */
#include <crypto/algapi.h>
#include <linux/dma-buf.h>
#include <linux/random.h>
#include <linux/slab.h>

#include "kfdpool.h"

/* Free a live record; pool->lock held. */
void kfdpool_rec_free(struct kfdpool_pool *pool, struct kfdpool_rec *rec)
{
	lockdep_assert_held(&pool->lock);
	xa_erase(&pool->records, rec->id);
	list_del(&rec->node);
	pool->used -= rec->size;
	pool->nr_records--;
	kfree(rec);
}

static void kfdpool_rec_encode(struct kfdpool_pool *pool,
			       const struct kfdpool_rec *rec,
			       struct kfdpool_record *r)
{
	memset(r, 0, sizeof(*r));
	memcpy(r->pool_id, pool->id, sizeof(r->pool_id));
	r->magic = KFDPOOL_RECORD_MAGIC;
	r->record_id = rec->id;
	r->entry_id = rec->entry->id;
	r->generation = rec->generation;
	r->offset = rec->offset;
	r->size = rec->size;
	memcpy(r->nonce, rec->nonce, sizeof(r->nonce));
}

/* Checks that need no lock: what kind of record, and whose. */
static int kfdpool_rec_precheck(struct kfdpool_pool *pool,
				const struct kfdpool_record *r)
{
	if (r->magic != KFDPOOL_RECORD_MAGIC)
		return -EINVAL;
	if (memcmp(r->pool_id, pool->id, sizeof(pool->id)))
		return -EXDEV;
	return 0;
}

/*
 * Find the live record @r stands for; pool->lock held.  Every field must be
 * what the kernel stored; the nonce is compared in constant time.
 */
static struct kfdpool_rec *kfdpool_rec_lookup(struct kfdpool_pool *pool,
					      const struct kfdpool_record *r)
{
	struct kfdpool_rec *rec;

	lockdep_assert_held(&pool->lock);
	rec = xa_load(&pool->records, r->record_id);
	if (!rec)
		return ERR_PTR(-ENOENT);
	if (rec->generation != r->generation)
		return ERR_PTR(-ESTALE);
	if (rec->entry->id != r->entry_id || rec->offset != r->offset ||
	    rec->size != r->size ||
	    crypto_memneq(rec->nonce, r->nonce, sizeof(rec->nonce)))
		return ERR_PTR(-ENOENT);
	return rec;
}

int kfdpool_do_export(struct kfdpool_file *pf, struct kfdpool_export *e)
{
	struct kfdpool_pool *pool = pf->pool;
	struct kfdpool_entry *entry;
	struct kfdpool_rec *rec;
	int ret;

	if (pf->mode != KFDPOOL_MODE_OWNER)
		return -EPERM;
	if (e->flags || e->pad || !e->size)
		return -EINVAL;
	if (!pool->handle_types)
		return -EOPNOTSUPP;

	rec = kzalloc(sizeof(*rec), GFP_KERNEL_ACCOUNT);
	if (!rec)
		return -ENOMEM;
	get_random_bytes(rec->nonce, sizeof(rec->nonce));

	mutex_lock(&pool->lock);
	entry = xa_load(&pool->entries, e->entry_id);
	if (!entry || entry->draining) {
		ret = -ENOENT;
		goto err_unlock;
	}
	if (e->offset > entry->size || e->size > entry->size - e->offset) {
		ret = -EINVAL;
		goto err_unlock;
	}
	if (pool->nr_records >= KFDPOOL_MAX_RECORDS) {
		ret = -ENOSPC;
		goto err_unlock;
	}
	ret = xa_alloc_cyclic(&pool->records, &rec->id, rec,
			      XA_LIMIT(1, U32_MAX), &pool->next_record,
			      GFP_KERNEL_ACCOUNT);
	if (ret < 0)
		goto err_unlock;
	rec->generation = ++pool->generation;
	rec->entry = entry;
	rec->offset = e->offset;
	rec->size = e->size;
	list_add_tail(&rec->node, &entry->records);
	pool->used += rec->size;
	pool->used_high = max(pool->used_high, pool->used);
	pool->nr_records++;
	kfdpool_rec_encode(pool, rec, &e->record);
	mutex_unlock(&pool->lock);
	return 0;

err_unlock:
	mutex_unlock(&pool->lock);
	kfree(rec);
	return ret;
}

int kfdpool_do_revoke(struct kfdpool_file *pf, struct kfdpool_revoke *r)
{
	struct kfdpool_pool *pool = pf->pool;
	struct kfdpool_rec *rec;
	int ret;

	if (pf->mode != KFDPOOL_MODE_OWNER)
		return -EPERM;
	if (r->flags)
		return -EINVAL;
	ret = kfdpool_rec_precheck(pool, &r->record);
	if (ret)
		return ret;

	mutex_lock(&pool->lock);
	rec = kfdpool_rec_lookup(pool, &r->record);
	if (IS_ERR(rec))
		ret = PTR_ERR(rec);
	else
		kfdpool_rec_free(pool, rec);
	mutex_unlock(&pool->lock);
	return ret;
}

/* The import's fd could not be handed out: drop the import it counted. */
static void kfdpool_import_undo(struct kfdpool_fd_out *fdo)
{
	struct kfdpool_pool *pool = fdo->pfile->pool;

	mutex_lock(&pool->lock);
	kfdpool_import_put(fdo->pfile, fdo->entry_id);
	mutex_unlock(&pool->lock);
}

/**
 * kfdpool_do_import() - validate a record and import its entry
 * @pf: the pool file the record is presented to (any mode)
 * @imp: the element; outputs are filled on success
 * @fdo: without KFDPOOL_IMPORT_VALIDATE, receives a reference to the
 *	dma-buf's file, which the caller installs at a new fd after its copy
 *	back (kfdpool_fd_commit(); imp->fd is left -1 until then)
 *
 * Return: 0 or -errno.
 */
int kfdpool_do_import(struct kfdpool_file *pf, struct kfdpool_import *imp,
		      struct kfdpool_fd_out *fdo)
{
	bool validate = imp->flags & KFDPOOL_IMPORT_VALIDATE;
	struct kfdpool_pool *pool = pf->pool;
	struct kfdpool_entry *entry;
	struct kfdpool_rec *rec;
	int ret;

	imp->fd = -1;
	if (imp->flags & ~KFDPOOL_IMPORT_VALIDATE)
		return -EINVAL;
	ret = kfdpool_rec_precheck(pool, &imp->record);
	if (ret)
		return ret;

	mutex_lock(&pool->lock);
	rec = kfdpool_rec_lookup(pool, &imp->record);
	if (IS_ERR(rec)) {
		ret = PTR_ERR(rec);
		goto err_unlock;
	}
	entry = rec->entry;
	if (validate) {
		if (!xa_load(&pf->imports, entry->id)) {
			ret = -ENXIO;
			goto err_unlock;
		}
	} else {
		ret = kfdpool_import_get(pf, entry);
		if (ret)
			goto err_unlock;
		get_dma_buf(entry->dmabuf);
		fdo->file = entry->dmabuf->file;
		fdo->undo = kfdpool_import_undo;
		fdo->pfile = pf;
		fdo->entry_id = entry->id;
	}
	imp->offset = rec->offset;
	imp->size = rec->size;
	imp->entry_size = entry->size;
	imp->cookie = entry->cookie;
	imp->entry_id = entry->id;
	mutex_unlock(&pool->lock);
	return 0;

err_unlock:
	mutex_unlock(&pool->lock);
	return ret;
}

int kfdpool_do_release(struct kfdpool_file *pf, struct kfdpool_release *rel)
{
	int ret;

	if (rel->flags || rel->pad)
		return -EINVAL;
	mutex_lock(&pf->pool->lock);
	ret = kfdpool_import_put(pf, rel->entry_id);
	mutex_unlock(&pf->pool->lock);
	return ret;
}

/* Nobody learnt of the record: revoke it. */
static void kfdpool_export_undo(struct kfdpool_fd_out *fdo)
{
	struct kfdpool_revoke r = { .record = fdo->record };

	kfdpool_do_revoke(fdo->pfile, &r);
}

/* Have kfdpool_fd_abort() revoke @record if it cannot be copied out. */
void kfdpool_export_arm_undo(struct kfdpool_fd_out *fdo,
			     struct kfdpool_file *pf,
			     const struct kfdpool_record *record)
{
	fdo->undo = kfdpool_export_undo;
	fdo->pfile = pf;
	fdo->record = *record;
}

long kfdpool_ioctl_export(struct file *file, void *data,
			  struct kfdpool_fd_out *fdo)
{
	struct kfdpool_export *e = data;
	int ret;

	e->status = 0;
	ret = kfdpool_do_export(file->private_data, e);
	if (!ret)
		kfdpool_export_arm_undo(fdo, file->private_data, &e->record);
	return ret;
}

long kfdpool_ioctl_revoke(struct file *file, void *data,
			  struct kfdpool_fd_out *fdo)
{
	struct kfdpool_revoke *r = data;

	r->status = 0;
	return kfdpool_do_revoke(file->private_data, r);
}

long kfdpool_ioctl_import(struct file *file, void *data,
			  struct kfdpool_fd_out *fdo)
{
	struct kfdpool_import *imp = data;

	imp->status = 0;
	fdo->fd_off = offsetof(struct kfdpool_import, fd);
	return kfdpool_do_import(file->private_data, imp, fdo);
}

long kfdpool_ioctl_release(struct file *file, void *data,
			   struct kfdpool_fd_out *fdo)
{
	struct kfdpool_release *rel = data;

	rel->status = 0;
	return kfdpool_do_release(file->private_data, rel);
}
