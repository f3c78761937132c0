// SPDX-License-Identifier: GPL-2.0-only
/*
 * Host memory from the module: KFDPOOL_IOC_ALLOC.  A shmem file whose
 * pages are all allocated, in the caller's context and memory cgroup,
 * before the call returns: running out is an errno here, not SIGBUS or the
 * OOM killer at a later fault.  The buffer holds every folio, unevictable,
 * until the dma-buf's release, which returns its RLIMIT_MEMLOCK charge.
 * mmap() hands the vma to the shmem file, as i915 does, so mappings hold
 * ordinary page-cache pages.
 */
#include <linux/cred.h>
#include <linux/dma-buf.h>
#include <linux/dma-mapping.h>
#include <linux/file.h>
#include <linux/highmem.h>
#include <linux/memcontrol.h>
#include <linux/mm.h>
#include <linux/pagemap.h>
#include <linux/scatterlist.h>
#include <linux/sched/signal.h>
#include <linux/sched/user.h>
#include <linux/shmem_fs.h>
#include <linux/slab.h>
#include <linux/swap.h>
#include <linux/vmalloc.h>

#include "kfdpool.h"

/*
 * Fail rather than OOM-kill, in the memcg too (try_charge_memcg() gives up
 * on __GFP_RETRY_MAYFAIL), and quietly.  Not movable: they are held.
 */
#define KFDPOOL_HOSTMEM_GFP	(GFP_HIGHUSER | __GFP_RETRY_MAYFAIL | __GFP_NOWARN)

/**
 * struct kfdpool_hostmem - the memory behind one ALLOC'd dma-buf
 * @shmem: the shmem file
 * @pages: its pages, in order
 * @size: bytes
 * @npages: pages
 * @npopulated: pages whose folio the buffer holds
 * @lock: protects @attachments and @vaddr
 * @attachments: struct kfdpool_hostmem_attachment.node
 * @vaddr: the vmap, or NULL
 * @locked: its user is charged @npages of RLIMIT_MEMLOCK, or NULL
 */
struct kfdpool_hostmem {
	struct file *shmem;
	struct page **pages;
	u64 size;
	pgoff_t npages;
	pgoff_t npopulated;
	struct mutex lock;	/* nests inside the reservation lock */
	struct list_head attachments;
	void *vaddr;
	const struct cred *locked;
};

/**
 * struct kfdpool_hostmem_attachment - one importer device
 * @dev: the device
 * @sgt: the pages, DMA-mapped for @dev while @mapped
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
static void kfdpool_release_batch(struct folio_batch *fbatch)
{
	/* What a mapping keeps after us is reclaimable again. */
	check_move_unevictable_folios(fbatch);
	folio_batch_release(fbatch);
	cond_resched();
}

/* Drop the references of @pages' folios (one per folio, as drm_gem holds). */
static void kfdpool_put_pages(struct page **pages, pgoff_t n)
{
	struct folio *folio, *prev = NULL;
	struct folio_batch fbatch;
	pgoff_t i;

	folio_batch_init(&fbatch);
	for (i = 0; i < n; i++) {
		folio = page_folio(pages[i]);
		if (folio == prev)
			continue;
		prev = folio;
		if (!folio_batch_add(&fbatch, folio))
			kfdpool_release_batch(&fbatch);
	}
	if (folio_batch_count(&fbatch))
		kfdpool_release_batch(&fbatch);
}

/* Hold page @i's folio, dirty; fill @pages from @i: how many, or -errno. */
static long kfdpool_read_pages(struct address_space *mapping,
			       struct page **pages, pgoff_t i, pgoff_t n,
			       gfp_t gfp)
{
	struct folio *folio = shmem_read_folio_gfp(mapping, i, gfp);
	pgoff_t k, end;

	if (IS_ERR(folio))
		return PTR_ERR(folio);
	folio_mark_dirty(folio);
	end = min_t(pgoff_t, n, folio->index + folio_nr_pages(folio));
	for (k = i; k < end; k++)
		pages[k] = folio_file_page(folio, k);
	return end - i;
}
#endif

/* Allocate every page; a fatal signal stops it. */
static int kfdpool_hostmem_populate(struct kfdpool_hostmem *hm)
{
	struct address_space *mapping = hm->shmem->f_mapping;
	pgoff_t i = 0;
	long n;

	mapping_set_gfp_mask(mapping, KFDPOOL_HOSTMEM_GFP);
	mapping_set_unevictable(mapping);
	while (i < hm->npages) {
		if (fatal_signal_pending(current))
			return -EINTR;
		/* Dirty: reclaim could drop a clean one a mapping outlived us in. */
		n = kfdpool_read_pages(mapping, hm->pages, i, hm->npages,
				       KFDPOOL_HOSTMEM_GFP);
		if (n < 0)
			return n;
		i += n;
		hm->npopulated = i;
		cond_resched();
	}
	return 0;
}

/* Free @hm and return its charges: the dma-buf's release, or a failed ALLOC. */
static void kfdpool_hostmem_free(struct kfdpool_hostmem *hm)
{
	if (hm->shmem) {
		mapping_clear_unevictable(hm->shmem->f_mapping);
		kfdpool_put_pages(hm->pages, hm->npopulated);
		fput(hm->shmem);
	}
	kvfree(hm->pages);
	if (hm->locked) {
		atomic_long_sub(hm->npages, &hm->locked->user->locked_vm);
		put_cred(hm->locked);
	}
	mutex_destroy(&hm->lock);
	kfree(hm);
}

/* Give @hm its shmem file and pages; on failure kfdpool_hostmem_free(). */
static int kfdpool_hostmem_fill(struct kfdpool_hostmem *hm)
{
	struct file *shmem;
	int ret;

	hm->pages = kvcalloc(hm->npages, sizeof(*hm->pages),
			     GFP_KERNEL_ACCOUNT | __GFP_RETRY_MAYFAIL |
			     __GFP_NOWARN);
	if (!hm->pages)
		return -ENOMEM;
	/* Not VM_NORESERVE: strict overcommit refuses the size here. */
	shmem = shmem_file_setup("kfdpool", hm->size, EMPTY_VMA_FLAGS);
	if (IS_ERR(shmem)) {
		ret = PTR_ERR(shmem);
		goto err;
	}
	hm->shmem = shmem;
	ret = kfdpool_hostmem_populate(hm);
err:
	/* shmem's -ENOSPC (no inode) is not a kfdpool limit. */
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
	ret = sg_alloc_table_from_pages_segment(&a->sgt, hm->pages,
						hm->npages, 0, hm->size,
						seg, GFP_KERNEL);
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

/* CPU access begins (@cpu) or ends: sync the vmap and mapped devices. */
static int kfdpool_hostmem_sync(struct dma_buf *dmabuf,
				enum dma_data_direction dir, bool cpu)
{
	struct kfdpool_hostmem *hm = dmabuf->priv;
	struct kfdpool_hostmem_attachment *a;

	mutex_lock(&hm->lock);
	if (hm->vaddr && cpu)
		invalidate_kernel_vmap_range(hm->vaddr, hm->size);
	else if (hm->vaddr)
		flush_kernel_vmap_range(hm->vaddr, hm->size);
	list_for_each_entry(a, &hm->attachments, node) {
		if (a->mapped && cpu)
			dma_sync_sgtable_for_cpu(a->dev, &a->sgt, dir);
		else if (a->mapped)
			dma_sync_sgtable_for_device(a->dev, &a->sgt, dir);
	}
	mutex_unlock(&hm->lock);
	return 0;
}

static int kfdpool_hostmem_begin_cpu(struct dma_buf *dmabuf,
				     enum dma_data_direction dir)
{
	return kfdpool_hostmem_sync(dmabuf, dir, true);
}

static int kfdpool_hostmem_end_cpu(struct dma_buf *dmabuf,
				   enum dma_data_direction dir)
{
	return kfdpool_hostmem_sync(dmabuf, dir, false);
}

/* The vma becomes the shmem file's (the core checked its range). */
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

bool kfdpool_is_hostmem(struct dma_buf *dmabuf)
{
	return dmabuf->ops == &kfdpool_hostmem_ops;
}

/*
 * Can @npages pages fit at all: in the machine's memory, in what it can
 * make available, and under the memory.max of the caller's cgroups?
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

/* Charge @npages to RLIMIT_MEMLOCK in @user, as io_uring does. */
static int kfdpool_lock_pages(struct user_struct *user, unsigned long npages)
{
	unsigned long limit = rlimit(RLIMIT_MEMLOCK) >> PAGE_SHIFT;
	unsigned long cur = atomic_long_read(&user->locked_vm);

	do {
		if (npages > limit || cur > limit - npages)
			return -ENOMEM;
	} while (!atomic_long_try_cmpxchg(&user->locked_vm, &cur,
					  cur + npages));
	return 0;
}

/*
 * Charge ALLOC's @hm before any page exists: RLIMIT_MEMLOCK, and the pool's
 * limit (pool->charging until the entry is added); what @hm holds goes with
 * kfdpool_hostmem_free().
 */
static int kfdpool_hostmem_charge(struct kfdpool_file *pf,
				  struct kfdpool_hostmem *hm)
{
	struct kfdpool_pool *pool = pf->pool;
	int ret;

	if (pool->locked) {
		ret = kfdpool_lock_pages(pool->locked->user, hm->npages);
		if (ret)
			return ret;
		hm->locked = get_cred(pool->locked);
	}
	ret = kfdpool_lock(pf);
	if (ret)
		return ret;
	if (pool->nr_entries >= READ_ONCE(kfdpool_max_entries) ||
	    !kfdpool_pool_fits(pool, hm->size))
		ret = -ENOSPC;
	else
		ret = kfdpool_persist_charge(pool, hm->size);
	if (!ret)
		pool->charging += hm->size;
	mutex_unlock(&pool->lock);
	return ret;
}

/* Undo the entry's part of kfdpool_hostmem_charge(): no entry was made. */
static void kfdpool_hostmem_unreserve(struct kfdpool_pool *pool,
				      struct kfdpool_hostmem *hm)
{
	mutex_lock(&pool->lock);
	pool->charging -= hm->size;
	kfdpool_persist_uncharge(pool, hm->size);
	mutex_unlock(&pool->lock);
}

/*
 * One ALLOC, in this order: the arguments and whether the size can fit at
 * all, the charges, the pages, the export, the entry.  A failure undoes
 * the steps before it.
 */
long kfdpool_ioctl_alloc(struct file *file, unsigned int nr, void *data,
			 struct kfdpool_fd_out *fdo)
{
	struct kfdpool_alloc *args = data;
	struct kfdpool_file *pf = file->private_data;
	struct kfdpool_pool *pool = pf->pool;
	struct kfdpool_entry *entry;
	DEFINE_DMA_BUF_EXPORT_INFO(exp_info);
	struct kfdpool_hostmem *hm;
	struct dma_buf *dmabuf;
	int ret;

	if (pf->mode != KFDPOOL_MODE_OWNER)
		return -EPERM;
	if (args->flags || args->pad || !args->size ||
	    !PAGE_ALIGNED(args->size))
		return -EINVAL;
	if (!kfdpool_hostmem_fits(args->size >> PAGE_SHIFT))
		return -ENOMEM;

	hm = kzalloc(sizeof(*hm), GFP_KERNEL_ACCOUNT);
	if (!hm)
		return -ENOMEM;
	mutex_init(&hm->lock);
	INIT_LIST_HEAD(&hm->attachments);
	hm->size = args->size;
	hm->npages = args->size >> PAGE_SHIFT;
	ret = -ENOMEM;
	entry = kzalloc(sizeof(*entry), GFP_KERNEL_ACCOUNT);
	if (!entry)
		goto err_free;
	ret = kfdpool_hostmem_charge(pf, hm);
	if (ret)
		goto err_free;
	ret = kfdpool_hostmem_fill(hm);
	if (ret)
		goto err_unreserve;
	exp_info.ops = &kfdpool_hostmem_ops;
	exp_info.size = hm->size;
	exp_info.flags = O_RDWR;
	exp_info.priv = hm;
	dmabuf = dma_buf_export(&exp_info);
	if (IS_ERR(dmabuf)) {
		ret = PTR_ERR(dmabuf);
		goto err_unreserve;
	}
	/* From here on the dma-buf's release frees @hm. */
	hm = NULL;

	entry->dmabuf = dmabuf;
	entry->size = args->size;
	entry->cookie = args->cookie;
	ret = kfdpool_lock(pf);
	if (!ret) {
		ret = kfdpool_entry_add_locked(pool, entry, false);
		/* Read under the lock: an UNPIN may free it once unlocked. */
		args->entry_id = entry->id;
		mutex_unlock(&pool->lock);
	}
	if (ret) {
		kfdpool_hostmem_unreserve(pool, dmabuf->priv);
		dma_buf_put(dmabuf);
		goto err_free;
	}

	/* The fd's reference, installed after the copy back. */
	get_dma_buf(dmabuf);
	fdo->file = dmabuf->file;
	fdo->fd_off = offsetof(struct kfdpool_alloc, fd);
	fdo->undo = kfdpool_pin_undo;
	fdo->pfile = pf;
	fdo->entry_id = args->entry_id;
	fdo->dmabuf = dmabuf;
	args->fd = -1;
	return 0;

err_unreserve:
	kfdpool_hostmem_unreserve(pool, hm);
err_free:
	if (hm)
		kfdpool_hostmem_free(hm);
	kfree(entry);
	return ret;
}
