// SPDX-License-Identifier: GPL-2.0-only
/*
 * A pool's record table: its export records by id, kept in pages of
 * records.
 *
 * Record id N names slot (N - 1) % 128 of page (N - 1) / 128 of the table
 * (0 names no record).  A page holds KFDPOOL_RECS_PER_PAGE (73) records, so
 * ids are not dense: slots 73 to 127 of a page name nothing.  A shift and a
 * mask rather than a division by 73 are a few instructions of every
 * record presented and of every link followed.
 * Finding a record is an index into the directory and one into the page;
 * taking and giving back a slot is a list operation.  An xarray of records
 * from a slab cache cost an export ~500 instructions in xa_alloc_cyclic()
 * and ~150 in the cache, every presentation ~100 in xa_load(), and each
 * record ~9 bytes of xarray nodes on top of its 64.
 *
 * A record is on one list at a time, linked by record ids (rec->next,
 * rec->prev; 0 ends a list): its entry's while live, an unpinned entry's
 * dead records until teardown frees them, or the free slots.  Ids rather
 * than pointers keep a record at 56 bytes, 73 to a page; following a link
 * is the same two indexes as finding a record.
 *
 * A slot is live while its rec->entry is set.  Free slots are on
 * t->free, last freed first, and keep their id: a
 * revoked record's slot comes back at the next export, and whoever still
 * presents the revoked record meets a different generation (-ESTALE; a
 * free slot answers -ENOENT).  A page whose records are all free goes
 * back to the slab, but for one such page kept, so that a pool that
 * exports and revokes around a page boundary does not allocate a page
 * each time.  The directory only grows (16 bytes per page of records).
 *
 * Everything here runs under the pool's lock.
 */
#include <linux/mm.h>
#include <linux/nospec.h>
#include <linux/slab.h>

#include "kfdpool.h"

static struct kmem_cache *kfdpool_rec_page_cache;

int kfdpool_rec_cache_init(void)
{
	/*
	 * Issue 14's bound on kernel memory per record is 64 bytes, the
	 * directory's 16 bytes a page included: 56 + 16 / 73.
	 */
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

void kfdpool_rectab_init(struct kfdpool_rectab *t)
{
	memset(t, 0, sizeof(*t));
	t->spare = KFDPOOL_RECTAB_NONE;
}

/* Free the table of a pool with no live records. */
void kfdpool_rectab_destroy(struct kfdpool_rectab *t)
{
	u32 i;

	for (i = 0; i < t->nr_dir; i++) {
		if (!t->dir[i].recs)
			continue;
		WARN_ON_ONCE(t->dir[i].nr_live);
		kmem_cache_free(kfdpool_rec_page_cache, t->dir[i].recs);
	}
	kvfree(t->dir);
	t->dir = NULL;
	t->nr_dir = 0;
	t->nr_pages = 0;
}

/* Make the directory room for page @idx.  0 or -ENOMEM. */
static int kfdpool_rectab_grow_dir(struct kfdpool_rectab *t, u32 idx)
{
	u32 n = max(t->nr_dir * 2, 4u);
	struct kfdpool_rec_page *dir;

	if (idx < t->nr_dir)
		return 0;
	n = min_t(u32, n, KFDPOOL_RECTAB_PAGES);
	dir = kvcalloc(n, sizeof(*dir), GFP_KERNEL_ACCOUNT);
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
 * Put a new page of free slots at the lowest empty place of the
 * directory.  Only called with no free slot, so every allocated page is
 * full.  Live records stay under KFDPOOL_MAX_RECORDS, but the records of
 * an unpinned entry keep their slots until its teardown frees them, a
 * batch at a time with the lock dropped in between: an export meanwhile
 * may find the table full (-ENOSPC, as for a full pool).  0 or -errno.
 */
static int kfdpool_rectab_add_page(struct kfdpool_rectab *t)
{
	struct kfdpool_rec *recs;
	u32 idx = t->hole, i;

	while (idx < t->nr_dir && t->dir[idx].recs)
		idx++;
	if (idx >= KFDPOOL_RECTAB_PAGES)
		return -ENOSPC;
	if (kfdpool_rectab_grow_dir(t, idx))
		return -ENOMEM;
	recs = kmem_cache_alloc(kfdpool_rec_page_cache, GFP_KERNEL_ACCOUNT);
	if (!recs)
		return -ENOMEM;
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

/**
 * kfdpool_rectab_slot() - the slot of a record id on one of the table's
 *	lists
 * @t: the pool's table
 * @id: the id, taken from a list (not from user space: not checked)
 *
 * Return: the record, live or not.
 */
struct kfdpool_rec *kfdpool_rectab_slot(struct kfdpool_rectab *t, u32 id)
{
	u32 n = id - 1;

	return &t->dir[n >> KFDPOOL_RECTAB_SHIFT].recs[n & KFDPOOL_RECTAB_MASK];
}

/**
 * kfdpool_reclist_add() - put a record at the head of a list
 * @t: the pool's table
 * @head: the list: the id of its first record, 0 when empty
 * @rec: the record, on no list
 */
void kfdpool_reclist_add(struct kfdpool_rectab *t, u32 *head,
			 struct kfdpool_rec *rec)
{
	rec->prev = 0;
	rec->next = *head;
	if (*head)
		kfdpool_rectab_slot(t, *head)->prev = rec->id;
	*head = rec->id;
}

/**
 * kfdpool_reclist_del() - take a record off its list
 * @t: the pool's table
 * @head: the list @rec is on
 * @rec: the record
 */
void kfdpool_reclist_del(struct kfdpool_rectab *t, u32 *head,
			 struct kfdpool_rec *rec)
{
	if (rec->prev)
		kfdpool_rectab_slot(t, rec->prev)->next = rec->next;
	else
		*head = rec->next;
	if (rec->next)
		kfdpool_rectab_slot(t, rec->next)->prev = rec->prev;
}

/**
 * kfdpool_rectab_get() - take a free slot for a new record
 * @t: the pool's table
 *
 * Return: the record, its id set and everything else the caller's to
 * fill (it is live once its entry is set), or an ERR_PTR().
 */
struct kfdpool_rec *kfdpool_rectab_get(struct kfdpool_rectab *t)
{
	struct kfdpool_rec_page *page;
	struct kfdpool_rec *rec;
	int ret;

	if (!t->free) {
		ret = kfdpool_rectab_add_page(t);
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
static void kfdpool_rectab_free_page(struct kfdpool_rectab *t,
				     struct kfdpool_rec_page *page)
{
	u32 i, idx = page - t->dir;

	for (i = 0; i < KFDPOOL_RECS_PER_PAGE; i++)
		kfdpool_reclist_del(t, &t->free, &page->recs[i]);
	kmem_cache_free(kfdpool_rec_page_cache, page->recs);
	page->recs = NULL;
	t->nr_pages--;
	t->hole = min(t->hole, idx);
}

/**
 * kfdpool_rectab_put() - free the slot of a record no pool counts any more
 * @t: the pool's table
 * @rec: the record (live)
 */
void kfdpool_rectab_put(struct kfdpool_rectab *t, struct kfdpool_rec *rec)
{
	struct kfdpool_rec_page *page = kfdpool_rectab_page(t, rec);

	rec->entry = NULL;
	kfdpool_reclist_add(t, &t->free, rec);
	if (--page->nr_live)
		return;
	if (t->spare == KFDPOOL_RECTAB_NONE) {
		t->spare = page - t->dir;
		return;
	}
	kfdpool_rectab_free_page(t, page);
}

/**
 * kfdpool_rectab_find() - the live record of an id
 * @t: the pool's table
 * @id: a record id from user space
 *
 * Return: the record, or NULL when @id names no live one.
 */
struct kfdpool_rec *kfdpool_rectab_find(struct kfdpool_rectab *t, u32 id)
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
