// SPDX-License-Identifier: GPL-2.0-only
/*
 * From 6.2 dma_buf_vmap() wants the reservation lock held and
 * dma_buf_vmap_unlocked() takes it; 6.1 has only dma_buf_vmap(), which
 * locks by itself.  Used by the selftests' importer module.
 */
#include <linux/dma-buf.h>
#include <linux/iosys-map.h>

int kfdpool_probe(struct dma_buf *dmabuf, struct iosys_map *map);
int kfdpool_probe(struct dma_buf *dmabuf, struct iosys_map *map)
{
	return dma_buf_vmap_unlocked(dmabuf, map);
}
