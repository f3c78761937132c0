// SPDX-License-Identifier: MIT
/*
 * Host chunks from a sealed memfd turned into a dma-buf by /dev/udmabuf.
 * The process maps the memfd itself (the same pages the dma-buf holds) and
 * closes it: the dma-buf keeps the pages.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>
#include <linux/udmabuf.h>

#include "backend.h"

#define UDMABUF_PATH "/dev/udmabuf"
#define UDMABUF_LIMIT "/sys/module/udmabuf/parameters/size_limit_mb"

/*
 * Is @size over udmabuf's size_limit_mb?  1 when it is or the limit cannot
 * be read, 0 when it is not.  UDMABUF_CREATE answers EINVAL for a buffer
 * over the limit (drivers/dma-buf/udmabuf.c, udmabuf_create()); its other
 * EINVALs (offset or size not page-aligned, no pages, a memfd without
 * F_SEAL_SHRINK or with F_SEAL_WRITE, unknown flags) cannot come from the
 * request made here, so an EINVAL whose cause cannot be read is the limit.
 */
static int udmabuf_over_limit(uint64_t size)
{
	unsigned long long mb;
	FILE *f = fopen(UDMABUF_LIMIT, "re");
	int n;

	if (!f)
		return 1;
	n = fscanf(f, "%llu", &mb);
	fclose(f);
	return n != 1 || size > (mb << 20);
}

static int udmabuf_probe(void)
{
	return access(UDMABUF_PATH, R_OK | W_OK) ? -errno : 0;
}

static int udmabuf_alloc(int dev, uint64_t size, struct kp_mem *m)
{
	struct udmabuf_create c;
	int memfd, ufd, fd, ret;

	(void)dev;
	memset(m, 0, sizeof(*m));
	m->dmabuf_fd = -1;
	memfd = memfd_create("kfdpool-chunk", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (memfd < 0)
		return -errno;
	if (ftruncate(memfd, size) ||
	    fcntl(memfd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW)) {
		ret = -errno;
		goto out_memfd;
	}
	ufd = open(UDMABUF_PATH, O_RDWR | O_CLOEXEC);
	if (ufd < 0) {
		ret = -errno;
		goto out_memfd;
	}
	memset(&c, 0, sizeof(c));
	c.memfd = memfd;
	c.flags = UDMABUF_FLAGS_CLOEXEC;
	c.offset = 0;
	c.size = size;
	fd = ioctl(ufd, UDMABUF_CREATE, &c);
	ret = fd < 0 ? -errno : 0;
	close(ufd);
	/* Too big for udmabuf is out of memory, not a bad argument. */
	if (ret == -EINVAL && udmabuf_over_limit(size))
		ret = -E2BIG;
	if (ret)
		goto out_memfd;
	ret = kp_host_map(memfd, size, &m->addr);
	if (ret) {
		close(fd);
		goto out_memfd;
	}
	m->dmabuf_fd = fd;
	m->size = size;
out_memfd:
	close(memfd);
	return ret;
}

static void udmabuf_free(struct kp_mem *m)
{
	kp_host_unmap_import(m);
	if (m->dmabuf_fd >= 0)
		close(m->dmabuf_fd);
	m->dmabuf_fd = -1;
}

const struct kp_backend kp_backend_udmabuf = {
	.name = "udmabuf",
	.probe = udmabuf_probe,
	.alloc = udmabuf_alloc,
	.free = udmabuf_free,
	.map_import = kp_host_map_import,
	.unmap_import = kp_host_unmap_import,
};
