// SPDX-License-Identifier: GPL-2.0-only
/*
 * Records: EXPORT, REVOKE, IMPORT, RELEASE.  Each command is two halves
 * so that a batch takes the pool's lock once for many elements: *_prep()
 * checks what needs no lock, *_locked() does the rest under pool->lock;
 * kfdpool_do_*() run both for one element.
 */
#include <crypto/algapi.h>
#include <linux/dma-buf.h>
#include <linux/siphash.h>

#include "kfdpool.h"

#define KFDPOOL_RECORD_MAGIC	0x6b667052	/* "Rpfk" */

/* The bytes of a record (docs/uapi.md): the module's, not ABI. */
struct kfdpool_record_fmt {
	u8 pool_id[KFDPOOL_ID_LEN];
	u32 magic;
	u32 record_id;
	u32 entry_id;
	u32 generation;
	u64 offset;
	u64 size;
	u8 nonce[KFDPOOL_NONCE_LEN];
};

static_assert(sizeof(struct kfdpool_record_fmt) == KFDPOOL_RECORD_SIZE);

/*
 * The nonce of record (@id, @generation): SipHash under each of the pool's
 * two keys.  (@id, @generation) never repeats in a pool, so neither does a
 * nonce, and nobody without the keys can make one.
 */
static void kfdpool_rec_nonce(const struct kfdpool_pool *pool, u32 id,
			      u64 generation, u8 nonce[KFDPOOL_NONCE_LEN])
{
	u64 half[2];
	int i;

	for (i = 0; i < 2; i++)
		half[i] = siphash_3u32(id, lower_32_bits(generation),
				       upper_32_bits(generation),
				       &pool->nonce_key[i]);
	memcpy(nonce, half, sizeof(half));
	memzero_explicit(half, sizeof(half));
}

/* Free a live record; pool->lock held. */
void kfdpool_rec_free(struct kfdpool_pool *pool, struct kfdpool_rec *rec)
{
	struct kfdpool_entry *entry = rec->entry;

	kfdpool_reclist_del(&pool->records, &entry->records, rec);
	if (!--entry->nr_records)
		pool->used -= entry->size;
	pool->nr_records--;
	kfdpool_records_uncharge(pool->user, 1);
	kfdpool_rectab_put(&pool->records, rec);
}

/* Checks that need no lock: what kind of record, and whose. */
static int kfdpool_rec_precheck(struct kfdpool_pool *pool,
				const struct kfdpool_record *r)
{
	u32 magic;

	memcpy(&magic, r->data + offsetof(struct kfdpool_record_fmt, magic),
	       sizeof(magic));
	if (magic != KFDPOOL_RECORD_MAGIC)
		return -EINVAL;
	if (memcmp(r->data, pool->id, sizeof(pool->id)))
		return -EXDEV;
	return 0;
}

/*
 * The live record @r stands for; pool->lock held.  Every field must be
 * what the kernel stored; the nonce is compared in constant time.
 */
static struct kfdpool_rec *kfdpool_rec_lookup(struct kfdpool_pool *pool,
					      const struct kfdpool_record *r)
{
	struct kfdpool_record_fmt f;
	struct kfdpool_rec *rec;

	memcpy(&f, r->data, sizeof(f));
	rec = kfdpool_rectab_find(&pool->records, f.record_id);
	if (!rec || rec->entry->state != KFDPOOL_ENTRY_LIVE)
		return ERR_PTR(-ENOENT);
	if (rec->generation != f.generation)
		return ERR_PTR(-ESTALE);
	if (rec->entry->id != f.entry_id || rec->offset != f.offset ||
	    rec->size != f.size ||
	    crypto_memneq(rec->nonce, f.nonce, sizeof(rec->nonce)))
		return ERR_PTR(-ENOENT);
	return rec;
}

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

/* Make the record of @e; pool->lock held.  0 or -errno. */
int kfdpool_export_locked(struct kfdpool_file *pf, struct kfdpool_export *e)
{
	struct kfdpool_pool *pool = pf->pool;
	struct kfdpool_record_fmt f;
	struct kfdpool_entry *entry;
	struct kfdpool_rec *rec;
	int ret;

	entry = xa_load(&pool->entries, e->entry_id);
	if (!entry || entry->state != KFDPOOL_ENTRY_LIVE)
		return -ENOENT;
	if (e->offset > entry->size || e->size > entry->size - e->offset)
		return -EINVAL;
	if (pool->nr_records >= KFDPOOL_MAX_RECORDS)
		return -ENOSPC;
	ret = kfdpool_records_charge(pool->user);
	if (ret)
		return ret;
	rec = kfdpool_rectab_get(&pool->records);
	if (IS_ERR(rec)) {
		kfdpool_records_uncharge(pool->user, 1);
		return PTR_ERR(rec);
	}
	kfdpool_rec_nonce(pool, rec->id, ++pool->generation, rec->nonce);
	rec->generation = lower_32_bits(pool->generation);
	rec->entry = entry;
	rec->offset = e->offset;
	rec->size = e->size;
	kfdpool_reclist_add(&pool->records, &entry->records, rec);
	if (!entry->nr_records++) {
		pool->used += entry->size;
		pool->used_high = max(pool->used_high, pool->used);
	}
	pool->nr_records++;

	memcpy(f.pool_id, pool->id, sizeof(f.pool_id));
	f.magic = KFDPOOL_RECORD_MAGIC;
	f.record_id = rec->id;
	f.entry_id = entry->id;
	f.generation = rec->generation;
	f.offset = rec->offset;
	f.size = rec->size;
	memcpy(f.nonce, rec->nonce, sizeof(f.nonce));
	memcpy(e->record.data, &f, sizeof(f));
	return 0;
}

int kfdpool_do_export(struct kfdpool_file *pf, struct kfdpool_export *e)
{
	int ret = kfdpool_export_prep(pf, e) ?: kfdpool_lock(pf);

	if (ret)
		return ret;
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
	int ret = kfdpool_revoke_prep(pf, r) ?: kfdpool_lock(pf);

	if (ret)
		return ret;
	ret = kfdpool_revoke_locked(pf, r);
	mutex_unlock(&pf->pool->lock);
	return ret;
}

/* The import's fd could not be handed out: drop the import it counted. */
static void kfdpool_import_undo(struct kfdpool_fd_out *fdo)
{
	if (kfdpool_lock(fdo->pfile))
		return;
	kfdpool_import_put(fdo->pfile, fdo->entry_id);
	mutex_unlock(&fdo->pfile->pool->lock);
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
 * entry: @fdo then holds a reference to the whole dma-buf, whatever the
 * record's offset and size, for the caller to install after its copy
 * back.  pool->lock held.  0 or -errno.
 *
 * @held, when not NULL, caches for one lock hold an entry id @pf holds an
 * import of: a batch's validations are mostly of one entry.
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

int kfdpool_do_import(struct kfdpool_file *pf, struct kfdpool_import *imp,
		      struct kfdpool_fd_out *fdo)
{
	int ret = kfdpool_import_prep(pf, imp) ?: kfdpool_lock(pf);

	if (ret)
		return ret;
	ret = kfdpool_import_locked(pf, imp, fdo, NULL);
	mutex_unlock(&pf->pool->lock);
	return ret;
}

int kfdpool_release_prep(const struct kfdpool_release *rel)
{
	return rel->flags || rel->pad ? -EINVAL : 0;
}

int kfdpool_do_release(struct kfdpool_file *pf, struct kfdpool_release *rel)
{
	int ret = kfdpool_release_prep(rel) ?: kfdpool_lock(pf);

	if (ret)
		return ret;
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

/* REVOKE and RELEASE copy nothing back: nothing can fail after them. */
long kfdpool_ioctl_revoke(struct file *file, void *data,
			  struct kfdpool_fd_out *fdo)
{
	return kfdpool_do_revoke(file->private_data, data);
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
	return kfdpool_do_release(file->private_data, data);
}
