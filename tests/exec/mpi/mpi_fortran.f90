! cdag MPI test — module cdag from Fortran (mpiexec -n 1..8).
!
! A periodic ring along the columns of a 2-D array (whole columns are contiguous sections),
! with a typed message (an MPI vector: one row of the array), a local max over reals, a
! scratch temporary, labels and a dependency; compiled with detection on and off, run
! with cdag_run and with cdag_start / cdag_test / cdag_wait, then rebound to a second set
! of arrays (cdag_schedule_rebind with c_loc). Errors come back through ierror: a
! non-contiguous section, a peer out of range, a bad rebind on one rank only (every rank
! fails); MPI_PROC_NULL gives CDAG_OP_NULL. Exit 0 on success.
program mpi_fortran
  use, intrinsic :: iso_c_binding
  use mpi_f08
  use cdag
  implicit none
  integer, parameter :: n = 6
  integer :: rank, nprocs, left, right, detect, it, ierr, failures
  real(8), allocatable, target :: a(:, :), b(:, :)
  real(4), allocatable, target :: m(:), tmp(:), m2(:), tmp2(:)
  type(MPI_Datatype) :: row
  type(cdag_graph) :: g
  type(cdag_schedule) :: s, s2
  type(cdag_options) :: o
  type(cdag_rebind) :: moves(3)
  integer(cdag_op_kind) :: op1, op2
  logical :: done

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs)
  left = modulo(rank - 1, nprocs)
  right = modulo(rank + 1, nprocs)
  failures = 0
  allocate(a(n, 0:3), b(n, 0:3), m(n), tmp(n), m2(n), tmp2(n))
  ! a(:, 0): own column; a(:, 1) <- left's column; row 1 of a(:, 2:3) <- right's row 1 of it
  call MPI_Type_vector(2, 1, n, MPI_DOUBLE_PRECISION, row)
  call MPI_Type_commit(row)

  do detect = 0, 1
     call cdag_graph_create(MPI_COMM_WORLD, g)
     call cdag_send(g, a(:, 0), right, 0, op1)
     call cdag_recv(g, a(:, 1), left, 0, op2)
     call cdag_label(g, op2, 'from the left')
     call cdag_send_type(g, a(1, 2), 1, row, left, 1)
     call cdag_recv_type(g, a(2, 2), 1, row, right, 1)
     call cdag_scratch(g, tmp)
     call cdag_send(g, m, right, 2)
     call cdag_recv(g, tmp, left, 2)
     call cdag_reduce_local(g, tmp, m, MPI_REAL, MPI_MAX, op1)
     call cdag_depend(g, op2, op1)
     call cdag_depend(g, CDAG_OP_NULL, op1)
     call cdag_options_init(o)
     if (o%struct_size /= c_sizeof(o) .or. o%min_group /= 4 .or. o%density /= 1d0) then
        print '(a,i0,a,i0)', 'cdag_options_init: struct_size ', o%struct_size, ', Fortran type ', c_sizeof(o)
        failures = failures + 1
     end if
     o%detect = detect
     call cdag_compile(g, s, o)
     call cdag_graph_free(g)

     do it = 1, 3
        call fill(a, m, it)
        if (it == 2) then
           call cdag_start(s)
           done = .false.
           do while (.not. done)
              call cdag_test(s, done)
           end do
           call cdag_wait(s)
        else
           call cdag_run(s)
        end if
        call check(a, m, it)
     end do

     moves(1) = cdag_rebind(c_loc(a), c_loc(b), bytes_of(size(a), storage_size(a)))
     moves(2) = cdag_rebind(c_loc(m), c_loc(m2), bytes_of(size(m), storage_size(m)))
     moves(3) = cdag_rebind(c_loc(tmp), c_loc(tmp2), bytes_of(size(tmp), storage_size(tmp)))
     call cdag_schedule_rebind(s, moves, s2)
     do it = 4, 5
        call fill(b, m2, it)
        call fill(a, m, 0)
        call cdag_run(s2)
        call check(b, m2, it)
        call expect(all(a(:, 1) == -1d0), 'the rebound schedule left a alone')
     end do
     call cdag_schedule_free(s2)
     ! column 0 and one element of column 1: the receive into column 1 is only partly moved
     moves(1) = cdag_rebind(c_loc(a), c_loc(b), int(8 * n + 8, c_size_t))
     if (rank == 0) then
        call cdag_schedule_rebind(s, moves(1:1), s2, ierr)
     else
        call cdag_schedule_rebind(s, moves(2:3), s2, ierr)
     end if
     call expect(ierr == CDAG_ERR_ARG, 'a partial move is refused on every rank')
     call cdag_schedule_free(s)
  end do

  call cdag_graph_create(MPI_COMM_WORLD, g)
  call cdag_send(g, a(1, :), right, 0, ierror=ierr)
  call expect(ierr == CDAG_ERR_ARG, 'a non-contiguous section is refused')
  call expect(index(cdag_error_message(), 'not contiguous') > 0, 'the message says why')
  call cdag_send(g, a(:, 0), nprocs, 0, ierror=ierr)
  call expect(ierr == CDAG_ERR_ARG, 'a peer out of range is refused')
  call cdag_send(g, a(:, 0), MPI_PROC_NULL, 0, op1, ierr)
  call expect(ierr == CDAG_OK .and. op1 == CDAG_OP_NULL, 'MPI_PROC_NULL gives CDAG_OP_NULL')
  call cdag_reduce_local(g, tmp, a(:, 0), MPI_REAL, MPI_SUM, ierror=ierr)
  call expect(ierr == CDAG_ERR_ARG, 'reduce_local of different sizes is refused')
  call cdag_graph_free(g)
  call expect(len(cdag_strerror(CDAG_ERR_ARG)) > 0, 'strerror')

  call check_options_layout()

  call MPI_Type_free(row)
  call MPI_Allreduce(MPI_IN_PLACE, failures, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  if (rank == 0) then
     if (failures == 0) then
        write (*, '(a,i0,a)') 'mpi_fortran on ', nprocs, ' ranks: OK'
     else
        write (*, '(a,i0,a)') 'mpi_fortran on ', nprocs, ' ranks: FAILED'
     end if
  end if
  call MPI_Finalize()
  if (failures /= 0) error stop 1

contains

  ! type(cdag_options) as this compiler lays it out, field by field, against C's cdag_options
  ! (fortran/cdag_f.c: cdag_f_options_layout holds it to the options table).
  subroutine check_options_layout()
    interface
       integer(c_int) function c_layout(n, offset, size, total) bind(c, name='cdag_f_options_layout')
         import :: c_int, c_int64_t
         integer(c_int), value :: n
         integer(c_int64_t) :: offset(*), size(*)
         integer(c_int64_t), value :: total
       end function c_layout
    end interface
    type(cdag_options), target :: x
    integer(c_int64_t) :: off(13), sz(13)
    integer :: rc
    type(c_ptr) :: b
    b = c_loc(x)
    off = [at(c_loc(x%struct_size), b), at(c_loc(x%detect), b), at(c_loc(x%density), b), at(c_loc(x%exact_float), b), &
           at(c_loc(x%root), b), at(c_loc(x%min_group), b), at(c_loc(x%kernel), b), at(c_loc(x%alpha), b), at(c_loc(x%beta), b), &
           at(c_loc(x%blocks), b), at(c_loc(x%measure), b), at(c_loc(x%overhead), b), at(c_loc(x%gamma), b)]
    sz = [c_sizeof(x%struct_size), c_sizeof(x%detect), c_sizeof(x%density), c_sizeof(x%exact_float), &
          c_sizeof(x%root), c_sizeof(x%min_group), c_sizeof(x%kernel), c_sizeof(x%alpha), c_sizeof(x%beta), &
          c_sizeof(x%blocks), c_sizeof(x%measure), c_sizeof(x%overhead), c_sizeof(x%gamma)]
    rc = c_layout(size(off), off, sz, int(c_sizeof(x), c_int64_t))
    if (rc /= CDAG_OK) call cdag_error_message_print()
    call expect(rc == CDAG_OK, 'type(cdag_options) has the layout of C''s cdag_options')
  end subroutine check_options_layout

  ! The byte offset of p from base.
  integer(c_int64_t) function at(p, base)
    type(c_ptr), intent(in) :: p, base
    at = int(transfer(p, 0_c_intptr_t) - transfer(base, 0_c_intptr_t), c_int64_t)
  end function at

  subroutine cdag_error_message_print()
    print '(a)', cdag_error_message()
  end subroutine cdag_error_message_print

  integer(c_size_t) function bytes_of(elements, bits)
    integer, intent(in) :: elements, bits
    bytes_of = int(elements, c_size_t) * int(bits / 8, c_size_t)
  end function bytes_of

  real(8) function val(r, i, j, it)
    integer, intent(in) :: r, i, j, it
    val = 1000d0 * it + 100d0 * r + 10d0 * j + i
  end function val

  subroutine fill(x, mx, it)
    real(8), intent(out) :: x(n, 0:3)
    real(4), intent(out) :: mx(n)
    integer, intent(in) :: it
    integer :: i, j
    do j = 0, 3
       do i = 1, n
          x(i, j) = val(rank, i, j, it)
       end do
    end do
    x(:, 1) = -1d0
    x(2, 2:3) = -1d0
    do i = 1, n
       mx(i) = real(modulo(rank * 7 + i * it, 11), 4)
    end do
  end subroutine fill

  subroutine check(x, mx, it)
    real(8), intent(in) :: x(n, 0:3)
    real(4), intent(in) :: mx(n)
    integer, intent(in) :: it
    integer :: i
    do i = 1, n
       call expect(x(i, 1) == val(left, i, 0, it), 'column from the left')
       call expect(mx(i) == max(real(modulo(rank * 7 + i * it, 11), 4), real(modulo(left * 7 + i * it, 11), 4)), &
            'max with the left')
    end do
    call expect(x(2, 2) == val(right, 1, 2, it) .and. x(2, 3) == val(right, 1, 3, it), 'row from the right')
  end subroutine check

  subroutine expect(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    if (.not. ok) then
       failures = failures + 1
       write (*, '(a,i0,a,a)') 'rank ', rank, ': failed: ', what
    end if
  end subroutine expect

end program mpi_fortran
