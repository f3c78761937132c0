! exporter.f90: README's exporter in Fortran (hipfort_kfdpool).  Create a
! host pool, allocate 4 KiB from it, write a greeting, and send the pool's
! fabric handle and the allocation's export data (2 x 64 bytes) on stdout;
! the importer answers in the same memory.
program exporter
  use iso_c_binding
  use iso_fortran_env, only: error_unit
  use hipfort_kfdpool
  implicit none
  interface   ! POSIX write(2) and sleep(3), for the raw 128 bytes
    function c_write(fd, buf, n) result(r) bind(c, name="write")
      import :: c_int, c_ptr, c_size_t, c_long
      integer(c_int), value :: fd
      type(c_ptr), value :: buf
      integer(c_size_t), value :: n
      integer(c_long) :: r
    end function c_write
    function c_sleep(s) result(r) bind(c, name="sleep")
      import :: c_int
      integer(c_int), value :: s
      integer(c_int) :: r
    end function c_sleep
  end interface
  type, bind(c) :: message   ! what crosses the pipe, as in exporter.c
    type(kfdpoolFabricHandle) :: pool
    type(hipMemPoolPtrExportData) :: ptr
  end type message
  type(hipMemPoolProps) :: props
  type(message), target :: msg
  type(c_ptr) :: pool = c_null_ptr, buf = c_null_ptr
  character(kind=c_char), pointer :: text(:)
  integer :: i

  props%allocType = hipMemAllocationTypePinned
  props%handleTypes = hipMemHandleTypeFabric
  props%location%type = hipMemLocationTypeHost
  call check(hipMemPoolCreate(pool, props), 'hipMemPoolCreate')
  call check(hipMallocFromPoolAsync(buf, 4096_c_size_t, pool, c_null_ptr), 'hipMallocFromPoolAsync')
  call c_f_pointer(buf, text, [4096])
  call put(text, 'hello from the exporter')
  call check(hipMemPoolExportToShareableHandle(c_loc(msg%pool), pool, hipMemHandleTypeFabric, 0), &
      'hipMemPoolExportToShareableHandle')
  call check(hipMemPoolExportPointer(msg%ptr, buf), 'hipMemPoolExportPointer')
  if (c_write(1, c_loc(msg), c_sizeof(msg)) /= c_sizeof(msg)) stop 1
  do i = 1, 30   ! the importer answers in the same memory
    if (get(text) == 'hello from the importer') exit
    if (c_sleep(1) /= 0) exit
  end do
  write (error_unit, '(2a)') 'exporter reads: ', get(text)
  flush (error_unit)
  if (get(text) /= 'hello from the importer') stop 1   ! exit frees the pool
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
  subroutine put(to, s)   ! a C string
    character(kind=c_char), intent(out) :: to(:)
    character(*), intent(in) :: s
    integer :: k
    do k = 1, len(s)
      to(k) = s(k:k)
    end do
    to(len(s) + 1) = c_null_char
  end subroutine put
  function get(from) result(s)   ! the C string at from
    character(kind=c_char), intent(in) :: from(:)
    character(:), allocatable :: s
    integer :: k
    s = ''
    do k = 1, size(from)
      if (from(k) == c_null_char) exit
      s = s // from(k)
    end do
  end function get
end program exporter
