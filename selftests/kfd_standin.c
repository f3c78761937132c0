// SPDX-License-Identifier: GPL-2.0-only
/*
 * TEST-ONLY STAND-IN for amdkfd and libdrm_amdgpu, for libkfdpool-hip's kfd
 * backend (userlib/src/chunk/kfd.c) in a process without a HIP runtime.
 * Not a driver: no GPU, never installed.  Built as build/selftests/standin/
 * libkfd-standin.so and loaded with LD_PRELOAD by lib_kfd_standin_test, it
 * answers what the backend asks of the node, as Linux 6.12's amdkfd and
 * libdrm_amdgpu answer it:
 *
 *   /dev/kfd      open, GET_VERSION (1.17); ioctls from a process other
 *                 than the one that opened the file fail with EBADF
 *                 (kfd_chardev.c, kfd_ioctl: "process->lead_thread !=
 *                 current->group_leader")
 *   topology      /sys/class/kfd/kfd/topology/nodes: node 0 a CPU
 *                 (gpu_id 0), node 1 a GPU (gpu_id 4660, render minor
 *                 128, PCI 0000:03:00.0)
 *   ACQUIRE_VM    per open render file: a file whose VM is already a
 *                 compute VM (of any process) gives EINVAL
 *                 (amdgpu_amdkfd_gpuvm.c, amdgpu_amdkfd_gpuvm_acquire_
 *                 process_vm: "Already a compute VM?"); the same process
 *                 with another file for the GPU gives EBUSY, with the same
 *                 file 0 (kfd_chardev.c, kfd_ioctl_acquire_vm)
 *   memory        ALLOC_MEMORY_OF_GPU keeps a real dma-buf (udmabuf, the
 *                 system dma-heap or vgem) of the size, so that the kfdpool
 *                 module can pin what EXPORT_DMABUF hands out; MAP/UNMAP,
 *                 FREE, IMPORT_DMABUF (the dma-buf's size is the object's)
 *   libdrm        amdgpu_device_initialize: one device per GPU per
 *                 process, found again by the render node of the fd it is
 *                 given, holding its own dup of the first fd
 *                 (amdgpu_device.c); amdgpu_device_get_fd;
 *                 amdgpu_device_deinitialize closes the dup at the last
 *                 reference.  dlopen("libdrm_amdgpu.so.1") finds these.
 *
 * The state (which fd is which file, whose VM a file is) is plain memory,
 * so that a fork child inherits it as it inherits the files.
 * kfd_standin_log() tells a test what was asked.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
/* libdrm's drm.h first: the kernel's, which kfd_ioctl.h includes, uses
 * __user. */
#include <drm.h>

#include "kfdpool_util.h"
#include KFD_IOCTL_H

#define EXPORT __attribute__((visibility("default")))
#define MAXFD 4096
#define MAXFILES 256
#define MAXMEM 1024
#define GPU_ID 4660
#define MINOR 128
#define TOPO "/sys/class/kfd/kfd/topology/nodes/"

enum { F_NONE, F_KFD, F_RENDER };

struct file {
	int kind;
	pid_t opener;		/* kfd: the process the file belongs to */
	pid_t vm_of;		/* render: whose compute VM (0: none) */
	int acquired;		/* kfd: the render file acquired, or 0 */
};

struct mem {
	int used;
	int dmabuf;		/* the object's dma-buf */
	uint64_t va, size;
	uint32_t flags;
	int mapped;
};

/* What a test reads: the first 64 ALLOC_MEMORY_OF_GPU, how many imports
 * and ACQUIRE_VM refused with EINVAL. */
struct kfd_standin_log {
	unsigned int allocs, imports, acquire_einval;
	uint64_t va[64], size[64];
	uint32_t flags[64];
};

static int fd_file[MAXFD];		/* fd -> file index + 1 */
static struct file files[MAXFILES];
static int nfiles;
static struct mem mems[MAXMEM];
static struct kfd_standin_log g_log;

EXPORT const struct kfd_standin_log *kfd_standin_log(void)
{
	return &g_log;
}

#define REAL(name) \
	static __typeof__(name) *real; \
	if (!real) \
		real = (__typeof__(name) *)dlsym(RTLD_NEXT, #name)

static struct file *file_of(int fd)
{
	if (fd < 0 || fd >= MAXFD || !fd_file[fd])
		return NULL;
	return &files[fd_file[fd] - 1];
}

/* A fake file behind a real fd of /dev/null. */
static int fake_open(int kind)
{
	int (*ropen)(const char *, int, ...) =
		(int (*)(const char *, int, ...))dlsym(RTLD_NEXT, "open");
	int fd = ropen("/dev/null", O_RDWR | O_CLOEXEC);

	if (fd < 0 || fd >= MAXFD || nfiles == MAXFILES) {
		if (fd >= 0)
			close(fd);
		errno = EMFILE;
		return -1;
	}
	files[nfiles] = (struct file){ .kind = kind, .opener = getpid() };
	fd_file[fd] = ++nfiles;
	return fd;
}

static int which(const char *path)
{
	if (!strcmp(path, "/dev/kfd"))
		return F_KFD;
	if (!strcmp(path, "/dev/dri/renderD128"))
		return F_RENDER;
	return F_NONE;
}

/* open and open64 alike: the two names of the node files are fakes. */
#define OPEN_WRAPPER(name)						\
EXPORT int name(const char *path, int flags, ...)			\
{									\
	int kind = which(path);						\
	mode_t mode = 0;						\
	va_list ap;							\
	REAL(name);							\
									\
	if (kind)							\
		return fake_open(kind);					\
	va_start(ap, flags);						\
	if (flags & (O_CREAT | O_TMPFILE))				\
		mode = va_arg(ap, mode_t);				\
	va_end(ap);							\
	return real(path, flags, mode);					\
}
OPEN_WRAPPER(open)
OPEN_WRAPPER(open64)

EXPORT int access(const char *path, int mode)
{
	REAL(access);

	if (which(path))
		return 0;
	return real(path, mode);
}

EXPORT int close(int fd)
{
	REAL(close);

	if (fd >= 0 && fd < MAXFD)
		fd_file[fd] = 0;
	return real(fd);
}

static FILE *topo(const char *path)
{
	static const char cpu_id[] = "0\n", gpu_id[] = "4660\n";
	static const char props[] = "drm_render_minor 128\ndomain 0\n"
				    "location_id 768\n";
	const char *rest = path + strlen(TOPO);

	if (!strcmp(rest, "0/gpu_id"))
		return fmemopen((void *)cpu_id, strlen(cpu_id), "r");
	if (!strcmp(rest, "1/gpu_id"))
		return fmemopen((void *)gpu_id, strlen(gpu_id), "r");
	if (!strcmp(rest, "1/properties"))
		return fmemopen((void *)props, strlen(props), "r");
	errno = ENOENT;
	return NULL;
}

#define FOPEN_WRAPPER(name)						\
EXPORT FILE *name(const char *path, const char *mode)			\
{									\
	REAL(name);							\
									\
	if (!strncmp(path, TOPO, strlen(TOPO)))				\
		return topo(path);					\
	return real(path, mode);					\
}
FOPEN_WRAPPER(fopen)
FOPEN_WRAPPER(fopen64)

/* ---- libdrm_amdgpu ---- */

struct adev {
	int fd, refs;
	struct adev *next;
};
static struct adev *dev_list;

EXPORT int amdgpu_device_initialize(int fd, uint32_t *major, uint32_t *minor,
				    void **handle)
{
	struct file *f = file_of(fd);
	struct adev *d;
	int dup;

	if (!f || f->kind != F_RENDER)
		return -EINVAL;
	*major = 3;
	*minor = 57;
	/* One GPU here: every render fd is its node. */
	d = dev_list;
	if (d) {
		d->refs++;
		*handle = d;
		return 0;
	}
	dup = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (dup < 0 || dup >= MAXFD)
		return -errno;
	fd_file[dup] = fd_file[fd];	/* the same open file */
	d = calloc(1, sizeof(*d));
	d->fd = dup;
	d->refs = 1;
	d->next = dev_list;
	dev_list = d;
	*handle = d;
	return 0;
}

EXPORT int amdgpu_device_get_fd(void *handle)
{
	return ((struct adev *)handle)->fd;
}

EXPORT int amdgpu_device_deinitialize(void *handle)
{
	struct adev *d = handle, **p;

	if (--d->refs)
		return 0;
	for (p = &dev_list; *p; p = &(*p)->next) {
		if (*p == d) {
			*p = d->next;
			break;
		}
	}
	close(d->fd);
	free(d);
	return 0;
}

EXPORT void *dlopen(const char *name, int flags)
{
	REAL(dlopen);

	/* The names above, from this object, in the global scope. */
	if (name && !strcmp(name, "libdrm_amdgpu.so.1"))
		return real(NULL, flags);
	return real(name, flags);
}

/* ---- amdkfd ---- */

/* A real dma-buf of @size, from the first host exporter the VM has
 * (udmabuf, the system heap, vgem: kfdpool_util.h). */
static int new_dmabuf(uint64_t size)
{
	int fd = kfd_dmabuf_new((size_t)size);

	return fd < 0 ? -1 : fd;
}

static struct mem *mem_of(uint64_t handle)
{
	if (handle >= MAXMEM || !mems[handle].used)
		return NULL;
	return &mems[handle];
}

static uint64_t mem_new(int dmabuf, uint64_t va, uint64_t size,
			uint32_t flags)
{
	uint64_t h;

	for (h = 1; h < MAXMEM; h++) {
		if (!mems[h].used) {
			mems[h] = (struct mem){ 1, dmabuf, va, size, flags, 0 };
			return h;
		}
	}
	return 0;
}

static void log_mem(unsigned int n, uint64_t va, uint64_t size,
		    uint32_t flags)
{
	if (n < 64) {
		g_log.va[n] = va;
		g_log.size[n] = size;
		g_log.flags[n] = flags;
	}
}

static int standin_kfd_ioctl(struct file *kf, unsigned long req, void *arg)
{
	if (kf->opener != getpid())
		return -EBADF;
	switch (req) {
	case AMDKFD_IOC_GET_VERSION: {
		struct kfd_ioctl_get_version_args *v = arg;

		v->major_version = 1;
		v->minor_version = 17;
		return 0;
	}
	case AMDKFD_IOC_ACQUIRE_VM: {
		struct kfd_ioctl_acquire_vm_args *a = arg;
		struct file *rf = file_of((int)a->drm_fd);

		if (!rf || rf->kind != F_RENDER || a->gpu_id != GPU_ID)
			return -EINVAL;
		if (kf->acquired)
			return kf->acquired == fd_file[a->drm_fd] ? 0 : -EBUSY;
		if (rf->vm_of) {
			g_log.acquire_einval++;
			return -EINVAL;
		}
		rf->vm_of = getpid();
		kf->acquired = fd_file[a->drm_fd];
		return 0;
	}
	case AMDKFD_IOC_ALLOC_MEMORY_OF_GPU: {
		struct kfd_ioctl_alloc_memory_of_gpu_args *a = arg;
		int buf;

		if (!kf->acquired || a->gpu_id != GPU_ID)
			return -EINVAL;
		log_mem(g_log.allocs++, a->va_addr, a->size, a->flags);
		buf = new_dmabuf(a->size);
		if (buf < 0)
			return -ENOMEM;
		a->handle = mem_new(buf, a->va_addr, a->size, a->flags);
		if (!a->handle) {
			close(buf);
			return -ENOMEM;
		}
		return 0;
	}
	case AMDKFD_IOC_IMPORT_DMABUF: {
		struct kfd_ioctl_import_dmabuf_args *a = arg;
		off_t end = lseek((int)a->dmabuf_fd, 0, SEEK_END);
		int buf;

		if (!kf->acquired || end <= 0)
			return -EINVAL;
		buf = fcntl((int)a->dmabuf_fd, F_DUPFD_CLOEXEC, 0);
		if (buf < 0)
			return -errno;
		g_log.imports++;
		a->handle = mem_new(buf, a->va_addr, (uint64_t)end, 0);
		if (!a->handle) {
			close(buf);
			return -ENOMEM;
		}
		return 0;
	}
	case AMDKFD_IOC_MAP_MEMORY_TO_GPU:
	case AMDKFD_IOC_UNMAP_MEMORY_FROM_GPU: {
		struct kfd_ioctl_map_memory_to_gpu_args *a = arg;
		struct mem *m = mem_of(a->handle);
		const uint32_t *ids = (const uint32_t *)(uintptr_t)a->device_ids_array_ptr;

		if (!m || a->n_devices != 1 || ids[0] != GPU_ID)
			return -EINVAL;
		m->mapped = req == AMDKFD_IOC_MAP_MEMORY_TO_GPU;
		a->n_success = 1;
		return 0;
	}
	case AMDKFD_IOC_EXPORT_DMABUF: {
		struct kfd_ioctl_export_dmabuf_args *e = arg;
		struct mem *m = mem_of(e->handle);
		int fd;

		if (!m)
			return -EINVAL;
		fd = fcntl(m->dmabuf, (e->flags & O_CLOEXEC) ?
			   F_DUPFD_CLOEXEC : F_DUPFD, 0);
		if (fd < 0)
			return -errno;
		e->dmabuf_fd = (uint32_t)fd;
		return 0;
	}
	case AMDKFD_IOC_FREE_MEMORY_OF_GPU: {
		struct kfd_ioctl_free_memory_of_gpu_args *f = arg;
		struct mem *m = mem_of(f->handle);

		if (!m)
			return -EINVAL;
		close(m->dmabuf);
		m->used = 0;
		return 0;
	}
	}
	return -EINVAL;
}

EXPORT int ioctl(int fd, unsigned long req, ...)
{
	struct file *f = file_of(fd);
	va_list ap;
	void *arg;
	int ret;
	REAL(ioctl);

	va_start(ap, req);
	arg = va_arg(ap, void *);
	va_end(ap);
	if (!f)
		return real(fd, req, arg);
	ret = f->kind == F_KFD ? standin_kfd_ioctl(f, req, arg) : -ENOTTY;
	if (ret < 0) {
		errno = -ret;
		return -1;
	}
	return ret;
}
