// SPDX-License-Identifier: GPL-2.0-only
/*
 * sg_alloc_table_from_pages_segment() (5.15) bounds segments by a size;
 * before it, __sg_alloc_table_from_pages() did, returning the last
 * scatterlist entry.
 */
#include <linux/scatterlist.h>

int kfdpool_probe(struct sg_table *sgt, struct page **pages);
int kfdpool_probe(struct sg_table *sgt, struct page **pages)
{
	return sg_alloc_table_from_pages_segment(sgt, pages, 1, 0, PAGE_SIZE,
						 PAGE_SIZE, GFP_KERNEL);
}
