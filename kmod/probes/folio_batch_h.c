// SPDX-License-Identifier: GPL-2.0-only
/* Folio batches moved from <linux/pagevec.h> to <linux/folio_batch.h>. */
#include <linux/folio_batch.h>

void kfdpool_probe(struct folio_batch *fbatch);
void kfdpool_probe(struct folio_batch *fbatch)
{
	folio_batch_init(fbatch);
}
