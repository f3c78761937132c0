// SPDX-License-Identifier: GPL-2.0-only
/*
 * Folio batches, and check_move_unevictable_folios() taking one, replaced
 * page vectors and check_move_unevictable_pages(); older kernels have only
 * those, and no folios.  (Where struct folio_batch is defined is
 * folio_batch_h.c's question.)
 */
#include <linux/mm.h>
#include <linux/swap.h>

void kfdpool_probe(struct page *page);
void kfdpool_probe(struct page *page)
{
	check_move_unevictable_folios(NULL);
	folio_mark_dirty(page_folio(page));
}
