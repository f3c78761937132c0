// SPDX-License-Identifier: GPL-2.0-only
/*
 * 5.10 marks pages charged with __GFP_ACCOUNT by a page type (PageKmemcg),
 * which shares its field with the mapcount; later kernels keep the charge
 * in page->memcg_data alone.
 */
#include <linux/mm.h>

bool kfdpool_probe(struct page *page);
bool kfdpool_probe(struct page *page)
{
	return PageKmemcg(page) && page->mem_cgroup;
}
