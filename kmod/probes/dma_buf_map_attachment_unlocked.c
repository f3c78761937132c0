// SPDX-License-Identifier: GPL-2.0-only
/*
 * dma_buf_map_attachment_unlocked() takes the reservation lock for an
 * importer that does not hold it; older kernels' dma_buf_map_attachment()
 * takes none for a static importer.  Used by the selftests' importer module.
 */
#include <linux/dma-buf.h>

struct sg_table *kfdpool_probe(struct dma_buf_attachment *attach);
struct sg_table *kfdpool_probe(struct dma_buf_attachment *attach)
{
	return dma_buf_map_attachment_unlocked(attach, DMA_BIDIRECTIONAL);
}
