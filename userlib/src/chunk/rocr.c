// SPDX-License-Identifier: MIT
/*
 * Device chunks from the process's HIP runtime (ROCr underneath), for
 * device pools in HIP programs: the memory is the runtime's, so the
 * runtime knows every pointer (hipMemcpy, kernels, hipPointerGetAttributes
 * work on it), and no second user of /dev/kfd competes with ROCr for the
 * GPU.
 *
 * Two ways, chosen once per process (KFDPOOL_RT_PATH=vmm|dmabuf forces
 * one):
 *   vmm     ROCm >= 6.0 (hipRuntimeGetVersion): hipMemCreate with a
 *           PosixFileDescriptor handle, reserved and mapped
 *           (hipMemAddressReserve, hipMemMap, hipMemSetAccess), exported
 *           with hipMemExportToShareableHandle, a dma-buf.  Peer devices
 *           get access with hipMemSetAccess (hipMemPoolSetAccess).
 *   dmabuf  ROCr >= 5.6: hipExtMallocWithFlags, exported with
 *           hsa_amd_portable_export_dmabuf (looked up in
 *           libhsa-runtime64.so.1 at run time).  No peer mappings.
 * Runtimes with neither (Debian's 5.2) cannot share device memory:
 * device IPC pools fail with hipErrorNotSupported (hip_pool.c says why).
 *
 * Importers map a received dma-buf with hipImportExternalMemory
 * (OpaqueFd) and hipExternalMemoryGetMappedBuffer, both in HIP 5.2, on
 * their own ordinal of the device.  clr up to 6.x leaves the fd to the
 * caller (its ExternalBuffer never closes it, and may use it again to map
 * on another device), so the fd stays open as long as the mapping; should
 * a runtime close it on success (CUDA's rule), the library notices (the
 * fd no longer names the same file) and leaves it alone.
 *
 * Not run on AMD hardware: the machines this was written on have no GPU.
 * Its calls are tested against a test-only stand-in of the runtime
 * (selftests/hiprt_standin.c).
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rt/runtime.h"
#include "native/internal.h"
#include "backend.h"

#define HSA_SO "libhsa-runtime64.so.1"
#define ROCM_VMM_VERSION 60000000	/* HIP_VERSION of ROCm 6.0 */

typedef int (*hsa_export_fn)(const void *ptr, size_t size, int *dmabuf,
			     uint64_t *offset);
typedef int (*hsa_close_fn)(int dmabuf);

static pthread_mutex_t g_rocr_mu = PTHREAD_MUTEX_INITIALIZER;
static int g_path = -1;			/* KP_RT_* once known */
static hsa_export_fn g_hsa_export;
static hsa_close_fn g_hsa_close;

void kp_rocr_fork(int prepare)
{
	if (prepare)
		pthread_mutex_lock(&g_rocr_mu);
	else
		pthread_mutex_unlock(&g_rocr_mu);
}

static int has_vmm(const struct kp_runtime *rt)
{
	int v = 0;

	return rt->hipRuntimeGetVersion && !rt->hipRuntimeGetVersion(&v) &&
	       v >= ROCM_VMM_VERSION && rt->hipMemCreate && rt->hipMemRelease &&
	       rt->hipMemAddressReserve && rt->hipMemAddressFree &&
	       rt->hipMemMap && rt->hipMemUnmap && rt->hipMemSetAccess &&
	       rt->hipMemExportToShareableHandle;
}

static int has_dmabuf(const struct kp_runtime *rt)
{
	void *h;

	if (!rt->hipExtMallocWithFlags || !rt->hipFree)
		return 0;
	h = dlopen(HSA_SO, RTLD_LAZY | RTLD_NOLOAD);
	if (!h)
		return 0;
	/* Kept open: the runtime stays for the life of the process. */
	g_hsa_export = (hsa_export_fn)dlsym(h, "hsa_amd_portable_export_dmabuf");
	g_hsa_close = (hsa_close_fn)dlsym(h, "hsa_amd_portable_close_dmabuf");
	return g_hsa_export != NULL;
}

int kp_rocr_env_check(void)
{
	const char *e = getenv("KFDPOOL_RT_PATH");

	if (!e || !*e || !strcmp(e, "vmm") || !strcmp(e, "dmabuf"))
		return 0;
	kp_env_invalid("KFDPOOL_RT_PATH", e, "vmm, dmabuf");
	return -EINVAL;
}

int kp_rocr_path(void)
{
	const struct kp_runtime *rt = kp_rt();
	const char *e = getenv("KFDPOOL_RT_PATH");
	int path;

	pthread_mutex_lock(&g_rocr_mu);
	if (g_path < 0 && rt) {
		int vmm = has_vmm(rt), dmabuf = has_dmabuf(rt);

		if (e && !strcmp(e, "vmm"))
			g_path = vmm ? KP_RT_VMM : KP_RT_NONE;
		else if (e && !strcmp(e, "dmabuf"))
			g_path = dmabuf ? KP_RT_DMABUF : KP_RT_NONE;
		else
			g_path = vmm ? KP_RT_VMM : dmabuf ? KP_RT_DMABUF :
				 KP_RT_NONE;
	}
	path = g_path < 0 ? KP_RT_NONE : g_path;
	pthread_mutex_unlock(&g_rocr_mu);
	return path;
}

/* Run the runtime's calls for device @dev: make it current, put the
 * previous one back after (hip* device selection is per thread). */
static int dev_enter(const struct kp_runtime *rt, int dev, int *prev)
{
	*prev = -1;
	if (!rt->hipGetDevice || !rt->hipSetDevice ||
	    rt->hipGetDevice(prev))
		return -ENODEV;
	if (*prev != dev && rt->hipSetDevice(dev))
		return -ENODEV;
	return 0;
}

static void dev_leave(const struct kp_runtime *rt, int dev, int prev)
{
	if (prev >= 0 && prev != dev)
		rt->hipSetDevice(prev);
}

static int hip_errno(hipError_t e)
{
	switch (e) {
	case hipSuccess:
		return 0;
	case hipErrorOutOfMemory:
		return -ENOMEM;
	case hipErrorInvalidDevice:
	case hipErrorNoDevice:
		return -ENODEV;
	case hipErrorNotSupported:
		return -EOPNOTSUPP;
	default:
		return -EIO;
	}
}

static int rocr_probe(void)
{
	return kp_rt() && kp_rocr_path() != KP_RT_NONE ? 0 : -EOPNOTSUPP;
}

static int alloc_vmm(const struct kp_runtime *rt, int dev, uint64_t size,
		     struct kp_mem *m)
{
	hipMemAllocationProp prop;
	hipMemGenericAllocationHandle_t h;
	hipMemAccessDesc acc;
	size_t gran = 0;
	void *p = NULL;
	int fd = -1;
	hipError_t e;

	memset(&prop, 0, sizeof(prop));
	prop.type = hipMemAllocationTypePinned;
	prop.requestedHandleType = hipMemHandleTypePosixFileDescriptor;
	prop.location.type = hipMemLocationTypeDevice;
	prop.location.id = dev;
	if (rt->hipMemGetAllocationGranularity &&
	    !rt->hipMemGetAllocationGranularity(&gran, &prop,
				hipMemAllocationGranularityMinimum) && gran)
		size = (size + gran - 1) / gran * gran;
	e = rt->hipMemCreate(&h, size, &prop, 0);
	if (e)
		return hip_errno(e);
	e = rt->hipMemAddressReserve(&p, size, 0, NULL, 0);
	if (e)
		goto out_release;
	e = rt->hipMemMap(p, size, 0, h, 0);
	if (e)
		goto out_free;
	memset(&acc, 0, sizeof(acc));
	acc.location = prop.location;
	acc.flags = hipMemAccessFlagsProtReadWrite;
	e = rt->hipMemSetAccess(p, size, &acc, 1);
	if (!e)
		e = rt->hipMemExportToShareableHandle(&fd, h,
				hipMemHandleTypePosixFileDescriptor, 0);
	if (!e) {
		m->addr = p;
		m->size = size;
		m->handle = (uintptr_t)h;
		m->dmabuf_fd = fd;
		return 0;
	}
	rt->hipMemUnmap(p, size);
out_free:
	rt->hipMemAddressFree(p, size);
out_release:
	rt->hipMemRelease(h);
	return hip_errno(e);
}

static int alloc_dmabuf(const struct kp_runtime *rt, uint64_t size,
			struct kp_mem *m)
{
	uint64_t off = 1;
	void *p = NULL;
	int fd = -1, st;
	hipError_t e;

	e = rt->hipExtMallocWithFlags(&p, size, hipDeviceMallocDefault);
	if (e)
		return hip_errno(e);
	st = g_hsa_export(p, size, &fd, &off);
	if (st || off) {
		/*
		 * An offset means the dma-buf holds more than this chunk:
		 * pinning it would share memory that is not the pool's.
		 */
		if (!st && g_hsa_close)
			g_hsa_close(fd);
		else if (!st)
			close(fd);
		rt->hipFree(p);
		return st ? -EIO : -EOPNOTSUPP;
	}
	m->addr = p;
	m->size = size;
	m->dmabuf_fd = fd;
	return 0;
}

static int rocr_alloc(int dev, uint64_t size, struct kp_mem *m)
{
	const struct kp_runtime *rt = kp_rt();
	int path = kp_rocr_path(), prev, ret;

	memset(m, 0, sizeof(*m));
	m->dmabuf_fd = -1;
	m->dev = dev;
	if (!rt || path == KP_RT_NONE)
		return -EOPNOTSUPP;
	ret = dev_enter(rt, dev, &prev);
	if (ret)
		return ret;
	ret = path == KP_RT_VMM ? alloc_vmm(rt, dev, size, m) :
				  alloc_dmabuf(rt, size, m);
	dev_leave(rt, dev, prev);
	return ret;
}

static void rocr_free(struct kp_mem *m)
{
	const struct kp_runtime *rt = kp_rt();

	if (m->dmabuf_fd >= 0)
		close(m->dmabuf_fd);
	m->dmabuf_fd = -1;
	if (!rt || !m->addr)
		return;
	if (m->handle) {
		rt->hipMemUnmap(m->addr, m->size);
		rt->hipMemAddressFree(m->addr, m->size);
		rt->hipMemRelease((hipMemGenericAllocationHandle_t)
				  (uintptr_t)m->handle);
	} else {
		rt->hipFree(m->addr);
	}
	m->addr = NULL;
}

/* Whether @fd still names the file @st describes. */
static int same_file(int fd, const struct stat *st)
{
	struct stat now;

	return !fstat(fd, &now) && now.st_dev == st->st_dev &&
	       now.st_ino == st->st_ino;
}

static int rocr_map_import(int dev, int fd, uint64_t size, struct kp_mem *m)
{
	const struct kp_runtime *rt = kp_rt();
	hipExternalMemoryHandleDesc d;
	hipExternalMemoryBufferDesc bd;
	hipExternalMemory_t ext = NULL;
	struct stat st;
	void *p = NULL;
	int prev, ret, mine;
	hipError_t e;

	memset(m, 0, sizeof(*m));
	m->dmabuf_fd = -1;
	if (!rt || !rt->hipImportExternalMemory ||
	    !rt->hipExternalMemoryGetMappedBuffer ||
	    !rt->hipDestroyExternalMemory || !rt->hipFree)
		return -EOPNOTSUPP;
	/* The runtime gets a copy: the caller's fd is the caller's. */
	mine = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	if (mine < 0)
		return -errno;
	if (fstat(mine, &st)) {
		ret = -errno;
		close(mine);
		return ret;
	}
	ret = dev_enter(rt, dev, &prev);
	if (ret) {
		close(mine);
		return ret;
	}
	memset(&d, 0, sizeof(d));
	d.type = hipExternalMemoryHandleTypeOpaqueFd;
	d.handle.fd = mine;
	d.size = size;
	e = rt->hipImportExternalMemory(&ext, &d);
	if (!e) {
		memset(&bd, 0, sizeof(bd));
		bd.size = size;
		e = rt->hipExternalMemoryGetMappedBuffer(&p, ext, &bd);
		if (e)
			rt->hipDestroyExternalMemory(ext);
	}
	dev_leave(rt, dev, prev);
	if (e) {
		/* On failure the fd is always still the caller's. */
		close(mine);
		return hip_errno(e);
	}
	/* A runtime that took the fd closed it (or will): not ours. */
	m->dmabuf_fd = same_file(mine, &st) ? mine : -1;
	m->addr = p;
	m->size = size;
	m->handle = (uintptr_t)ext;
	m->dev = dev;
	return 0;
}

static void rocr_unmap_import(struct kp_mem *m)
{
	const struct kp_runtime *rt = kp_rt();

	if (rt && m->addr) {
		/* The mapped buffer is freed with hipFree, then the external
		 * memory destroyed (CUDA's and clr's order). */
		rt->hipFree(m->addr);
		rt->hipDestroyExternalMemory((hipExternalMemory_t)
					     (uintptr_t)m->handle);
	}
	if (m->dmabuf_fd >= 0)
		close(m->dmabuf_fd);
	m->dmabuf_fd = -1;
	m->addr = NULL;
}

int kp_rocr_set_access(const struct kp_mem *m, const hipMemAccessDesc *d,
		       size_t n)
{
	const struct kp_runtime *rt = kp_rt();

	if (!rt || !m->handle || !rt->hipMemSetAccess)
		return -EOPNOTSUPP;
	return hip_errno(rt->hipMemSetAccess(m->addr, m->size, d, n));
}

int kp_rocr_bus_id(int dev, char *buf, size_t len)
{
	const struct kp_runtime *rt = kp_rt();
	size_t i;

	if (!rt || !rt->hipDeviceGetPCIBusId ||
	    rt->hipDeviceGetPCIBusId(buf, (int)len, dev))
		return -ENODEV;
	for (i = 0; buf[i]; i++)	/* one spelling on both sides */
		if (buf[i] >= 'A' && buf[i] <= 'F')
			buf[i] += 'a' - 'A';
	return 0;
}

int kp_rocr_device_of(const char *bus_id, int *dev)
{
	const struct kp_runtime *rt = kp_rt();

	if (!rt || !rt->hipDeviceGetByPCIBusId ||
	    rt->hipDeviceGetByPCIBusId(dev, bus_id))
		return -ENODEV;
	return 0;
}

const struct kp_backend kp_backend_rocr = {
	.name = "rocr",
	.device = 1,
	.probe = rocr_probe,
	.alloc = rocr_alloc,
	.free = rocr_free,
	.map_import = rocr_map_import,
	.unmap_import = rocr_unmap_import,
};
