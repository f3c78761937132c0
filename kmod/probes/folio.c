// SPDX-License-Identifier: GPL-2.0-only
/* struct folio (5.16): before it, a compound page's head stood for it. */
#include <linux/mm.h>

void kfdpool_probe(struct page *page);
void kfdpool_probe(struct page *page)
{
	page_folio(page)->index = 0;
}
