// SPDX-License-Identifier: GPL-2.0-only
/* struct dma_buf_map, the name of struct iosys_map from 5.11 to 5.17. */
#include <linux/dma-buf.h>
#include <linux/dma-buf-map.h>

static int kfdpool_probe_vmap(struct dma_buf *dmabuf, struct dma_buf_map *map)
{
	dma_buf_map_set_vaddr(map, NULL);
	return 0;
}

const struct dma_buf_ops kfdpool_probe_ops = {
	.vmap = kfdpool_probe_vmap,
};
