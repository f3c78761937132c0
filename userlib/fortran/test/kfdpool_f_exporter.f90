! SPDX-License-Identifier: MIT
! Fortran exporter: creates a host pool through hipfort_kfdpool, allocates
! NPTR buffers, fills them, shares the pool (file descriptor or fabric
! handle, argument 1: fd|fabric) and the pointers on stdout, waits for a
! line on stdin, then frees everything.
program kfdpool_f_exporter
  use kfdpool_f_common
  implicit none
  type(hipMemPoolProps) :: props
  type(hipMemPoolPtrExportData) :: ed(NPTR)
  type(c_ptr) :: pool = c_null_ptr, ptr(NPTR)
  integer(c_int32_t), pointer :: w(:)
  integer(c_int), target :: fd
  integer(c_signed_char), target :: fabric(64)
  integer(c_int64_t), target :: val
  character(len=16) :: mode
  character(len=8) :: line
  integer :: k
  integer(c_int) :: err
  integer(c_size_t) :: j

  call get_command_argument(1, mode)
  props%allocType = hipMemAllocationTypePinned
  props%location%type = hipMemLocationTypeHost
  props%location%id = 0
  if (mode == 'fabric') then
    props%handleTypes = hipMemHandleTypeFabric
  else
    props%handleTypes = hipMemHandleTypePosixFileDescriptor
  end if
  err = hipMemPoolCreate(pool, props)
  if (err == hipErrorNotSupported .and. mode == 'fabric') then
    ! The module does not offer pool handles (KFDPOOL_FEATURE_POOL_HANDLE).
    write (output_unit, '(a)') 'unsupported'
    flush (output_unit)
    stop 4
  end if
  call check(err, 'hipMemPoolCreate')

  do k = 1, NPTR
    call check(hipMallocFromPoolAsync(ptr(k), 4 * WORDS(k), pool, c_null_ptr), &
        'hipMallocFromPoolAsync')
    call c_f_pointer(ptr(k), w, [WORDS(k)])
    do j = 1, WORDS(k)
      w(j) = pattern(k, j)
    end do
    call check(hipMemPoolExportPointer(ed(k), ptr(k)), 'hipMemPoolExportPointer')
  end do

  if (mode == 'fabric') then
    call check(hipMemPoolExportToShareableHandle(c_loc(fabric), pool, &
        hipMemHandleTypeFabric, 0), 'hipMemPoolExportToShareableHandle(fabric)')
    write (output_unit, '(a,1x,a)') 'fabric', to_hex(fabric)
  else
    call check(hipMemPoolExportToShareableHandle(c_loc(fd), pool, &
        hipMemHandleTypePosixFileDescriptor, 0), 'hipMemPoolExportToShareableHandle(fd)')
    write (output_unit, '(a,1x,i0)') 'fd', fd
  end if
  do k = 1, NPTR
    write (output_unit, '(a,1x,i0,1x,a)') 'ptr', k, to_hex(ed(k)%reserved)
  end do
  call check(hipMemPoolGetAttribute(pool, hipMemPoolAttrUsedMemCurrent, c_loc(val)), &
      'hipMemPoolGetAttribute(UsedMemCurrent)')
  write (output_unit, '(a,1x,i0)') 'used', val
  write (output_unit, '(a)') 'ready'
  flush (output_unit)

  read (*, '(a)') line
  do k = 1, NPTR
    call check(hipFreeAsync(ptr(k), c_null_ptr), 'hipFreeAsync')
  end do
  call check(hipMemPoolGetAttribute(pool, hipMemPoolAttrUsedMemCurrent, c_loc(val)), &
      'hipMemPoolGetAttribute(UsedMemCurrent)')
  if (val /= 0) error stop 'used bytes not 0 after freeing'
  call check(hipMemPoolTrimTo(pool, 0_c_size_t), 'hipMemPoolTrimTo')
  call check(hipMemPoolDestroy(pool), 'hipMemPoolDestroy')
  write (output_unit, '(a)') 'exporter ok'
  flush (output_unit)
end program kfdpool_f_exporter
