// SPDX-License-Identifier: MIT
/*
 * Native check of hipfort_kfdpool's calling conventions: stand-ins for the
 * library's functions, with HIP's exact C prototypes (from HIP's own header),
 * that accept only the argument values abi_driver.f90 passes.  A by-value
 * argument declared by reference in Fortran (or the reverse), a wrong kind
 * or a wrong struct layout makes a check fail.  Never linked with the real
 * library.
 */
#define __HIP_PLATFORM_AMD__
#include <hip/hip_runtime_api.h>
#include <stdint.h>
#include <string.h>

#define POOL	((hipMemPool_t)(uintptr_t)0x1000)
#define POOL2	((hipMemPool_t)(uintptr_t)0x1001)
#define STREAM	((hipStream_t)(uintptr_t)0x2000)
#define PTR	((void *)(uintptr_t)0x3000)
#define PTR2	((void *)(uintptr_t)0x3001)
#define BAD	hipErrorInvalidValue

/* libkfdpool's batch extensions (userlib/include/kfdpool_hip.h) */
hipError_t kfdpoolExportPointers(hipMemPoolPtrExportData *export_data,
				 void *const *dev_ptrs, size_t count,
				 hipError_t *results);
hipError_t kfdpoolImportPointers(void **dev_ptrs, hipMemPool_t mem_pool,
				 const hipMemPoolPtrExportData *export_data,
				 size_t count, hipError_t *results);
hipError_t kfdpoolFreePointers(void *const *ptrs, size_t count,
			       hipError_t *results);
/* ... and its persistent-pool extensions */
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
/* HIP 7's, which HIP 5.2's header lacks (userlib/include/kfdpool_hip.h) */
hipError_t hipMemSetMemPool(hipMemLocation *location,
			    hipMemAllocationType type, hipMemPool_t mem_pool);

static int zero(const unsigned char *p, size_t n)
{
	while (n--)
		if (*p++)
			return 0;
	return 1;
}

hipError_t hipMemPoolCreate(hipMemPool_t *mem_pool, const hipMemPoolProps *p)
{
	uint64_t max;

	/* HIP 5.2's header: maxSize is the first 8 of reserved[64]. */
	memcpy(&max, p->reserved, 8);
	if (p->allocType != hipMemAllocationTypePinned || p->handleTypes != 9 ||
	    p->location.type != 2 || p->location.id != 3 ||
	    p->win32SecurityAttributes || max != 123456789 ||
	    !zero(p->reserved + 8, 56))
		return BAD;
	*mem_pool = POOL;
	return hipSuccess;
}

hipError_t hipMemPoolDestroy(hipMemPool_t mem_pool)
{
	return mem_pool == POOL ? hipSuccess : BAD;
}

hipError_t hipMallocFromPoolAsync(void **dev_ptr, size_t size,
				  hipMemPool_t mem_pool, hipStream_t stream)
{
	if (size != 4103 || mem_pool != POOL || stream != STREAM)
		return BAD;
	*dev_ptr = PTR;
	return hipSuccess;
}

hipError_t hipFreeAsync(void *dev_ptr, hipStream_t stream)
{
	return dev_ptr == PTR && stream == STREAM ? hipSuccess : BAD;
}

hipError_t hipFree(void *ptr)
{
	return ptr == PTR ? hipSuccess : BAD;
}

hipError_t hipDeviceSetMemPool(int device, hipMemPool_t mem_pool)
{
	return device == 7 && mem_pool == POOL ? hipSuccess : BAD;
}

hipError_t hipMemSetMemPool(hipMemLocation *location,
			    hipMemAllocationType type, hipMemPool_t mem_pool)
{
	/* hipMemLocationTypeHost (2), host NUMA node 9 */
	return location->type == 2 && location->id == 9 &&
	       type == hipMemAllocationTypePinned && mem_pool == POOL ?
	       hipSuccess : BAD;
}

hipError_t hipMemPoolTrimTo(hipMemPool_t mem_pool, size_t min_bytes_to_hold)
{
	return mem_pool == POOL && min_bytes_to_hold == 77 ? hipSuccess : BAD;
}

hipError_t hipMemPoolSetAttribute(hipMemPool_t mem_pool, hipMemPoolAttr attr,
				  void *value)
{
	if (mem_pool != POOL || attr != hipMemPoolAttrReleaseThreshold ||
	    *(uint64_t *)value != 999)
		return BAD;
	return hipSuccess;
}

hipError_t hipMemPoolGetAttribute(hipMemPool_t mem_pool, hipMemPoolAttr attr,
				  void *value)
{
	if (mem_pool != POOL || attr != hipMemPoolAttrUsedMemCurrent)
		return BAD;
	*(uint64_t *)value = 4242;
	return hipSuccess;
}

hipError_t hipMemPoolSetAccess(hipMemPool_t mem_pool,
			       const hipMemAccessDesc *desc_list, size_t count)
{
	/* count 1: the scalar form, the first descriptor alone */
	if (mem_pool == POOL && count == 1 &&
	    desc_list[0].location.type == hipMemLocationTypeDevice &&
	    desc_list[0].flags == hipMemAccessFlagsProtRead)
		return hipSuccess;
	if (mem_pool != POOL || count != 2 ||
	    desc_list[1].location.type != hipMemLocationTypeDevice ||
	    desc_list[1].location.id != 5 ||
	    desc_list[1].flags != hipMemAccessFlagsProtReadWrite ||
	    desc_list[0].flags != hipMemAccessFlagsProtRead)
		return BAD;
	return hipSuccess;
}

hipError_t hipMemPoolGetAccess(hipMemAccessFlags *flags, hipMemPool_t mem_pool,
			       hipMemLocation *location)
{
	if (mem_pool != POOL || location->type != hipMemLocationTypeDevice ||
	    location->id != 6)
		return BAD;
	*flags = hipMemAccessFlagsProtReadWrite;
	return hipSuccess;
}

hipError_t hipMemPoolExportToShareableHandle(void *shared_handle,
				hipMemPool_t mem_pool,
				hipMemAllocationHandleType handle_type,
				unsigned int flags)
{
	if (mem_pool != POOL || handle_type != hipMemHandleTypePosixFileDescriptor ||
	    flags)
		return BAD;
	*(int *)shared_handle = 57;
	return hipSuccess;
}

hipError_t hipMemPoolImportFromShareableHandle(hipMemPool_t *mem_pool,
				void *shared_handle,
				hipMemAllocationHandleType handle_type,
				unsigned int flags)
{
	if ((uintptr_t)shared_handle != 57 ||
	    handle_type != hipMemHandleTypePosixFileDescriptor || flags)
		return BAD;
	*mem_pool = POOL2;
	return hipSuccess;
}

hipError_t hipMemPoolExportPointer(hipMemPoolPtrExportData *export_data,
				   void *dev_ptr)
{
	int i;

	if (dev_ptr != PTR)
		return BAD;
	for (i = 0; i < 64; i++)
		export_data->reserved[i] = (unsigned char)(i + 1);
	return hipSuccess;
}

hipError_t hipMemPoolImportPointer(void **dev_ptr, hipMemPool_t mem_pool,
				   hipMemPoolPtrExportData *export_data)
{
	int i;

	if (mem_pool != POOL2)
		return BAD;
	for (i = 0; i < 64; i++)
		if (export_data->reserved[i] != (unsigned char)(i + 1))
			return BAD;
	*dev_ptr = PTR2;
	return hipSuccess;
}

hipError_t kfdpoolExportPointers(hipMemPoolPtrExportData *export_data,
				 void *const *dev_ptrs, size_t count,
				 hipError_t *results)
{
	size_t i;

	if (count != 3)
		return BAD;
	for (i = 0; i < count; i++) {
		if (dev_ptrs[i] != (char *)PTR + i)
			return BAD;
		memset(export_data[i].reserved, (int)(i + 1), 64);
		results[i] = hipSuccess;
	}
	return hipSuccess;
}

hipError_t kfdpoolImportPointers(void **dev_ptrs, hipMemPool_t mem_pool,
				 const hipMemPoolPtrExportData *export_data,
				 size_t count, hipError_t *results)
{
	size_t i;

	if (mem_pool != POOL2 || count != 3)
		return BAD;
	for (i = 0; i < count; i++) {
		if (export_data[i].reserved[63] != i + 1)
			return BAD;
		dev_ptrs[i] = (char *)PTR2 + i;
		results[i] = i == 2 ? hipErrorNotFound : hipSuccess;
	}
	return hipErrorNotFound;
}

/* The code by value, a static string back. */
const char *hipGetErrorName(hipError_t hip_error)
{
	return hip_error == hipErrorNotInitialized ? "hipErrorNotInitialized" : NULL;
}

const char *hipGetErrorString(hipError_t hip_error)
{
	return hip_error == hipErrorOutOfMemory ? "out of memory" : NULL;
}

hipError_t kfdpoolFreePointers(void *const *ptrs, size_t count,
			       hipError_t *results)
{
	size_t i;

	if (count != 3)
		return BAD;
	for (i = 0; i < count; i++) {
		if (ptrs[i] != (char *)PTR2 + i)
			return BAD;
		results[i] = hipSuccess;
	}
	return hipSuccess;
}

hipError_t kfdpoolMemPoolCreatePersistent(hipMemPool_t *mem_pool,
					  const hipMemPoolProps *pool_props)
{
	return hipMemPoolCreate(mem_pool, pool_props);
}

hipError_t kfdpoolMemPoolExportOwnerHandle(kfdpoolOwnerHandle_t *handle,
					   hipMemPool_t mem_pool)
{
	int i;

	if (mem_pool != POOL)
		return BAD;
	for (i = 0; i < 64; i++)
		handle->data[i] = (unsigned char)(i + 1);
	return hipSuccess;
}

hipError_t kfdpoolMemPoolAdopt(hipMemPool_t *mem_pool,
			       const kfdpoolOwnerHandle_t *handle)
{
	if (handle->data[0] != 1 || handle->data[63] != 64)
		return BAD;
	*mem_pool = POOL2;
	return hipSuccess;
}

hipError_t kfdpoolMemPoolRevokeExports(hipMemPool_t mem_pool,
				const hipMemPoolPtrExportData *export_data,
				size_t count, hipError_t *results)
{
	size_t i;

	if (mem_pool != POOL2 || count != 3)
		return BAD;
	for (i = 0; i < count; i++) {
		if (export_data[i].reserved[63] != i + 1)
			return BAD;
		results[i] = hipSuccess;
	}
	return hipSuccess;
}

hipError_t kfdpoolMemPoolEnd(hipMemPool_t mem_pool)
{
	return mem_pool == POOL2 ? hipSuccess : BAD;
}
