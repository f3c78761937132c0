// SPDX-License-Identifier: MIT
/* Host chunks from the system dma-buf heap, /dev/dma_heap/system. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include <linux/dma-heap.h>

#include "backend.h"

#define HEAP_PATH "/dev/dma_heap/system"

static int heap_probe(void)
{
	return access(HEAP_PATH, R_OK | W_OK) ? -errno : 0;
}

static int heap_alloc(int dev, uint64_t size, struct kp_mem *m)
{
	struct dma_heap_allocation_data d;
	int hfd, ret;

	(void)dev;
	memset(m, 0, sizeof(*m));
	m->dmabuf_fd = -1;
	hfd = open(HEAP_PATH, O_RDWR | O_CLOEXEC);
	if (hfd < 0)
		return -errno;
	memset(&d, 0, sizeof(d));
	d.len = size;
	d.fd_flags = O_RDWR | O_CLOEXEC;
	ret = ioctl(hfd, DMA_HEAP_IOCTL_ALLOC, &d) ? -errno : 0;
	close(hfd);
	if (ret)
		return ret;
	ret = kp_host_map(d.fd, size, &m->addr);
	if (ret) {
		close(d.fd);
		return ret;
	}
	m->dmabuf_fd = d.fd;
	m->size = size;
	return 0;
}

static void heap_free(struct kp_mem *m)
{
	kp_host_unmap_import(m);
	if (m->dmabuf_fd >= 0)
		close(m->dmabuf_fd);
	m->dmabuf_fd = -1;
}

const struct kp_backend kp_backend_dmaheap = {
	.name = "dmaheap",
	.probe = heap_probe,
	.alloc = heap_alloc,
	.free = heap_free,
	.map_import = kp_host_map_import,
	.unmap_import = kp_host_unmap_import,
};
