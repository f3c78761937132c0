// SPDX-License-Identifier: GPL-2.0-only
/*
 * A dma-buf exporter's vmap fills a struct iosys_map from 5.18 on; from
 * 5.11 to 5.17 the same structure was struct dma_buf_map (probe
 * dma_buf_map); before that vmap returned the address.
 */
#include <linux/dma-buf.h>
#include <linux/iosys-map.h>

static int kfdpool_probe_vmap(struct dma_buf *dmabuf, struct iosys_map *map)
{
	iosys_map_set_vaddr(map, NULL);
	return 0;
}

const struct dma_buf_ops kfdpool_probe_ops = {
	.vmap = kfdpool_probe_vmap,
};
