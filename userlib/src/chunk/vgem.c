// SPDX-License-Identifier: MIT
/*
 * Host chunks from vgem, through libdrm: a dumb buffer exported with PRIME
 * (DRM_RDWR so importers may map it writable).  vgem is the one exporter
 * Debian's 6.1 and 6.12 kernels share.  The card is found by driver name.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <xf86drm.h>

#include "backend.h"

static pthread_mutex_t vgem_lock = PTHREAD_MUTEX_INITIALIZER;
static int vgem_fd = -1;
static pid_t vgem_pid;

/* Held across fork() (hip/hip_fork.c), so that a child never inherits it
 * locked. */
void kp_vgem_fork(int prepare)
{
	if (prepare)
		pthread_mutex_lock(&vgem_lock);
	else
		pthread_mutex_unlock(&vgem_lock);
}

static int vgem_open(void)
{
	char path[64];
	int i, fd, ret = -ENODEV;

	pthread_mutex_lock(&vgem_lock);
	if (vgem_fd >= 0 && vgem_pid == getpid()) {
		pthread_mutex_unlock(&vgem_lock);
		return vgem_fd;
	}
	for (i = 0; i < 64; i++) {
		drmVersionPtr v;

		snprintf(path, sizeof(path), "/dev/dri/card%d", i);
		fd = open(path, O_RDWR | O_CLOEXEC);
		if (fd < 0)
			continue;
		v = drmGetVersion(fd);
		if (v && v->name && !strcmp(v->name, "vgem")) {
			drmFreeVersion(v);
			/* The fd stays open for the process: it owns no
			 * buffers (handles are closed after export). */
			vgem_fd = fd;
			vgem_pid = getpid();
			ret = fd;
			break;
		}
		if (v)
			drmFreeVersion(v);
		close(fd);
	}
	pthread_mutex_unlock(&vgem_lock);
	return ret;
}

static int vgem_probe(void)
{
	int fd = vgem_open();

	return fd < 0 ? fd : 0;
}

static int vgem_alloc(int dev, uint64_t size, struct kp_mem *m)
{
	struct drm_mode_create_dumb c;
	struct drm_gem_close gc;
	int fd = vgem_open(), dfd = -1, ret;

	(void)dev;
	memset(m, 0, sizeof(*m));
	m->dmabuf_fd = -1;
	if (fd < 0)
		return fd;
	/*
	 * DRM_IOCTL_MODE_CREATE_DUMB computes the size in 32 bits and
	 * answers EINVAL past it (drm_mode_create_dumb()): too big, so
	 * E2BIG (out of memory) before asking.
	 */
	if (size / 4096 > UINT32_MAX / 4096)
		return -E2BIG;
	/* 4096 bytes a row, one byte a pixel: size is a page multiple. */
	memset(&c, 0, sizeof(c));
	c.width = 4096;
	c.height = size / 4096;
	c.bpp = 8;
	if (drmIoctl(fd, DRM_IOCTL_MODE_CREATE_DUMB, &c))
		return -errno;
	ret = drmPrimeHandleToFD(fd, c.handle, DRM_RDWR | DRM_CLOEXEC, &dfd);
	if (ret)
		ret = -errno;
	memset(&gc, 0, sizeof(gc));
	gc.handle = c.handle;
	drmIoctl(fd, DRM_IOCTL_GEM_CLOSE, &gc);
	if (ret)
		return ret;
	ret = kp_host_map(dfd, size, &m->addr);
	if (ret) {
		close(dfd);
		return ret;
	}
	m->dmabuf_fd = dfd;
	m->size = size;
	return 0;
}

static void vgem_free(struct kp_mem *m)
{
	kp_host_unmap_import(m);
	if (m->dmabuf_fd >= 0)
		close(m->dmabuf_fd);
	m->dmabuf_fd = -1;
}

const struct kp_backend kp_backend_vgem = {
	.name = "vgem",
	.probe = vgem_probe,
	.alloc = vgem_alloc,
	.free = vgem_free,
	.map_import = kp_host_map_import,
	.unmap_import = kp_host_unmap_import,
};
