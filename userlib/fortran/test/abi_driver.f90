! SPDX-License-Identifier: MIT
! Calls every interface of hipfort_kfdpool with the values abi_stub.c
! expects and checks what comes back.  TAP on stdout.
program abi_driver
  use iso_c_binding
  use hipfort_kfdpool
  implicit none
  type(hipMemPoolProps), target :: props
  type(hipMemAccessDesc), target :: desc(2)
  type(hipMemLocation) :: loc
  type(hipMemPoolPtrExportData), target :: ed, ed2, eds(3)
  type(kfdpoolOwnerHandle) :: oh
  type(c_ptr) :: pool, pool2, p, p2, p3, stream, ptrs(3), ptrs2(3), poolc
  integer(c_int64_t), target :: val
  integer(c_int), target :: fd
  integer(c_int) :: flags, results(3), i, r
  integer :: n = 0, failed = 0

  stream = transfer(int(z'2000', c_intptr_t), stream)
  props%allocType = hipMemAllocationTypePinned
  props%handleTypes = ior(hipMemHandleTypePosixFileDescriptor, hipMemHandleTypeFabric)
  props%location%type = hipMemLocationTypeHost
  props%location%id = 3
  props%maxSize = 123456789_c_size_t
  ! Every call is made before its outputs are tested: Fortran may evaluate
  ! the operands of .and. in any order.
  r = hipMemPoolCreate(pool, props)
  call t(r == hipSuccess .and. addr(pool) == 4096, 'hipMemPoolCreate: props by reference, pool out')
  r = hipMallocFromPoolAsync(p, 4103_c_size_t, pool, stream)
  call t(r == hipSuccess .and. addr(p) == int(z'3000'), 'hipMallocFromPoolAsync')
  r = hipMemPoolTrimTo(pool, 77_c_size_t)
  call t(r == hipSuccess, 'hipMemPoolTrimTo')
  val = 999
  r = hipMemPoolSetAttribute(pool, hipMemPoolAttrReleaseThreshold, c_loc(val))
  call t(r == hipSuccess, 'hipMemPoolSetAttribute')
  val = 0
  r = hipMemPoolGetAttribute(pool, hipMemPoolAttrUsedMemCurrent, c_loc(val))
  call t(r == hipSuccess .and. val == 4242, 'hipMemPoolGetAttribute')
  desc(1)%location%type = hipMemLocationTypeDevice
  desc(1)%flags = hipMemAccessFlagsProtRead
  desc(2)%location%type = hipMemLocationTypeDevice
  desc(2)%location%id = 5
  desc(2)%flags = hipMemAccessFlagsProtReadWrite
  r = hipMemPoolSetAccess(pool, desc, 2_c_size_t)
  call t(r == hipSuccess, 'hipMemPoolSetAccess (array)')
  r = hipMemPoolSetAccess(pool, desc(1), 1_c_size_t)
  call t(r == hipSuccess, 'hipMemPoolSetAccess (scalar)')
  r = hipMemPoolSetAccess(pool, c_loc(desc), 2_c_size_t)
  call t(r == hipSuccess, 'hipMemPoolSetAccess (c_ptr)')
  loc%type = hipMemLocationTypeDevice
  loc%id = 6
  r = hipMemPoolGetAccess(flags, pool, loc)
  call t(r == hipSuccess .and. flags == hipMemAccessFlagsProtReadWrite, 'hipMemPoolGetAccess')
  r = hipMemPoolExportToShareableHandle(c_loc(fd), pool, hipMemHandleTypePosixFileDescriptor, 0)
  call t(r == hipSuccess .and. fd == 57, 'hipMemPoolExportToShareableHandle')
  r = hipMemPoolImportFromShareableHandle(pool2, transfer(int(fd, c_intptr_t), c_null_ptr), &
      hipMemHandleTypePosixFileDescriptor, 0)
  call t(r == hipSuccess .and. addr(pool2) == 4097, 'hipMemPoolImportFromShareableHandle')
  r = hipMemPoolExportPointer(ed, p)
  call t(r == hipSuccess .and. ed%reserved(64) == 64, 'hipMemPoolExportPointer')
  r = hipMemPoolImportPointer(p2, pool2, ed)
  call t(r == hipSuccess .and. addr(p2) == int(z'3001'), 'hipMemPoolImportPointer')
  r = hipMemPoolExportPointer(c_loc(ed2), p)
  call t(r == hipSuccess .and. ed2%reserved(64) == 64, 'hipMemPoolExportPointer (c_ptr)')
  r = hipMemPoolImportPointer(p3, pool2, c_loc(ed2))
  call t(r == hipSuccess .and. addr(p3) == int(z'3001'), 'hipMemPoolImportPointer (c_ptr)')
  r = hipMemPoolCreate(poolc, c_loc(props))
  call t(r == hipSuccess .and. addr(poolc) == 4096, 'hipMemPoolCreate (c_ptr props)')
  r = hipFreeAsync(p, stream)
  call t(r == hipSuccess, 'hipFreeAsync')
  r = hipFree(p)
  call t(r == hipSuccess, 'hipFree: the pointer by value')
  r = hipDeviceSetMemPool(7, pool)
  call t(r == hipSuccess, 'hipDeviceSetMemPool: the device and the pool by value')
  loc%type = hipMemLocationTypeHost
  loc%id = 9
  r = hipMemSetMemPool(loc, hipMemAllocationTypePinned, pool)
  call t(r == hipSuccess, 'hipMemSetMemPool: the location by reference, the type and pool by value')
  do i = 1, 3
    ptrs(i) = transfer(int(z'3000', c_intptr_t) + i - 1, c_null_ptr)
  end do
  results = -1
  r = kfdpoolExportPointers(eds, ptrs, 3_c_size_t, results)
  call t(r == hipSuccess .and. eds(3)%reserved(1) == 3 .and. all(results == hipSuccess), &
      'kfdpoolExportPointers')
  r = kfdpoolImportPointers(ptrs2, pool2, eds, 3_c_size_t, results)
  call t(r == hipErrorNotFound .and. addr(ptrs2(2)) == int(z'3002') .and. &
      results(3) == hipErrorNotFound, 'kfdpoolImportPointers')
  r = kfdpoolFreePointers(ptrs2, 3_c_size_t, results)
  call t(r == hipSuccess, 'kfdpoolFreePointers')
  r = kfdpoolMemPoolCreatePersistent(pool, props)
  call t(r == hipSuccess .and. addr(pool) == 4096, 'kfdpoolMemPoolCreatePersistent')
  r = kfdpoolMemPoolExportOwnerHandle(oh, pool)
  call t(r == hipSuccess .and. oh%data(1) == 1 .and. oh%data(64) == 64, &
      'kfdpoolMemPoolExportOwnerHandle')
  r = kfdpoolMemPoolAdopt(pool2, oh)
  call t(r == hipSuccess .and. addr(pool2) == 4097, 'kfdpoolMemPoolAdopt')
  results = -1
  r = kfdpoolMemPoolRevokeExports(pool2, eds, 3_c_size_t, results)
  call t(r == hipSuccess .and. all(results == hipSuccess), 'kfdpoolMemPoolRevokeExports')
  r = kfdpoolMemPoolEnd(pool2)
  call t(r == hipSuccess, 'kfdpoolMemPoolEnd')
  r = hipMemPoolDestroy(pool)
  call t(r == hipSuccess, 'hipMemPoolDestroy')
  call t(cstr(hipGetErrorName(hipErrorNotInitialized)) == 'hipErrorNotInitialized', &
      'hipGetErrorName: the code by value, a C string back')
  call t(cstr(hipGetErrorString(hipErrorOutOfMemory)) == 'out of memory', &
      'hipGetErrorString: the code by value, a C string back')
  call t(c_sizeof(props) == 88 .and. c_sizeof(ed) == 64 .and. c_sizeof(desc(1)) == 12 &
      .and. c_sizeof(oh) == 64, 'type sizes 88, 64, 12, 64')
  print '(a,i0)', '1..', n
  if (failed /= 0) error stop 1
contains
  subroutine t(cond, what)
    logical, intent(in) :: cond
    character(*), intent(in) :: what
    n = n + 1
    if (.not. cond) failed = failed + 1
    if (cond) then
      print '(a,i0,1x,a)', 'ok ', n, what
    else
      print '(a,i0,1x,a)', 'not ok ', n, what
    end if
  end subroutine t
  ! The C string at s (empty for NULL), as a Fortran string.
  function cstr(s) result(str)
    type(c_ptr), intent(in) :: s
    character(:), allocatable :: str
    character(kind=c_char), pointer :: chars(:)
    integer :: k
    interface
      function strlen(p) bind(c, name="strlen")
        import :: c_ptr, c_size_t
        type(c_ptr), value :: p
        integer(c_size_t) :: strlen
      end function strlen
    end interface
    str = ''
    if (.not. c_associated(s)) return
    call c_f_pointer(s, chars, [strlen(s)])
    deallocate(str)
    allocate(character(size(chars)) :: str)
    do k = 1, size(chars)
      str(k:k) = chars(k)
    end do
  end function cstr
  integer(c_intptr_t) function addr(q)
    type(c_ptr), intent(in) :: q
    addr = transfer(q, 0_c_intptr_t)
  end function addr
end program abi_driver
