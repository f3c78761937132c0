! SPDX-License-Identifier: MIT
! Fortran importer: kfdpool_f_importer fd N | fabric HEX, then NPTR export
! data as hex.  Imports the pool and every pointer through hipfort_kfdpool,
! checks every word the exporter wrote, frees the imports.
program kfdpool_f_importer
  use kfdpool_f_common
  implicit none
  type(hipMemPoolPtrExportData) :: ed
  type(c_ptr) :: pool = c_null_ptr, ptr(NPTR)
  integer(c_int32_t), pointer :: w(:)
  integer(c_signed_char), target :: fabric(64)
  character(len=160) :: mode, arg
  integer(c_int) :: fd
  integer :: k, bad
  integer(c_size_t) :: j, total

  call get_command_argument(1, mode)
  call get_command_argument(2, arg)
  if (mode == 'fabric') then
    call from_hex(trim(arg), fabric)
    call check(hipMemPoolImportFromShareableHandle(pool, c_loc(fabric), &
        hipMemHandleTypeFabric, 0), 'hipMemPoolImportFromShareableHandle(fabric)')
  else
    read (arg, *) fd
    call check(hipMemPoolImportFromShareableHandle(pool, transfer(int(fd, c_intptr_t), c_null_ptr), &
        hipMemHandleTypePosixFileDescriptor, 0), 'hipMemPoolImportFromShareableHandle(fd)')
  end if

  bad = 0
  total = 0
  do k = 1, NPTR
    call get_command_argument(2 + k, arg)
    call from_hex(trim(arg), ed%reserved)
    call check(hipMemPoolImportPointer(ptr(k), pool, ed), 'hipMemPoolImportPointer')
    call c_f_pointer(ptr(k), w, [WORDS(k)])
    do j = 1, WORDS(k)
      if (w(j) /= pattern(k, j)) bad = bad + 1
    end do
    total = total + 4 * WORDS(k)
  end do
  if (bad /= 0) then
    write (error_unit, '(a,i0,a)') 'FAIL ', bad, ' words differ'
    error stop 1
  end if
  do k = 1, NPTR
    call check(hipFreeAsync(ptr(k), c_null_ptr), 'hipFreeAsync(imported)')
  end do
  call check(hipMemPoolDestroy(pool), 'hipMemPoolDestroy(imported)')
  write (output_unit, '(a,1x,i0,1x,a,1x,i0,1x,a)') 'importer ok', NPTR, 'pointers', &
      total, 'bytes checked'
  flush (output_unit)
end program kfdpool_f_importer
