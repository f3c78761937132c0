// SPDX-License-Identifier: GPL-2.0-only
/*
 * Host memory from the module itself: KFDPOOL_IOC_ALLOC.
 *
 * A buffer is a shmem file whose pages are all allocated, in the caller's
 * context, before the call returns; the buffer holds a reference on each of
 * its folios and keeps them off the reclaim lists until the dma-buf is
 * released.  The dma-buf is a plain exporter of those pages: an sg table
 * per attachment, CPU access syncs, vmap.  Its mmap() hands the vma to the
 * shmem file itself (as i915 does for its shmem objects), so a mapping holds
 * ordinary page-cache pages, which get_user_pages() accepts; udmabuf, the
 * system heap and drm_gem_shmem map with VM_PFNMAP, which it refuses.
 *
 * One ALLOC, in this order: check the arguments; export an empty buffer
 * (no page yet: the dma-buf is only its identity, which the limits count);
 * charge the kfdpool limits as PIN does (kfdpool_entry_charge_locked());
 * refuse what cannot fit in memory or in the caller's memory cgroup;
 * allocate and charge every page with a mask that fails rather than
 * OOM-kill; add the entry.  A failure at any step undoes the steps before
 * it.  Nobody else can reach the dma-buf before the entry exists: its
 * first fd is handed out after the call.
 *
 * Accounting: ALLOC's memory is charged once, to the pool, its user and
 * the global limit, through the same path as a pinned dma-buf (a later PIN
 * of it in another pool adds nothing to the global and per-user figures),
 * and given back exactly once, when its entry is freed.  The pool handed
 * its fd out, so after UNPIN (or the pool's last close) the entry stays
 * held, still charged, while an fd of the dma-buf (ALLOC's, a dup, an
 * importer's) is open.  A CPU mapping is not counted: it holds the shmem
 * file, not the dma-buf, so that it needs neither the dma-buf nor the
 * module (see Lifetimes); what it alone keeps is counted by the memory
 * cgroup only.
 *
 * Lifetimes: the entry holds one dma-buf reference and the fd another;
 * attachments and importers' fds hold theirs, and the dma-buf holds the
 * module.  The last reference frees the pages and drops the shmem file.  A
 * CPU mapping holds the shmem file, not the dma-buf: it keeps the pages it
 * maps valid after the dma-buf is gone, and needs neither it nor the module.
 *
 * Locking: kfdpool_hostmem.lock protects the attachment list and vaddr.  It
 * nests inside the dma-buf's reservation lock (which the core holds around
 * map, unmap and vmap from 6.2 on) and is never held while taking it.
 */
#include <linux/dma-buf.h>
#include <linux/dma-mapping.h>
#include <linux/file.h>
#include <linux/highmem.h>
#include <linux/memcontrol.h>
#include <linux/mm.h>
#include <linux/pagemap.h>
#include <linux/sched/signal.h>
#include <linux/scatterlist.h>
#include <linux/shmem_fs.h>
#include <linux/slab.h>
#include <linux/swap.h>
#include <linux/vmalloc.h>

#include "kfdpool.h"

#ifdef KFDPOOL_HAVE_FOLIO_BATCH_H
#include <linux/folio_batch.h>
#else
#include <linux/pagevec.h>
#endif

#if !defined(KFDPOOL_HAVE_IOSYS_MAP) && defined(KFDPOOL_HAVE_DMA_BUF_MAP)
/* The same structure under its earlier name. */
#define iosys_map		dma_buf_map
#define iosys_map_set_vaddr	dma_buf_map_set_vaddr
#endif

/*
 * Pages fail (-ENOMEM) rather than invoke the OOM killer, globally and in
 * the memory cgroup (try_charge_memcg() gives up on __GFP_RETRY_MAYFAIL),
 * and silently: a failed ALLOC is an errno, not a kernel warning.  Not
 * __GFP_MOVABLE: the buffer holds them for its life, so they could not
 * move anyway and would only pin down movable blocks.
 */
#define KFDPOOL_HOSTMEM_GFP	(GFP_HIGHUSER | __GFP_RETRY_MAYFAIL | __GFP_NOWARN)

/**
 * struct kfdpool_hostmem - the memory behind one ALLOC'd dma-buf
 * @shmem: the shmem file holding the pages
 * @pages: every page of the buffer, in order (constant once populated)
 * @size: bytes
 * @npages: pages
 * @npopulated: pages in @pages whose folio the buffer holds a reference on
 * @lock: protects @attachments and @vaddr
 * @attachments: struct kfdpool_hostmem_attachment.node
 * @vaddr: the kernel mapping made by vmap, or NULL
 */
struct kfdpool_hostmem {
	struct file *shmem;
	struct page **pages;
	u64 size;
	pgoff_t npages;
	pgoff_t npopulated;
	struct mutex lock;	/* see the kernel-doc above */
	struct list_head attachments;
	void *vaddr;
};

/**
 * struct kfdpool_hostmem_attachment - one importer device
 * @dev: the device
 * @sgt: the buffer's pages, DMA-mapped for @dev while @mapped
 * @node: in kfdpool_hostmem.attachments
 * @mapped: between map_dma_buf and unmap_dma_buf
 */
struct kfdpool_hostmem_attachment {
	struct device *dev;
	struct sg_table sgt;
	struct list_head node;
	bool mapped;
};

#ifdef KFDPOOL_HAVE_FOLIO_BATCH
static struct folio *kfdpool_shmem_folio(struct address_space *mapping,
					 pgoff_t index)
{
#ifdef KFDPOOL_HAVE_SHMEM_READ_FOLIO_GFP
	return shmem_read_folio_gfp(mapping, index, KFDPOOL_HOSTMEM_GFP);
#else
	struct page *page;

	page = shmem_read_mapping_page_gfp(mapping, index, KFDPOOL_HOSTMEM_GFP);
	return IS_ERR(page) ? ERR_CAST(page) : page_folio(page);
#endif
}

static void kfdpool_hostmem_release_batch(struct folio_batch *fbatch)
{
	/* Pages a mapping keeps after us become reclaimable again. */
	check_move_unevictable_folios(fbatch);
	folio_batch_release(fbatch);
	cond_resched();
}

/* Drop the buffer's folio references (one per folio, as drm_gem does). */
static void kfdpool_hostmem_put_pages(struct kfdpool_hostmem *hm)
{
	struct folio *folio, *prev = NULL;
	struct folio_batch fbatch;
	pgoff_t i;

	mapping_clear_unevictable(hm->shmem->f_mapping);
	folio_batch_init(&fbatch);
	for (i = 0; i < hm->npopulated; i++) {
		folio = page_folio(hm->pages[i]);
		if (folio == prev)
			continue;
		prev = folio;
		if (!folio_batch_add(&fbatch, folio))
			kfdpool_hostmem_release_batch(&fbatch);
	}
	if (folio_batch_count(&fbatch))
		kfdpool_hostmem_release_batch(&fbatch);
	hm->npopulated = 0;
}

/*
 * Put the shmem folio holding page @i into @hm->pages (a reference on it),
 * marked dirty; the number of pages it filled, or -errno.
 */
static long kfdpool_hostmem_read(struct kfdpool_hostmem *hm,
				 struct address_space *mapping, pgoff_t i)
{
	struct folio *folio;
	pgoff_t n, end;

	folio = kfdpool_shmem_folio(mapping, i);
	if (IS_ERR(folio))
		return PTR_ERR(folio);
	folio_mark_dirty(folio);
	end = min_t(pgoff_t, hm->npages, folio->index + folio_nr_pages(folio));
	for (n = i; n < end; n++)
		hm->pages[n] = folio_file_page(folio, n);
	return end - i;
}
#else
/* Without folios: a reference on each page, page vectors to drop them. */
static void kfdpool_hostmem_release_batch(struct pagevec *pvec)
{
	check_move_unevictable_pages(pvec);
	pagevec_release(pvec);
	cond_resched();
}

static void kfdpool_hostmem_put_pages(struct kfdpool_hostmem *hm)
{
	struct pagevec pvec;
	pgoff_t i;

	mapping_clear_unevictable(hm->shmem->f_mapping);
	pagevec_init(&pvec);
	for (i = 0; i < hm->npopulated; i++)
		if (!pagevec_add(&pvec, hm->pages[i]))
			kfdpool_hostmem_release_batch(&pvec);
	if (pagevec_count(&pvec))
		kfdpool_hostmem_release_batch(&pvec);
	hm->npopulated = 0;
}

static long kfdpool_hostmem_read(struct kfdpool_hostmem *hm,
				 struct address_space *mapping, pgoff_t i)
{
	struct page *page;

	page = shmem_read_mapping_page_gfp(mapping, i, KFDPOOL_HOSTMEM_GFP);
	if (IS_ERR(page))
		return PTR_ERR(page);
	set_page_dirty(page);
	hm->pages[i] = page;
	return 1;
}
#endif

/*
 * Allocate every page, charging each to the caller's memory cgroup.  A
 * fatal signal stops it (a dying task need not finish a gigabyte).
 */
static int kfdpool_hostmem_populate(struct kfdpool_hostmem *hm)
{
	struct address_space *mapping = hm->shmem->f_mapping;
	pgoff_t i = 0;
	long n;

	/* Also what shmem uses for any later page of this file. */
	mapping_set_gfp_mask(mapping, KFDPOOL_HOSTMEM_GFP);
	mapping_set_unevictable(mapping);
	while (i < hm->npages) {
		if (fatal_signal_pending(current))
			return -EINTR;
		/*
		 * Marked dirty: shmem leaves a new folio clean, and reclaim
		 * may drop a clean one once a mapping outlives the buffer:
		 * what a device or vmap wrote would read back as zeroes.
		 */
		n = kfdpool_hostmem_read(hm, mapping, i);
		if (n < 0)
			return n;
		i += n;
		hm->npopulated = i;
		cond_resched();
	}
	return 0;
}

static void kfdpool_hostmem_free(struct kfdpool_hostmem *hm)
{
	if (hm->shmem) {
		kfdpool_hostmem_put_pages(hm);
		fput(hm->shmem);
	}
	kvfree(hm->pages);
	mutex_destroy(&hm->lock);
	kfree(hm);
}

/* An empty buffer of @size bytes (a page multiple): no shmem file yet. */
static struct kfdpool_hostmem *kfdpool_hostmem_new(u64 size)
{
	struct kfdpool_hostmem *hm;

	hm = kzalloc(sizeof(*hm), GFP_KERNEL_ACCOUNT);
	if (!hm)
		return NULL;
	mutex_init(&hm->lock);
	INIT_LIST_HEAD(&hm->attachments);
	hm->size = size;
	hm->npages = size >> PAGE_SHIFT;
	return hm;
}

/*
 * Give @hm its shmem file and allocate every page.  On failure what was
 * made stays in @hm, which kfdpool_hostmem_free() (the dma-buf's release)
 * frees.
 */
static int kfdpool_hostmem_fill(struct kfdpool_hostmem *hm)
{
	struct file *shmem;
	int ret;

	hm->pages = kvcalloc(hm->npages, sizeof(*hm->pages),
			     GFP_KERNEL_ACCOUNT | __GFP_RETRY_MAYFAIL |
			     __GFP_NOWARN);
	if (!hm->pages)
		return -ENOMEM;
	/*
	 * Flags 0, not VM_NORESERVE: the whole size is accounted against the
	 * overcommit policy now (strict overcommit refuses it here).
	 * shmem_kernel_file_setup() would spare LSM labelling, but 6.1 does
	 * not export it.
	 */
#ifdef KFDPOOL_HAVE_SHMEM_FILE_SETUP_VMA_FLAGS
	shmem = shmem_file_setup("kfdpool", hm->size, EMPTY_VMA_FLAGS);
#else
	shmem = shmem_file_setup("kfdpool", hm->size, 0);
#endif
	if (IS_ERR(shmem)) {
		ret = PTR_ERR(shmem);
		goto err;
	}
	hm->shmem = shmem;
	ret = kfdpool_hostmem_populate(hm);
err:
	/*
	 * shmem says -ENOSPC when it cannot allocate an inode (and for the
	 * size limits of a tmpfs mount, which its internal mount has none
	 * of); here -ENOSPC means a kfdpool limit.
	 */
	return ret == -ENOSPC ? -ENOMEM : ret;
}

/* ---- the dma-buf exporter ---- */

static int kfdpool_hostmem_attach(struct dma_buf *dmabuf,
				  struct dma_buf_attachment *attach)
{
	struct kfdpool_hostmem *hm = dmabuf->priv;
	struct kfdpool_hostmem_attachment *a;
	unsigned int seg;
	int ret;

	/* sg tables count pages in an unsigned int. */
	if (hm->npages > UINT_MAX)
		return -E2BIG;
	a = kzalloc(sizeof(*a), GFP_KERNEL);
	if (!a)
		return -ENOMEM;
	seg = max_t(unsigned int, dma_get_max_seg_size(attach->dev),
		    PAGE_SIZE);
#ifdef KFDPOOL_HAVE_SG_ALLOC_TABLE_FROM_PAGES_SEGMENT
	ret = sg_alloc_table_from_pages_segment(&a->sgt, hm->pages,
						hm->npages, 0, hm->size,
						seg, GFP_KERNEL);
#else
	ret = PTR_ERR_OR_ZERO(__sg_alloc_table_from_pages(&a->sgt, hm->pages,
							  hm->npages, 0,
							  hm->size, seg, NULL,
							  0, GFP_KERNEL));
#endif
	if (ret) {
		kfree(a);
		return ret;
	}
	a->dev = attach->dev;
	attach->priv = a;
	mutex_lock(&hm->lock);
	list_add(&a->node, &hm->attachments);
	mutex_unlock(&hm->lock);
	return 0;
}

static void kfdpool_hostmem_detach(struct dma_buf *dmabuf,
				   struct dma_buf_attachment *attach)
{
	struct kfdpool_hostmem *hm = dmabuf->priv;
	struct kfdpool_hostmem_attachment *a = attach->priv;

	mutex_lock(&hm->lock);
	list_del(&a->node);
	mutex_unlock(&hm->lock);
	sg_free_table(&a->sgt);
	kfree(a);
}

static struct sg_table *
kfdpool_hostmem_map(struct dma_buf_attachment *attach,
		    enum dma_data_direction dir)
{
	struct kfdpool_hostmem *hm = attach->dmabuf->priv;
	struct kfdpool_hostmem_attachment *a = attach->priv;
	int ret;

	ret = dma_map_sgtable(a->dev, &a->sgt, dir, 0);
	if (ret)
		return ERR_PTR(ret);
	mutex_lock(&hm->lock);
	a->mapped = true;
	mutex_unlock(&hm->lock);
	return &a->sgt;
}

static void kfdpool_hostmem_unmap(struct dma_buf_attachment *attach,
				  struct sg_table *sgt,
				  enum dma_data_direction dir)
{
	struct kfdpool_hostmem *hm = attach->dmabuf->priv;
	struct kfdpool_hostmem_attachment *a = attach->priv;

	mutex_lock(&hm->lock);
	a->mapped = false;
	mutex_unlock(&hm->lock);
	dma_unmap_sgtable(a->dev, sgt, dir, 0);
}

static int kfdpool_hostmem_begin_cpu(struct dma_buf *dmabuf,
				     enum dma_data_direction dir)
{
	struct kfdpool_hostmem *hm = dmabuf->priv;
	struct kfdpool_hostmem_attachment *a;

	mutex_lock(&hm->lock);
	if (hm->vaddr)
		invalidate_kernel_vmap_range(hm->vaddr, hm->size);
	list_for_each_entry(a, &hm->attachments, node)
		if (a->mapped)
			dma_sync_sgtable_for_cpu(a->dev, &a->sgt, dir);
	mutex_unlock(&hm->lock);
	return 0;
}

static int kfdpool_hostmem_end_cpu(struct dma_buf *dmabuf,
				   enum dma_data_direction dir)
{
	struct kfdpool_hostmem *hm = dmabuf->priv;
	struct kfdpool_hostmem_attachment *a;

	mutex_lock(&hm->lock);
	if (hm->vaddr)
		flush_kernel_vmap_range(hm->vaddr, hm->size);
	list_for_each_entry(a, &hm->attachments, node)
		if (a->mapped)
			dma_sync_sgtable_for_device(a->dev, &a->sgt, dir);
	mutex_unlock(&hm->lock);
	return 0;
}

#ifndef KFDPOOL_HAVE_VFS_MMAP
#define vfs_mmap	call_mmap
#endif

#ifndef KFDPOOL_HAVE_IS_COW_MAPPING
static inline bool is_cow_mapping(vm_flags_t flags)
{
	return (flags & (VM_SHARED | VM_MAYWRITE)) == VM_MAYWRITE;
}
#endif

#ifndef KFDPOOL_HAVE_VMA_SET_FILE
static void vma_set_file(struct vm_area_struct *vma, struct file *file)
{
	get_file(file);
	swap(vma->vm_file, file);
	fput(file);
}
#endif

/*
 * The vma becomes a mapping of the shmem file, with shmem's vm_ops: the
 * core checked the range against the dma-buf's size, and mmap_region()
 * expects ->mmap() to swap vm_file (vma_set_file() drops the dma-buf file).
 */
static int kfdpool_hostmem_mmap(struct dma_buf *dmabuf,
				struct vm_area_struct *vma)
{
	struct kfdpool_hostmem *hm = dmabuf->priv;
	int ret;

	/* A private copy would not be shared memory. */
	if (is_cow_mapping(vma->vm_flags))
		return -EINVAL;
	ret = vfs_mmap(hm->shmem, vma);
	if (ret)
		return ret;
	vma_set_file(vma, hm->shmem);
	return 0;
}

/* The core counts vmaps: this runs for the first, vunmap for the last. */
static void *kfdpool_hostmem_vmap_pages(struct dma_buf *dmabuf)
{
	struct kfdpool_hostmem *hm = dmabuf->priv;
	void *vaddr;

	if (hm->npages > UINT_MAX)
		return ERR_PTR(-E2BIG);
	vaddr = vmap(hm->pages, hm->npages, VM_MAP, PAGE_KERNEL);
	if (!vaddr)
		return ERR_PTR(-ENOMEM);
	mutex_lock(&hm->lock);
	hm->vaddr = vaddr;
	mutex_unlock(&hm->lock);
	return vaddr;
}

static void kfdpool_hostmem_vunmap(struct dma_buf *dmabuf, void *vaddr)
{
	struct kfdpool_hostmem *hm = dmabuf->priv;

	mutex_lock(&hm->lock);
	hm->vaddr = NULL;
	mutex_unlock(&hm->lock);
	vunmap(vaddr);
}

#if defined(KFDPOOL_HAVE_IOSYS_MAP) || defined(KFDPOOL_HAVE_DMA_BUF_MAP)
static int kfdpool_hostmem_vmap_op(struct dma_buf *dmabuf,
				   struct iosys_map *map)
{
	void *vaddr = kfdpool_hostmem_vmap_pages(dmabuf);

	if (IS_ERR(vaddr))
		return PTR_ERR(vaddr);
	iosys_map_set_vaddr(map, vaddr);
	return 0;
}

static void kfdpool_hostmem_vunmap_op(struct dma_buf *dmabuf,
				      struct iosys_map *map)
{
	kfdpool_hostmem_vunmap(dmabuf, map->vaddr);
}
#else
/* Older kernels' vmap returns the address, NULL for any failure. */
static void *kfdpool_hostmem_vmap_op(struct dma_buf *dmabuf)
{
	void *vaddr = kfdpool_hostmem_vmap_pages(dmabuf);

	return IS_ERR(vaddr) ? NULL : vaddr;
}

#define kfdpool_hostmem_vunmap_op	kfdpool_hostmem_vunmap
#endif

/* The last reference: no attachment, no vmap, no fd is left. */
static void kfdpool_hostmem_release(struct dma_buf *dmabuf)
{
	struct kfdpool_hostmem *hm = dmabuf->priv;

	WARN_ON(!list_empty(&hm->attachments) || hm->vaddr);
	kfdpool_hostmem_free(hm);
}

static const struct dma_buf_ops kfdpool_hostmem_ops = {
	.attach = kfdpool_hostmem_attach,
	.detach = kfdpool_hostmem_detach,
	.map_dma_buf = kfdpool_hostmem_map,
	.unmap_dma_buf = kfdpool_hostmem_unmap,
	.begin_cpu_access = kfdpool_hostmem_begin_cpu,
	.end_cpu_access = kfdpool_hostmem_end_cpu,
	.mmap = kfdpool_hostmem_mmap,
	.vmap = kfdpool_hostmem_vmap_op,
	.vunmap = kfdpool_hostmem_vunmap_op,
	.release = kfdpool_hostmem_release,
};

/* Export @hm; on success the dma-buf owns it (release frees it). */
static struct dma_buf *kfdpool_hostmem_export(struct kfdpool_hostmem *hm)
{
	DEFINE_DMA_BUF_EXPORT_INFO(exp_info);

	exp_info.ops = &kfdpool_hostmem_ops;
	exp_info.size = hm->size;
	exp_info.flags = O_RDWR;
	exp_info.priv = hm;
	return dma_buf_export(&exp_info);
}

/* ---- accounting ---- */

/*
 * Charge the kfdpool limits for ALLOC's @dmabuf, before any page exists:
 * the charge of every entry (kfdpool_entry_charge_locked()); @size stays in
 * pool->charging, against the pool's limit, until the entry is added or
 * the ALLOC fails.  Held entries that nobody references any more are freed
 * and the charge tried once more, as PIN does.
 */
static int kfdpool_hostmem_charge(struct kfdpool_pool *pool,
				  struct dma_buf *dmabuf, u64 size)
{
	int ret, tries = 2;

	do {
		mutex_lock(&pool->lock);
		ret = kfdpool_entry_charge_locked(pool, dmabuf, size);
		if (!ret)
			pool->charging += size;
		mutex_unlock(&pool->lock);
	} while ((ret == -ENOSPC || ret == -EDQUOT) && --tries &&
		 kfdpool_reap_all());
	return ret;
}

/* Undo kfdpool_hostmem_charge() for an ALLOC that made no entry. */
static void kfdpool_hostmem_uncharge(struct kfdpool_pool *pool,
				     struct dma_buf *dmabuf, u64 size)
{
	mutex_lock(&pool->lock);
	pool->charging -= size;
	kfdpool_uncharge(pool->user, dmabuf);
	mutex_unlock(&pool->lock);
}

/*
 * Would @npages pages surely fail?  Above the machine's memory, above what
 * the kernel estimates it can make available without swapping, or above
 * the memory.max of the caller's memory cgroup or one of its ancestors: no
 * reclaim makes room for those.  What passes may still fail, page by page,
 * when other memory is in use (kfdpool_hostmem_populate()).
 */
static bool kfdpool_hostmem_fits(unsigned long npages)
{
	bool fits = npages <= totalram_pages() &&
		    npages <= (unsigned long)si_mem_available();
#ifdef CONFIG_MEMCG
	struct mem_cgroup *memcg, *m;

	memcg = get_mem_cgroup_from_mm(current->mm);
	for (m = memcg; m && fits; m = parent_mem_cgroup(m))
		fits = npages <= READ_ONCE(m->memory.max);
	mem_cgroup_put(memcg);
#endif
	return fits;
}

/* Add ALLOC's entry, its charge moving from pool->charging to reserved. */
static int kfdpool_hostmem_add_entry(struct kfdpool_pool *pool,
				     struct kfdpool_entry *entry, u32 *id)
{
	int ret = -ENOSPC;

	mutex_lock(&pool->lock);
	if (pool->nr_entries < READ_ONCE(kfdpool_max_entries))
		ret = kfdpool_entry_insert_locked(pool, entry);
	if (!ret) {
		pool->charging -= entry->size;
		/* Read under the lock: an UNPIN may free it once unlocked. */
		*id = entry->id;
	}
	mutex_unlock(&pool->lock);
	return ret;
}

long kfdpool_ioctl_alloc(struct file *file, void *data,
			 struct kfdpool_fd_out *fdo)
{
	struct kfdpool_alloc *args = data;
	struct kfdpool_file *pf = file->private_data;
	struct kfdpool_pool *pool = pf->pool;
	struct kfdpool_entry *entry;
	struct kfdpool_hostmem *hm;
	struct dma_buf *dmabuf;
	u64 size = args->size;
	u32 id;
	int ret;

	if (pf->mode != KFDPOOL_MODE_OWNER)
		return -EPERM;
	if (args->flags || args->pad || !size || !PAGE_ALIGNED(size))
		return -EINVAL;

	entry = kzalloc(sizeof(*entry), GFP_KERNEL_ACCOUNT);
	if (!entry)
		return -ENOMEM;
	hm = kfdpool_hostmem_new(size);
	if (!hm) {
		ret = -ENOMEM;
		goto err_entry;
	}
	dmabuf = kfdpool_hostmem_export(hm);
	if (IS_ERR(dmabuf)) {
		kfdpool_hostmem_free(hm);
		ret = PTR_ERR(dmabuf);
		goto err_entry;
	}
	/* From here on the dma-buf's release frees @hm. */

	ret = kfdpool_hostmem_charge(pool, dmabuf, size);
	if (ret)
		goto err_put;
	ret = -ENOMEM;
	if (!kfdpool_hostmem_fits(size >> PAGE_SHIFT))
		goto err_uncharge;
	ret = kfdpool_hostmem_fill(hm);
	if (ret)
		goto err_uncharge;

	/* The entry takes the export's reference. */
	entry->dmabuf = dmabuf;
	entry->size = size;
	entry->cookie = args->cookie;
	/* Its fd comes from the pool: held while kept after UNPIN. */
	entry->handed_out = true;
	entry->cover.root = RB_ROOT;
	ret = kfdpool_hostmem_add_entry(pool, entry, &id);
	if (ret)
		goto err_uncharge;

	/*
	 * The fd's reference; the dispatcher installs it through the receive
	 * path after the copy back, writing its number into @fd.
	 */
	get_dma_buf(dmabuf);
	fdo->file = dmabuf->file;
	fdo->fd_off = offsetof(struct kfdpool_alloc, fd);
	fdo->undo = kfdpool_pin_undo;
	fdo->pfile = pf;
	fdo->entry_id = id;
	fdo->dmabuf = dmabuf;
	args->fd = -1;
	args->entry_id = id;
	return 0;

err_uncharge:
	/* Uncharge before dropping the reference the charge stands for. */
	kfdpool_hostmem_uncharge(pool, dmabuf, size);
err_put:
	dma_buf_put(dmabuf);
err_entry:
	kfree(entry);
	return ret;
}
