/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Backports: the module is written against the newest kernel API, and
 * this header supplies what older kernels lack or name differently, as
 * the probes (kmod/probes/, KFDPOOL_HAVE_*) found them.  A shim goes when
 * the oldest supported kernel has what it stands in for.
 */
#ifndef _KFDPOOL_COMPAT_H
#define _KFDPOOL_COMPAT_H

#include <linux/err.h>
#include <linux/file.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/rbtree.h>
#include <linux/scatterlist.h>

#include "kfdpool_features.h"

#ifdef KFDPOOL_HAVE_IMPORT_NS_IDENT
#define KFDPOOL_IMPORT_NS_DMA_BUF()	MODULE_IMPORT_NS(DMA_BUF)
#else
#define KFDPOOL_IMPORT_NS_DMA_BUF()	MODULE_IMPORT_NS("DMA_BUF")
#endif

/* Secrets are compared with crypto_memneq(). */
#if !IS_ENABLED(CONFIG_CRYPTO_LIB_UTILS) && !IS_ENABLED(CONFIG_CRYPTO)
#error "kfdpool needs crypto_memneq(): enable CONFIG_CRYPTO_LIB_UTILS or CONFIG_CRYPTO"
#endif

/* ALLOC charges RLIMIT_MEMLOCK in user_struct.locked_vm. */
#ifndef KFDPOOL_HAVE_USER_LOCKED_VM
#error "kfdpool needs user_struct.locked_vm: enable CONFIG_NET or CONFIG_IO_URING"
#endif

#if IS_ENABLED(CONFIG_IO_URING) && \
	(defined(KFDPOOL_HAVE_URING_CMD_SQE128) || \
	 defined(KFDPOOL_HAVE_URING_CMD_H) || \
	 defined(KFDPOOL_HAVE_URING_CMD_LEGACY))
#define KFDPOOL_HAVE_URING	1
#elif IS_ENABLED(CONFIG_IO_URING) && defined(KFDPOOL_HAVE_FOPS_URING_CMD)
#error "kfdpool: unknown io_uring command API (see kmod/probes/uring_cmd_*.c)"
#endif

#ifdef KFDPOOL_HAVE_URING
#if defined(KFDPOOL_HAVE_URING_CMD_SQE128) || defined(KFDPOOL_HAVE_URING_CMD_H)
#include <linux/io_uring/cmd.h>
#else
#include <linux/io_uring.h>
#endif

/* The command's payload in its SQE, as a @type. */
#if defined(KFDPOOL_HAVE_URING_CMD_SQE128)
#define kfdpool_uring_cmd_payload(ioucmd, type) \
	io_uring_sqe128_cmd((ioucmd)->sqe, type)
#elif defined(KFDPOOL_HAVE_URING_CMD_H)
#define kfdpool_uring_cmd_payload(ioucmd, type) \
	((const type *)io_uring_sqe_cmd((ioucmd)->sqe))
#else
#define kfdpool_uring_cmd_payload(ioucmd, type) \
	((const type *)(ioucmd)->cmd)
#endif

/*
 * The io_uring whose command API is in <linux/io_uring.h> never completes
 * a positive result returned from an io-wq worker: complete such results
 * (fds, batch counts) here, as asynchronous drivers do.
 */
static inline int kfdpool_uring_cmd_result(struct io_uring_cmd *cmd, int ret,
					   unsigned int issue_flags)
{
#ifdef KFDPOOL_HAVE_URING_CMD_LEGACY
	if (ret <= 0)
		return ret;
#ifdef KFDPOOL_HAVE_URING_CMD_DONE4
	io_uring_cmd_done(cmd, ret, 0, issue_flags);
#else
	io_uring_cmd_done(cmd, ret, 0);
#endif
	return -EIOCBQUEUED;
#else
	return ret;
#endif
}

/*
 * -EAGAIN from a nonblocking issue has io_uring issue the command again from
 * io-wq, with ->sqe.  6.1 and 6.14 on point it at their copy of the SQE.
 * 6.10 to 6.13 copy the SQE into the command's async data then, but leave
 * ->sqe pointing into the SQ ring, which user space may have refilled by the
 * time io-wq gets to it: point it at the copy as later kernels do.
 */
static inline int kfdpool_uring_cmd_again(struct io_uring_cmd *cmd)
{
#if defined(KFDPOOL_HAVE_URING_CMD_H) && \
	!defined(KFDPOOL_HAVE_URING_CMD_DATA) && \
	!defined(IORING_URING_CMD_REISSUE)
	struct io_kiocb *req = cmd_to_io_kiocb(cmd);

	if ((req->flags & REQ_F_ASYNC_DATA) && cmd->sqe != req->async_data) {
		memcpy(req->async_data, cmd->sqe,
		       2 * sizeof(struct io_uring_sqe));
		cmd->sqe = req->async_data;
	}
#endif
	return -EAGAIN;
}
#endif /* KFDPOOL_HAVE_URING */

#ifndef KFDPOOL_HAVE_RB_ADD
static inline void rb_add(struct rb_node *node, struct rb_root *tree,
			  bool (*less)(struct rb_node *, const struct rb_node *))
{
	struct rb_node **link = &tree->rb_node, *parent = NULL;

	while (*link) {
		parent = *link;
		link = less(node, parent) ? &parent->rb_left : &parent->rb_right;
	}
	rb_link_node(node, parent, link);
	rb_insert_color(node, tree);
}

static inline struct rb_node *
rb_find(const void *key, const struct rb_root *tree,
	int (*cmp)(const void *key, const struct rb_node *))
{
	struct rb_node *node = tree->rb_node;
	int c;

	while (node) {
		c = cmp(key, node);
		if (!c)
			return node;
		node = c < 0 ? node->rb_left : node->rb_right;
	}
	return NULL;
}
#endif

#ifdef KFDPOOL_HAVE_PAGE_KMEMCG
/*
 * 5.10 marks a page charged with __GFP_ACCOUNT by a page type, kept where
 * mapping the page counts its mappings: off while the buffer holds the
 * page (its memcg stays in page->mem_cgroup), on again before the buffer
 * lets go of it, unmapped, so that its free uncharges it.  (What
 * __ClearPageKmemcg() and __SetPageKmemcg() do: page types are inverted.)
 */
static inline void kfdpool_page_mappable(struct page *page)
{
	if (PageKmemcg(page))
		page->page_type |= PG_kmemcg;
}

static inline void kfdpool_page_freeable(struct page *page)
{
	if (page->mem_cgroup)
		page->page_type &= ~PG_kmemcg;
}
#else
static inline void kfdpool_page_mappable(struct page *page) {}
static inline void kfdpool_page_freeable(struct page *page) {}
#endif

#ifdef KFDPOOL_HAVE_FOLIO
#define kfdpool_set_folio_index(page, i)	(page_folio(page)->index = (i))
#else
#define kfdpool_set_folio_index(page, i)	((page)->index = (i))
#endif

#ifndef KFDPOOL_HAVE_VM_FLAGS_SET
static inline void vm_flags_set(struct vm_area_struct *vma, vm_flags_t flags)
{
	vma->vm_flags |= flags;
}
#endif

#ifndef KFDPOOL_HAVE_SG_ALLOC_TABLE_FROM_PAGES_SEGMENT
static inline int
sg_alloc_table_from_pages_segment(struct sg_table *sgt, struct page **pages,
				  unsigned int n_pages, unsigned int offset,
				  unsigned long size, unsigned int max_segment,
				  gfp_t gfp_mask)
{
	return PTR_ERR_OR_ZERO(__sg_alloc_table_from_pages(sgt, pages, n_pages,
							   offset, size,
							   max_segment, NULL,
							   0, gfp_mask));
}
#endif

#if !defined(KFDPOOL_HAVE_IOSYS_MAP) && defined(KFDPOOL_HAVE_DMA_BUF_MAP)
#include <linux/dma-buf-map.h>
#define iosys_map		dma_buf_map
#define iosys_map_set_vaddr	dma_buf_map_set_vaddr
#endif

#ifndef KFDPOOL_HAVE_IS_COW_MAPPING
static inline bool is_cow_mapping(vm_flags_t flags)
{
	return (flags & (VM_SHARED | VM_MAYWRITE)) == VM_MAYWRITE;
}
#endif

#endif /* _KFDPOOL_COMPAT_H */
