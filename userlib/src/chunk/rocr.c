// SPDX-License-Identifier: MIT
/*
 * Device chunks from the process's HIP runtime (ROCr underneath), for
 * device pools in HIP programs: the memory is the runtime's, so the
 * runtime knows every pointer (hipMemcpy, kernels, hipPointerGetAttributes
 * work on it), and no second user of /dev/kfd competes with ROCr for the
 * GPU.  Each chunk is one driver object of its own, exported whole as one
 * dma-buf: never a block of ROCr's fragment allocator shared with other
 * allocations, never given back to ROCr's block cache.
 *
 * Two ways, chosen once per process by what the runtime and the driver can
 * do (KFDPOOL_RT_PATH=vmm|dmabuf forces one), said once on stderr:
 *   vmm     HIP >= 6.2 and hipDeviceAttributeVirtualMemoryManagementSupported:
 *           hipMemCreate with a PosixFileDescriptor handle (its own KFD
 *           object: ROCr's AllocateMemoryOnly never sub-allocates),
 *           exported with hipMemExportToShareableHandle, a dma-buf, and
 *           mapped with hipMemAddressReserve, hipMemMap and hipMemSetAccess.
 *           clr refuses that handle type, and the export is a stub, before
 *           rocm-6.2.0 (hip_vm.cpp); rocm-6.1 reports the attribute all the
 *           same.  Importers map a received chunk the same way, the handle
 *           made by hipMemImportFromShareableHandle.  The memory is ROCr's
 *           own mapping on both sides: clr records the right device for it
 *           (hipPointerGetAttributes), no fd is kept (ROCr's import holds
 *           the buffer), and hsa_amd_portable_export_dmabuf, which RCCL and
 *           UCX call on user buffers, answers an error for it
 *           (runtime.cpp DmaBufExport finds no allocation) where on an
 *           interop map ROCr would dereference the null region InteropMap
 *           records.  The price: hipMemMap and hipMemUnmap wait for the
 *           device's null stream in clr up to 7.2 (awaitCompletion,
 *           hip_vm.cpp), so a new chunk waits for work queued there.
 *   dmabuf  ROCr >= 5.6 and HSA_AMD_SYSTEM_INFO_DMABUF_SUPPORTED (KFD >=
 *           1.12): hipExtMallocWithFlags of 4 MiB or more, a multiple of
 *           2 MiB, exported with hsa_amd_portable_export_dmabuf.  ROCr's
 *           fragment allocator (simple_heap.h, amd_memory_region.cpp)
 *           serves every ordinary VRAM allocation from 2 MiB blocks; only
 *           a request over 2 MiB gets a block of its own, which is never
 *           sub-allocated nor cached, and exports as exactly that block.
 *           No peer mappings.  Importers map with hipImportExternalMemory
 *           (OpaqueFd) and hipExternalMemoryGetMappedBuffer, both in HIP
 *           5.2 (map_ext below).
 * Runtimes with neither cannot share device memory: device IPC pools fail
 * with hipErrorNotSupported.  Every chunk's dma-buf is checked to be the
 * chunk (offset 0, the same size) before the pool pins it.
 *
 * Giving a chunk back (hipFree, hipMemUnmap, hipHostUnregister) waits for
 * the device in clr (SyncAllStreams; hipMemUnmap a barrier on the null
 * stream): each chunk says which device (will_wait), and the pool layer
 * gives it back only where the program waited for that device anyway.
 *
 * Not run on AMD hardware: the machines this was written on have no GPU.
 * Its calls are tested against a test-only stand-in of the runtime
 * (selftests/hiprt_standin.c) that behaves as those sources do, release by
 * release.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif

#include "rt/runtime.h"
#include "native/internal.h"
#include "backend.h"

#define HIP_VMM_IPC_VERSION 60200000	/* HIP_VERSION of ROCm 6.2 */
#define FRAG_BLOCK (2ULL << 20)		/* ROCr's fragment allocator block */
/* HSA_STATUS_ERROR_OUT_OF_RESOURCES (hsa.h) */
#define HSA_OUT_OF_RESOURCES 0x1008

static pthread_mutex_t g_rocr_mu = PTHREAD_MUTEX_INITIALIZER;
/* Held across a virtual memory import (fd_handle's pages). */
static pthread_mutex_t g_handle_mu = PTHREAD_MUTEX_INITIALIZER;
static int g_path = -1;			/* KP_RT_* once known */
static int g_path_said, g_dmabuf_said;

void kp_rocr_fork(int prepare)
{
	if (prepare) {
		pthread_mutex_lock(&g_rocr_mu);
		pthread_mutex_lock(&g_handle_mu);
	} else {
		pthread_mutex_unlock(&g_handle_mu);
		pthread_mutex_unlock(&g_rocr_mu);
	}
}

int kp_rocr_env_check(void)
{
	const char *e = getenv("KFDPOOL_RT_PATH");

	if (!e || !*e || !strcmp(e, "vmm") || !strcmp(e, "dmabuf"))
		return 0;
	kp_env_invalid("KFDPOOL_RT_PATH", e, "vmm, dmabuf");
	return -EINVAL;
}

/* Whether the vmm path works here; if not, why, in @why. */
static int probe_vmm(const struct kp_runtime *rt, char *why, size_t len)
{
	int v = kp_rt_version(rt), attr = 0;

	if (!rt->hipMemCreate || !rt->hipMemRelease ||
	    !rt->hipMemExportToShareableHandle || !rt->hipMemAddressReserve ||
	    !rt->hipMemAddressFree || !rt->hipMemMap || !rt->hipMemUnmap ||
	    !rt->hipMemSetAccess || !rt->hipMemImportFromShareableHandle ||
	    !rt->hipImportExternalMemory ||
	    !rt->hipExternalMemoryGetMappedBuffer ||
	    !rt->hipDestroyExternalMemory || !rt->hipFree) {
		snprintf(why, len, "the runtime lacks the virtual memory calls");
		return 0;
	}
	if (v <= 0) {
		snprintf(why, len, "the runtime does not tell its version");
		return 0;
	}
	if (v < HIP_VMM_IPC_VERSION) {
		snprintf(why, len, "HIP %d.%d is older than 6.2 (hipMemCreate "
			 "refuses shareable handles there)", v / 10000000,
			 v / 100000 % 100);
		return 0;
	}
	if (!rt->hipDeviceGetAttribute ||
	    rt->hipDeviceGetAttribute(&attr,
			hipDeviceAttributeVirtualMemoryManagementSupported, 0) ||
	    !attr) {
		snprintf(why, len, "hipDeviceAttributeVirtualMemoryManagementSupported "
			 "is 0 (the driver lacks virtual memory: KFD < 1.15?)");
		return 0;
	}
	return 1;
}

/* Whether the dmabuf path works here; if not, why, in @why. */
static int probe_dmabuf(const struct kp_runtime *rt, char *why, size_t len)
{
	const struct kp_hsa *hsa = kp_hsa();
	_Bool ok = 0;

	if (!hsa->export_dmabuf || !rt->hipExtMallocWithFlags || !rt->hipFree) {
		snprintf(why, len, "ROCr has no hsa_amd_portable_export_dmabuf "
			 "(ROCm < 5.6)");
		return 0;
	}
	if (!hsa->system_get_info ||
	    hsa->system_get_info(KP_HSA_SYSTEM_INFO_DMABUF_SUPPORTED, &ok) ||
	    !ok) {
		snprintf(why, len, "ROCr's HSA_AMD_SYSTEM_INFO_DMABUF_SUPPORTED "
			 "is false (KFD < 1.12)");
		return 0;
	}
	return 1;
}

/*
 * The path, chosen once: vmm first, dmabuf else (or KFDPOOL_RT_PATH's),
 * and one line on stderr saying which and why not the other.
 */
int kp_rocr_path(void)
{
	const struct kp_runtime *rt = kp_rt();
	const char *e = getenv("KFDPOOL_RT_PATH");
	char why_vmm[160], why_dmabuf[160], line[512];
	int path, vmm, dmabuf, forced;

	pthread_mutex_lock(&g_rocr_mu);
	path = g_path;
	pthread_mutex_unlock(&g_rocr_mu);
	if (path >= 0 || !rt)
		return path < 0 ? KP_RT_NONE : path;
	/* Asked unlocked: the runtime may call back into names of ours. */
	vmm = probe_vmm(rt, why_vmm, sizeof(why_vmm));
	dmabuf = probe_dmabuf(rt, why_dmabuf, sizeof(why_dmabuf));
	forced = e && (!strcmp(e, "vmm") || !strcmp(e, "dmabuf"));
	if (forced && !strcmp(e, "vmm"))
		path = vmm ? KP_RT_VMM : KP_RT_NONE;
	else if (forced)
		path = dmabuf ? KP_RT_DMABUF : KP_RT_NONE;
	else
		path = vmm ? KP_RT_VMM : dmabuf ? KP_RT_DMABUF : KP_RT_NONE;
	if (path == KP_RT_VMM)
		snprintf(line, sizeof(line), "vmm path (hipMemCreate, "
			 "hipMemExportToShareableHandle; HIP %d)%s; dmabuf path "
			 "not used: %s", kp_rt_version(rt),
			 forced ? ", as KFDPOOL_RT_PATH says" : "",
			 forced ? "KFDPOOL_RT_PATH=vmm" :
			 dmabuf ? "vmm comes first" : why_dmabuf);
	else if (path == KP_RT_DMABUF)
		snprintf(line, sizeof(line), "dmabuf path (hipExtMallocWithFlags, "
			 "hsa_amd_portable_export_dmabuf; chunks of 4 MiB or "
			 "more)%s; vmm path not used: %s",
			 forced ? ", as KFDPOOL_RT_PATH says" : "",
			 forced && vmm ? "KFDPOOL_RT_PATH=dmabuf" : why_vmm);
	else
		snprintf(line, sizeof(line), "none%s: vmm: %s; dmabuf: %s; "
			 "device pools fail with hipErrorNotSupported (host pools "
			 "work)", forced ? " of the one KFDPOOL_RT_PATH names" : "",
			 vmm ? "not asked for" : why_vmm,
			 dmabuf ? "not asked for" : why_dmabuf);
	pthread_mutex_lock(&g_rocr_mu);
	if (g_path < 0)
		g_path = path;
	path = g_path;
	pthread_mutex_unlock(&g_rocr_mu);
	kp_say_once(&g_path_said, "kfdpool: device pools beside %s: %s",
		    rt->path, line);
	return path;
}

static int rocr_probe(void)
{
	return kp_rt() && kp_rocr_path() != KP_RT_NONE ? 0 : -EOPNOTSUPP;
}

/* Whether @fd still names the file @st describes. */
static int same_file(int fd, const struct stat *st)
{
	struct stat now;

	return !fstat(fd, &now) && now.st_dev == st->st_dev &&
	       now.st_ino == st->st_ino;
}

static int g_nofile_said, g_leak_said;
static int g_ext_leaks = -1;	/* -1 not known yet, 0 no, 1 yes */

/*
 * Whether the runtime frees what hipExternalMemoryGetMappedBuffer mapped
 * once the buffer is freed and its external memory destroyed, asked of
 * ROCr after @p (@size bytes) was given back so: clr unmaps the interop
 * map then (hsa_amd_interop_unmap_buffer), and ROCr's pointer info stops
 * reporting registered graphics memory there (runtime.cpp PtrInfo).  HIP
 * 7.2 retains the buffer's view once more than hipFree releases (ROCm/
 * rocm-systems PR #1749, undone by PR #3528): nothing is ever unmapped,
 * every chunk mapped so holds its device memory until the process exits.
 * 1 when it leaks, 0 when not or when ROCr cannot tell.
 */
static int ext_leaked(const void *p, uint64_t size)
{
	const struct kp_hsa *hsa = kp_hsa();
	kp_hsa_pointer_info_t info;

	if (!hsa->pointer_info)
		return 0;
	memset(&info, 0, sizeof(info));
	info.size = sizeof(info);
	if (hsa->pointer_info(p, &info, NULL, NULL, NULL))
		return 0;
	return info.type == KP_HSA_POINTER_GRAPHICS && info.agent_base == p &&
	       info.bytes >= size;
}

static void unmap_ext(const struct kp_runtime *rt, struct kp_mem *m)
{
	/* The mapped buffer is freed with hipFree, then the external memory
	 * destroyed (CUDA's and clr's order); the number it kept goes last. */
	rt->hipFree(m->addr);
	rt->hipDestroyExternalMemory((hipExternalMemory_t)(uintptr_t)m->ext);
	if (m->flags & KP_MEM_EXT_FD)
		close(m->ext_fd);
	m->flags &= ~KP_MEM_EXT_FD;
	m->ext = 0;
}

/*
 * Map dma-buf @fd (@size bytes) on the current device with
 * hipImportExternalMemory and hipExternalMemoryGetMappedBuffer: *@p and
 * *@ext, and in *@keep the fd the runtime goes on using (-1 if none).
 * clr keeps the number it was given (ExternalMemory::handle_) and maps
 * it again when another device needs the buffer (roc::Memory::create,
 * interopMapBuffer, rocmemory.cpp): hipPointerGetAttributes does, on any
 * device but 0, because clr leaves external memory's userData.deviceId 0
 * (hip_memory.cpp).  So the runtime is given a copy that stays open until
 * hipDestroyExternalMemory: one fd per chunk mapped so, counted against
 * RLIMIT_NOFILE.  Should a runtime take the copy (CUDA's rule), it is
 * left alone.
 */
static int map_ext_once(const struct kp_runtime *rt, int fd, uint64_t size,
			void **p, uint64_t *ext, int *keep)
{
	hipExternalMemoryHandleDesc d;
	hipExternalMemoryBufferDesc bd;
	hipExternalMemory_t x = NULL;
	struct rlimit rl;
	struct stat st;
	int mine, ret;
	hipError_t e;

	*keep = -1;
	mine = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	if (mine < 0 && (errno == EMFILE || errno == ENFILE)) {
		ret = -errno;
		if (getrlimit(RLIMIT_NOFILE, &rl))
			rl.rlim_cur = 0;
		kp_say_once(&g_nofile_said, "kfdpool: a device chunk mapped with "
			    "hipImportExternalMemory holds an fd (the runtime maps "
			    "its number again for other devices) and this process "
			    "has no fd left (RLIMIT_NOFILE %llu): the import fails "
			    "with hipErrorOutOfMemory; raise ulimit -n, or use a "
			    "runtime with virtual memory (HIP >= 6.2), which holds "
			    "none", (unsigned long long)rl.rlim_cur);
		return ret;
	}
	if (mine < 0)
		return -errno;
	if (fstat(mine, &st)) {
		ret = -errno;
		close(mine);
		return ret;
	}
	memset(&d, 0, sizeof(d));
	d.type = hipExternalMemoryHandleTypeOpaqueFd;
	d.handle.fd = mine;
	d.size = size;
	e = rt->hipImportExternalMemory(&x, &d);
	if (!e) {
		memset(&bd, 0, sizeof(bd));
		bd.size = size;
		e = rt->hipExternalMemoryGetMappedBuffer(p, x, &bd);
		if (e)
			rt->hipDestroyExternalMemory(x);
	}
	/* On failure the fd is always still ours; on success it is the
	 * runtime's to use, unless it took it (and its number may be
	 * another file's now). */
	if (e) {
		close(mine);
		return kp_hip_errno(e);
	}
	if (same_file(mine, &st))
		*keep = mine;
	*ext = (uint64_t)(uintptr_t)x;
	return 0;
}

/*
 * map_ext_once, the first time after mapping and giving back the buffer
 * once to learn whether the runtime frees it (ext_leaked): a runtime that
 * never does is refused from then on, with hipErrorNotSupported and one
 * line saying why (the probe's mapping is the only one it keeps).
 */
static int map_ext(const struct kp_runtime *rt, int fd, uint64_t size,
		   struct kp_mem *m)
{
	int leaks = __atomic_load_n(&g_ext_leaks, __ATOMIC_ACQUIRE);
	int ret, keep;

	if (leaks < 0) {
		struct kp_mem probe = { .dmabuf_fd = -1 };

		ret = map_ext_once(rt, fd, size, &probe.addr, &probe.ext, &keep);
		if (ret)
			return ret;
		probe.ext_fd = keep;
		probe.flags = keep >= 0 ? KP_MEM_EXT_FD : 0;
		unmap_ext(rt, &probe);
		leaks = ext_leaked(probe.addr, size);
		__atomic_store_n(&g_ext_leaks, leaks, __ATOMIC_RELEASE);
	}
	if (leaks) {
		int v = kp_rt_version(rt);

		kp_say_once(&g_leak_said, "kfdpool: HIP %d.%d never frees what "
			    "hipExternalMemoryGetMappedBuffer mapped (it retains "
			    "the buffer once more than hipFree releases: ROCm/"
			    "rocm-systems PR #1749, undone by PR #3528): device "
			    "chunks are not mapped that way here, "
			    "hipErrorNotSupported; use a runtime without it, or "
			    "with virtual memory (hipMemImportFromShareableHandle)",
			    v / 10000000, v / 100000 % 100);
		return -EOPNOTSUPP;
	}
	ret = map_ext_once(rt, fd, size, &m->addr, &m->ext, &keep);
	if (ret)
		return ret;
	m->ext_fd = keep;
	if (keep >= 0)
		m->flags |= KP_MEM_EXT_FD;
	return 0;
}

/*
 * The osHandle of hipMemImportFromShareableHandle for dma-buf @fd.  clr
 * read the fd through it up to 7.0 (rocm-6.2.2 rocdevice.cpp
 * ImportShareableVMMHandle: *(int *)osHandle) and takes its value as the
 * fd since (ROCm/rocm-systems PR #759, as CUDA does): an address whose low
 * 32 bits are the fd and which holds the fd is read right both ways, so no
 * release boundary has to be guessed.  The pages are kept for the life of
 * the process (clr may remember the address), one pair for each 4096 fd
 * numbers; g_handle_mu is held until the import returns.  NULL when no
 * such address could be had.
 */
static char *g_handle_pages[64];

static void *fd_handle(int fd)
{
	uintptr_t low = (uint32_t)fd, want;
	size_t slot = low >> 12;
	char *v;
	int k;

	if (fd < 0 || slot >= sizeof(g_handle_pages) / sizeof(g_handle_pages[0]))
		return NULL;
	for (k = 0x100; !g_handle_pages[slot] && k < 0x7f00; k++) {
		want = ((uintptr_t)k << 32) + (low & ~(uintptr_t)4095);
		v = mmap((void *)want, 8192, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
		if (v == (char *)want)
			g_handle_pages[slot] = v;
		else if (v != MAP_FAILED)	/* a kernel that took it as a hint */
			munmap(v, 8192);
	}
	if (!g_handle_pages[slot])
		return NULL;
	v = g_handle_pages[slot] + (low & 4095);
	memcpy(v, &fd, sizeof(fd));
	return v;
}

static void unmap_va(const struct kp_runtime *rt, struct kp_mem *m)
{
	rt->hipMemUnmap(m->addr, m->size);
	rt->hipMemAddressFree(m->addr, m->size);
}

/*
 * Map handle @h (@size bytes, of device @dev) at a new address range with
 * access for @dev: m->addr.  libhsakmt aligns a range of 2 MiB or more to
 * 2 MiB whatever alignment clr passes on (reserved_aperture_allocate_
 * aligned, fmm.c), so that the GPU can use its 2 MiB fragments; asked for
 * all the same.
 */
static hipError_t map_va(const struct kp_runtime *rt, int dev, uint64_t size,
			 hipMemGenericAllocationHandle_t h, struct kp_mem *m)
{
	hipMemAccessDesc acc;
	void *p = NULL;
	hipError_t e;

	e = rt->hipMemAddressReserve(&p, size, size >= FRAG_BLOCK ? FRAG_BLOCK : 0,
				     NULL, 0);
	if (e)
		return e;
	e = rt->hipMemMap(p, size, 0, h, 0);
	if (e) {
		rt->hipMemAddressFree(p, size);
		return e;
	}
	memset(&acc, 0, sizeof(acc));
	acc.location.type = hipMemLocationTypeDevice;
	acc.location.id = dev;
	acc.flags = hipMemAccessFlagsProtReadWrite;
	m->addr = p;
	m->size = size;
	e = rt->hipMemSetAccess(p, size, &acc, 1);
	if (e) {
		unmap_va(rt, m);
		m->addr = NULL;
		return e;
	}
	m->flags |= KP_MEM_VA;
	return hipSuccess;
}

static int alloc_vmm(const struct kp_runtime *rt, int dev, uint64_t size,
		     struct kp_mem *m)
{
	hipMemAllocationProp prop;
	hipMemGenericAllocationHandle_t h;
	size_t gran = 0;
	int fd = -1, ret = 0;
	int64_t got;
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
		return kp_hip_errno(e);
	e = rt->hipMemExportToShareableHandle(&fd, h,
				hipMemHandleTypePosixFileDescriptor, 0);
	if (e)
		goto out_release;
	got = kp_dmabuf_size(fd);
	if (got >= 0 && (uint64_t)got != size) {
		ret = -EOPNOTSUPP;	/* not the chunk: never pinned */
		goto out_close;
	}
	e = map_va(rt, prop.location.id, size, h, m);
	if (e)
		goto out_close;
	m->handle = (uintptr_t)h;
	m->dmabuf_fd = fd;
	return 0;
out_close:
	close(fd);
out_release:
	rt->hipMemRelease(h);
	return ret ? ret : kp_hip_errno(e);
}

/*
 * An importer's mapping of a vmm chunk, dma-buf @fd of @size bytes, on its
 * device @dev: hipMemImportFromShareableHandle (ROCr imports the buffer
 * into the driver and keeps no fd: VMemoryImportShareableHandle,
 * runtime.cpp), then mapped as the exporter maps it.
 */
static int import_vmm(const struct kp_runtime *rt, int dev, int fd,
		      uint64_t size, struct kp_mem *m)
{
	hipMemGenericAllocationHandle_t h = NULL;
	void *os;
	hipError_t e;

	if (!rt->hipMemImportFromShareableHandle)
		return -EOPNOTSUPP;
	pthread_mutex_lock(&g_handle_mu);
	os = fd_handle(fd);
	e = os ? rt->hipMemImportFromShareableHandle(&h, os,
				hipMemHandleTypePosixFileDescriptor) :
	     hipErrorOutOfMemory;
	pthread_mutex_unlock(&g_handle_mu);
	if (e)
		return kp_hip_errno(e);
	e = map_va(rt, dev, size, h, m);
	if (e) {
		rt->hipMemRelease(h);
		return kp_hip_errno(e);
	}
	m->handle = (uintptr_t)h;
	return 0;
}

/* The dmabuf path's chunk size: a block of ROCr's fragment allocator of
 * its own (over 2 MiB, a multiple of 2 MiB). */
static uint64_t own_block(uint64_t size)
{
	size = (size + FRAG_BLOCK - 1) & ~(FRAG_BLOCK - 1);
	return size > FRAG_BLOCK ? size : 2 * FRAG_BLOCK;
}

static int alloc_dmabuf(const struct kp_runtime *rt, uint64_t size,
			struct kp_mem *m)
{
	const struct kp_hsa *hsa = kp_hsa();
	uint64_t off = 1;
	int64_t got = -1;
	void *p = NULL;
	int fd = -1, st;
	hipError_t e;

	size = own_block(size);
	e = rt->hipExtMallocWithFlags(&p, size, hipDeviceMallocDefault);
	if (e)
		return kp_hip_errno(e);
	st = hsa->export_dmabuf(p, size, &fd, &off);
	if (!st)
		got = kp_dmabuf_size(fd);
	if (st || off || got != (int64_t)size) {
		/*
		 * A dma-buf that is more than the chunk (an offset, another
		 * size) would share memory that is not the pool's: refused.
		 */
		if (!st)
			kp_say_once(&g_dmabuf_said, "kfdpool: ROCr exported a "
				    "%llu-byte chunk as %lld bytes at offset %llu "
				    "(not a driver object of its own): refused, "
				    "hipErrorNotSupported",
				    (unsigned long long)size, (long long)got,
				    (unsigned long long)off);
		if (!st && hsa->close_dmabuf)
			hsa->close_dmabuf(fd);
		else if (!st)
			close(fd);
		rt->hipFree(p);
		return st == HSA_OUT_OF_RESOURCES ? -ENOMEM :
		       st ? -EIO : -EOPNOTSUPP;
	}
	m->addr = p;
	m->size = size;
	m->dmabuf_fd = fd;
	return 0;
}

/*
 * What giving @m back will wait for (pool/pool.h): clr's hipFree and
 * hipHostUnregister wait for every stream of the memory's device
 * (SyncAllStreams of getUserData().deviceId, hip_memory.cpp, rocm-6.2.2 and
 * the newest), hipMemUnmap for the mapping's device (its null stream in
 * rocm-6.2.2, every stream in the newest, hip_vm.cpp).  An imported
 * external buffer never gets a device id of its own (platform/memory.hpp's
 * UserData: 0), so its hipFree waits for device 0 whichever device it was
 * mapped on.
 */
static void will_wait(struct kp_mem *m, int dev)
{
	m->flags |= KP_MEM_WAITS;
	m->wait_dev = m->ext ? 0 : dev;
}

static int rocr_alloc(int dev, uint64_t size, struct kp_mem *m)
{
	const struct kp_runtime *rt = kp_rt();
	int path = kp_rocr_path(), prev, ret;
	hipError_t e;

	memset(m, 0, sizeof(*m));
	m->dmabuf_fd = -1;
	m->dev = dev;
	if (!rt || path == KP_RT_NONE)
		return -EOPNOTSUPP;
	e = kp_rt_dev_enter(rt, dev, &prev);
	if (e)
		return kp_hip_errno(e);
	ret = path == KP_RT_VMM ? alloc_vmm(rt, dev, size, m) :
	      alloc_dmabuf(rt, size, m);
	kp_rt_dev_leave(rt, dev, prev);
	if (!ret)
		will_wait(m, dev);
	return ret;
}

int kp_rocr_alloc_va(int dev, uint64_t size, struct kp_mem *m)
{
	if (kp_rocr_path() != KP_RT_VMM) {
		memset(m, 0, sizeof(*m));
		m->dmabuf_fd = -1;
		return -EOPNOTSUPP;
	}
	return rocr_alloc(dev, size, m);
}

/* Give back a chunk or an importer's mapping of one, as it was made. */
static void rocr_release(struct kp_mem *m)
{
	const struct kp_runtime *rt = kp_rt();
	int mode;

	if (!rt || !m->addr)
		return;
	mode = kp_rt_relax(rt);
	if (m->flags & KP_MEM_VA)
		unmap_va(rt, m);
	else if (m->ext)
		unmap_ext(rt, m);
	else
		rt->hipFree(m->addr);
	if (m->handle)
		rt->hipMemRelease((hipMemGenericAllocationHandle_t)
				  (uintptr_t)m->handle);
	kp_rt_unrelax(rt, mode);
	m->addr = NULL;
	m->handle = 0;
	m->flags &= ~KP_MEM_VA;
}

static void rocr_free(struct kp_mem *m)
{
	if (m->dmabuf_fd >= 0)
		close(m->dmabuf_fd);
	m->dmabuf_fd = -1;
	rocr_release(m);
}

/*
 * Map a chunk received from another process on this process's ordinal of
 * its device: through virtual memory where this process shares device
 * memory that way (import_vmm), else as external memory (map_ext).
 */
static int rocr_map_import(int dev, int fd, uint64_t size, struct kp_mem *m)
{
	const struct kp_runtime *rt = kp_rt();
	int prev, ret, vmm = kp_rocr_path() == KP_RT_VMM;
	hipError_t e;

	memset(m, 0, sizeof(*m));
	m->dmabuf_fd = -1;
	if (!rt || !rt->hipImportExternalMemory ||
	    !rt->hipExternalMemoryGetMappedBuffer ||
	    !rt->hipDestroyExternalMemory || !rt->hipFree)
		return -EOPNOTSUPP;
	e = kp_rt_dev_enter(rt, dev, &prev);
	if (e)
		return kp_hip_errno(e);
	ret = vmm ? import_vmm(rt, dev, fd, size, m) : map_ext(rt, fd, size, m);
	kp_rt_dev_leave(rt, dev, prev);
	if (ret)
		return ret;
	m->size = size;
	m->dev = dev;
	will_wait(m, dev);
	return 0;
}

static void rocr_unmap_import(struct kp_mem *m)
{
	rocr_release(m);
}

int kp_rocr_set_access(const struct kp_mem *m, const hipMemAccessDesc *d,
		       size_t n)
{
	const struct kp_runtime *rt = kp_rt();

	if (!rt || !(m->flags & KP_MEM_VA) || !rt->hipMemSetAccess)
		return -EOPNOTSUPP;
	return kp_hip_errno(rt->hipMemSetAccess(m->addr, m->size, d, n));
}

/*
 * Host chunks registered with the runtime (ihipHostRegister, hip_memory.cpp):
 * kernels and hipPointerGetAttributes see them.  Registration maps the pages
 * for every GPU and pins them (KFD's userptr); unregistering waits for the
 * device the runtime took them for (SyncAllStreams).
 */
int kp_rocr_host_register(struct kp_mem *m)
{
	const struct kp_runtime *rt = kp_rt();
	int mode, dev;
	hipError_t e;

	if (!rt || !rt->hipHostRegister || !rt->hipHostUnregister)
		return 0;
	/* The memory's device is the one current at registration. */
	if (!rt->hipGetDevice || rt->hipGetDevice(&dev))
		dev = 0;
	mode = kp_rt_relax(rt);
	e = rt->hipHostRegister(m->addr, m->size, hipHostRegisterDefault);
	kp_rt_unrelax(rt, mode);
	if (!e) {
		m->flags |= KP_MEM_HOSTREG;
		will_wait(m, dev);
	}
	return kp_hip_errno(e);
}

void kp_rocr_host_unregister(struct kp_mem *m)
{
	const struct kp_runtime *rt = kp_rt();
	int mode;

	if (!rt || !(m->flags & KP_MEM_HOSTREG))
		return;
	mode = kp_rt_relax(rt);
	rt->hipHostUnregister(m->addr);
	kp_rt_unrelax(rt, mode);
	m->flags &= ~KP_MEM_HOSTREG;
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
