/* SPDX-License-Identifier: MIT */
/*
 * The HIP runtime's types and functions that libkfdpool-hip calls but
 * <kfdpool_hip.h> does not declare: streams and events, device selection,
 * external memory (what importers map device chunks with), virtual memory
 * management (ROCm >= 6.0), hipGetProcAddress (ROCm >= 6.1), stream
 * capture, the thread's last error, host registration; and the ROCr
 * (libhsa-runtime64) functions kfdpool looks up beside them.
 *
 * Layouts are current HIP's (6.x).  Where they grew since 5.2 (the
 * external memory descriptors gained reserved[16]) the 6.x struct is a
 * zero-filled superset that 5.2 reads the same way.  hipMemAllocationProp
 * was reordered in 6.0; it is used only with a runtime of 6.0 or later
 * (chunk/rocr.c checks hipRuntimeGetVersion).  userlib/test/hip_abi_test.c
 * compares what 5.2 shares with HIP's headers.
 */
#ifndef KFDPOOL_RT_TYPES_H
#define KFDPOOL_RT_TYPES_H

#include "kfdpool_hip.h"

typedef struct ihipEvent_t *hipEvent_t;
typedef void *hipExternalMemory_t;
typedef struct ihipMemGenericAllocationHandle *hipMemGenericAllocationHandle_t;

#define hipEventDisableTiming	0x2
#define hipDeviceMallocDefault	0x0
#define hipStreamLegacy		((hipStream_t)1)
#define hipStreamPerThread	((hipStream_t)2)

typedef enum hipExternalMemoryHandleType {
	hipExternalMemoryHandleTypeOpaqueFd = 1,
} hipExternalMemoryHandleType;

typedef struct hipExternalMemoryHandleDesc_st {
	hipExternalMemoryHandleType type;
	union {
		int fd;
		struct {
			void *handle;
			const void *name;
		} win32;
		const void *nvSciBufObject;
	} handle;
	unsigned long long size;
	unsigned int flags;
	unsigned int reserved[16];
} hipExternalMemoryHandleDesc;

typedef struct hipExternalMemoryBufferDesc_st {
	unsigned long long offset;
	unsigned long long size;
	unsigned int flags;
	unsigned int reserved[16];
} hipExternalMemoryBufferDesc;

/* HIP 6.x's order (5.2 had compressionType first). */
typedef struct hipMemAllocationProp {
	hipMemAllocationType type;
	hipMemAllocationHandleType requestedHandleType;
	hipMemLocation location;
	void *win32HandleMetaData;
	struct {
		unsigned char compressionType;
		unsigned char gpuDirectRDMACapable;
		unsigned short usage;
	} allocFlags;
} hipMemAllocationProp;

typedef enum hipMemAllocationGranularity_flags {
	hipMemAllocationGranularityMinimum = 0,
	hipMemAllocationGranularityRecommended = 1,
} hipMemAllocationGranularity_flags;

/* Values of clr's hip_runtime_api.h (5.7 and 6.x alike). */
typedef enum hipStreamCaptureStatus {
	hipStreamCaptureStatusNone = 0,
	hipStreamCaptureStatusActive = 1,
	hipStreamCaptureStatusInvalidated = 2,
} hipStreamCaptureStatus;

typedef enum hipStreamCaptureMode {
	hipStreamCaptureModeGlobal = 0,
	hipStreamCaptureModeThreadLocal = 1,
	hipStreamCaptureModeRelaxed = 2,
} hipStreamCaptureMode;

/* The one device attribute asked (HIP >= 5.7 numbers it 89). */
typedef enum hipDeviceAttribute_t {
	hipDeviceAttributeVirtualMemoryManagementSupported = 89,
} hipDeviceAttribute_t;

#define hipHostRegisterDefault	0x0

typedef enum hipDriverProcAddressQueryResult {
	HIP_GET_PROC_ADDRESS_SUCCESS = 0,
	HIP_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND = 1,
	HIP_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT = 2,
} hipDriverProcAddressQueryResult;

/* Called in the runtime, never defined here. */
hipError_t hipGetDeviceCount(int *count);
hipError_t hipGetDevice(int *device);
hipError_t hipSetDevice(int device);
hipError_t hipRuntimeGetVersion(int *version);
hipError_t hipDeviceGetAttribute(int *value, hipDeviceAttribute_t attr,
				 int device);
hipError_t hipStreamGetDevice(hipStream_t stream, int *device);
hipError_t hipStreamIsCapturing(hipStream_t stream,
				hipStreamCaptureStatus *status);
hipError_t hipThreadExchangeStreamCaptureMode(hipStreamCaptureMode *mode);
hipError_t hipHostRegister(void *ptr, size_t size, unsigned int flags);
hipError_t hipHostUnregister(void *ptr);
hipError_t hipDeviceGetPCIBusId(char *bus_id, int len, int device);
hipError_t hipDeviceGetByPCIBusId(int *device, const char *bus_id);
hipError_t hipEventCreateWithFlags(hipEvent_t *event, unsigned int flags);
hipError_t hipEventQuery(hipEvent_t event);
hipError_t hipExtMallocWithFlags(void **ptr, size_t size, unsigned int flags);
hipError_t hipImportExternalMemory(hipExternalMemory_t *mem,
				   const hipExternalMemoryHandleDesc *desc);
hipError_t hipExternalMemoryGetMappedBuffer(void **ptr, hipExternalMemory_t mem,
				const hipExternalMemoryBufferDesc *desc);
hipError_t hipDestroyExternalMemory(hipExternalMemory_t mem);
hipError_t hipMemCreate(hipMemGenericAllocationHandle_t *handle, size_t size,
			const hipMemAllocationProp *prop,
			unsigned long long flags);
hipError_t hipMemRelease(hipMemGenericAllocationHandle_t handle);
hipError_t hipMemAddressReserve(void **ptr, size_t size, size_t alignment,
				void *addr, unsigned long long flags);
hipError_t hipMemAddressFree(void *ptr, size_t size);
hipError_t hipMemMap(void *ptr, size_t size, size_t offset,
		     hipMemGenericAllocationHandle_t handle,
		     unsigned long long flags);
hipError_t hipMemUnmap(void *ptr, size_t size);
hipError_t hipMemSetAccess(void *ptr, size_t size,
			   const hipMemAccessDesc *desc, size_t count);
hipError_t hipMemExportToShareableHandle(void *handle,
				hipMemGenericAllocationHandle_t gen,
				hipMemAllocationHandleType type,
				unsigned long long flags);
hipError_t hipMemGetAllocationGranularity(size_t *granularity,
				const hipMemAllocationProp *prop,
				hipMemAllocationGranularity_flags option);
hipError_t hipMemImportFromShareableHandle(
				hipMemGenericAllocationHandle_t *handle,
				void *os_handle, hipMemAllocationHandleType type);

/* Defined here (interposed: stream order follows them, chunks wait for
 * the synchronising calls, the last error is kept) and forwarded. */
hipError_t hipEventRecord(hipEvent_t event, hipStream_t stream);
hipError_t hipEventRecord_spt(hipEvent_t event, hipStream_t stream);
hipError_t hipEventDestroy(hipEvent_t event);
hipError_t hipStreamWaitEvent(hipStream_t stream, hipEvent_t event,
			      unsigned int flags);
hipError_t hipStreamWaitEvent_spt(hipStream_t stream, hipEvent_t event,
				  unsigned int flags);
hipError_t hipStreamDestroy(hipStream_t stream);
hipError_t hipStreamSynchronize(hipStream_t stream);
hipError_t hipStreamSynchronize_spt(hipStream_t stream);
hipError_t hipEventSynchronize(hipEvent_t event);
hipError_t hipDeviceSynchronize(void);
hipError_t hipDeviceSetMemPool(int device, hipMemPool_t pool);
hipError_t hipGetLastError(void);
hipError_t hipPeekAtLastError(void);
hipError_t hipExtGetLastError(void);
hipError_t hipGetProcAddress(const char *symbol, void **pfn, int hip_version,
			     uint64_t flags,
			     hipDriverProcAddressQueryResult *status);

/*
 * ROCr's (libhsa-runtime64.so.1), looked up beside the runtime: the
 * dma-buf export of ROCr >= 5.6 and the system attribute saying whether
 * the driver has it (hsa.h, hsa_ext_amd.h).
 */
typedef int kp_hsa_status_t;		/* hsa_status_t; 0 is success */
#define KP_HSA_SYSTEM_INFO_DMABUF_SUPPORTED 0x204
typedef kp_hsa_status_t (*kp_hsa_export_dmabuf_fn)(const void *ptr,
				size_t size, int *dmabuf, uint64_t *offset);
typedef kp_hsa_status_t (*kp_hsa_close_dmabuf_fn)(int dmabuf);
typedef kp_hsa_status_t (*kp_hsa_system_get_info_fn)(int attribute,
						     void *value);

/* hsa_amd_pointer_info_t as ROCr 5.2 has it (later ones append members,
 * filled only as far as .size says). */
typedef struct kp_hsa_pointer_info {
	uint32_t size;
	int type;			/* hsa_amd_pointer_type_t */
	void *agent_base;
	void *host_base;
	size_t bytes;
	void *user_data;
	uint64_t agent_owner;		/* hsa_agent_t */
	uint32_t global_flags;
} kp_hsa_pointer_info_t;
#define KP_HSA_POINTER_UNKNOWN	0
#define KP_HSA_POINTER_GRAPHICS	3	/* an interop (dma-buf) mapping */
typedef kp_hsa_status_t (*kp_hsa_pointer_info_fn)(const void *ptr,
				kp_hsa_pointer_info_t *info,
				void *(*alloc)(size_t), uint32_t *naccessible,
				uint64_t **accessible);

#endif
