// SPDX-License-Identifier: GPL-2.0-only
/*
 * Host memory from the module: KFDPOOL_IOC_ALLOC.  Pages from the page
 * allocator in the largest blocks it has at hand, as the system dma-heap
 * takes them, zeroed and charged to the caller's memory cgroup before the
 * call returns: running out is an errno here, not SIGBUS or the OOM killer
 * at a later fault.  The buffer holds them, on no LRU, until the dma-buf's
 * release returns its charges.  Processes map exactly these pages, through
 * the buffer's own vm_ops: what they see is what devices see.
 */
#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/dma-buf.h>
#include <linux/dma-mapping.h>
#include <linux/highmem.h>
#include <linux/memcontrol.h>
#include <linux/mm.h>
#include <linux/scatterlist.h>
#include <linux/sched/signal.h>
#include <linux/sched/user.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include "kfdpool.h"

/*
 * A high order is tried once, without reclaim, as the system heap does;
 * a single page fails rather than OOM-kill, in the memcg too
 * (try_charge_memcg() gives up on __GFP_RETRY_MAYFAIL).
 */
#define KFDPOOL_GFP	(GFP_HIGHUSER | __GFP_ZERO | __GFP_ACCOUNT | __GFP_NOWARN)
#define KFDPOOL_GFP_HIGH \
	((KFDPOOL_GFP | __GFP_COMP | __GFP_NORETRY) & ~__GFP_RECLAIM)
#define KFDPOOL_GFP_LOW	(KFDPOOL_GFP | __GFP_RETRY_MAYFAIL)
#define KFDPOOL_GFP_ARRAY \
	(GFP_KERNEL_ACCOUNT | __GFP_RETRY_MAYFAIL | __GFP_NOWARN)

/*
 * Regions of KFDPOOL_REGION pages, each one block where the allocator has
 * one: a PMD's worth with THP, mapped with one PMD (do_set_pmd()); else,
 * and for a shorter last region, blocks of 16 pages and single pages.
 */
#ifdef CONFIG_TRANSPARENT_HUGEPAGE
#define KFDPOOL_TOP_ORDER	HPAGE_PMD_ORDER
#else
#define KFDPOOL_TOP_ORDER	8
#endif
#define KFDPOOL_REGION		BIT(KFDPOOL_TOP_ORDER)

/**
 * struct kfdpool_hostmem - the memory behind one ALLOC'd dma-buf
 * @blocks: per region, its one block, or NULL
 * @pages: the pages of the regions without one, in order, or NULL
 * @size: bytes
 * @npages: pages
 * @lock: protects @attachments and @vaddr
 * @attachments: struct kfdpool_hostmem_attachment.node
 * @vaddr: the vmap, or NULL
 * @locked: its user is charged @npages of RLIMIT_MEMLOCK, or NULL
 */
struct kfdpool_hostmem {
	struct page **blocks;
	struct page **pages;
	u64 size;
	pgoff_t npages;
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

/* Page @i of @hm, or NULL where a failed ALLOC stopped. */
static struct page *kfdpool_hostmem_page(const struct kfdpool_hostmem *hm,
					 pgoff_t i)
{
	struct page *block = hm->blocks[i / KFDPOOL_REGION];

	return block ? block + i % KFDPOOL_REGION :
		       hm->pages ? hm->pages[i] : NULL;
}

/* All pages in order, for vmap() and sg tables (u32 counts); kvfree() it. */
static struct page **kfdpool_hostmem_pages(const struct kfdpool_hostmem *hm)
{
	struct page **pages = hm->npages > UINT_MAX ? NULL :
			      kvmalloc_array(hm->npages, sizeof(*pages),
					     GFP_KERNEL);
	pgoff_t i;

	for (i = 0; pages && i < hm->npages; i++)
		pages[i] = kfdpool_hostmem_page(hm, i);
	return pages;
}

/* A block of 2^@order pages, pages @n on of the buffer. */
static struct page *kfdpool_hostmem_block(pgoff_t n, unsigned int order)
{
	struct page *page = alloc_pages(order ? KFDPOOL_GFP_HIGH :
					KFDPOOL_GFP_LOW, order);

	if (page) {
		kfdpool_page_mappable(page);
		/* Its offset in the dma-buf, which the fault path checks. */
		kfdpool_set_folio_index(page, n);
	}
	return page;
}

/*
 * Allocate every page, each block at a multiple of its size (a PMD's worth
 * where a PMD maps it); a fatal signal stops it.
 */
static int kfdpool_hostmem_fill(struct kfdpool_hostmem *hm)
{
	pgoff_t nr = DIV_ROUND_UP(hm->npages, KFDPOOL_REGION), k, n, i, j, len;
	unsigned int order;
	struct page *page;

	hm->blocks = kvcalloc(nr, sizeof(page), KFDPOOL_GFP_ARRAY);
	if (!hm->blocks)
		return -ENOMEM;
	for (k = 0; k < nr; k++) {
		n = k * KFDPOOL_REGION;
		len = min_t(pgoff_t, hm->npages - n, KFDPOOL_REGION);
		cond_resched();
		if (fatal_signal_pending(current))
			return -EINTR;
		page = len == KFDPOOL_REGION ?
		       kfdpool_hostmem_block(n, KFDPOOL_TOP_ORDER) : NULL;
		hm->blocks[k] = page;
		if (page)
			continue;
		if (!hm->pages)
			hm->pages = kvcalloc(hm->npages, sizeof(page),
					     KFDPOOL_GFP_ARRAY);
		for (i = n; hm->pages && i < n + len; i += 1UL << order) {
			order = IS_ALIGNED(i, 16) && n + len - i >= 16 ? 4 : 0;
			page = kfdpool_hostmem_block(i, order);
			if (!page && order)
				page = kfdpool_hostmem_block(i, order = 0);
			if (!page)
				return -ENOMEM;
			for (j = 0; j < 1UL << order; j++)
				hm->pages[i + j] = page + j;
		}
		if (!hm->pages)
			return -ENOMEM;
	}
	return 0;
}

/* Free @hm and return its charges: the dma-buf's release, or a failed ALLOC. */
static void kfdpool_hostmem_free(struct kfdpool_hostmem *hm)
{
	unsigned int order;
	struct page *page;
	pgoff_t i;

	/* A page get_user_pages() still holds goes with its last reference. */
	for (i = 0; hm->blocks && i < hm->npages &&
	     (page = kfdpool_hostmem_page(hm, i)); i += 1UL << order) {
		order = compound_order(page);
		kfdpool_page_freeable(page);
		__free_pages(page, order);
	}
	kvfree(hm->pages);
	kvfree(hm->blocks);
	if (hm->locked) {
		atomic_long_sub(hm->npages, &hm->locked->user->locked_vm);
		put_cred(hm->locked);
	}
	mutex_destroy(&hm->lock);
	kfree(hm);
}

/* ---- the dma-buf exporter ---- */

static int kfdpool_hostmem_attach(struct dma_buf *dmabuf,
				  struct dma_buf_attachment *attach)
{
	struct kfdpool_hostmem *hm = dmabuf->priv;
	struct kfdpool_hostmem_attachment *a = kzalloc(sizeof(*a), GFP_KERNEL);
	struct page **pages = a ? kfdpool_hostmem_pages(hm) : NULL;
	unsigned int seg = max_t(unsigned int,
				 dma_get_max_seg_size(attach->dev), PAGE_SIZE);
	int ret = -ENOMEM;

	if (pages)
		ret = sg_alloc_table_from_pages_segment(&a->sgt, pages,
							hm->npages, 0,
							hm->size, seg,
							GFP_KERNEL);
	kvfree(pages);
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
	int ret = dma_map_sgtable(a->dev, &a->sgt, dir, 0);

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

/* The core maps the page, or its folio with one PMD where it fits. */
static vm_fault_t kfdpool_hostmem_fault(struct vm_fault *vmf)
{
	/* mmap checked the range, which cannot grow. */
	vmf->page = kfdpool_hostmem_page(vmf->vma->vm_private_data,
					 vmf->pgoff);
	get_page(vmf->page);
	return 0;
}

static const struct vm_operations_struct kfdpool_hostmem_vm_ops = {
	.fault = kfdpool_hostmem_fault,
};

/*
 * The vma maps the buffer's pages and holds its dma-buf: no file behind it
 * to punch (MADV_REMOVE is refused), never grown past the buffer (mremap)
 * nor mlocked (VM_DONTEXPAND is VM_SPECIAL).
 */
static int kfdpool_hostmem_mmap(struct dma_buf *dmabuf,
				struct vm_area_struct *vma)
{
	/* A private copy would not be shared memory. */
	if (is_cow_mapping(vma->vm_flags))
		return -EINVAL;
	vm_flags_set(vma, VM_DONTEXPAND);
	vma->vm_ops = &kfdpool_hostmem_vm_ops;
	vma->vm_private_data = dmabuf->priv;
	return 0;
}

/* The core counts vmaps: this runs for the first, vunmap for the last. */
static void *kfdpool_hostmem_vmap_pages(struct dma_buf *dmabuf)
{
	struct kfdpool_hostmem *hm = dmabuf->priv;
	struct page **pages = kfdpool_hostmem_pages(hm);
	void *vaddr = pages ? vmap(pages, hm->npages, VM_MAP, PAGE_KERNEL) :
			      NULL;

	kvfree(pages);
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

	if (!vaddr)
		return -ENOMEM;
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
#define kfdpool_hostmem_vmap_op		kfdpool_hostmem_vmap_pages
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

/* Can @npages fit: in RAM, in what it can free, under our memory.max? */
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

/*
 * Charge ALLOC's @hm before any page exists: RLIMIT_MEMLOCK, and the pool's
 * limit (pool->charging until the entry is added); what @hm holds goes with
 * kfdpool_hostmem_free().
 */
static int kfdpool_hostmem_charge(struct kfdpool_file *pf,
				  struct kfdpool_hostmem *hm)
{
	unsigned long limit = rlimit(RLIMIT_MEMLOCK) >> PAGE_SHIFT, cur;
	atomic_long_t *locked = &current_user()->locked_vm;
	struct kfdpool_pool *pool = pf->pool;
	int ret;

	/*
	 * The caller's user and limit, as io_uring charges them, unless the
	 * caller has CAP_IPC_LOCK now (asked unaudited: a user without it is
	 * the rule, not a denial for a security module to log).
	 */
	if (!ns_capable_noaudit(&init_user_ns, CAP_IPC_LOCK)) {
		cur = atomic_long_read(locked);
		do {
			if (hm->npages > limit || cur > limit - hm->npages)
				return -ENOMEM;
		} while (!atomic_long_try_cmpxchg(locked, &cur,
						  cur + hm->npages));
		hm->locked = get_current_cred();
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
 * One ALLOC: the arguments, whether the size can fit at all, the charges,
 * the pages, the export, the entry; a failure undoes the steps before it.
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
