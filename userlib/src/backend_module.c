// SPDX-License-Identifier: MIT
/*
 * Host chunks from kfdpool.ko itself (KFDPOOL_IOC_ALLOC): the module
 * allocates the memory, charges it and pins it as the entry in one call,
 * so this backend needs nothing but /dev/kfdpool.  The chunk's dma-buf is
 * mapped like any other; its mapping holds ordinary pages, which
 * hipHostRegister and io_uring fixed buffers accept.  The cookie is 0: the
 * chunk's address is not known before it is mapped.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "kfdpool.h"
#include "backend.h"
#include "internal.h"

static int module_probe(void)
{
	uint32_t features = 0;
	int ret = kp_module_info(&features, NULL);

	if (ret)
		return ret;
	return (features & KFDPOOL_FEATURE_HOST_ALLOC) ? 0 : -EOPNOTSUPP;
}

static int module_alloc_pinned(int pool_fd, uint64_t size, struct kp_mem *m,
			       uint32_t *entry_id)
{
	int fd, ret;

	memset(m, 0, sizeof(*m));
	m->dmabuf_fd = -1;
	fd = kfdpool_alloc(pool_fd, size, 0, entry_id);
	if (fd < 0)
		return fd;
	ret = kp_host_map(fd, size, &m->addr);
	if (ret) {
		close(fd);
		kfdpool_unpin(pool_fd, *entry_id, NULL, NULL);
		return ret;
	}
	m->dmabuf_fd = fd;
	m->size = size;
	return 0;
}

static void module_free(struct kp_mem *m)
{
	kp_host_unmap_import(m);
	if (m->dmabuf_fd >= 0)
		close(m->dmabuf_fd);
	m->dmabuf_fd = -1;
}

const struct kp_backend kp_backend_module = {
	.name = "module",
	.probe = module_probe,
	.alloc_pinned = module_alloc_pinned,
	.free = module_free,
	.map_import = kp_host_map_import,
	.unmap_import = kp_host_unmap_import,
};
