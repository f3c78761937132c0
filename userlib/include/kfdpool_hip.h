/* SPDX-License-Identifier: MIT */
/*
 * libkfdpool: HIP's stream-ordered memory pool API, IPC included, over
 * /dev/kfdpool, plus batch extensions (kfdpool*).
 *
 * Types and values are HIP's.  When HIP's <hip/hip_runtime_api.h> was
 * included before this header, or this header is compiled for HIP
 * (__HIP_PLATFORM_AMD__ defined, as pkg-config --cflags kfdpool-hip does,
 * and the header installed), HIP's own types are used and only what older
 * HIP lacks is added (hipMemLocationTypeHost and the host NUMA locations,
 * hipMemAllocationTypeManaged and ...Uncached, hipMemHandleTypeFabric): so
 * either header may come first.  Otherwise the types come from
 * <kfdpool_hip_types.h>.  Define KFDPOOL_HIP_OWN_TYPES to never include
 * HIP's header.  With HIP 5.2's headers, hipMemPoolProps has reserved[64]
 * where current HIP has maxSize + reserved[56]: the layout is the same, and
 * the first 8 reserved bytes are the maximum size.
 *
 * Streams: beside a HIP runtime that has a device, pools keep HIP's stream
 * order (a block freed on one stream goes to another only as HIP's reuse
 * rules allow; docs/library.md, "Stream order") and streams are checked as
 * the runtime checks them; without one there is no GPU work to order, and
 * any hipStream_t value (0 included) is accepted.
 *
 * libkfdpool-hip is linked before libamdhip64 (pkg-config --libs
 * kfdpool-hip first), preloaded, or used alone: beside a runtime it serves
 * the pools it made (shareable pools and host pools) and their pointers,
 * and forwards every other call to the runtime.
 */
#ifndef KFDPOOL_HIP_H
#define KFDPOOL_HIP_H

#include <stddef.h>
#include <stdint.h>

#if !defined(HIP_INCLUDE_HIP_HIP_RUNTIME_API_H) && \
	!defined(KFDPOOL_HIP_OWN_TYPES) && \
	(defined(__HIP_PLATFORM_AMD__) || defined(__HIP_PLATFORM_HCC__)) && \
	defined(__has_include)
#if __has_include(<hip/hip_runtime_api.h>)
#include <hip/hip_runtime_api.h>
#endif
#endif

#ifdef HIP_INCLUDE_HIP_HIP_RUNTIME_API_H
/* HIP's own types.  Older HIP lacks these; the values are HIP's. */
#ifndef hipMemLocationTypeHost
#define hipMemLocationTypeHost ((hipMemLocationType)2)
#endif
#ifndef hipMemHandleTypeFabric
#define hipMemHandleTypeFabric ((hipMemAllocationHandleType)8)
#endif
#ifndef hipMemLocationTypeNone
#define hipMemLocationTypeNone ((hipMemLocationType)0)
#endif
#ifndef hipMemLocationTypeHostNuma
#define hipMemLocationTypeHostNuma ((hipMemLocationType)3)
#endif
#ifndef hipMemLocationTypeHostNumaCurrent
#define hipMemLocationTypeHostNumaCurrent ((hipMemLocationType)4)
#endif
#ifndef hipMemAllocationTypeManaged
#define hipMemAllocationTypeManaged ((hipMemAllocationType)0x2)
#endif
#ifndef hipMemAllocationTypeUncached
#define hipMemAllocationTypeUncached ((hipMemAllocationType)0x40000000)
#endif
#else
#include <kfdpool_hip_types.h>
#endif

#include <kfdpool.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- HIP's functions, with HIP's prototypes ---- */

hipError_t hipMemPoolCreate(hipMemPool_t *mem_pool,
			    const hipMemPoolProps *pool_props);
hipError_t hipMemPoolDestroy(hipMemPool_t mem_pool);
hipError_t hipMallocFromPoolAsync(void **dev_ptr, size_t size,
				  hipMemPool_t mem_pool, hipStream_t stream);
hipError_t hipFreeAsync(void *dev_ptr, hipStream_t stream);
hipError_t hipFree(void *ptr);
hipError_t hipMemPoolTrimTo(hipMemPool_t mem_pool, size_t min_bytes_to_hold);
hipError_t hipMemPoolSetAttribute(hipMemPool_t mem_pool, hipMemPoolAttr attr,
				  void *value);
hipError_t hipMemPoolGetAttribute(hipMemPool_t mem_pool, hipMemPoolAttr attr,
				  void *value);
hipError_t hipMemPoolSetAccess(hipMemPool_t mem_pool,
			       const hipMemAccessDesc *desc_list,
			       size_t count);
hipError_t hipMemPoolGetAccess(hipMemAccessFlags *flags,
			       hipMemPool_t mem_pool,
			       hipMemLocation *location);
hipError_t hipMemPoolExportToShareableHandle(void *shared_handle,
				hipMemPool_t mem_pool,
				hipMemAllocationHandleType handle_type,
				unsigned int flags);
hipError_t hipMemPoolImportFromShareableHandle(hipMemPool_t *mem_pool,
				void *shared_handle,
				hipMemAllocationHandleType handle_type,
				unsigned int flags);
hipError_t hipMemPoolExportPointer(hipMemPoolPtrExportData *export_data,
				   void *dev_ptr);
hipError_t hipMemPoolImportPointer(void **dev_ptr, hipMemPool_t mem_pool,
				   hipMemPoolPtrExportData *export_data);
const char *hipGetErrorName(hipError_t hip_error);
const char *hipGetErrorString(hipError_t hip_error);
/* The thread's last error, as clr keeps it: every call writes it. */
hipError_t hipGetLastError(void);
hipError_t hipPeekAtLastError(void);
/* kfdpool's pools are not made a device's or a location's current pool:
 * hipErrorInvalidValue (any other pool is the runtime's). */
hipError_t hipDeviceSetMemPool(int device, hipMemPool_t mem_pool);
hipError_t hipMemSetMemPool(hipMemLocation *location,
			    hipMemAllocationType type, hipMemPool_t mem_pool);

/* ---- libkfdpool extensions ---- */

/*
 * The shareable handle of hipMemHandleTypeFabric: 64 bytes (a struct
 * kfdpool_pool_handle) that name the pool without passing an fd.  The
 * exporter passes a pointer to one; so does the importer.
 */
typedef struct kfdpoolFabricHandle {
	unsigned char data[64];
} kfdpoolFabricHandle_t;

/*
 * Fabric handles (hip_fabric.c, docs/handles.md).  The handle
 * hipMemPoolExportToShareableHandle(hipMemHandleTypeFabric) writes admits
 * importers by the process's fabric policy: the exporter's uid by default,
 * else what KFDPOOL_FABRIC_POLICY says ("uid", "any", "gid:N"), else what
 * kfdpoolSetFabricPolicy() set last (KFDPOOL_HANDLE_POLICY_*; @gid only
 * with KFDPOOL_HANDLE_POLICY_GID).  A bad KFDPOOL_FABRIC_POLICY makes the
 * export fail (hipErrorInvalidValue) rather than widen anything.
 */
hipError_t kfdpoolSetFabricPolicy(uint32_t policy, uint32_t gid);

/* Export a pool created with hipMemHandleTypeFabric as a 64-byte handle
 * (written to @shared_handle) with an explicit policy. */
hipError_t kfdpoolMemPoolExportFabricHandle(void *shared_handle,
					    hipMemPool_t mem_pool,
					    uint32_t policy, uint32_t gid);

/* Give the pool a new handle key: every fabric handle exported before stops
 * importing; pools imported already are not affected. */
hipError_t kfdpoolMemPoolRotateFabricHandles(hipMemPool_t mem_pool);

/*
 * Persistent pools (docs/library.md, "Persistent pools").  A pool created
 * by kfdpoolMemPoolCreatePersistent (as hipMemPoolCreate, always a
 * kfdpool pool) stays in the kernel when the process ends, with what is
 * allocated in it and exported from it: importers keep importing its
 * pointers.  hipFree of an exported pointer revokes its record, so a
 * producer leaves the pointers it shares allocated; hipMemPoolDestroy of
 * the pool gives back its empty chunks only.  The owner handle (64 bytes,
 * for the pool's user alone) lets a later process of that user adopt the
 * pool: kfdpoolMemPoolAdopt gives a pool of its own over it (exclusive:
 * hipErrorIllegalState while another owner holds it; hipErrorInvalidValue
 * for another user's handle), which allocates and exports as any, and
 * revokes the records an earlier owner made with
 * kfdpoolMemPoolRevokeExports.  kfdpoolMemPoolEnd ends the kernel pool
 * now (importers keep what they hold) and destroys the HIP pool.
 */
typedef struct kfdpoolOwnerHandle {
	unsigned char data[64];
} kfdpoolOwnerHandle_t;

hipError_t kfdpoolMemPoolCreatePersistent(hipMemPool_t *mem_pool,
					  const hipMemPoolProps *pool_props);
hipError_t kfdpoolMemPoolExportOwnerHandle(kfdpoolOwnerHandle_t *handle,
					   hipMemPool_t mem_pool);
hipError_t kfdpoolMemPoolAdopt(hipMemPool_t *mem_pool,
			       const kfdpoolOwnerHandle_t *handle);
hipError_t kfdpoolMemPoolRevokeExports(hipMemPool_t mem_pool,
				const hipMemPoolPtrExportData *export_data,
				size_t count, hipError_t *results);
hipError_t kfdpoolMemPoolEnd(hipMemPool_t mem_pool);

/*
 * Export @count pointers at once (one system call per batch, not per
 * pointer).  @results, when not NULL, gets each pointer's hipError_t.
 * Returns hipSuccess when all succeeded, else the error of a failed
 * element; the pointers that succeeded are exported either way (and the
 * same holds for the other kfdpool*Pointers calls).
 */
hipError_t kfdpoolExportPointers(hipMemPoolPtrExportData *export_data,
				 void *const *dev_ptrs, size_t count,
				 hipError_t *results);

/* Import @count pointers of one imported pool at once.  Failed elements
 * get NULL in @dev_ptrs. */
hipError_t kfdpoolImportPointers(void **dev_ptrs, hipMemPool_t mem_pool,
				 const hipMemPoolPtrExportData *export_data,
				 size_t count, hipError_t *results);

/* hipFree for @count pointers (pool allocations or imported pointers);
 * revokes and releases are batched.  NULL elements are skipped. */
hipError_t kfdpoolFreePointers(void *const *ptrs, size_t count,
			       hipError_t *results);

/*
 * Chunk granularity of a pool: bytes reserved at a time (a multiple of
 * the page size, at least 64 KiB; default 2 MiB or KFDPOOL_CHUNK_SIZE).
 * Applies to chunks reserved afterwards.
 */
hipError_t kfdpoolMemPoolSetGranularity(hipMemPool_t mem_pool, size_t bytes);

/* The kernel's figures of the pool (KFDPOOL_IOC_POOL_STATS, no reset). */
hipError_t kfdpoolMemPoolGetStats(hipMemPool_t mem_pool,
				  struct kfdpool_pool_stats *stats);

/* The name of the backend the pool's chunks come from: "module",
 * "dmaheap", "udmabuf", "vgem", "kfd" or "rocr"; "mmap" for an imported
 * pool whose chunks the process maps from their dma-bufs. */
const char *kfdpoolMemPoolBackend(hipMemPool_t mem_pool);

/* The hipError_t a negative errno of the native API becomes. */
hipError_t kfdpoolErrnoToHip(int err);

#ifdef __cplusplus
}
#endif

#endif /* KFDPOOL_HIP_H */
