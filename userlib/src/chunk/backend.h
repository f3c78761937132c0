/* SPDX-License-Identifier: MIT */
/*
 * Where a pool's chunks come from.  Every backend hands out a dma-buf fd
 * per chunk (what the pool pins) and an address the process uses.  Host
 * backends map the chunk into the CPU; the kfd backend gives a GPU virtual
 * address.  Importers map a received dma-buf with the same backend family:
 * host chunks with mmap(), device chunks with AMDKFD_IOC_IMPORT_DMABUF.
 */
#ifndef KFDPOOL_BACKEND_H
#define KFDPOOL_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#ifndef KFDPOOL_HIP_OWN_TYPES
#define KFDPOOL_HIP_OWN_TYPES
#endif
#include "rt/types.h"

struct kp_mem {
	int dmabuf_fd;		/* exporter: the chunk's dma-buf, until pinned */
	void *addr;		/* where the process uses the chunk */
	uint64_t size;
	uint64_t handle;	/* backend's own handle (kfd: the BO handle) */
	uint64_t ext;		/* rocr: the runtime's external memory */
	int ext_fd;		/* rocr: the fd number @ext keeps (KP_MEM_EXT_FD) */
	int dev;		/* device index (kfd) */
	unsigned int flags;	/* KP_MEM_* */
	int wait_dev;		/* KP_MEM_WAITS: the device giving it back waits for */
};

#define KP_MEM_VA	0x1	/* rocr: mapped with hipMemMap */
#define KP_MEM_HOSTREG	0x2	/* registered with hipHostRegister */
/* Giving it back makes the runtime wait for the streams of device
 * wait_dev (clr's SyncAllStreams in hipFree and hipHostUnregister). */
#define KP_MEM_WAITS	0x4
#define KP_MEM_EXT_FD	0x8	/* rocr: ext_fd is open until @ext is destroyed */

struct kp_backend {
	const char *name;
	int device;		/* 1: GPU memory (kfd), 0: host memory */
	/* 0 when usable on this machine, else -errno. */
	int (*probe)(void);
	/* Allocate @size bytes (a page multiple) on device @dev. */
	int (*alloc)(int dev, uint64_t size, struct kp_mem *m);
	/* Or allocate and pin in one step (the module): the chunk is entry
	 * *@entry_id of the pool of owner fd @pool_fd, pinned with @cookie.
	 * Set instead of alloc. */
	int (*alloc_pinned)(int pool_fd, uint64_t size, uint64_t cookie,
			    struct kp_mem *m, uint32_t *entry_id);
	void (*free)(struct kp_mem *m);
	/* Map a dma-buf received from another process; @fd stays the
	 * caller's. */
	int (*map_import)(int dev, int fd, uint64_t size, struct kp_mem *m);
	void (*unmap_import)(struct kp_mem *m);
};

extern const struct kp_backend kp_backend_module;
extern const struct kp_backend kp_backend_dmaheap;
extern const struct kp_backend kp_backend_udmabuf;
extern const struct kp_backend kp_backend_vgem;
extern const struct kp_backend kp_backend_kfd;
extern const struct kp_backend kp_backend_rocr;

/* Host mapping of a dma-buf fd, shared by the host backends. */
int kp_host_map(int fd, uint64_t size, void **addr);
int kp_host_map_import(int dev, int fd, uint64_t size, struct kp_mem *m);
void kp_host_unmap_import(struct kp_mem *m);

/* Lock (1) or unlock (0) a backend's state around fork(): hip/hip_fork.c
 * holds every lock of the library across it, in the order they nest. */
void kp_kfd_fork(int prepare);
void kp_vgem_fork(int prepare);

void kp_rocr_fork(int prepare);

/* Number of GPUs the kfd backend sees (0 without /dev/kfd). */
int kp_kfd_device_count(void);
/* The kfd backend's device @dev as a PCI bus id ("dddd:bb:dd.f"), and the
 * device of a bus id: 0 or -ENODEV. */
int kp_kfd_bus_id(int dev, char *buf, size_t len);
int kp_kfd_device_of(const char *bus_id, int *dev);

/*
 * The runtime backend (chunk/rocr.c): which way it shares device memory
 * in this process (KP_RT_NONE: it cannot; chosen once, said on stderr),
 * peer access to a chunk, host memory registered with the runtime, and
 * the runtime's devices by PCI bus id.  Errors are -errno, or a runtime
 * error carried up unchanged (kp_hip_errno).
 */
enum { KP_RT_NONE, KP_RT_VMM, KP_RT_DMABUF };
int kp_rocr_path(void);
/* 0, or -EINVAL (said on stderr) when KFDPOOL_RT_PATH is neither unset,
 * empty, "vmm" nor "dmabuf". */
int kp_rocr_env_check(void);
/* A chunk mapped with hipMemMap, so that peers can be given access: what
 * the vmm path makes of every chunk; -EOPNOTSUPP on the dmabuf path. */
int kp_rocr_alloc_va(int dev, uint64_t size, struct kp_mem *m);
int kp_rocr_set_access(const struct kp_mem *m, const hipMemAccessDesc *d,
		       size_t n);
int kp_rocr_host_register(struct kp_mem *m);
void kp_rocr_host_unregister(struct kp_mem *m);
int kp_rocr_bus_id(int dev, char *buf, size_t len);
int kp_rocr_device_of(const char *bus_id, int *dev);

/* The size of dma-buf @fd, or -errno. */
int64_t kp_dmabuf_size(int fd);

/*
 * Choose the backend of a new pool: @device 1 for hipMemLocationTypeDevice.
 * Honours KFDPOOL_BACKEND.  NULL and *err = -ENODEV (device pool, no GPU,
 * no substitute named), -EINVAL (KFDPOOL_BACKEND refused, said on stderr)
 * or the probe's error.
 */
const struct kp_backend *kp_backend_pick(int device, int *err);
const struct kp_backend *kp_backend_by_name(const char *name);
/*
 * 0, or -EINVAL (said on stderr) when KFDPOOL_BACKEND names no backend, or
 * kfd for a host pool (@device 0; 1: a device pool, -1: either).
 */
int kp_backend_env_check(int device);

#endif
