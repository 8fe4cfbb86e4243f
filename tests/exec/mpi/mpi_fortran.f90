! cdag MPI test — module cdag from Fortran (mpiexec -n 1..8).
!
! A periodic ring along the columns of a 2-D array (whole columns are contiguous sections),
! with a typed message (an MPI vector: one row of the array), a local max over reals, a
! scratch temporary, labels and a dependency; dumped (cdag_graph_dump: a global file that
! the test mpi_fortran_check_npN loads with `cdag check`; a missing directory fails on every
! rank), counted (cdag_graph_info), compiled with C's argument order (cdag_compile(g,
! options, s)) with detection on and off, run with cdag_run and with cdag_start / cdag_test /
! cdag_wait, then rebound to a second set of arrays in both forms (C's
! cdag_schedule_rebind(s, n, moves, copy), which must use only moves(1:n), and without n).
! Then one-sided accesses (cdag_segment, cdag_get, cdag_put with both offset kinds,
! cdag_fence: a put read back in the next epoch), compiled with the defaults form
! cdag_compile(g, s), and an M:N block-cyclic cdag_redistribute between a column of
! processes and a row of one process fewer (dst omitted outside it), checked element by
! element. Errors come back through ierror: a non-contiguous section, a peer out of range, a
! bad rebind on one rank only and n past the moves array (every rank fails), a negative
! offset or elem_bytes, a redistribution array too small; MPI_PROC_NULL gives CDAG_OP_NULL.
! A computation (cdag_compute, cdag_compute_reads_all) between a shift to the right and a
! shift back: the kernel doubles what arrived, and runs once per run.
! Argument: the file cdag_graph_dump writes (default mpi_fortran.cdag). Exit 0 on success.

! The computations' kernels (a procedure given to cdag_compute is bind(c): a module's).
module mpi_fortran_kernels
  use, intrinsic :: iso_c_binding
  implicit none
  real(8), target :: kx(4), ky(4), kz(4), kw(1)
contains
  subroutine double_it(arg) bind(c)
    type(c_ptr), value :: arg
    integer(c_int), pointer :: calls
    call c_f_pointer(arg, calls)
    ky = 2d0 * kx
    calls = calls + 1
  end subroutine double_it
  subroutine count_it(arg) bind(c)
    type(c_ptr), value :: arg
    integer(c_int), pointer :: calls
    call c_f_pointer(arg, calls)
    kw(1) = sum(kz)
    calls = calls + 1
  end subroutine count_it
end module mpi_fortran_kernels

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
  type(cdag_rebind) :: moves(4)
  integer(cdag_op_kind) :: op1, op2
  integer(c_int64_t) :: nops
  integer :: form, np_info
  character(len=256) :: dumpfile
  logical :: done

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs)
  left = modulo(rank - 1, nprocs)
  right = modulo(rank + 1, nprocs)
  failures = 0
  dumpfile = 'mpi_fortran.cdag'
  if (command_argument_count() >= 1) call get_command_argument(1, dumpfile)
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
     call cdag_graph_info(g, np_info, nops)
     call expect(np_info == nprocs .and. nops >= 7, 'cdag_graph_info: ranks and operations')
     call cdag_graph_info(g, nops=nops)
     call expect(nops >= 7, 'cdag_graph_info with nprocs omitted')
     if (detect == 0) call check_dump(g, trim(dumpfile))
     call cdag_compile(g, o, s)
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
     ! a move that is refused if read: C's form with n = 3 must stop before it
     moves(4) = cdag_rebind(c_loc(a), c_null_ptr, bytes_of(size(a), storage_size(a)))
     do form = 1, 2
        if (form == 1) then
           call cdag_schedule_rebind(s, 3, moves, s2)
        else
           call cdag_schedule_rebind(s, moves(1:3), s2)
        end if
        do it = 4, 5
           call fill(b, m2, it)
           call fill(a, m, 0)
           call cdag_run(s2)
           call check(b, m2, it)
           call expect(all(a(:, 1) == -1d0), 'the rebound schedule left a alone')
        end do
        if (form == 1) call cdag_schedule_free(s2)
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
     moves(1) = cdag_rebind(c_loc(a), c_loc(b), bytes_of(size(a), storage_size(a)))
     if (rank == 0) then
        call cdag_schedule_rebind(s, 5, moves, s2, ierr)
        call expect(index(cdag_error_message(), 'n = 5') > 0, 'the message names n')
     else
        call cdag_schedule_rebind(s, 3, moves, s2, ierr)
     end if
     call expect(ierr == CDAG_ERR_ARG, 'n past the moves array is refused on every rank')
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
  call expect(index(cdag_version(), '.') > 0 .and. cdag_version_number() > 0, 'cdag_version')
  call expect(cdag_version() == version_text(cdag_version_number()), 'cdag_version matches cdag_version_number')

  call test_onesided()
  call test_redistribute()

  call check_options_layout()

  call test_compute()

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

  ! Dumps g (collective) and checks that rank 0 wrote a non-empty file.
  subroutine check_dump(g, path)
    type(cdag_graph), intent(in) :: g
    character(len=*), intent(in) :: path
    integer :: ierr, u
    integer(8) :: sz
    logical :: there
    if (rank == 0) then   ! no file of an earlier run may pass for this one's
       inquire (file=path, exist=there)
       if (there) then
          open (newunit=u, file=path)
          close (u, status='delete')
       end if
    end if
    call cdag_graph_dump(g, path, ierr)
    call expect(ierr == CDAG_OK, 'cdag_graph_dump')
    call cdag_graph_dump(g, '/nonexistent-cdag-dir/x.cdag', ierr)
    call expect(ierr == CDAG_ERR_IO, 'cdag_graph_dump to a missing directory fails on every rank')
    if (rank == 0) then
       inquire (file=path, exist=there, size=sz)
       call expect(there .and. sz > 0, 'cdag_graph_dump wrote a non-empty file')
    end if
  end subroutine check_dump

  ! "MAJOR.MINOR.PATCH" of a CDAG_VERSION_NUMBER.
  function version_text(v) result(t)
    integer, intent(in) :: v
    character(len=:), allocatable :: t
    character(len=32) :: buf
    write (buf, '(i0,".",i0,".",i0)') v / 10000, modulo(v / 100, 100), modulo(v, 100)
    t = trim(buf)
  end function version_text

  ! Epoch 1: get the right rank's win(1:4) (default-integer offset 0) and put own(1:2) into
  ! its box(3:4) (an integer(8) offset); epoch 2: get that box(3:4) back. Segments 0 and 1.
  subroutine test_onesided()
    real(8), allocatable, target :: win(:), box(:), got(:), own(:), back(:)
    type(cdag_graph) :: g
    type(cdag_schedule) :: s
    integer :: seg0, seg1, it, ierr, i
    integer(cdag_op_kind) :: opg, opp
    allocate(win(8), box(6), got(4), own(2), back(2))
    call cdag_graph_create(MPI_COMM_WORLD, g)
    call cdag_segment(g, win, seg0)
    call cdag_segment(g, box, seg1)
    call expect(seg0 == 0 .and. seg1 == 1, 'cdag_segment numbers segments from 0')
    call cdag_get(g, got, right, seg0, 0, opg)
    call cdag_put(g, own, right, seg1, 2_8 * 8_8, opp)
    call expect(opg >= 0 .and. opp >= 0 .and. opg /= opp, 'cdag_get and cdag_put give their ops')
    call cdag_fence(g)
    call cdag_get(g, back, right, seg1, 16)
    call cdag_fence(g)
    call cdag_compile(g, s)
    call cdag_graph_free(g)
    do it = 1, 2
       win = [(val(rank, i, 7, it), i = 1, 8)]
       box = -1d0
       own = [val(rank, 1, 8, it), val(rank, 2, 8, it)]
       got = 0d0
       back = 0d0
       call cdag_run(s)
       call expect(all(got == [(val(right, i, 7, it), i = 1, 4)]), 'cdag_get read the right rank''s segment')
       call expect(all(box(3:4) == [val(left, 1, 8, it), val(left, 2, 8, it)]), 'cdag_put wrote into the segment')
       call expect(all(box(1:2) == -1d0) .and. all(box(5:6) == -1d0), 'cdag_put wrote nothing else')
       call expect(all(back == own), 'the put read back after cdag_fence')
    end do
    call cdag_schedule_free(s)

    call cdag_graph_create(MPI_COMM_WORLD, g)
    call cdag_segment(g, win, seg0)
    call cdag_get(g, got, right, seg0, -8, ierror=ierr)
    call expect(ierr == CDAG_ERR_ARG .and. index(cdag_error_message(), 'negative') > 0, 'a negative offset is refused')
    call cdag_put(g, win(1:8:2), right, seg0, 0_8, ierror=ierr)
    call expect(ierr == CDAG_ERR_ARG, 'cdag_put of a non-contiguous section is refused')
    call cdag_graph_free(g)
  end subroutine test_onesided

  ! x <- left's src; y = 2 x (a computation); z <- right's y, which is 2 src; w = sum(z) (reads all).
  subroutine test_compute()
    use mpi_fortran_kernels
    real(8), allocatable, target :: src(:)
    integer(c_int), target :: calls(2)
    type(cdag_graph) :: g
    type(cdag_schedule) :: s
    integer(cdag_op_kind) :: op
    integer :: it, ierr, i
    allocate(src(4))
    calls = 0
    call cdag_graph_create(MPI_COMM_WORLD, g)
    call cdag_send(g, src, right, 5)
    call cdag_recv(g, kx, left, 5)
    call cdag_compute(g, kx, ky, 1000_c_int64_t, double_it, c_loc(calls(1)), op)
    call expect(op >= 0, 'cdag_compute gives its op')
    call cdag_send(g, ky, left, 6)
    call cdag_recv(g, kz, right, 6)
    call cdag_compute_reads_all(g, kw, 10_c_int64_t, count_it, c_loc(calls(2)))
    call cdag_compute(g, kx, ky, -1_c_int64_t, double_it, c_null_ptr, ierror=ierr)
    call expect(ierr == CDAG_ERR_ARG .and. index(cdag_error_message(), 'negative') > 0, 'a negative cost is refused')
    call cdag_compute(g, kx(1:4:2), ky, 0_c_int64_t, double_it, c_null_ptr, ierror=ierr)
    call expect(ierr == CDAG_ERR_ARG, 'cdag_compute of a non-contiguous section is refused')
    call cdag_compile(g, s)
    call cdag_graph_free(g)
    do it = 1, 3
       src = [(real(100 * rank + 10 * it + i, 8), i = 1, 4)]
       call cdag_run(s)
       call expect(all(kz == [(2d0 * real(100 * rank + 10 * it + i, 8), i = 1, 4)]), &
            'the computation doubled what arrived, and its result travelled on')
       call expect(kw(1) == sum(kz), 'the computation that reads all ran after the last receive')
       call expect(calls(1) == it .and. calls(2) == it, 'each computation ran once per run')
    end do
    call cdag_schedule_free(s)
  end subroutine test_compute

  ! Local rows (or columns) of grid coordinate p: ScaLAPACK's NUMROC.
  integer function numroc(n, nb, p, np)
    integer, intent(in) :: n, nb, p, np
    integer :: blocks, extra
    blocks = n / nb
    numroc = (blocks / np) * nb
    extra = modulo(blocks, np)
    if (p < extra) then
       numroc = numroc + nb
    else if (p == extra) then
       numroc = numroc + modulo(n, nb)
    end if
  end function numroc

  ! The global index (from 1) of local index l (from 1) at grid coordinate p.
  integer function global_of(l, nb, p, np)
    integer, intent(in) :: l, nb, p, np
    global_of = ((l - 1) / nb) * np * nb + p * nb + modulo(l - 1, nb) + 1
  end function global_of

  real(8) function entry(i, j, it)
    integer, intent(in) :: i, j, it
    entry = 100000d0 * it + 100d0 * i + j
  end function entry

  ! An mm x nn matrix of real(8) from a column of nprocs processes (2 x 2 blocks) to a row of
  ! max(1, nprocs - 1) processes ending at the last rank (3 x 1 blocks, lld = rows + 1):
  ! the grids differ in shape, blocks and membership (M:N); rank 0 omits dst when outside.
  subroutine test_redistribute()
    type(cdag_layout) :: lf, lt
    real(8), allocatable, target :: src(:, :), dst(:, :), small(:)
    type(cdag_graph) :: g
    type(cdag_schedule) :: s
    integer :: mm, nn, pt, fr, fc, tr, tc, tj, i, j, it, ierr
    logical :: in_to
    mm = 3 * nprocs + 1
    nn = 5
    pt = max(1, nprocs - 1)
    lf = cdag_layout(m=mm, n=nn, mb=2, nb=2, pr=nprocs, pc=1, first=0, lld=0)
    fr = numroc(mm, 2, rank, nprocs)
    fc = numroc(nn, 2, 0, 1)
    in_to = rank >= nprocs - pt
    tj = rank - (nprocs - pt)
    tr = numroc(mm, 3, 0, 1)
    tc = 0
    if (in_to) tc = numroc(nn, 1, tj, pt)
    lt = cdag_layout(m=mm, n=nn, mb=3, nb=1, pr=1, pc=pt, first=nprocs - pt, lld=tr + 1)
    allocate(src(fr, fc), dst(tr + 1, max(tc, 1)), small(1))
    call cdag_graph_create(MPI_COMM_WORLD, g)
    if (in_to) then
       call cdag_redistribute(g, lf, src, lt, dst, 8)
    else
       call cdag_redistribute(g, lf, src, lt, elem_bytes=8)
    end if
    call cdag_compile(g, s)
    call cdag_graph_free(g)
    do it = 1, 2
       do j = 1, fc
          do i = 1, fr
             src(i, j) = entry(global_of(i, 2, rank, nprocs), global_of(j, 2, 0, 1), it)
          end do
       end do
       dst = -1d0
       call cdag_run(s)
       do j = 1, tc
          do i = 1, tr
             call expect(dst(i, j) == entry(global_of(i, 3, 0, 1), global_of(j, 1, tj, pt), it), &
                  'cdag_redistribute moved every element')
          end do
          call expect(dst(tr + 1, j) == -1d0, 'cdag_redistribute left the padding row alone')
       end do
    end do
    call cdag_schedule_free(s)

    call cdag_graph_create(MPI_COMM_WORLD, g)
    call cdag_redistribute(g, lf, small, lf, src, 8, ierr)
    call expect(ierr == CDAG_ERR_ARG .and. index(cdag_error_message(), 'src array') > 0, &
         'a redistribution array too small is refused')
    call cdag_redistribute(g, lf, src, lf, dst, 0, ierr)
    call expect(ierr == CDAG_ERR_ARG, 'elem_bytes 0 is refused')
    call cdag_redistribute(g, lf, src, lf, dst, -8, ierr)
    call expect(ierr == CDAG_ERR_ARG .and. index(cdag_error_message(), 'negative') > 0, 'a negative elem_bytes is refused')
    call cdag_graph_free(g)
  end subroutine test_redistribute

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
    integer(c_int64_t) :: off(14), sz(14)
    integer :: rc
    type(c_ptr) :: b
    b = c_loc(x)
    off = [at(c_loc(x%struct_size), b), at(c_loc(x%detect), b), at(c_loc(x%density), b), at(c_loc(x%exact_float), b), &
           at(c_loc(x%root), b), at(c_loc(x%min_group), b), at(c_loc(x%kernel), b), at(c_loc(x%alpha), b), at(c_loc(x%beta), b), &
           at(c_loc(x%blocks), b), at(c_loc(x%measure), b), at(c_loc(x%overhead), b), at(c_loc(x%gamma), b), &
           at(c_loc(x%price), b)]
    sz = [c_sizeof(x%struct_size), c_sizeof(x%detect), c_sizeof(x%density), c_sizeof(x%exact_float), &
          c_sizeof(x%root), c_sizeof(x%min_group), c_sizeof(x%kernel), c_sizeof(x%alpha), c_sizeof(x%beta), &
          c_sizeof(x%blocks), c_sizeof(x%measure), c_sizeof(x%overhead), c_sizeof(x%gamma), c_sizeof(x%price)]
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
