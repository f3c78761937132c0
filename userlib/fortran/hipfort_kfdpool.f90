! SPDX-License-Identifier: MIT
!
! hipfort_kfdpool: Fortran interfaces to libkfdpool-hip's HIP memory pool API.
!
! The procedure names, dummy argument names, kinds and value/reference
! conventions are hipfort's, so Fortran code written against hipfort's
! mempool interfaces compiles unchanged against this module and links
! against libkfdpool-hip:
!
!   - opaque handles (hipMemPool_t, hipStream_t) and plain pointers (void *)
!     are type(c_ptr), value;
!   - out-handles and out-pointers (hipMemPool_t *, void **) are
!     type(c_ptr) passed by reference;
!   - structs (hipMemPoolProps *, hipMemPoolPtrExportData *, ...) are the
!     bind(c) derived types below, passed by reference;
!   - size_t is integer(c_size_t), value; enums are integer(c_int), value
!     (kind(hipSuccess) and friends); unsigned int flags are integer(c_int);
!   - every function returns integer(c_int), a hipError_t;
!   - where C takes a pointer to a struct (hipMemPoolCreate's props, the
!     export data, hipMemPoolSetAccess's list) the name is generic: the
!     derived type by reference, or a type(c_ptr) by value (c_loc of it),
!     and for the access list an array or a scalar.  Specific names end in
!     "_" as in hipfort (hipMemPoolCreate_ is the by-reference form).
!
! The derived types have exactly the layout of the C structs (checked by
! userlib/fortran/test/layout_check.c via the sizes printed by
! kfdpool_f_layout).  hipMemPoolProps is the current HIP layout
! (maxSize + reserved(56)), the same size and offsets as HIP 5.2's
! reserved(64).  Its components default to zero, as the library requires of
! the reserved bytes.
!
! The enumerators are hipfort's, names and values: every one of the mempool
! API's enums and of hipError_t (userlib/fortran/test/hipfort-names lists
! them as hipfort declares them, and make unit checks this module against
! that list).  The kfdpool* names are libkfdpool-hip's own: its fabric
! handle type, and the batch and persistent-pool extensions at the end.
! The module has interfaces, types and constants only: using it needs the
! .mod file and -lkfdpool-hip, no Fortran object or library of its own.
module hipfort_kfdpool
  use iso_c_binding
  implicit none

  ! hipError_t: every code, as hipfort declares it (this API returns few of
  ! them; a call forwarded to HIP's runtime may return any)
  enum, bind(c)
    enumerator :: hipSuccess = 0
    enumerator :: hipErrorInvalidValue = 1
    enumerator :: hipErrorOutOfMemory = 2
    enumerator :: hipErrorMemoryAllocation = 2
    enumerator :: hipErrorNotInitialized = 3
    enumerator :: hipErrorInitializationError = 3
    enumerator :: hipErrorDeinitialized = 4
    enumerator :: hipErrorProfilerDisabled = 5
    enumerator :: hipErrorProfilerNotInitialized = 6
    enumerator :: hipErrorProfilerAlreadyStarted = 7
    enumerator :: hipErrorProfilerAlreadyStopped = 8
    enumerator :: hipErrorInvalidConfiguration = 9
    enumerator :: hipErrorInvalidPitchValue = 12
    enumerator :: hipErrorInvalidSymbol = 13
    enumerator :: hipErrorInvalidDevicePointer = 17
    enumerator :: hipErrorInvalidMemcpyDirection = 21
    enumerator :: hipErrorInsufficientDriver = 35
    enumerator :: hipErrorMissingConfiguration = 52
    enumerator :: hipErrorPriorLaunchFailure = 53
    enumerator :: hipErrorInvalidDeviceFunction = 98
    enumerator :: hipErrorNoDevice = 100
    enumerator :: hipErrorInvalidDevice = 101
    enumerator :: hipErrorInvalidImage = 200
    enumerator :: hipErrorInvalidContext = 201
    enumerator :: hipErrorContextAlreadyCurrent = 202
    enumerator :: hipErrorMapFailed = 205
    enumerator :: hipErrorMapBufferObjectFailed = 205
    enumerator :: hipErrorUnmapFailed = 206
    enumerator :: hipErrorArrayIsMapped = 207
    enumerator :: hipErrorAlreadyMapped = 208
    enumerator :: hipErrorNoBinaryForGpu = 209
    enumerator :: hipErrorAlreadyAcquired = 210
    enumerator :: hipErrorNotMapped = 211
    enumerator :: hipErrorNotMappedAsArray = 212
    enumerator :: hipErrorNotMappedAsPointer = 213
    enumerator :: hipErrorECCNotCorrectable = 214
    enumerator :: hipErrorUnsupportedLimit = 215
    enumerator :: hipErrorContextAlreadyInUse = 216
    enumerator :: hipErrorPeerAccessUnsupported = 217
    enumerator :: hipErrorInvalidKernelFile = 218
    enumerator :: hipErrorInvalidGraphicsContext = 219
    enumerator :: hipErrorInvalidSource = 300
    enumerator :: hipErrorFileNotFound = 301
    enumerator :: hipErrorSharedObjectSymbolNotFound = 302
    enumerator :: hipErrorSharedObjectInitFailed = 303
    enumerator :: hipErrorOperatingSystem = 304
    enumerator :: hipErrorInvalidHandle = 400
    enumerator :: hipErrorInvalidResourceHandle = 400
    enumerator :: hipErrorIllegalState = 401
    enumerator :: hipErrorNotFound = 500
    enumerator :: hipErrorNotReady = 600
    enumerator :: hipErrorIllegalAddress = 700
    enumerator :: hipErrorLaunchOutOfResources = 701
    enumerator :: hipErrorLaunchTimeOut = 702
    enumerator :: hipErrorPeerAccessAlreadyEnabled = 704
    enumerator :: hipErrorPeerAccessNotEnabled = 705
    enumerator :: hipErrorSetOnActiveProcess = 708
    enumerator :: hipErrorContextIsDestroyed = 709
    enumerator :: hipErrorAssert = 710
    enumerator :: hipErrorHostMemoryAlreadyRegistered = 712
    enumerator :: hipErrorHostMemoryNotRegistered = 713
    enumerator :: hipErrorLaunchFailure = 719
    enumerator :: hipErrorCooperativeLaunchTooLarge = 720
    enumerator :: hipErrorNotSupported = 801
    enumerator :: hipErrorStreamCaptureUnsupported = 900
    enumerator :: hipErrorStreamCaptureInvalidated = 901
    enumerator :: hipErrorStreamCaptureMerge = 902
    enumerator :: hipErrorStreamCaptureUnmatched = 903
    enumerator :: hipErrorStreamCaptureUnjoined = 904
    enumerator :: hipErrorStreamCaptureIsolation = 905
    enumerator :: hipErrorStreamCaptureImplicit = 906
    enumerator :: hipErrorCapturedEvent = 907
    enumerator :: hipErrorStreamCaptureWrongThread = 908
    enumerator :: hipErrorGraphExecUpdateFailure = 910
    enumerator :: hipErrorInvalidChannelDescriptor = 911
    enumerator :: hipErrorInvalidTexture = 912
    enumerator :: hipErrorInvalidResourceType = 914
    enumerator :: hipErrorInvalidResourceConfiguration = 915
    enumerator :: hipErrorStreamDetached = 916
    enumerator :: hipErrorUnknown = 999
    enumerator :: hipErrorRuntimeMemory = 1052
    enumerator :: hipErrorRuntimeOther = 1053
    enumerator :: hipErrorInvalidClusterSize = 1054
    enumerator :: hipErrorTbd = 1055
  end enum

  ! hipMemPoolAttr
  enum, bind(c)
    enumerator :: hipMemPoolReuseFollowEventDependencies = 1
    enumerator :: hipMemPoolReuseAllowOpportunistic = 2
    enumerator :: hipMemPoolReuseAllowInternalDependencies = 3
    enumerator :: hipMemPoolAttrReleaseThreshold = 4
    enumerator :: hipMemPoolAttrReservedMemCurrent = 5
    enumerator :: hipMemPoolAttrReservedMemHigh = 6
    enumerator :: hipMemPoolAttrUsedMemCurrent = 7
    enumerator :: hipMemPoolAttrUsedMemHigh = 8
  end enum

  ! hipMemLocationType
  enum, bind(c)
    enumerator :: hipMemLocationTypeInvalid = 0
    enumerator :: hipMemLocationTypeNone = 0
    enumerator :: hipMemLocationTypeDevice = 1
    enumerator :: hipMemLocationTypeHost = 2
    enumerator :: hipMemLocationTypeHostNuma = 3
    enumerator :: hipMemLocationTypeHostNumaCurrent = 4
  end enum

  ! hipMemAccessFlags
  enum, bind(c)
    enumerator :: hipMemAccessFlagsProtNone = 0
    enumerator :: hipMemAccessFlagsProtRead = 1
    enumerator :: hipMemAccessFlagsProtReadWrite = 3
  end enum

  ! hipMemAllocationType
  enum, bind(c)
    enumerator :: hipMemAllocationTypeInvalid = 0
    enumerator :: hipMemAllocationTypePinned = 1
    enumerator :: hipMemAllocationTypeManaged = 2
    enumerator :: hipMemAllocationTypeUncached = int(z'40000000')
    enumerator :: hipMemAllocationTypeMax = int(z'7FFFFFFF')
  end enum

  ! hipMemAllocationHandleType
  enum, bind(c)
    enumerator :: hipMemHandleTypeNone = 0
    enumerator :: hipMemHandleTypePosixFileDescriptor = 1
    enumerator :: hipMemHandleTypeWin32 = 2
    enumerator :: hipMemHandleTypeWin32Kmt = 4
    enumerator :: hipMemHandleTypeFabric = 8
  end enum

  type, bind(c) :: hipMemLocation
    integer(c_int) :: type = hipMemLocationTypeInvalid
    integer(c_int) :: id = 0
  end type hipMemLocation

  type, bind(c) :: hipMemAccessDesc
    type(hipMemLocation) :: location
    integer(c_int) :: flags = hipMemAccessFlagsProtNone
  end type hipMemAccessDesc

  type, bind(c) :: hipMemPoolProps
    integer(c_int) :: allocType = hipMemAllocationTypeInvalid
    integer(c_int) :: handleTypes = hipMemHandleTypeNone
    type(hipMemLocation) :: location
    type(c_ptr) :: win32SecurityAttributes = c_null_ptr
    integer(c_size_t) :: maxSize = 0_c_size_t
    integer(c_signed_char) :: reserved(56) = 0_c_signed_char
  end type hipMemPoolProps

  type, bind(c) :: hipMemPoolPtrExportData
    integer(c_signed_char) :: reserved(64) = 0_c_signed_char
  end type hipMemPoolPtrExportData

  ! kfdpoolFabricHandle_t: a pool's hipMemHandleTypeFabric handle, which
  ! hipMemPoolExportToShareableHandle writes and ...ImportFromShareableHandle
  ! reads (c_loc() of one)
  type, bind(c) :: kfdpoolFabricHandle
    integer(c_signed_char) :: data(64) = 0_c_signed_char
  end type kfdpoolFabricHandle

  ! kfdpoolOwnerHandle_t: the owner handle of a persistent pool
  type, bind(c) :: kfdpoolOwnerHandle
    integer(c_signed_char) :: data(64) = 0_c_signed_char
  end type kfdpoolOwnerHandle

  interface

  end interface

  ! Where C takes a pointer to a struct, the generic accepts the derived
  ! type (by reference) or a type(c_ptr) by value (c_loc() of it), so code
  ! written for either hipfort convention compiles.
  interface hipMemPoolCreate
    function hipMemPoolCreate_(mem_pool, pool_props) result(res) &
        bind(c, name="hipMemPoolCreate")
      import :: c_ptr, c_int, hipMemPoolProps
      type(c_ptr) :: mem_pool
      type(hipMemPoolProps) :: pool_props
      integer(c_int) :: res
    end function hipMemPoolCreate_
    function hipMemPoolCreate_cptr(mem_pool, pool_props) result(res) &
        bind(c, name="hipMemPoolCreate")
      import :: c_ptr, c_int
      type(c_ptr) :: mem_pool
      type(c_ptr), value :: pool_props
      integer(c_int) :: res
    end function hipMemPoolCreate_cptr
  end interface

  interface

    function hipMemPoolDestroy(mem_pool) result(res) &
        bind(c, name="hipMemPoolDestroy")
      import :: c_ptr, c_int
      type(c_ptr), value :: mem_pool
      integer(c_int) :: res
    end function hipMemPoolDestroy

    function hipMallocFromPoolAsync(dev_ptr, size, mem_pool, stream) result(res) &
        bind(c, name="hipMallocFromPoolAsync")
      import :: c_ptr, c_int, c_size_t
      type(c_ptr) :: dev_ptr
      integer(c_size_t), value :: size
      type(c_ptr), value :: mem_pool
      type(c_ptr), value :: stream
      integer(c_int) :: res
    end function hipMallocFromPoolAsync

    function hipFreeAsync(dev_ptr, stream) result(res) &
        bind(c, name="hipFreeAsync")
      import :: c_ptr, c_int
      type(c_ptr), value :: dev_ptr
      type(c_ptr), value :: stream
      integer(c_int) :: res
    end function hipFreeAsync

    ! A pointer of a pool (allocated or imported) or, beside HIP's runtime,
    ! any of the runtime's.
    function hipFree(ptr) result(res) bind(c, name="hipFree")
      import :: c_ptr, c_int
      type(c_ptr), value :: ptr
      integer(c_int) :: res
    end function hipFree

    ! kfdpool's pools are made no device's or location's current pool
    ! (hipErrorInvalidValue); the runtime's pools are passed on to it.
    function hipDeviceSetMemPool(device, mem_pool) result(res) &
        bind(c, name="hipDeviceSetMemPool")
      import :: c_ptr, c_int
      integer(c_int), value :: device
      type(c_ptr), value :: mem_pool
      integer(c_int) :: res
    end function hipDeviceSetMemPool

    function hipMemSetMemPool(location, mytype, pool) result(res) &
        bind(c, name="hipMemSetMemPool")
      import :: c_ptr, c_int, hipMemLocation
      type(hipMemLocation) :: location
      integer(c_int), value :: mytype
      type(c_ptr), value :: pool
      integer(c_int) :: res
    end function hipMemSetMemPool

    function hipMemPoolTrimTo(mem_pool, min_bytes_to_hold) result(res) &
        bind(c, name="hipMemPoolTrimTo")
      import :: c_ptr, c_int, c_size_t
      type(c_ptr), value :: mem_pool
      integer(c_size_t), value :: min_bytes_to_hold
      integer(c_int) :: res
    end function hipMemPoolTrimTo

    function hipMemPoolSetAttribute(mem_pool, attr, value) result(res) &
        bind(c, name="hipMemPoolSetAttribute")
      import :: c_ptr, c_int
      type(c_ptr), value :: mem_pool
      integer(c_int), value :: attr
      type(c_ptr), value :: value
      integer(c_int) :: res
    end function hipMemPoolSetAttribute

    function hipMemPoolGetAttribute(mem_pool, attr, value) result(res) &
        bind(c, name="hipMemPoolGetAttribute")
      import :: c_ptr, c_int
      type(c_ptr), value :: mem_pool
      integer(c_int), value :: attr
      type(c_ptr), value :: value
      integer(c_int) :: res
    end function hipMemPoolGetAttribute

  end interface

  ! desc_list: an array, a scalar (count 1) or c_loc() of either.
  interface hipMemPoolSetAccess
    function hipMemPoolSetAccess_(mem_pool, desc_list, count) result(res) &
        bind(c, name="hipMemPoolSetAccess")
      import :: c_ptr, c_int, c_size_t, hipMemAccessDesc
      type(c_ptr), value :: mem_pool
      type(hipMemAccessDesc) :: desc_list(*)
      integer(c_size_t), value :: count
      integer(c_int) :: res
    end function hipMemPoolSetAccess_
    function hipMemPoolSetAccess_scalar(mem_pool, desc_list, count) result(res) &
        bind(c, name="hipMemPoolSetAccess")
      import :: c_ptr, c_int, c_size_t, hipMemAccessDesc
      type(c_ptr), value :: mem_pool
      type(hipMemAccessDesc) :: desc_list
      integer(c_size_t), value :: count
      integer(c_int) :: res
    end function hipMemPoolSetAccess_scalar
    function hipMemPoolSetAccess_cptr(mem_pool, desc_list, count) result(res) &
        bind(c, name="hipMemPoolSetAccess")
      import :: c_ptr, c_int, c_size_t
      type(c_ptr), value :: mem_pool
      type(c_ptr), value :: desc_list
      integer(c_size_t), value :: count
      integer(c_int) :: res
    end function hipMemPoolSetAccess_cptr
  end interface

  interface

    function hipMemPoolGetAccess(flags, mem_pool, location) result(res) &
        bind(c, name="hipMemPoolGetAccess")
      import :: c_ptr, c_int, hipMemLocation
      integer(c_int) :: flags
      type(c_ptr), value :: mem_pool
      type(hipMemLocation) :: location
      integer(c_int) :: res
    end function hipMemPoolGetAccess

    ! shared_handle: c_loc() of an integer(c_int) that receives the pool fd
    ! (hipMemHandleTypePosixFileDescriptor), or of a kfdpoolFabricHandle.
    function hipMemPoolExportToShareableHandle(shared_handle, mem_pool, &
        handle_type, flags) result(res) &
        bind(c, name="hipMemPoolExportToShareableHandle")
      import :: c_ptr, c_int
      type(c_ptr), value :: shared_handle
      type(c_ptr), value :: mem_pool
      integer(c_int), value :: handle_type
      integer(c_int), value :: flags
      integer(c_int) :: res
    end function hipMemPoolExportToShareableHandle

    ! shared_handle: for a file descriptor, the fd itself carried in the
    ! pointer, as C passes (void *)(uintptr_t)fd:
    !   transfer(int(fd, c_intptr_t), c_null_ptr)
    ! for a fabric handle, c_loc() of the 64-byte handle.
    function hipMemPoolImportFromShareableHandle(mem_pool, shared_handle, &
        handle_type, flags) result(res) &
        bind(c, name="hipMemPoolImportFromShareableHandle")
      import :: c_ptr, c_int
      type(c_ptr) :: mem_pool
      type(c_ptr), value :: shared_handle
      integer(c_int), value :: handle_type
      integer(c_int), value :: flags
      integer(c_int) :: res
    end function hipMemPoolImportFromShareableHandle

  end interface

  interface hipMemPoolExportPointer
    function hipMemPoolExportPointer_(export_data, dev_ptr) result(res) &
        bind(c, name="hipMemPoolExportPointer")
      import :: c_ptr, c_int, hipMemPoolPtrExportData
      type(hipMemPoolPtrExportData) :: export_data
      type(c_ptr), value :: dev_ptr
      integer(c_int) :: res
    end function hipMemPoolExportPointer_
    function hipMemPoolExportPointer_cptr(export_data, dev_ptr) result(res) &
        bind(c, name="hipMemPoolExportPointer")
      import :: c_ptr, c_int
      type(c_ptr), value :: export_data
      type(c_ptr), value :: dev_ptr
      integer(c_int) :: res
    end function hipMemPoolExportPointer_cptr
  end interface

  interface hipMemPoolImportPointer
    function hipMemPoolImportPointer_(dev_ptr, mem_pool, export_data) result(res) &
        bind(c, name="hipMemPoolImportPointer")
      import :: c_ptr, c_int, hipMemPoolPtrExportData
      type(c_ptr) :: dev_ptr
      type(c_ptr), value :: mem_pool
      type(hipMemPoolPtrExportData) :: export_data
      integer(c_int) :: res
    end function hipMemPoolImportPointer_
    function hipMemPoolImportPointer_cptr(dev_ptr, mem_pool, export_data) result(res) &
        bind(c, name="hipMemPoolImportPointer")
      import :: c_ptr, c_int
      type(c_ptr) :: dev_ptr
      type(c_ptr), value :: mem_pool
      type(c_ptr), value :: export_data
      integer(c_int) :: res
    end function hipMemPoolImportPointer_cptr
  end interface

  interface

    ! ---- error names and strings ----

    ! const char *hipGetErrorName(hipError_t): the name of a code, e.g.
    ! "hipErrorNotInitialized".  hipfort declares the result character(c_char),
    ! which does not match C's pointer return; here it is the pointer: read it
    ! with c_f_pointer (its length from C's strlen).  The string is static.
    function hipGetErrorName(hip_error) result(res) &
        bind(c, name="hipGetErrorName")
      import :: c_ptr, c_int
      integer(c_int), value :: hip_error
      type(c_ptr) :: res
    end function hipGetErrorName

    ! const char *hipGetErrorString(hipError_t): a sentence (the runtime's,
    ! where a HIP runtime is loaded); a static string, as above.
    function hipGetErrorString(hip_error) result(res) &
        bind(c, name="hipGetErrorString")
      import :: c_ptr, c_int
      integer(c_int), value :: hip_error
      type(c_ptr) :: res
    end function hipGetErrorString

    ! ---- libkfdpool-hip batch extensions ----

    ! Export count pointers at once; results(i) gets each one's hipError_t.
    function kfdpoolExportPointers(export_data, dev_ptrs, count, results) &
        result(res) bind(c, name="kfdpoolExportPointers")
      import :: c_ptr, c_int, c_size_t, hipMemPoolPtrExportData
      type(hipMemPoolPtrExportData) :: export_data(*)
      type(c_ptr) :: dev_ptrs(*)
      integer(c_size_t), value :: count
      integer(c_int) :: results(*)
      integer(c_int) :: res
    end function kfdpoolExportPointers

    function kfdpoolImportPointers(dev_ptrs, mem_pool, export_data, count, &
        results) result(res) bind(c, name="kfdpoolImportPointers")
      import :: c_ptr, c_int, c_size_t, hipMemPoolPtrExportData
      type(c_ptr) :: dev_ptrs(*)
      type(c_ptr), value :: mem_pool
      type(hipMemPoolPtrExportData) :: export_data(*)
      integer(c_size_t), value :: count
      integer(c_int) :: results(*)
      integer(c_int) :: res
    end function kfdpoolImportPointers

    function kfdpoolFreePointers(ptrs, count, results) result(res) &
        bind(c, name="kfdpoolFreePointers")
      import :: c_ptr, c_int, c_size_t
      type(c_ptr) :: ptrs(*)
      integer(c_size_t), value :: count
      integer(c_int) :: results(*)
      integer(c_int) :: res
    end function kfdpoolFreePointers

    ! ---- libkfdpool-hip persistent pools ----

    ! As hipMemPoolCreate_; the pool stays when the process ends.
    function kfdpoolMemPoolCreatePersistent(mem_pool, pool_props) result(res) &
        bind(c, name="kfdpoolMemPoolCreatePersistent")
      import :: c_ptr, c_int, hipMemPoolProps
      type(c_ptr) :: mem_pool
      type(hipMemPoolProps) :: pool_props
      integer(c_int) :: res
    end function kfdpoolMemPoolCreatePersistent

    function kfdpoolMemPoolExportOwnerHandle(handle, mem_pool) result(res) &
        bind(c, name="kfdpoolMemPoolExportOwnerHandle")
      import :: c_ptr, c_int, kfdpoolOwnerHandle
      type(kfdpoolOwnerHandle) :: handle
      type(c_ptr), value :: mem_pool
      integer(c_int) :: res
    end function kfdpoolMemPoolExportOwnerHandle

    function kfdpoolMemPoolAdopt(mem_pool, handle) result(res) &
        bind(c, name="kfdpoolMemPoolAdopt")
      import :: c_ptr, c_int, kfdpoolOwnerHandle
      type(c_ptr) :: mem_pool
      type(kfdpoolOwnerHandle) :: handle
      integer(c_int) :: res
    end function kfdpoolMemPoolAdopt

    ! Revoke count records an earlier owner of an adopted pool made.
    function kfdpoolMemPoolRevokeExports(mem_pool, export_data, count, &
        results) result(res) bind(c, name="kfdpoolMemPoolRevokeExports")
      import :: c_ptr, c_int, c_size_t, hipMemPoolPtrExportData
      type(c_ptr), value :: mem_pool
      type(hipMemPoolPtrExportData) :: export_data(*)
      integer(c_size_t), value :: count
      integer(c_int) :: results(*)
      integer(c_int) :: res
    end function kfdpoolMemPoolRevokeExports

    function kfdpoolMemPoolEnd(mem_pool) result(res) &
        bind(c, name="kfdpoolMemPoolEnd")
      import :: c_ptr, c_int
      type(c_ptr), value :: mem_pool
      integer(c_int) :: res
    end function kfdpoolMemPoolEnd

  end interface

end module hipfort_kfdpool
