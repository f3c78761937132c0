// SPDX-License-Identifier: GPL-2.0-only
/*
 * kmap_local_page() and kunmap_local() replaced kmap_atomic() for short
 * mappings.  Used by the selftests' importer module.
 */
#include <linux/highmem.h>

void kfdpool_probe(struct page *page);
void kfdpool_probe(struct page *page)
{
	kunmap_local(kmap_local_page(page));
}
