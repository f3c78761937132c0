// SPDX-License-Identifier: GPL-2.0-only
/*
 * Entries: PIN, UNPIN, and the imports that keep an unpinned entry draining.
 * A live entry holds its dma-buf and counts against the pool's limit (and a
 * persistent pool's bytes); an unpinned one holds neither, only the figures
 * of the importers' own references until they release it.
 */
#include <linux/dma-buf.h>
#include <linux/sched.h>
#include <linux/slab.h>

#include "kfdpool.h"

static int kfdpool_dmabuf_cmp(const void *key, const struct rb_node *n)
{
	const struct dma_buf *d = rb_entry(n, struct kfdpool_entry, node)->dmabuf;

	return key < (const void *)d ? -1 : key > (const void *)d;
}

static bool kfdpool_entry_less(struct rb_node *a, const struct rb_node *b)
{
	return rb_entry(a, struct kfdpool_entry, node)->dmabuf <
	       rb_entry(b, struct kfdpool_entry, node)->dmabuf;
}

/**
 * kfdpool_entry_add_locked() - add a live entry
 * @pool: the pool
 * @entry: the entry, its dma-buf, size and cookie set
 * @pinned: a PIN's: checked and charged here; else ALLOC's, charged
 *	already in pool->charging
 *
 * Context: pool->lock held.
 * Return: 0, -EEXIST, -ENOSPC, -EDQUOT or -ENOMEM.
 */
int kfdpool_entry_add_locked(struct kfdpool_pool *pool,
			     struct kfdpool_entry *entry, bool pinned)
{
	int ret;

	if (pinned && rb_find(entry->dmabuf, &pool->dmabufs,
			      kfdpool_dmabuf_cmp))
		return -EEXIST;
	if (pool->nr_entries >= READ_ONCE(kfdpool_max_entries) ||
	    (pinned && !kfdpool_pool_fits(pool, entry->size)))
		return -ENOSPC;
	ret = pinned ? kfdpool_persist_charge(pool, entry->size) : 0;
	if (ret)
		return ret;
	ret = xa_alloc_cyclic(&pool->entries, &entry->id, entry,
			      XA_LIMIT(1, U32_MAX), &pool->next_entry,
			      GFP_KERNEL_ACCOUNT);
	if (ret < 0) {
		/* ALLOC's persistent bytes are its own to return. */
		if (pinned)
			kfdpool_persist_uncharge(pool, entry->size);
		return ret;
	}
	if (!pinned)
		pool->charging -= entry->size;
	entry->state = KFDPOOL_ENTRY_LIVE;
	rb_add(&entry->node, &pool->dmabufs, kfdpool_entry_less);
	pool->reserved += entry->size;
	pool->reserved_high = max(pool->reserved_high, pool->reserved);
	pool->nr_entries++;
	return 0;
}

long kfdpool_ioctl_pin(struct file *file, unsigned int nr, void *data,
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
	ret = -ENOMEM;
	entry = kzalloc(sizeof(*entry), GFP_KERNEL_ACCOUNT);
	if (!entry)
		goto err;
	entry->dmabuf = dmabuf;
	entry->size = dmabuf->size;
	entry->cookie = args->cookie;

	ret = kfdpool_lock(pf);
	if (ret)
		goto err;
	ret = kfdpool_entry_add_locked(pool, entry, true);
	/* Read under the lock: an UNPIN may free it once unlocked. */
	if (!ret) {
		args->entry_id = entry->id;
		args->size = entry->size;
	}
	mutex_unlock(&pool->lock);
	if (ret)
		goto err;

	fdo->undo = kfdpool_pin_undo;
	fdo->pfile = pf;
	fdo->entry_id = args->entry_id;
	fdo->dmabuf = dmabuf;
	return 0;

err:
	kfree(entry);
	dma_buf_put(dmabuf);
	return ret;
}

/*
 * Live @entry stops counting against the pool and lets go of its dma-buf:
 * what importers hold, their own references keep.  pool->lock held.
 */
static void kfdpool_entry_let_go(struct kfdpool_pool *pool,
				 struct kfdpool_entry *entry)
{
	rb_erase(&entry->node, &pool->dmabufs);
	pool->reserved -= entry->size;
	kfdpool_persist_uncharge(pool, entry->size);
	/* The final fput, if this is it, runs later from task work. */
	dma_buf_put(entry->dmabuf);
	entry->dmabuf = NULL;
}

/* Free @entry, whatever its records and holders; pool->lock held. */
static void kfdpool_entry_free(struct kfdpool_pool *pool,
			       struct kfdpool_entry *entry)
{
	xa_erase(&pool->entries, entry->id);
	if (entry->state == KFDPOOL_ENTRY_LIVE) {
		kfdpool_entry_let_go(pool, entry);
	} else {
		pool->nr_draining--;
		pool->draining -= entry->size;
	}
	pool->nr_entries--;
	kfree(entry);
}

/*
 * Unpin @entry: it stops counting against the pool and lets go of its
 * dma-buf, its records are freed a batch per lock hold, then it is freed,
 * or left draining while files import it (return 1).  pool->lock held; if a
 * DESTROY ends the pool in a gap, the pool's end frees the rest.
 */
static u32 kfdpool_entry_unpin(struct kfdpool_pool *pool,
			       struct kfdpool_entry *entry, u32 *revoked)
{
	u32 n = entry->nr_records, dead = entry->records;

	if (n)
		pool->used -= entry->size;
	entry->records = 0;
	entry->nr_records = 0;
	pool->nr_records -= n;
	kfdpool_records_uncharge(pool->user, n);
	kfdpool_entry_let_go(pool, entry);
	entry->state = KFDPOOL_ENTRY_UNPINNING;
	pool->nr_draining++;
	pool->draining += entry->size;
	if (revoked)
		*revoked = n;

	while (dead) {
		kfdpool_recs_put(pool, &dead, KFDPOOL_TEARDOWN_BATCH);
		if (!dead)
			break;
		mutex_unlock(&pool->lock);
		cond_resched();
		mutex_lock(&pool->lock);
		if (pool->ended)
			return 0;
	}
	if (entry->holders) {
		entry->state = KFDPOOL_ENTRY_DRAINING;
		return 1;
	}
	kfdpool_entry_free(pool, entry);
	return 0;
}

/* The pinner never learnt of the entry: unpin it if it is still that pin. */
void kfdpool_pin_undo(struct kfdpool_fd_out *fdo)
{
	struct kfdpool_pool *pool = fdo->pfile->pool;
	struct kfdpool_entry *entry;

	if (kfdpool_lock(fdo->pfile))
		return;
	entry = xa_load(&pool->entries, fdo->entry_id);
	if (entry && entry->state == KFDPOOL_ENTRY_LIVE &&
	    entry->dmabuf == fdo->dmabuf)
		kfdpool_entry_unpin(pool, entry, NULL);
	mutex_unlock(&pool->lock);
}

long kfdpool_ioctl_unpin(struct file *file, unsigned int nr, void *data,
			 struct kfdpool_fd_out *fdo)
{
	struct kfdpool_unpin *args = data;
	struct kfdpool_file *pf = file->private_data;
	struct kfdpool_pool *pool = pf->pool;
	struct kfdpool_entry *entry;
	int ret;

	if (pf->mode != KFDPOOL_MODE_OWNER)
		return -EPERM;
	if (args->flags)
		return -EINVAL;
	ret = kfdpool_lock(pf);
	if (ret)
		return ret;
	entry = xa_load(&pool->entries, args->entry_id);
	if (entry && entry->state == KFDPOOL_ENTRY_LIVE)
		args->draining = kfdpool_entry_unpin(pool, entry,
						     &args->revoked);
	else
		ret = -ENOENT;
	mutex_unlock(&pool->lock);
	return ret;
}

/* One more import of @entry by @pf: 0, -ENOMEM or -EOVERFLOW.  Locked. */
int kfdpool_import_get(struct kfdpool_file *pf, struct kfdpool_entry *entry)
{
	struct kfdpool_pool *pool = pf->pool;
	unsigned long n = xa_to_value(xa_load(&pf->imports, entry->id) ?:
				      xa_mk_value(0));
	void *old;

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
	struct kfdpool_entry *entry = xa_load(&pool->entries, id);

	xa_erase(&pf->imports, id);
	if (WARN_ON(!entry))
		return;
	entry->holders--;
	pf->nr_imports--;
	pf->imported -= entry->size;
	pool->imported -= entry->size;
	if (!entry->holders && entry->state == KFDPOOL_ENTRY_DRAINING)
		kfdpool_entry_free(pool, entry);
}

/* One import of entry @entry_id by @pf less: 0 or -ENOENT.  Locked. */
int kfdpool_import_put(struct kfdpool_file *pf, u32 entry_id)
{
	void *v = xa_load(&pf->imports, entry_id);

	if (!v)
		return -ENOENT;
	if (xa_to_value(v) == 1)
		kfdpool_import_drop(pf, entry_id);
	else	/* replacing a present slot allocates nothing */
		xa_store(&pf->imports, entry_id, xa_mk_value(xa_to_value(v) - 1),
			 GFP_NOWAIT);
	return 0;
}

/*
 * @pf is closing: drop its imports, a batch per lock hold.  pool->lock
 * held; if the pool ends while it is dropped, nothing is left to drop.
 */
void kfdpool_file_drop_imports(struct kfdpool_file *pf)
{
	unsigned int n = 0;
	unsigned long id;
	void *v;

	xa_for_each(&pf->imports, id, v) {
		kfdpool_import_drop(pf, id);
		if (++n % KFDPOOL_TEARDOWN_BATCH)
			continue;
		mutex_unlock(&pf->pool->lock);
		cond_resched();
		mutex_lock(&pf->pool->lock);
		if (pf->pool->ended)
			return;
	}
}

/*
 * The pool ends: free its records and every entry, whatever imports count.
 * pool->lock held, dropped between batches: others see the pool ended.
 */
void kfdpool_pool_free_entries(struct kfdpool_pool *pool)
{
	struct kfdpool_entry *entry;
	unsigned int n = 0;
	unsigned long id;

	kfdpool_records_uncharge(pool->user, pool->nr_records);
	pool->nr_records = 0;
	pool->used = 0;
	kfdpool_rectab_destroy(pool);
	xa_for_each(&pool->entries, id, entry) {
		kfdpool_entry_free(pool, entry);
		if (++n % KFDPOOL_TEARDOWN_BATCH)
			continue;
		mutex_unlock(&pool->lock);
		cond_resched();
		mutex_lock(&pool->lock);
	}
	pool->imported = 0;
}
