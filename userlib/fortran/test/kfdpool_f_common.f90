! SPDX-License-Identifier: MIT
! Helpers shared by the Fortran exporter and importer: hex encoding of the
! 64-byte export data and handles, the fill pattern, error checks.
module kfdpool_f_common
  use iso_c_binding
  use iso_fortran_env, only: output_unit, error_unit
  use hipfort_kfdpool
  implicit none
  integer, parameter :: NPTR = 4
  ! Sizes of the allocations, in 4-byte words: small ones share a chunk,
  ! the last is larger than one.
  integer(c_size_t), parameter :: WORDS(NPTR) = [ 16_c_size_t, 1000_c_size_t, &
      65536_c_size_t, 700000_c_size_t ]
contains
  subroutine check(err, what)
    integer(c_int), intent(in) :: err
    character(*), intent(in) :: what
    if (err /= hipSuccess) then
      write (error_unit, '(a,a,a,i0)') 'FAIL ', what, ': hipError_t ', err
      flush (error_unit)
      error stop 1
    end if
  end subroutine check

  function to_hex(b) result(s)
    integer(c_signed_char), intent(in) :: b(64)
    character(len=128) :: s
    integer :: i
    do i = 1, 64
      write (s(2*i-1:2*i), '(z2.2)') iand(int(b(i)), 255)
    end do
  end function to_hex

  subroutine from_hex(s, b)
    character(*), intent(in) :: s
    integer(c_signed_char), intent(out) :: b(64)
    integer :: i, v, ios
    if (len_trim(s) /= 128) error stop 'bad hex length'
    do i = 1, 64
      read (s(2*i-1:2*i), '(z2)', iostat=ios) v
      if (ios /= 0) error stop 'bad hex'
      if (v > 127) v = v - 256
      b(i) = int(v, c_signed_char)
    end do
  end subroutine from_hex

  ! The value word j of allocation k holds.
  pure integer(c_int32_t) function pattern(k, j)
    integer, intent(in) :: k
    integer(c_size_t), intent(in) :: j
    pattern = int(k * 1000003 + int(mod(j * 7919_c_size_t, 1000000_c_size_t)), c_int32_t)
  end function pattern
end module kfdpool_f_common
