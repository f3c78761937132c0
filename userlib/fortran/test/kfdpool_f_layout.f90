! SPDX-License-Identifier: MIT
! Prints the size and component offsets of hipfort_kfdpool's derived types,
! for selftests/lib_fortran_test.c to compare with the C structs.
program kfdpool_f_layout
  use iso_c_binding
  use hipfort_kfdpool
  implicit none
  type(hipMemPoolProps), target :: p
  type(hipMemPoolPtrExportData), target :: e
  type(hipMemAccessDesc), target :: a(2)
  type(hipMemLocation), target :: l

  print '(a,7(1x,i0))', 'hipMemPoolProps', c_sizeof(p), off(c_loc(p%allocType)), &
      off(c_loc(p%handleTypes)), off(c_loc(p%location)), &
      off(c_loc(p%win32SecurityAttributes)), off(c_loc(p%maxSize)), off(c_loc(p%reserved))
  print '(a,1x,i0)', 'hipMemPoolPtrExportData', c_sizeof(e)
  print '(a,3(1x,i0))', 'hipMemAccessDesc', c_sizeof(a(1)), &
      diff(c_loc(a(1)%flags), c_loc(a(1))), diff(c_loc(a(2)), c_loc(a(1)))
  print '(a,2(1x,i0))', 'hipMemLocation', c_sizeof(l), diff(c_loc(l%id), c_loc(l))
  print '(a,1x,i0)', 'reserved_zero', count(p%reserved /= 0) + count(e%reserved /= 0)
contains
  integer function off(q)
    type(c_ptr), intent(in) :: q
    off = diff(q, c_loc(p))
  end function off
  integer function diff(q, base)
    type(c_ptr), intent(in) :: q, base
    diff = int(transfer(q, 0_c_intptr_t) - transfer(base, 0_c_intptr_t))
  end function diff
end program kfdpool_f_layout
