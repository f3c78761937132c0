// SPDX-License-Identifier: MIT
/*
 * GPU chunks through amdkfd, for device pools on nodes with /dev/kfd.
 *
 * Built against the kfd_ioctl.h of the 6.12 kernel headers (KFD 1.17; the
 * build passes its path as KFD_IOCTL_H), because the linux-libc-dev copy is
 * KFD 1.11 and lacks AMDKFD_IOC_EXPORT_DMABUF.  Without a new enough header
 * the backend compiles to a stub that reports -ENODEV.
 *
 * Not run on AMD hardware: the machines this was written on have no GPU.
 *
 * Per process: /dev/kfd, GET_VERSION (1.12 or later), and for each GPU node
 * of /sys/class/kfd/kfd/topology the render node (drm_render_minor) given to
 * ACQUIRE_VM.  A chunk is a VRAM BO at a reserved virtual address, mapped to
 * its GPU and exported as a dma-buf; an import is IMPORT_DMABUF at a fresh
 * reserved address, mapped to the GPU.
 *
 * Used only in processes without a HIP runtime, and it must never make one
 * that arrives later (dlopen) fail: KFD accepts one DRM file per GPU per
 * process (kfd_ioctl_acquire_vm: -EBUSY for another).  So the render node
 * goes through libdrm_amdgpu as libhsakmt does (fmm.c:
 * amdgpu_device_initialize, then amdgpu_device_get_fd): libdrm_amdgpu keeps
 * one device per GPU in the process and hands every later caller the file
 * of the first, so ROCr's ACQUIRE_VM later gets this same file, which KFD
 * accepts.  That needs the process's one shared libdrm_amdgpu.so.1 (a
 * static copy would keep a device list of its own): it is opened at run
 * time, and without it (then no ROCr can load either) the render node is
 * opened directly.
 *
 * Devices are named across processes by PCI bus id (the node's domain and
 * location_id), never by their index here.
 *
 * Three things settled by reading amdkfd (Linux 6.12) and libhsakmt
 * (ROCR-Runtime libhsakmt/src/fmm.c, openclose.c):
 *
 *  - Virtual addresses.  The GPU's page tables use a fragment (one TLB
 *    entry for 2^frag pages) no larger than the alignment of the virtual
 *    address (amdgpu_vm_pt.c, amdgpu_vm_pte_fragment: frag = ffs(start)
 *    - 1), so a range from plain mmap, 4 KiB aligned, loses the 2 MiB
 *    fragments.  libhsakmt aligns big buffers to the next power of two up
 *    to 2 MiB (fmm.c, reserved_aperture_allocate_aligned: "while (align <
 *    GPU_HUGE_PAGE_SIZE && MemorySizeInBytes >= (align << 1))"); so does
 *    reserve_va here.
 *
 *  - fork().  A child inherits the parent's /dev/kfd file (KFD refuses
 *    its ioctls from another process) and libdrm_amdgpu's device list,
 *    whose render-node file is the parent's: that file's VM is already
 *    the parent's compute VM, and ACQUIRE_VM with it fails with EINVAL
 *    (amdgpu_amdkfd_gpuvm.c, amdgpu_amdkfd_gpuvm_acquire_process_vm:
 *    "Already a compute VM?").  libhsakmt, in a child, drops its libdrm
 *    devices and render files and opens them anew (openclose.c,
 *    clear_after_fork; fmm.c, hsakmt_fmm_clear_all_mem).  So does
 *    forget_parent here, for the references this backend took.  If
 *    another user of libdrm_amdgpu in the parent (a graphics driver)
 *    still holds the device, the child is handed the parent's file again:
 *    then device pools are refused (-EBUSY, hipErrorNoDevice) with one
 *    line on stderr naming the cause, never a pool on a VM that is not
 *    the child's.
 *
 *  - Flags.  KFD_IOC_ALLOC_MEM_FLAGS_EXECUTABLE only makes the GPU
 *    mapping executable (amdgpu_amdkfd_gpuvm.c, get_pte_flags); libhsakmt
 *    sets it on every allocation only because ROCr cannot ask for page
 *    permissions yet (fmm.c, fmm_translate_hsa_to_ioc_flags, a TODO).
 *    Pool memory is data: it is not asked for.  (An importer's mapping is
 *    made executable by amdkfd regardless: import_obj_create.)
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <dlfcn.h>
#include <unistd.h>
/* libdrm's copy of drm.h, which kfd_ioctl.h includes (the kernel's uses
 * __user). */
#include <drm.h>

#include "rt/runtime.h"
#include "backend.h"

#ifdef KFD_IOCTL_H
#include KFD_IOCTL_H
#endif

#if defined(KFD_IOCTL_MINOR_VERSION) && \
	(KFD_IOCTL_MAJOR_VERSION > 1 || KFD_IOCTL_MINOR_VERSION >= 12)
#define KP_HAVE_KFD 1
#endif

#define KFD_PATH "/dev/kfd"
#define TOPO "/sys/class/kfd/kfd/topology/nodes"
#define MAX_GPUS 64

#ifdef KP_HAVE_KFD

struct gpu {
	uint32_t gpu_id;
	int drm_fd;
	void *amdgpu_dev;	/* libdrm_amdgpu's device, or NULL */
	char bus_id[16];
};

static pthread_mutex_t kfd_lock = PTHREAD_MUTEX_INITIALIZER;
static int kfd_fd = -1;
static pid_t kfd_pid;
static int kfd_err;
static struct gpu gpus[MAX_GPUS];
static int ngpus;

/* Held across fork() (hip/hip_fork.c), so that a child never inherits it
 * locked. */
void kp_kfd_fork(int prepare)
{
	if (prepare)
		pthread_mutex_lock(&kfd_lock);
	else
		pthread_mutex_unlock(&kfd_lock);
}

static int read_u64(const char *path, const char *key, uint64_t *val)
{
	char line[256], k[128];
	unsigned long long v;
	FILE *f = fopen(path, "re");
	int ret = -ENOENT;

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (key) {
			if (sscanf(line, "%127s %llu", k, &v) == 2 &&
			    !strcmp(k, key)) {
				*val = v;
				ret = 0;
				break;
			}
		} else if (sscanf(line, "%llu", &v) == 1) {
			*val = v;
			ret = 0;
			break;
		}
	}
	fclose(f);
	return ret;
}

/* libdrm_amdgpu's calls, as libhsakmt makes them (opaque device). */
static int (*amdgpu_init)(int fd, uint32_t *major, uint32_t *minor,
			  void **dev);
static int (*amdgpu_get_fd)(void *dev);
static void (*amdgpu_deinit)(void *dev);

static void amdgpu_lookup(void)
{
	void *h = dlopen("libdrm_amdgpu.so.1", RTLD_LAZY);

	/* Kept open: its device list is what ROCr will share. */
	if (!h)
		return;
	amdgpu_init = (__typeof__(amdgpu_init))dlsym(h, "amdgpu_device_initialize");
	amdgpu_get_fd = (__typeof__(amdgpu_get_fd))dlsym(h, "amdgpu_device_get_fd");
	amdgpu_deinit = (__typeof__(amdgpu_deinit))dlsym(h, "amdgpu_device_deinitialize");
}

/* The render node's file as the process's libdrm_amdgpu holds it, and
 * libdrm_amdgpu's device in *devp (NULL when the file was opened here). */
static int render_fd(int minor, void **devp)
{
	char path[64];
	uint32_t maj, min;
	void *dev;
	int fd, shared;

	*devp = NULL;
	snprintf(path, sizeof(path), "/dev/dri/renderD%d", minor);
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0 || !amdgpu_init)
		return fd < 0 ? -errno : fd;
	/* The device is kept for the life of the process (or until a fork
	 * child lets it go), as libhsakmt keeps its own. */
	if (amdgpu_init(fd, &maj, &min, &dev))
		return fd;
	shared = amdgpu_get_fd ? amdgpu_get_fd(dev) : -1;
	if (shared < 0) {
		if (amdgpu_deinit)
			amdgpu_deinit(dev);
		return fd;
	}
	close(fd);
	*devp = dev;
	return shared;
}

/*
 * In a fork child: what the parent opened is the parent's.  Its /dev/kfd
 * file and, for each GPU, the reference to libdrm_amdgpu's device (or the
 * render file opened here) are let go, as libhsakmt lets go of its own
 * (openclose.c, clear_after_fork); when this was the last reference,
 * libdrm_amdgpu forgets the device and the next one opens a file of the
 * child's.  Nothing is asked of the driver: the parent's objects stay the
 * parent's.
 */
static void forget_parent(void)
{
	int i;

	if (kfd_fd >= 0)
		close(kfd_fd);
	kfd_fd = -1;
	for (i = 0; i < ngpus; i++) {
		if (gpus[i].amdgpu_dev && amdgpu_deinit)
			amdgpu_deinit(gpus[i].amdgpu_dev);
		else if (!gpus[i].amdgpu_dev)
			close(gpus[i].drm_fd);
	}
	ngpus = 0;
	kfd_err = 0;
}

/* GPU nodes in node order: gpu_id != 0 (CPU nodes have 0). */
static int scan_topology(void)
{
	char path[512];
	int node;

	amdgpu_lookup();
	ngpus = 0;
	for (node = 0; node < 256 && ngpus < MAX_GPUS; node++) {
		uint64_t id, minor, domain = 0, loc = 0;
		void *dev;
		int fd;

		snprintf(path, sizeof(path), TOPO "/%d/gpu_id", node);
		if (read_u64(path, NULL, &id))
			break;
		if (!id)
			continue;
		snprintf(path, sizeof(path), TOPO "/%d/properties", node);
		if (read_u64(path, "drm_render_minor", &minor))
			continue;
		read_u64(path, "domain", &domain);
		read_u64(path, "location_id", &loc);
		fd = render_fd((int)minor, &dev);
		if (fd < 0)
			continue;
		gpus[ngpus].gpu_id = (uint32_t)id;
		gpus[ngpus].drm_fd = fd;
		gpus[ngpus].amdgpu_dev = dev;
		snprintf(gpus[ngpus].bus_id, sizeof(gpus[ngpus].bus_id),
			 "%04x:%02x:%02x.%x", (unsigned int)domain,
			 (unsigned int)(loc >> 8) & 0xff,
			 (unsigned int)(loc >> 3) & 0x1f,
			 (unsigned int)loc & 7);
		ngpus++;
	}
	return ngpus ? 0 : -ENODEV;
}

/* Open /dev/kfd and acquire a VM on every GPU, once per process. */
static int kfd_init(void)
{
	struct kfd_ioctl_get_version_args v;
	static int fork_said;
	int i, ret, child;

	pthread_mutex_lock(&kfd_lock);
	if (kfd_pid == getpid() && (kfd_fd >= 0 || kfd_err)) {
		ret = kfd_fd >= 0 ? 0 : kfd_err;
		goto out;
	}
	child = kfd_pid && kfd_pid != getpid();
	if (child)
		forget_parent();
	kfd_pid = getpid();
	kfd_fd = open(KFD_PATH, O_RDWR | O_CLOEXEC);
	if (kfd_fd < 0) {
		ret = kfd_err = -errno;
		goto out;
	}
	memset(&v, 0, sizeof(v));
	if (ioctl(kfd_fd, AMDKFD_IOC_GET_VERSION, &v)) {
		ret = -errno;
		goto fail;
	}
	if (v.major_version != 1 || v.minor_version < 12) {
		/* EXPORT_DMABUF arrived in KFD 1.12. */
		ret = -EOPNOTSUPP;
		goto fail;
	}
	ret = scan_topology();
	if (ret)
		goto fail;
	for (i = 0; i < ngpus; i++) {
		struct kfd_ioctl_acquire_vm_args a = {
			.drm_fd = (uint32_t)gpus[i].drm_fd,
			.gpu_id = gpus[i].gpu_id,
		};

		if (ioctl(kfd_fd, AMDKFD_IOC_ACQUIRE_VM, &a)) {
			ret = -errno;
			if (ret == -EINVAL && child && gpus[i].amdgpu_dev) {
				kp_say_once(&fork_said, "kfdpool: kfd: this "
					    "process is a fork child and "
					    "libdrm_amdgpu still hands out "
					    "the parent's file for GPU %s "
					    "(another user of libdrm_amdgpu "
					    "holds it): no device pools here; "
					    "exec after fork, or fork before "
					    "the first device pool",
					    gpus[i].bus_id);
				ret = -EBUSY;
			}
			goto fail;
		}
	}
	ret = 0;
	goto out;
fail:
	close(kfd_fd);
	kfd_fd = -1;
	kfd_err = ret;
out:
	pthread_mutex_unlock(&kfd_lock);
	return ret;
}

static int kfd_probe(void)
{
	if (access(KFD_PATH, R_OK | W_OK))
		return -ENODEV;
	return kfd_init();
}

int kp_kfd_device_count(void)
{
	return kfd_probe() ? 0 : ngpus;
}

int kp_kfd_bus_id(int dev, char *buf, size_t len)
{
	if (kfd_probe() || dev < 0 || dev >= ngpus)
		return -ENODEV;
	snprintf(buf, len, "%s", gpus[dev].bus_id);
	return 0;
}

int kp_kfd_device_of(const char *bus_id, int *dev)
{
	int i;

	if (kfd_probe())
		return -ENODEV;
	for (i = 0; i < ngpus; i++) {
		if (!strcmp(gpus[i].bus_id, bus_id)) {
			*dev = i;
			return 0;
		}
	}
	return -ENODEV;
}

/*
 * A GPU virtual address range: reserved in the CPU address space so that
 * no CPU mapping lands there, as ROCr does, and aligned as libhsakmt
 * aligns it (fmm.c, reserved_aperture_allocate_aligned): to the largest
 * power of two up to 2 MiB that the size holds, so that the page tables
 * can use their 2 MiB fragments.  Reserved with the alignment to spare,
 * the ends trimmed.
 */
#define KP_GPU_HUGE_PAGE (2u << 20)

static void *reserve_va(uint64_t size)
{
	uint64_t align = (uint64_t)sysconf(_SC_PAGESIZE), lead;
	uintptr_t p, a;
	void *m;

	while (align < KP_GPU_HUGE_PAGE && size >= align << 1)
		align <<= 1;
	m = mmap(NULL, size + align, PROT_NONE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (m == MAP_FAILED)
		return NULL;
	p = (uintptr_t)m;
	a = (p + align - 1) & ~(uintptr_t)(align - 1);
	lead = a - p;
	if (lead)
		munmap(m, lead);
	if (align - lead)
		munmap((void *)(a + size), align - lead);
	return (void *)a;
}

static int map_to_gpu(struct kp_mem *m)
{
	uint32_t id = gpus[m->dev].gpu_id;
	struct kfd_ioctl_map_memory_to_gpu_args a = {
		.handle = m->handle,
		.device_ids_array_ptr = (uintptr_t)&id,
		.n_devices = 1,
	};

	return ioctl(kfd_fd, AMDKFD_IOC_MAP_MEMORY_TO_GPU, &a) ? -errno : 0;
}

static void unmap_free(struct kp_mem *m)
{
	uint32_t id = gpus[m->dev].gpu_id;
	struct kfd_ioctl_unmap_memory_from_gpu_args u = {
		.handle = m->handle,
		.device_ids_array_ptr = (uintptr_t)&id,
		.n_devices = 1,
	};
	struct kfd_ioctl_free_memory_of_gpu_args f = { .handle = m->handle };

	ioctl(kfd_fd, AMDKFD_IOC_UNMAP_MEMORY_FROM_GPU, &u);
	ioctl(kfd_fd, AMDKFD_IOC_FREE_MEMORY_OF_GPU, &f);
	munmap(m->addr, m->size);
	m->addr = NULL;
}

/* What allocating and importing both start with: the GPU, a VA range. */
static int kfd_mem_begin(int dev, uint64_t size, struct kp_mem *m)
{
	int ret = kfd_init();

	memset(m, 0, sizeof(*m));
	m->dmabuf_fd = -1;
	if (ret)
		return ret;
	if (dev < 0 || dev >= ngpus)
		return -ENODEV;
	m->addr = reserve_va(size);
	if (!m->addr)
		return -ENOMEM;
	m->size = size;
	m->dev = dev;
	return 0;
}

static int kfd_alloc(int dev, uint64_t size, struct kp_mem *m)
{
	struct kfd_ioctl_alloc_memory_of_gpu_args a;
	struct kfd_ioctl_export_dmabuf_args e;
	int ret = kfd_mem_begin(dev, size, m);

	if (ret)
		return ret;
	memset(&a, 0, sizeof(a));
	a.va_addr = (uintptr_t)m->addr;
	a.size = size;
	a.gpu_id = gpus[dev].gpu_id;
	a.flags = KFD_IOC_ALLOC_MEM_FLAGS_VRAM |
		  KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE |
		  KFD_IOC_ALLOC_MEM_FLAGS_NO_SUBSTITUTE;
	if (ioctl(kfd_fd, AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, &a)) {
		ret = -errno;
		munmap(m->addr, size);
		return ret;
	}
	m->handle = a.handle;
	ret = map_to_gpu(m);
	if (ret)
		goto fail;
	memset(&e, 0, sizeof(e));
	e.handle = m->handle;
	e.flags = O_RDWR | O_CLOEXEC;
	if (ioctl(kfd_fd, AMDKFD_IOC_EXPORT_DMABUF, &e)) {
		ret = -errno;
		goto fail;
	}
	m->dmabuf_fd = (int)e.dmabuf_fd;
	return 0;
fail:
	unmap_free(m);
	return ret;
}

static void kfd_free(struct kp_mem *m)
{
	if (m->dmabuf_fd >= 0)
		close(m->dmabuf_fd);
	m->dmabuf_fd = -1;
	unmap_free(m);
}

static int kfd_map_import(int dev, int fd, uint64_t size, struct kp_mem *m)
{
	struct kfd_ioctl_import_dmabuf_args a;
	int ret = kfd_mem_begin(dev, size, m);

	if (ret)
		return ret;
	memset(&a, 0, sizeof(a));
	a.va_addr = (uintptr_t)m->addr;
	a.gpu_id = gpus[dev].gpu_id;
	a.dmabuf_fd = (uint32_t)fd;
	if (ioctl(kfd_fd, AMDKFD_IOC_IMPORT_DMABUF, &a)) {
		ret = -errno;
		munmap(m->addr, size);
		m->addr = NULL;
		return ret;
	}
	m->handle = a.handle;
	ret = map_to_gpu(m);
	if (ret)
		unmap_free(m);
	return ret;
}

static void kfd_unmap_import(struct kp_mem *m)
{
	unmap_free(m);
}

#else /* !KP_HAVE_KFD */

void kp_kfd_fork(int prepare)
{
	(void)prepare;
}

static int kfd_probe(void)
{
	return -ENODEV;
}

int kp_kfd_device_count(void)
{
	return 0;
}

int kp_kfd_bus_id(int dev, char *buf, size_t len)
{
	(void)dev; (void)buf; (void)len;
	return -ENODEV;
}

int kp_kfd_device_of(const char *bus_id, int *dev)
{
	(void)bus_id; (void)dev;
	return -ENODEV;
}

static int kfd_alloc(int dev, uint64_t size, struct kp_mem *m)
{
	(void)dev; (void)size; (void)m;
	return -ENODEV;
}

static void kfd_free(struct kp_mem *m)
{
	(void)m;
}

static int kfd_map_import(int dev, int fd, uint64_t size, struct kp_mem *m)
{
	(void)dev; (void)fd; (void)size; (void)m;
	return -ENODEV;
}

static void kfd_unmap_import(struct kp_mem *m)
{
	(void)m;
}

#endif

const struct kp_backend kp_backend_kfd = {
	.name = "kfd",
	.device = 1,
	.probe = kfd_probe,
	.alloc = kfd_alloc,
	.free = kfd_free,
	.map_import = kfd_map_import,
	.unmap_import = kfd_unmap_import,
};
