! importer.f90: README's importer in Fortran (hipfort_kfdpool).  Read the
! pool's fabric handle and the export data from stdin, import the pool and
! the allocation, check the greeting and answer in the same memory.
program importer
  use iso_c_binding
  use iso_fortran_env, only: error_unit
  use hipfort_kfdpool
  implicit none
  interface   ! POSIX read(2), for the raw 128 bytes
    function c_read(fd, buf, n) result(r) bind(c, name="read")
      import :: c_int, c_ptr, c_size_t, c_long
      integer(c_int), value :: fd
      type(c_ptr), value :: buf
      integer(c_size_t), value :: n
      integer(c_long) :: r
    end function c_read
  end interface
  type, bind(c) :: message   ! what crosses the pipe, as in importer.c
    type(kfdpoolFabricHandle) :: pool
    type(hipMemPoolPtrExportData) :: ptr
  end type message
  type(message), target :: msg
  type(c_ptr) :: pool = c_null_ptr, buf = c_null_ptr
  character(kind=c_char), pointer :: text(:)
  integer :: k

  if (c_read(0, c_loc(msg), c_sizeof(msg)) /= c_sizeof(msg)) stop 1
  call check(hipMemPoolImportFromShareableHandle(pool, c_loc(msg%pool), hipMemHandleTypeFabric, 0), &
      'hipMemPoolImportFromShareableHandle')
  call check(hipMemPoolImportPointer(buf, pool, msg%ptr), 'hipMemPoolImportPointer')
  call c_f_pointer(buf, text, [4096])
  print '(2a)', 'importer reads: ', get(text)
  if (get(text) /= 'hello from the exporter') stop 1
  do k = 1, len('hello from the importer')
    text(k) = 'hello from the importer'(k:k)
  end do
  text(k) = c_null_char
  call check(hipFree(buf), 'hipFree')
  call check(hipMemPoolDestroy(pool), 'hipMemPoolDestroy')
contains
  subroutine check(err, what)
    integer(c_int), intent(in) :: err
    character(*), intent(in) :: what
    character(kind=c_char), pointer :: name(:)
    if (err == hipSuccess) return
    call c_f_pointer(hipGetErrorName(err), name, [64])
    write (error_unit, '(3a)') what, ': ', get(name)
    flush (error_unit)
    stop 1
  end subroutine check
  function get(from) result(s)   ! the C string at from
    character(kind=c_char), intent(in) :: from(:)
    character(:), allocatable :: s
    integer :: i
    s = ''
    do i = 1, size(from)
      if (from(i) == c_null_char) exit
      s = s // from(i)
    end do
  end function get
end program importer
