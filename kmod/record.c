// SPDX-License-Identifier: GPL-2.0-only
/*
 * Export records: EXPORT, REVOKE, IMPORT, RELEASE.  The kfdpool_do_*()
 * functions work on kernel copies of one element and are shared by the
 * single ioctls, the batch ioctls and io_uring.
 */
#include <crypto/algapi.h>
#include <linux/dma-buf.h>
#include <linux/random.h>
#include <linux/siphash.h>

#include "kfdpool.h"

/*
 * The nonce of record (@id, @generation): a SipHash-2-4 output under each
 * of the pool's two keys, one per half.  (@id, @generation) never repeats
 * in a pool (the generation is a 64-bit counter), so neither does a nonce,
 * and without the keys nobody can make one: a nonce is as good as random
 * bytes, for no entropy drawn per record.  (Two keys rather than one key
 * and a fourth word telling the halves apart: 12 bytes of input are one
 * SipHash compression fewer than 16, ~60 instructions of an export.)
 */
static void kfdpool_rec_nonce(const struct kfdpool_pool *pool, u32 id,
			      u64 generation, u8 nonce[KFDPOOL_NONCE_LEN])
{
	u64 half[2];
	int i;

	BUILD_BUG_ON(sizeof(half) != KFDPOOL_NONCE_LEN);
	for (i = 0; i < 2; i++)
		half[i] = siphash_3u32(id, lower_32_bits(generation),
				       upper_32_bits(generation),
				       &pool->nonce_key[i]);
	memcpy(nonce, half, sizeof(half));
	memzero_explicit(half, sizeof(half));
}

/**
 * kfdpool_pool_settle() - count the coverage changes of this lock hold
 * @pool: the pool, pool->lock held
 *
 * Exports and revokes in a deferred transaction (a batch chunk's) leave
 * what they change in the used bytes to this (cover.c says why); whoever
 * made them calls it before dropping the lock, so that nobody else sees
 * @pool's transaction other than empty.
 */
void kfdpool_pool_settle(struct kfdpool_pool *pool)
{
	lockdep_assert_held(&pool->lock);
	if (!pool->cover_txn.n)
		return;
	pool->used += kfdpool_cover_settle(&pool->cover_txn);
	/* Exports only add, revokes only take away: no peak in between. */
	pool->used_high = max(pool->used_high, pool->used);
}

/* Free a live record; pool->lock held.  Settle before unlocking. */
void kfdpool_rec_free(struct kfdpool_pool *pool, struct kfdpool_rec *rec)
{
	struct kfdpool_entry *entry = rec->entry;

	lockdep_assert_held(&pool->lock);
	kfdpool_reclist_del(&pool->records, &entry->records, rec);
	if (kfdpool_cover_txn_full(&pool->cover_txn))
		kfdpool_pool_settle(pool);
	pool->used -= kfdpool_cover_del(&pool->cover_txn, &entry->cover,
					rec->offset, rec->size);
	pool->nr_records--;
	entry->nr_records--;
	kfdpool_records_uncharge(pool->user, 1);
	kfdpool_rectab_put(&pool->records, rec);
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
	rec = kfdpool_rectab_find(&pool->records, r->record_id);
	/* A record of an unpinned entry is revoked, though not erased yet. */
	if (!rec || rec->entry->draining)
		return ERR_PTR(-ENOENT);
	if (rec->generation != r->generation)
		return ERR_PTR(-ESTALE);
	if (rec->entry->id != r->entry_id || rec->offset != r->offset ||
	    rec->size != r->size)
		return ERR_PTR(-ENOENT);
	if (crypto_memneq(rec->nonce, r->nonce, sizeof(rec->nonce)))
		return ERR_PTR(-ENOENT);
	return rec;
}

/*
 * Each command comes in two halves, so that a batch takes the pool's lock
 * once for many elements: *_prep() checks what it can without the lock;
 * *_locked() does the rest under pool->lock (an export's record slot
 * comes from the pool's table, rectab.c, which allocates a page of slots
 * once in 64 exports).  The kfdpool_do_*() functions run both for one
 * element.
 */

/* Check an export.  0 or -errno. */
int kfdpool_export_prep(struct kfdpool_file *pf,
			const struct kfdpool_export *e)
{
	if (pf->mode != KFDPOOL_MODE_OWNER)
		return -EPERM;
	if (e->flags || e->pad || !e->size)
		return -EINVAL;
	if (!pf->pool->handle_types)
		return -EOPNOTSUPP;
	return 0;
}

/*
 * Make the record of @e; pool->lock held.  0 or -errno.  Settle before
 * unlocking.
 */
int kfdpool_export_locked(struct kfdpool_file *pf, struct kfdpool_export *e)
{
	struct kfdpool_pool *pool = pf->pool;
	struct kfdpool_bp *spare[2];
	struct kfdpool_entry *entry;
	struct kfdpool_rec *rec;
	int ret;

	lockdep_assert_held(&pool->lock);
	entry = xa_load(&pool->entries, e->entry_id);
	if (!entry || entry->draining)
		return -ENOENT;
	if (e->offset > entry->size || e->size > entry->size - e->offset)
		return -EINVAL;
	if (pool->nr_records >= KFDPOOL_MAX_RECORDS)
		return -ENOSPC;
	ret = kfdpool_records_charge(pool->user);
	if (ret)
		return ret;
	ret = kfdpool_bp_stash_take(pool->bp_stash, spare);
	if (ret)
		goto err_uncharge;
	rec = kfdpool_rectab_get(&pool->records);
	if (IS_ERR(rec)) {
		ret = PTR_ERR(rec);
		goto err_keep;
	}
	kfdpool_rec_nonce(pool, rec->id, ++pool->generation, rec->nonce);
	rec->generation = lower_32_bits(pool->generation);
	rec->entry = entry;
	rec->offset = e->offset;
	rec->size = e->size;
	kfdpool_reclist_add(&pool->records, &entry->records, rec);
	if (kfdpool_cover_txn_full(&pool->cover_txn))
		kfdpool_pool_settle(pool);
	pool->used += kfdpool_cover_add(&pool->cover_txn, &entry->cover,
					rec->offset, rec->size, spare);
	pool->used_high = max(pool->used_high, pool->used);
	kfdpool_bp_stash_keep(pool->bp_stash, spare);
	pool->nr_records++;
	entry->nr_records++;
	kfdpool_rec_encode(pool, rec, &e->record);
	return 0;

err_keep:
	kfdpool_bp_stash_keep(pool->bp_stash, spare);
err_uncharge:
	kfdpool_records_uncharge(pool->user, 1);
	return ret;
}

int kfdpool_do_export(struct kfdpool_file *pf, struct kfdpool_export *e)
{
	int ret = kfdpool_export_prep(pf, e);

	if (ret)
		return ret;
	mutex_lock(&pf->pool->lock);
	ret = kfdpool_export_locked(pf, e);
	mutex_unlock(&pf->pool->lock);
	return ret;
}

int kfdpool_revoke_prep(struct kfdpool_file *pf,
			const struct kfdpool_revoke *r)
{
	if (pf->mode != KFDPOOL_MODE_OWNER)
		return -EPERM;
	if (r->flags)
		return -EINVAL;
	return kfdpool_rec_precheck(pf->pool, &r->record);
}

int kfdpool_revoke_locked(struct kfdpool_file *pf,
			  const struct kfdpool_revoke *r)
{
	struct kfdpool_rec *rec = kfdpool_rec_lookup(pf->pool, &r->record);

	if (IS_ERR(rec))
		return PTR_ERR(rec);
	kfdpool_rec_free(pf->pool, rec);
	return 0;
}

int kfdpool_do_revoke(struct kfdpool_file *pf, struct kfdpool_revoke *r)
{
	int ret = kfdpool_revoke_prep(pf, r);

	if (ret)
		return ret;
	mutex_lock(&pf->pool->lock);
	ret = kfdpool_revoke_locked(pf, r);
	mutex_unlock(&pf->pool->lock);
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

int kfdpool_import_prep(struct kfdpool_file *pf, struct kfdpool_import *imp)
{
	imp->fd = -1;
	if (imp->flags & ~KFDPOOL_IMPORT_VALIDATE)
		return -EINVAL;
	return kfdpool_rec_precheck(pf->pool, &imp->record);
}

/*
 * Validate @imp's record and, without KFDPOOL_IMPORT_VALIDATE, import its
 * entry: @fdo then holds a reference to the dma-buf's file, which the
 * caller installs at a new fd after its copy back (kfdpool_fd_commit();
 * imp->fd stays -1 until then).  pool->lock held.  0 or -errno.
 *
 * @held, when not NULL, is an entry id @pf is known to hold an import of
 * (0 for none), kept by the caller for one hold of pool->lock: nothing in
 * a hold drops an import, and a batch's validations are mostly of one
 * entry, so it spares them an xarray lookup each.
 */
int kfdpool_import_locked(struct kfdpool_file *pf, struct kfdpool_import *imp,
			  struct kfdpool_fd_out *fdo, u32 *held)
{
	struct kfdpool_entry *entry;
	struct kfdpool_rec *rec;
	int ret;

	rec = kfdpool_rec_lookup(pf->pool, &imp->record);
	if (IS_ERR(rec))
		return PTR_ERR(rec);
	entry = rec->entry;
	if (imp->flags & KFDPOOL_IMPORT_VALIDATE) {
		if (!held || *held != entry->id) {
			if (!xa_load(&pf->imports, entry->id))
				return -ENXIO;
			if (held)
				*held = entry->id;
		}
	} else {
		ret = kfdpool_import_get(pf, entry);
		if (ret)
			return ret;
		/* From now on the entry may outlive the pool's use of it. */
		entry->handed_out = true;
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
	return 0;
}

/**
 * kfdpool_do_import() - validate a record and import its entry
 * @pf: the pool file the record is presented to (any mode)
 * @imp: the element; outputs are filled on success
 * @fdo: see kfdpool_import_locked()
 *
 * Return: 0 or -errno.
 */
int kfdpool_do_import(struct kfdpool_file *pf, struct kfdpool_import *imp,
		      struct kfdpool_fd_out *fdo)
{
	int ret = kfdpool_import_prep(pf, imp);

	if (ret)
		return ret;
	mutex_lock(&pf->pool->lock);
	ret = kfdpool_import_locked(pf, imp, fdo, NULL);
	mutex_unlock(&pf->pool->lock);
	return ret;
}

int kfdpool_release_prep(const struct kfdpool_release *rel)
{
	return rel->flags || rel->pad ? -EINVAL : 0;
}

int kfdpool_release_locked(struct kfdpool_file *pf,
			   const struct kfdpool_release *rel)
{
	return kfdpool_import_put(pf, rel->entry_id);
}

int kfdpool_do_release(struct kfdpool_file *pf, struct kfdpool_release *rel)
{
	int ret = kfdpool_release_prep(rel);

	if (ret)
		return ret;
	mutex_lock(&pf->pool->lock);
	ret = kfdpool_release_locked(pf, rel);
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
