// SPDX-License-Identifier: GPL-2.0-only
/*
 * Records and EXPORT, REVOKE, IMPORT.  A pool's table keeps records by id in
 * pages of 73 (an xarray of slab objects costs more, docs/kernel.md), its lists
 * linking ids, not pointers, for a 56-byte record.  A freed slot keeps its id
 * and is reused first, so a revoked id comes back with a new generation
 * (-ESTALE).  An empty page is freed, but for one spare.  A page stays while
 * one record of it lives, so the user is charged its pages, not only its
 * records.  *_prep() checks what needs no lock, *_locked() does the rest under
 * pool->lock: a batch locks once.
 */
#include <crypto/algapi.h>
#include <linux/dma-buf.h>
#include <linux/mm.h>
#include <linux/nospec.h>
#include <linux/siphash.h>
#include <linux/slab.h>

#include "kfdpool.h"

static struct kmem_cache *kfdpool_rec_page_cache;

int kfdpool_rec_cache_init(void)
{
	BUILD_BUG_ON(sizeof(struct kfdpool_rec) != 56);
	BUILD_BUG_ON(KFDPOOL_RECS_PER_PAGE != 73);
	BUILD_BUG_ON(KFDPOOL_RECS_PER_PAGE - 1 > KFDPOOL_RECTAB_MASK);
	BUILD_BUG_ON((u64)KFDPOOL_RECTAB_PAGES << KFDPOOL_RECTAB_SHIFT > U32_MAX);
	kfdpool_rec_page_cache =
		kmem_cache_create("kfdpool_recs", KFDPOOL_RECS_PER_PAGE *
				  sizeof(struct kfdpool_rec), 0, SLAB_ACCOUNT,
				  NULL);
	return kfdpool_rec_page_cache ? 0 : -ENOMEM;
}

void kfdpool_rec_cache_exit(void)
{
	kmem_cache_destroy(kfdpool_rec_page_cache);
}

/* The pool ended: free the table, live records and all. */
void kfdpool_rectab_destroy(struct kfdpool_pool *pool)
{
	struct kfdpool_rectab *t = &pool->records;
	u32 i;

	for (i = 0; i < t->nr_dir; i++) {
		if (!t->dir[i].recs)
			continue;
		kmem_cache_free(kfdpool_rec_page_cache, t->dir[i].recs);
		kfdpool_rec_pages_uncharge(pool->user);
	}
	kvfree(t->dir);
	t->dir = NULL;
	t->nr_dir = 0;
	t->nr_pages = 0;
}

static int kfdpool_rectab_grow_dir(struct kfdpool_rectab *t, u32 idx,
				   gfp_t gfp)
{
	u32 n = max(t->nr_dir * 2, 4u);
	struct kfdpool_rec_page *dir;

	if (idx < t->nr_dir)
		return 0;
	n = min_t(u32, n, KFDPOOL_RECTAB_PAGES);
	dir = kvcalloc(n, sizeof(*dir), gfp);
	if (!dir)
		return -ENOMEM;
	if (t->nr_dir)
		memcpy(dir, t->dir, t->nr_dir * sizeof(*dir));
	kvfree(t->dir);
	t->dir = dir;
	t->nr_dir = n;
	return 0;
}

/*
 * Called with no free slot.  An UNPIN freeing its records a batch at a time
 * may leave the table full meanwhile: -ENOSPC, as for a full pool.  -EDQUOT:
 * the user's pages are at their cap.
 */
static int kfdpool_rectab_add_page(struct kfdpool_pool *pool, gfp_t gfp)
{
	struct kfdpool_rectab *t = &pool->records;
	struct kfdpool_rec *recs;
	u32 idx = t->hole, i;

	while (idx < t->nr_dir && t->dir[idx].recs)
		idx++;
	if (idx >= KFDPOOL_RECTAB_PAGES)
		return -ENOSPC;
	if (kfdpool_rectab_grow_dir(t, idx, gfp))
		return -ENOMEM;
	if (kfdpool_rec_pages_charge(pool->user))
		return -EDQUOT;
	recs = kmem_cache_alloc(kfdpool_rec_page_cache, gfp);
	if (!recs) {
		kfdpool_rec_pages_uncharge(pool->user);
		return -ENOMEM;
	}
	/* The free list is empty: it becomes the page's slots, in order. */
	for (i = 0; i < KFDPOOL_RECS_PER_PAGE; i++) {
		recs[i].entry = NULL;
		recs[i].id = (idx << KFDPOOL_RECTAB_SHIFT | i) + 1;
		recs[i].prev = i ? recs[i].id - 1 : 0;
		recs[i].next = i + 1 < KFDPOOL_RECS_PER_PAGE ? recs[i].id + 1 : 0;
	}
	t->free = recs[0].id;
	t->dir[idx].recs = recs;
	t->dir[idx].nr_live = 0;
	t->nr_pages++;
	t->spare = idx;
	t->hole = idx + 1;
	return 0;
}

static struct kfdpool_rec_page *kfdpool_rectab_page(struct kfdpool_rectab *t,
						    const struct kfdpool_rec *rec)
{
	return &t->dir[(rec->id - 1) >> KFDPOOL_RECTAB_SHIFT];
}

/* The slot of record id @id, taken from a list (not checked). */
static struct kfdpool_rec *kfdpool_rectab_slot(struct kfdpool_rectab *t,
					       u32 id)
{
	u32 n = id - 1;

	return &t->dir[n >> KFDPOOL_RECTAB_SHIFT].recs[n & KFDPOOL_RECTAB_MASK];
}

/* Put @rec at the head of list @head (its first record's id, or 0). */
static void kfdpool_reclist_add(struct kfdpool_rectab *t, u32 *head,
				struct kfdpool_rec *rec)
{
	rec->prev = 0;
	rec->next = *head;
	if (*head)
		kfdpool_rectab_slot(t, *head)->prev = rec->id;
	*head = rec->id;
}

static void kfdpool_reclist_del(struct kfdpool_rectab *t, u32 *head,
				struct kfdpool_rec *rec)
{
	if (rec->prev)
		kfdpool_rectab_slot(t, rec->prev)->next = rec->next;
	else
		*head = rec->next;
	if (rec->next)
		kfdpool_rectab_slot(t, rec->next)->prev = rec->prev;
}

/* A free slot for a new record (live once its entry is set), or ERR_PTR. */
static struct kfdpool_rec *kfdpool_rectab_get(struct kfdpool_pool *pool,
					      gfp_t gfp)
{
	struct kfdpool_rectab *t = &pool->records;
	struct kfdpool_rec_page *page;
	struct kfdpool_rec *rec;
	int ret;

	if (!t->free) {
		ret = kfdpool_rectab_add_page(pool, gfp);
		if (ret)
			return ERR_PTR(ret);
	}
	rec = kfdpool_rectab_slot(t, t->free);
	kfdpool_reclist_del(t, &t->free, rec);
	page = kfdpool_rectab_page(t, rec);
	if (!page->nr_live++ && t->spare == page - t->dir)
		t->spare = KFDPOOL_RECTAB_NONE;
	return rec;
}

/* Give back @page, none of whose records is live. */
static void kfdpool_rectab_free_page(struct kfdpool_pool *pool,
				     struct kfdpool_rec_page *page)
{
	struct kfdpool_rectab *t = &pool->records;
	u32 i, idx = page - t->dir;

	for (i = 0; i < KFDPOOL_RECS_PER_PAGE; i++)
		kfdpool_reclist_del(t, &t->free, &page->recs[i]);
	kmem_cache_free(kfdpool_rec_page_cache, page->recs);
	kfdpool_rec_pages_uncharge(pool->user);
	page->recs = NULL;
	t->nr_pages--;
	t->hole = min(t->hole, idx);
}

/* Free the slot of live record @rec. */
static void kfdpool_rectab_put(struct kfdpool_pool *pool,
			       struct kfdpool_rec *rec)
{
	struct kfdpool_rectab *t = &pool->records;
	struct kfdpool_rec_page *page = kfdpool_rectab_page(t, rec);

	rec->entry = NULL;
	kfdpool_reclist_add(t, &t->free, rec);
	if (--page->nr_live)
		return;
	if (t->spare == KFDPOOL_RECTAB_NONE) {
		t->spare = page - t->dir;
		return;
	}
	kfdpool_rectab_free_page(pool, page);
}

/* The live record of id @id, from user space, or NULL. */
static struct kfdpool_rec *kfdpool_rectab_find(struct kfdpool_rectab *t,
					       u32 id)
{
	u32 page = (id - 1) >> KFDPOOL_RECTAB_SHIFT;	/* id 0 wraps */
	u32 slot = (id - 1) & KFDPOOL_RECTAB_MASK;
	struct kfdpool_rec *recs, *rec;

	if (page >= t->nr_dir || slot >= KFDPOOL_RECS_PER_PAGE)
		return NULL;
	recs = t->dir[array_index_nospec(page, t->nr_dir)].recs;
	if (!recs)
		return NULL;
	rec = &recs[array_index_nospec(slot, KFDPOOL_RECS_PER_PAGE)];
	return rec->entry ? rec : NULL;
}

/* Free up to @n records of list *@dead (an unpinned entry's). */
void kfdpool_recs_put(struct kfdpool_pool *pool, u32 *dead, unsigned int n)
{
	struct kfdpool_rec *rec;

	while (n-- && *dead) {
		rec = kfdpool_rectab_slot(&pool->records, *dead);
		*dead = rec->next;
		kfdpool_rectab_put(pool, rec);
	}
}

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
} __packed;

static_assert(sizeof(struct kfdpool_record_fmt) == KFDPOOL_RECORD_SIZE);

/*
 * (@id, @generation) never repeats in a pool, so neither does its nonce, and
 * nobody without the pool's two SipHash keys can make one.
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
static void kfdpool_rec_free(struct kfdpool_pool *pool,
			     struct kfdpool_rec *rec)
{
	struct kfdpool_entry *entry = rec->entry;

	kfdpool_reclist_del(&pool->records, &entry->records, rec);
	if (!--entry->nr_records)
		pool->used -= entry->size;
	pool->nr_records--;
	kfdpool_records_uncharge(pool->user, 1);
	kfdpool_rectab_put(pool, rec);
}

static int kfdpool_rec_precheck(struct kfdpool_pool *pool,
				const struct kfdpool_record *r)
{
	const struct kfdpool_record_fmt *f = (const void *)r->data;

	if (f->magic != KFDPOOL_RECORD_MAGIC)
		return -EINVAL;
	if (memcmp(r->data, pool->id, sizeof(pool->id)))
		return -EXDEV;
	return 0;
}

/* The live record @r names, every field as stored; pool->lock held. */
static struct kfdpool_rec *kfdpool_rec_lookup(struct kfdpool_pool *pool,
					      const struct kfdpool_record *r)
{
	const struct kfdpool_record_fmt *f = (const void *)r->data;
	struct kfdpool_rec *rec;

	rec = kfdpool_rectab_find(&pool->records, f->record_id);
	if (!rec || rec->entry->state != KFDPOOL_ENTRY_LIVE)
		return ERR_PTR(-ENOENT);
	if (rec->generation != f->generation)
		return ERR_PTR(-ESTALE);
	if (rec->entry->id != f->entry_id || rec->offset != f->offset ||
	    rec->size != f->size ||
	    crypto_memneq(rec->nonce, f->nonce, sizeof(rec->nonce)))
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

int kfdpool_export_locked(struct kfdpool_file *pf, struct kfdpool_export *e,
			  gfp_t gfp)
{
	struct kfdpool_pool *pool = pf->pool;
	struct kfdpool_record_fmt *f;
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
	rec = kfdpool_rectab_get(pool, gfp);
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

	f = (void *)e->record.data;
	memcpy(f->pool_id, pool->id, sizeof(f->pool_id));
	f->magic = KFDPOOL_RECORD_MAGIC;
	f->record_id = rec->id;
	f->entry_id = entry->id;
	f->generation = rec->generation;
	f->offset = rec->offset;
	f->size = rec->size;
	memcpy(f->nonce, rec->nonce, sizeof(f->nonce));
	return 0;
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
 * Without KFDPOOL_IMPORT_VALIDATE, @fdo gets the entry's whole dma-buf,
 * whatever the record's offset and size.  @held, if not NULL, caches an entry
 * @pf imports for one lock hold (a batch validates mostly one entry).
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
