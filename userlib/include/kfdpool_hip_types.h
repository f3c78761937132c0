/* SPDX-License-Identifier: MIT */
/*
 * HIP's types, enum values and struct layouts as libkfdpool uses them, for
 * builds without HIP's headers.  Written from HIP's documented ABI (current
 * HIP: hipMemPoolProps with maxSize, hipMemLocationTypeHost and the host
 * NUMA locations, hipMemAllocationTypeManaged and ...Uncached,
 * hipMemHandleTypeFabric); checked against Debian's HIP 5.2 headers by
 * userlib/test/hip_abi_test.c where they are installed.
 *
 * Do not include this file directly: include <kfdpool_hip.h>, which uses
 * HIP's own header instead when it was included first (or when compiling
 * for HIP: __HIP_PLATFORM_AMD__ and the header is installed).
 */
#ifndef KFDPOOL_HIP_TYPES_H
#define KFDPOOL_HIP_TYPES_H

#include <stddef.h>

typedef enum hipError_t {
	hipSuccess = 0,
	hipErrorInvalidValue = 1,
	hipErrorOutOfMemory = 2,
	hipErrorMemoryAllocation = 2,
	hipErrorNotInitialized = 3,
	hipErrorInitializationError = 3,
	hipErrorDeinitialized = 4,
	hipErrorProfilerDisabled = 5,
	hipErrorProfilerNotInitialized = 6,
	hipErrorProfilerAlreadyStarted = 7,
	hipErrorProfilerAlreadyStopped = 8,
	hipErrorInvalidConfiguration = 9,
	hipErrorInvalidPitchValue = 12,
	hipErrorInvalidSymbol = 13,
	hipErrorInvalidDevicePointer = 17,
	hipErrorInvalidMemcpyDirection = 21,
	hipErrorInsufficientDriver = 35,
	hipErrorMissingConfiguration = 52,
	hipErrorPriorLaunchFailure = 53,
	hipErrorInvalidDeviceFunction = 98,
	hipErrorNoDevice = 100,
	hipErrorInvalidDevice = 101,
	hipErrorInvalidImage = 200,
	hipErrorInvalidContext = 201,
	hipErrorContextAlreadyCurrent = 202,
	hipErrorMapFailed = 205,
	hipErrorMapBufferObjectFailed = 205,
	hipErrorUnmapFailed = 206,
	hipErrorArrayIsMapped = 207,
	hipErrorAlreadyMapped = 208,
	hipErrorNoBinaryForGpu = 209,
	hipErrorAlreadyAcquired = 210,
	hipErrorNotMapped = 211,
	hipErrorNotMappedAsArray = 212,
	hipErrorNotMappedAsPointer = 213,
	hipErrorECCNotCorrectable = 214,
	hipErrorUnsupportedLimit = 215,
	hipErrorContextAlreadyInUse = 216,
	hipErrorPeerAccessUnsupported = 217,
	hipErrorInvalidKernelFile = 218,
	hipErrorInvalidGraphicsContext = 219,
	hipErrorInvalidSource = 300,
	hipErrorFileNotFound = 301,
	hipErrorSharedObjectSymbolNotFound = 302,
	hipErrorSharedObjectInitFailed = 303,
	hipErrorOperatingSystem = 304,
	hipErrorInvalidHandle = 400,
	hipErrorInvalidResourceHandle = 400,
	hipErrorIllegalState = 401,
	hipErrorNotFound = 500,
	hipErrorNotReady = 600,
	hipErrorIllegalAddress = 700,
	hipErrorLaunchOutOfResources = 701,
	hipErrorLaunchTimeOut = 702,
	hipErrorPeerAccessAlreadyEnabled = 704,
	hipErrorPeerAccessNotEnabled = 705,
	hipErrorSetOnActiveProcess = 708,
	hipErrorContextIsDestroyed = 709,
	hipErrorAssert = 710,
	hipErrorHostMemoryAlreadyRegistered = 712,
	hipErrorHostMemoryNotRegistered = 713,
	hipErrorLaunchFailure = 719,
	hipErrorCooperativeLaunchTooLarge = 720,
	hipErrorNotSupported = 801,
	hipErrorStreamCaptureUnsupported = 900,
	hipErrorStreamCaptureInvalidated = 901,
	hipErrorStreamCaptureMerge = 902,
	hipErrorStreamCaptureUnmatched = 903,
	hipErrorStreamCaptureUnjoined = 904,
	hipErrorStreamCaptureIsolation = 905,
	hipErrorStreamCaptureImplicit = 906,
	hipErrorCapturedEvent = 907,
	hipErrorStreamCaptureWrongThread = 908,
	hipErrorGraphExecUpdateFailure = 910,
	hipErrorUnknown = 999,
	hipErrorRuntimeMemory = 1052,
	hipErrorRuntimeOther = 1053,
} hipError_t;

typedef struct ihipStream_t *hipStream_t;
typedef struct ihipMemPoolHandle_t *hipMemPool_t;

typedef enum hipMemPoolAttr {
	hipMemPoolReuseFollowEventDependencies = 0x1,
	hipMemPoolReuseAllowOpportunistic = 0x2,
	hipMemPoolReuseAllowInternalDependencies = 0x3,
	hipMemPoolAttrReleaseThreshold = 0x4,
	hipMemPoolAttrReservedMemCurrent = 0x5,
	hipMemPoolAttrReservedMemHigh = 0x6,
	hipMemPoolAttrUsedMemCurrent = 0x7,
	hipMemPoolAttrUsedMemHigh = 0x8,
} hipMemPoolAttr;

typedef enum hipMemLocationType {
	hipMemLocationTypeInvalid = 0,
	hipMemLocationTypeNone = 0,
	hipMemLocationTypeDevice = 1,
	hipMemLocationTypeHost = 2,
	hipMemLocationTypeHostNuma = 3,		/* id: a host NUMA node */
	hipMemLocationTypeHostNumaCurrent = 4,	/* the calling thread's node */
} hipMemLocationType;

typedef struct hipMemLocation {
	hipMemLocationType type;
	int id;
} hipMemLocation;

typedef enum hipMemAccessFlags {
	hipMemAccessFlagsProtNone = 0,
	hipMemAccessFlagsProtRead = 1,
	hipMemAccessFlagsProtReadWrite = 3,
} hipMemAccessFlags;

typedef struct hipMemAccessDesc {
	hipMemLocation location;
	hipMemAccessFlags flags;
} hipMemAccessDesc;

typedef enum hipMemAllocationType {
	hipMemAllocationTypeInvalid = 0x0,
	hipMemAllocationTypePinned = 0x1,
	hipMemAllocationTypeManaged = 0x2,
	hipMemAllocationTypeUncached = 0x40000000,
	hipMemAllocationTypeMax = 0x7FFFFFFF,
} hipMemAllocationType;

typedef enum hipMemAllocationHandleType {
	hipMemHandleTypeNone = 0x0,
	hipMemHandleTypePosixFileDescriptor = 0x1,
	hipMemHandleTypeWin32 = 0x2,
	hipMemHandleTypeWin32Kmt = 0x4,
	hipMemHandleTypeFabric = 0x8,
} hipMemAllocationHandleType;

typedef struct hipMemPoolProps {
	hipMemAllocationType allocType;
	hipMemAllocationHandleType handleTypes;
	hipMemLocation location;
	void *win32SecurityAttributes;
	size_t maxSize;			/* bytes the pool may reserve, 0: no limit */
	unsigned char reserved[56];	/* must be 0 */
} hipMemPoolProps;

typedef struct hipMemPoolPtrExportData {
	unsigned char reserved[64];
} hipMemPoolPtrExportData;

/* The shareable handle of hipMemHandleTypeFabric: 64 bytes, as CUDA's
 * CUmemFabricHandle (a struct kfdpool_pool_handle inside). */
typedef struct hipMemFabricHandle_st {
	unsigned char data[64];
} hipMemFabricHandle_t;

#endif /* KFDPOOL_HIP_TYPES_H */
