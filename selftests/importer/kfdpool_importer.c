// SPDX-License-Identifier: GPL-2.0-only
/*
 * kfdpool_importer: a dma-buf importer for the selftests, test-only.
 *
 * vgem imports a dma-buf (attach and DMA map) but gives user space no way
 * to read an imported buffer.  This module does what a device driver and
 * its CPU code would, and checks the bytes at each step: it attaches its
 * own platform device (64-bit DMA mask), maps the attachment and reads the
 * pattern through the DMA addresses of the sg table, as the device would
 * see them; writes the next pattern there; unmaps and detaches; then reads
 * and writes through vmap between begin_cpu_access and end_cpu_access.
 * User space checks the last pattern through its own mapping.
 *
 * The DMA addresses are turned back into pages with dma_to_phys(), which is
 * right for dma-direct (no IOMMU, no bounce buffers: the VM's case); on a
 * device behind an IOMMU the check is refused (-EOPNOTSUPP).  Never use the
 * sg table's pages: CONFIG_DMABUF_DEBUG scrambles them on purpose.
 *
 * /dev/kfdpool_importer, root only, one ioctl: KFDPOOL_IMPORTER_CHECK.
 */
#include <linux/dma-buf.h>
#include <linux/dma-direct.h>
#include <linux/dma-map-ops.h>
#include <linux/dma-mapping.h>
#include <linux/highmem.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/platform_device.h>
#include <linux/scatterlist.h>
#include <linux/uaccess.h>

#include "kfdpool_features.h"

#if defined(KFDPOOL_HAVE_IOSYS_MAP)
#include <linux/iosys-map.h>
#elif defined(KFDPOOL_HAVE_DMA_BUF_MAP)
#include <linux/dma-buf-map.h>
#define iosys_map	dma_buf_map
#endif

#ifndef KFDPOOL_HAVE_KMAP_LOCAL_PAGE
/* Without local kmaps: a 64-bit kernel maps every page already. */
#define kmap_local_page(page)	page_address(page)
#define kunmap_local(addr)	((void)(addr))
#endif

#ifndef KFDPOOL_HAVE_DMA_BUF_MAP_ATTACHMENT_UNLOCKED
/* The importer is static: the core takes no reservation lock for it. */
#define dma_buf_map_attachment_unlocked		dma_buf_map_attachment
#define dma_buf_unmap_attachment_unlocked	dma_buf_unmap_attachment
#endif

#ifdef KFDPOOL_HAVE_IMPORT_NS_IDENT
MODULE_IMPORT_NS(DMA_BUF);
#else
MODULE_IMPORT_NS("DMA_BUF");
#endif

/**
 * struct kfdpool_importer_check - check and rewrite a dma-buf's bytes
 * @fd: in: the dma-buf
 * @seed: in: the dma-buf holds pattern(@seed); it is left holding
 *	pattern(@seed + 2)
 * @stage: out: 0 when all went well, else the step that failed (1 attach,
 *	2 map, 3 device read, 4 vmap, 5 CPU read)
 * @segments: out: DMA segments of the mapping
 * @bad_offset: out: where the bytes were wrong (stages 3 and 5)
 */
struct kfdpool_importer_check {
	__s32 fd;
	__u32 seed;
	__u32 stage;
	__u32 segments;
	__u64 bad_offset;
};

#define KFDPOOL_IMPORTER_CHECK _IOWR('K', 1, struct kfdpool_importer_check)

static struct platform_device *kfdpool_importer_pdev;

static u32 kfdpool_importer_word(u32 seed, u64 off)
{
	return seed * 2654435761u + (u32)(off / 4);
}

/*
 * As the device: read pattern(@seed) and write pattern(@seed + 1) through
 * the DMA addresses of @sgt.  Returns 0, or -EILSEQ with @bad set.
 */
static int kfdpool_importer_device(struct device *dev, struct sg_table *sgt,
				   u32 seed, u64 *bad)
{
	struct scatterlist *sg;
	u64 off = 0;
	unsigned int i;

	for_each_sgtable_dma_sg(sgt, sg, i) {
		phys_addr_t phys = dma_to_phys(dev, sg_dma_address(sg));
		unsigned int len = sg_dma_len(sg), done, k;

		for (done = 0; done < len; done += PAGE_SIZE) {
			u32 *p = kmap_local_page(pfn_to_page(PHYS_PFN(phys + done)));
			int ok = 1;

			for (k = 0; k < PAGE_SIZE / 4; k++, off += 4) {
				if (p[k] != kfdpool_importer_word(seed, off)) {
					*bad = off;
					ok = 0;
					break;
				}
				p[k] = kfdpool_importer_word(seed + 1, off);
			}
			kunmap_local(p);
			if (!ok)
				return -EILSEQ;
		}
	}
	return 0;
}

#if defined(KFDPOOL_HAVE_IOSYS_MAP) || defined(KFDPOOL_HAVE_DMA_BUF_MAP)
static void *kfdpool_importer_vmap(struct dma_buf *dmabuf)
{
	struct iosys_map map;
	int ret;

#ifdef KFDPOOL_HAVE_DMA_BUF_VMAP_UNLOCKED
	ret = dma_buf_vmap_unlocked(dmabuf, &map);
#else
	ret = dma_buf_vmap(dmabuf, &map);
#endif
	return ret ? ERR_PTR(ret) : map.vaddr;
}

static void kfdpool_importer_vunmap(struct dma_buf *dmabuf, void *vaddr)
{
	struct iosys_map map;

	iosys_map_set_vaddr(&map, vaddr);
#ifdef KFDPOOL_HAVE_DMA_BUF_VMAP_UNLOCKED
	dma_buf_vunmap_unlocked(dmabuf, &map);
#else
	dma_buf_vunmap(dmabuf, &map);
#endif
}
#else
/* Older kernels' dma_buf_vmap() returns the address. */
static void *kfdpool_importer_vmap(struct dma_buf *dmabuf)
{
	void *vaddr = dma_buf_vmap(dmabuf);

	return vaddr ?: ERR_PTR(-ENOMEM);
}

static void kfdpool_importer_vunmap(struct dma_buf *dmabuf, void *vaddr)
{
	dma_buf_vunmap(dmabuf, vaddr);
}
#endif

/* As the CPU, through vmap: read @seed + 1, write @seed + 2. */
static int kfdpool_importer_cpu(struct dma_buf *dmabuf, u32 seed, u64 *bad,
				u32 *stage)
{
	u32 *p;
	u64 off;
	int ret;

	*stage = 4;
	ret = dma_buf_begin_cpu_access(dmabuf, DMA_BIDIRECTIONAL);
	if (ret)
		return ret;
	p = kfdpool_importer_vmap(dmabuf);
	if (IS_ERR(p)) {
		ret = PTR_ERR(p);
		goto out_cpu;
	}
	*stage = 5;
	for (off = 0; off < dmabuf->size; off += 4) {
		if (p[off / 4] != kfdpool_importer_word(seed + 1, off)) {
			*bad = off;
			ret = -EILSEQ;
			break;
		}
		p[off / 4] = kfdpool_importer_word(seed + 2, off);
	}
	if (!ret)
		*stage = 0;
	kfdpool_importer_vunmap(dmabuf, p);
out_cpu:
	dma_buf_end_cpu_access(dmabuf, DMA_BIDIRECTIONAL);
	return ret;
}

static long kfdpool_importer_check(struct kfdpool_importer_check *c)
{
	struct device *dev = &kfdpool_importer_pdev->dev;
	struct dma_buf_attachment *attach;
	struct dma_buf *dmabuf;
	struct sg_table *sgt;
	long ret;

	if (get_dma_ops(dev))
		return -EOPNOTSUPP;	/* DMA addresses are not physical */
	dmabuf = dma_buf_get(c->fd);
	if (IS_ERR(dmabuf))
		return PTR_ERR(dmabuf);
	c->stage = 1;
	attach = dma_buf_attach(dmabuf, dev);
	if (IS_ERR(attach)) {
		ret = PTR_ERR(attach);
		goto out_put;
	}
	c->stage = 2;
	sgt = dma_buf_map_attachment_unlocked(attach, DMA_BIDIRECTIONAL);
	if (IS_ERR(sgt)) {
		ret = PTR_ERR(sgt);
		goto out_detach;
	}
	c->segments = sgt->nents;
	c->stage = 3;
	ret = kfdpool_importer_device(dev, sgt, c->seed, &c->bad_offset);
	dma_buf_unmap_attachment_unlocked(attach, sgt, DMA_BIDIRECTIONAL);
	dma_buf_detach(dmabuf, attach);
	if (!ret)
		ret = kfdpool_importer_cpu(dmabuf, c->seed, &c->bad_offset,
					   &c->stage);
	goto out_put;

out_detach:
	dma_buf_detach(dmabuf, attach);
out_put:
	dma_buf_put(dmabuf);
	return ret;
}

static long kfdpool_importer_ioctl(struct file *file, unsigned int cmd,
				   unsigned long arg)
{
	struct kfdpool_importer_check c;
	long ret;

	if (cmd != KFDPOOL_IMPORTER_CHECK)
		return -ENOTTY;
	if (copy_from_user(&c, (void __user *)arg, sizeof(c)))
		return -EFAULT;
	c.stage = 0;
	c.segments = 0;
	c.bad_offset = 0;
	ret = kfdpool_importer_check(&c);
	/* The details matter most when it failed. */
	if (copy_to_user((void __user *)arg, &c, sizeof(c)))
		return -EFAULT;
	return ret;
}

static const struct file_operations kfdpool_importer_fops = {
	.owner = THIS_MODULE,
	.unlocked_ioctl = kfdpool_importer_ioctl,
};

static struct miscdevice kfdpool_importer_misc = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "kfdpool_importer",
	.fops = &kfdpool_importer_fops,
};

static int __init kfdpool_importer_init(void)
{
	int ret;

	kfdpool_importer_pdev =
		platform_device_register_simple("kfdpool_importer",
						PLATFORM_DEVID_NONE, NULL, 0);
	if (IS_ERR(kfdpool_importer_pdev))
		return PTR_ERR(kfdpool_importer_pdev);
	ret = dma_coerce_mask_and_coherent(&kfdpool_importer_pdev->dev,
					   DMA_BIT_MASK(64));
	if (!ret)
		ret = misc_register(&kfdpool_importer_misc);
	if (ret)
		platform_device_unregister(kfdpool_importer_pdev);
	return ret;
}

static void __exit kfdpool_importer_exit(void)
{
	misc_deregister(&kfdpool_importer_misc);
	platform_device_unregister(kfdpool_importer_pdev);
}

module_init(kfdpool_importer_init);
module_exit(kfdpool_importer_exit);

MODULE_DESCRIPTION("kfdpool selftests: a dma-buf importer that checks bytes");
MODULE_LICENSE("GPL");
