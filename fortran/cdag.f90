! cdag — fortran/cdag.f90: module cdag, the distributed API for Fortran (mpi_f08 programs).
!
! Every call of cdag.h that takes a distributed graph or a schedule, as a subroutine of the
! same name with C's arguments in C's order, in the style of mpi_f08 (the table C -> Fortran:
! docs/fortran.md): handles are derived types (type(cdag_graph), type(cdag_schedule)),
! communicators, datatypes and ops are mpi_f08's, and the last argument is an optional
! `ierror`. Without ierror, an error prints cdag's message (rank, operation) and stops the
! program, as MPI_ERRORS_ARE_FATAL does. Buffers are whole arrays, scalars or contiguous
! sections of any type and rank: their size is the message size, so C's `bytes` (and
! cdag_schedule_rebind's `n`, optional here) is not an argument. The graph records their
! addresses, so they must stay where they are while a schedule uses them: give them the
! TARGET (or ASYNCHRONOUS) attribute, as for MPI's nonblocking calls. A non-contiguous
! section is refused with CDAG_ERR_ARG (a compiler's temporary copy would be recorded
! instead). Ops are integer(cdag_op_kind); CDAG_OP_NULL for a peer MPI_PROC_NULL. C's NULL
! for an output (op, nprocs, nops) is an omitted optional argument; C's NULL options of
! cdag_compile is the form without them. Global graphs, files and analysis stay C-only.
module cdag
  use, intrinsic :: iso_c_binding
  use, intrinsic :: iso_fortran_env, only: error_unit
  use mpi_f08, only: MPI_Comm, MPI_Datatype, MPI_Op, MPI_COUNT_KIND
  implicit none
  private

  integer, parameter, public :: cdag_op_kind = c_int64_t
  integer(cdag_op_kind), parameter, public :: CDAG_OP_NULL = -1
  integer, parameter, public :: CDAG_OK = 0, CDAG_ERR_ARG = 1, CDAG_ERR_NOMEM = 2, CDAG_ERR_UNMATCHED = 3, &
       CDAG_ERR_CYCLE = 4, CDAG_ERR_TRUNCATE = 5, CDAG_ERR_FORMAT = 6, CDAG_ERR_IO = 7, CDAG_ERR_MPI = 8, &
       CDAG_ERR_STATE = 9, CDAG_ERR_UNSUPPORTED = 10, CDAG_ERR_MISMATCH = 11, CDAG_ERR_PLAN = 12, CDAG_ERR_RACE = 13
  integer, parameter, public :: CDAG_KERNEL_AUTO = 0, CDAG_KERNEL_MPI = 1, CDAG_KERNEL_CDAG = 2
  integer, parameter, public :: CDAG_REDISTRIBUTE_TAG = 32767

  type, public :: cdag_graph
     type(c_ptr) :: p = c_null_ptr
  end type cdag_graph
  type, public :: cdag_schedule
     type(c_ptr) :: p = c_null_ptr
  end type cdag_schedule
  ! cdag_options of cdag.h, field for field, in order (cdag_options_init sets struct_size and
  ! the defaults). tests/base/test_settings.c holds this list to the options table of
  ! src/base/settings.h (names, order, C types); a new field of cdag.h goes here too.
  type, bind(c), public :: cdag_options
     integer(c_size_t) :: struct_size
     integer(c_int) :: detect
     real(c_double) :: density
     integer(c_int) :: exact_float, root, min_group, kernel
     real(c_double) :: alpha, beta
     integer(c_int) :: blocks, measure
     real(c_double) :: overhead, gamma
     integer(c_int) :: price
  end type cdag_options
  ! cdag_layout of cdag.h: a block-cyclic layout of cdag_redistribute (first is a rank, from 0;
  ! lld 0: the local row count).
  type, bind(c), public :: cdag_layout
     integer(c_int64_t) :: m = 0, n = 0, mb = 0, nb = 0
     integer(c_int) :: pr = 0, pc = 0, first = 0
     integer(c_int64_t) :: lld = 0
  end type cdag_layout
  ! One move of cdag_schedule_rebind: from = c_loc(a), to = c_loc(b), bytes = size(a) * storage_size(a) / 8.
  type, bind(c), public :: cdag_rebind
     type(c_ptr) :: from, to
     integer(c_size_t) :: bytes
  end type cdag_rebind

  public :: cdag_graph_create, cdag_send, cdag_recv, cdag_send_type, cdag_recv_type, cdag_reduce_local, &
       cdag_copy_local, cdag_compute, cdag_compute_reads_all, cdag_compute_fn, cdag_scratch, cdag_depend, &
       cdag_label, cdag_graph_free, cdag_options_init, &
       cdag_compile, cdag_run, cdag_start, cdag_wait, cdag_test, cdag_schedule_report, cdag_schedule_free, &
       cdag_schedule_rebind, cdag_strerror, cdag_error_message, cdag_version, cdag_version_number, &
       cdag_redistribute, cdag_segment, cdag_get, cdag_put, cdag_fence, cdag_graph_dump, cdag_graph_info

  ! C's order: cdag_compile(g, options, s); cdag_compile(g, s) is C's NULL options.
  interface cdag_compile
     module procedure compile_options, compile_defaults
  end interface cdag_compile
  ! C's cdag_schedule_rebind(s, n, moves, copy) uses moves(1:n); without n, all of moves.
  interface cdag_schedule_rebind
     module procedure rebind_n, rebind_all
  end interface cdag_schedule_rebind
  ! The offset of cdag_get / cdag_put: a default integer or an integer(c_int64_t) (the kind
  ! of MPI_ADDRESS_KIND and c_size_t on 64-bit systems).
  interface cdag_get
     module procedure get_i4, get_i8
  end interface cdag_get
  interface cdag_put
     module procedure put_i4, put_i8
  end interface cdag_put

  ! The function of a computation (cdag_compute): a bind(c) subroutine of one type(c_ptr)
  ! argument, passed by value (c_loc of the program's data, or c_null_ptr).
  abstract interface
     subroutine cdag_compute_fn(arg) bind(c)
       import :: c_ptr
       type(c_ptr), value :: arg
     end subroutine cdag_compute_fn
  end interface

  interface
     integer(c_int) function c_compute(g, read, write, cost, fn, arg, all, op) bind(c, name='cdag_f_compute')
       import :: c_int, c_ptr, c_int64_t, c_funptr
       type(c_ptr), value :: g
       type(*), dimension(..) :: read, write
       integer(c_int64_t), value :: cost
       type(c_funptr), value :: fn
       type(c_ptr), value :: arg
       integer(c_int), value :: all
       integer(c_int64_t) :: op
     end function c_compute
     integer(c_int) function c_graph_create(comm, g) bind(c, name='cdag_f_graph_create')
       import :: c_int, c_ptr
       integer(c_int), value :: comm
       type(c_ptr) :: g
     end function c_graph_create
     integer(c_int) function c_send(g, buf, peer, tag, op) bind(c, name='cdag_f_send')
       import :: c_int, c_ptr, c_int64_t
       type(c_ptr), value :: g
       type(*), dimension(..) :: buf
       integer(c_int), value :: peer, tag
       integer(c_int64_t) :: op
     end function c_send
     integer(c_int) function c_recv(g, buf, peer, tag, op) bind(c, name='cdag_f_recv')
       import :: c_int, c_ptr, c_int64_t
       type(c_ptr), value :: g
       type(*), dimension(..) :: buf
       integer(c_int), value :: peer, tag
       integer(c_int64_t) :: op
     end function c_recv
     integer(c_int) function c_send_type(g, buf, count, dtype, peer, tag, op) bind(c, name='cdag_f_send_type')
       import :: c_int, c_ptr, c_int64_t, MPI_COUNT_KIND
       type(c_ptr), value :: g
       type(*), dimension(..) :: buf
       integer(MPI_COUNT_KIND), value :: count
       integer(c_int), value :: dtype, peer, tag
       integer(c_int64_t) :: op
     end function c_send_type
     integer(c_int) function c_recv_type(g, buf, count, dtype, peer, tag, op) bind(c, name='cdag_f_recv_type')
       import :: c_int, c_ptr, c_int64_t, MPI_COUNT_KIND
       type(c_ptr), value :: g
       type(*), dimension(..) :: buf
       integer(MPI_COUNT_KIND), value :: count
       integer(c_int), value :: dtype, peer, tag
       integer(c_int64_t) :: op
     end function c_recv_type
     integer(c_int) function c_reduce_local(g, in, inout, dtype, mop, op) bind(c, name='cdag_f_reduce_local')
       import :: c_int, c_ptr, c_int64_t
       type(c_ptr), value :: g
       type(*), dimension(..) :: in, inout
       integer(c_int), value :: dtype, mop
       integer(c_int64_t) :: op
     end function c_reduce_local
     integer(c_int) function c_copy_local(g, src, dst, op) bind(c, name='cdag_f_copy_local')
       import :: c_int, c_ptr, c_int64_t
       type(c_ptr), value :: g
       type(*), dimension(..) :: src, dst
       integer(c_int64_t) :: op
     end function c_copy_local
     integer(c_int) function c_scratch(g, buf) bind(c, name='cdag_f_scratch')
       import :: c_int, c_ptr
       type(c_ptr), value :: g
       type(*), dimension(..) :: buf
     end function c_scratch
     integer(c_int) function c_depend(g, before, after) bind(c, name='cdag_depend')
       import :: c_int, c_ptr, c_int64_t
       type(c_ptr), value :: g
       integer(c_int64_t), value :: before, after
     end function c_depend
     integer(c_int) function c_label(g, op, text) bind(c, name='cdag_label')
       import :: c_int, c_ptr, c_int64_t, c_char
       type(c_ptr), value :: g
       integer(c_int64_t), value :: op
       character(kind=c_char), dimension(*) :: text
     end function c_label
     integer(c_int) function c_graph_free(g) bind(c, name='cdag_graph_free')
       import :: c_int, c_ptr
       type(c_ptr) :: g
     end function c_graph_free
     subroutine c_options_init(o, size) bind(c, name='cdag_options_init_size')
       import :: cdag_options, c_size_t
       type(cdag_options) :: o
       integer(c_size_t), value :: size
     end subroutine c_options_init
     integer(c_int) function c_compile(g, o, s) bind(c, name='cdag_compile')
       import :: c_int, c_ptr
       type(c_ptr), value :: g, o
       type(c_ptr) :: s
     end function c_compile
     integer(c_int) function c_schedule_call(s) bind(c, name='cdag_run')
       import :: c_int, c_ptr
       type(c_ptr), value :: s
     end function c_schedule_call
     integer(c_int) function c_start(s) bind(c, name='cdag_start')
       import :: c_int, c_ptr
       type(c_ptr), value :: s
     end function c_start
     integer(c_int) function c_wait(s) bind(c, name='cdag_wait')
       import :: c_int, c_ptr
       type(c_ptr), value :: s
     end function c_wait
     integer(c_int) function c_test(s, done) bind(c, name='cdag_test')
       import :: c_int, c_ptr
       type(c_ptr), value :: s
       integer(c_int) :: done
     end function c_test
     integer(c_int) function c_schedule_report(s, json) bind(c, name='cdag_f_schedule_report')
       import :: c_int, c_ptr
       type(c_ptr), value :: s
       integer(c_int), value :: json
     end function c_schedule_report
     integer(c_int) function c_schedule_free(s) bind(c, name='cdag_schedule_free')
       import :: c_int, c_ptr
       type(c_ptr) :: s
     end function c_schedule_free
     integer(c_int) function c_schedule_rebind(s, n, moves, copy) bind(c, name='cdag_schedule_rebind')
       import :: c_int, c_ptr, cdag_rebind
       type(c_ptr), value :: s
       integer(c_int), value :: n
       type(cdag_rebind), dimension(*) :: moves
       type(c_ptr) :: copy
     end function c_schedule_rebind
     integer(c_int) function c_f_schedule_rebind(s, n, have, moves, copy) bind(c, name='cdag_f_schedule_rebind')
       import :: c_int, c_ptr, cdag_rebind
       type(c_ptr), value :: s
       integer(c_int), value :: n, have
       type(cdag_rebind), dimension(*) :: moves
       type(c_ptr) :: copy
     end function c_f_schedule_rebind
     integer(c_int) function c_redistribute(g, from, src, to, dst, elem_bytes) bind(c, name='cdag_f_redistribute')
       import :: c_int, c_ptr, c_int64_t, cdag_layout
       type(c_ptr), value :: g
       type(cdag_layout), intent(in) :: from, to
       type(*), dimension(..), optional :: src, dst
       integer(c_int64_t), value :: elem_bytes
     end function c_redistribute
     integer(c_int) function c_segment(g, base, seg) bind(c, name='cdag_f_segment')
       import :: c_int, c_ptr
       type(c_ptr), value :: g
       type(*), dimension(..) :: base
       integer(c_int) :: seg
     end function c_segment
     integer(c_int) function c_onesided(g, buf, put, target, seg, offset, op) bind(c, name='cdag_f_onesided')
       import :: c_int, c_ptr, c_int64_t
       type(c_ptr), value :: g
       type(*), dimension(..) :: buf
       integer(c_int), value :: put, target, seg
       integer(c_int64_t), value :: offset
       integer(c_int64_t) :: op
     end function c_onesided
     integer(c_int) function c_fence(g) bind(c, name='cdag_fence')
       import :: c_int, c_ptr
       type(c_ptr), value :: g
     end function c_fence
     integer(c_int) function c_graph_dump(g, path) bind(c, name='cdag_graph_dump')
       import :: c_int, c_ptr, c_char
       type(c_ptr), value :: g
       character(kind=c_char), dimension(*) :: path
     end function c_graph_dump
     integer(c_int) function c_graph_info(g, nprocs, nops) bind(c, name='cdag_graph_info')
       import :: c_int, c_ptr, c_int64_t
       type(c_ptr), value :: g
       integer(c_int) :: nprocs
       integer(c_int64_t) :: nops
     end function c_graph_info
     type(c_ptr) function c_version() bind(c, name='cdag_version')
       import :: c_ptr
     end function c_version
     integer(c_int) function c_version_number() bind(c, name='cdag_version_number')
       import :: c_int
     end function c_version_number
     type(c_ptr) function c_strerror(code) bind(c, name='cdag_strerror')
       import :: c_ptr, c_int
       integer(c_int), value :: code
     end function c_strerror
     type(c_ptr) function c_error_message() bind(c, name='cdag_error_message')
       import :: c_ptr
     end function c_error_message
  end interface

contains

  ! A C string as a Fortran one.
  function from_c(p) result(s)
    type(c_ptr), intent(in) :: p
    character(len=:), allocatable :: s
    character(kind=c_char), pointer :: c(:)
    integer :: n
    interface
       integer(c_size_t) function strlen(q) bind(c, name='strlen')
         import :: c_size_t, c_ptr
         type(c_ptr), value :: q
       end function strlen
    end interface
    if (.not. c_associated(p)) then
       s = ''
       return
    end if
    n = int(strlen(p))
    call c_f_pointer(p, c, [n])
    allocate(character(len=n) :: s)
    s = transfer(c(1:n), s)
  end function from_c

  function cdag_strerror(code) result(s)
    integer, intent(in) :: code
    character(len=:), allocatable :: s
    s = from_c(c_strerror(int(code, c_int)))
  end function cdag_strerror

  function cdag_error_message() result(s)
    character(len=:), allocatable :: s
    s = from_c(c_error_message())
  end function cdag_error_message

  ! The library's version, "MAJOR.MINOR.PATCH", and as CDAG_VERSION_NUMBER counts it.
  function cdag_version() result(s)
    character(len=:), allocatable :: s
    s = from_c(c_version())
  end function cdag_version

  integer function cdag_version_number()
    cdag_version_number = int(c_version_number())
  end function cdag_version_number

  ! ierror if given, else a non-zero code stops the program with cdag's message.
  subroutine finish(rc, ierror)
    integer(c_int), intent(in) :: rc
    integer, intent(out), optional :: ierror
    if (present(ierror)) then
       ierror = int(rc)
    else if (rc /= 0) then
       write (error_unit, '(a)') 'cdag: ' // cdag_strerror(int(rc)) // ': ' // cdag_error_message()
       error stop 1
    end if
  end subroutine finish

  subroutine give_op(id, op)
    integer(c_int64_t), intent(in) :: id
    integer(cdag_op_kind), intent(out), optional :: op
    if (present(op)) op = id
  end subroutine give_op

  subroutine cdag_graph_create(comm, g, ierror)
    type(MPI_Comm), intent(in) :: comm
    type(cdag_graph), intent(out) :: g
    integer, intent(out), optional :: ierror
    call finish(c_graph_create(int(comm%MPI_VAL, c_int), g%p), ierror)
  end subroutine cdag_graph_create

  subroutine cdag_send(g, buf, dest, tag, op, ierror)
    type(cdag_graph), intent(in) :: g
    type(*), dimension(..), intent(in), target :: buf
    integer, intent(in) :: dest, tag
    integer(cdag_op_kind), intent(out), optional :: op
    integer, intent(out), optional :: ierror
    integer(c_int64_t) :: id
    call finish(c_send(g%p, buf, int(dest, c_int), int(tag, c_int), id), ierror)
    call give_op(id, op)
  end subroutine cdag_send

  subroutine cdag_recv(g, buf, source, tag, op, ierror)
    type(cdag_graph), intent(in) :: g
    type(*), dimension(..), intent(in), target :: buf
    integer, intent(in) :: source, tag
    integer(cdag_op_kind), intent(out), optional :: op
    integer, intent(out), optional :: ierror
    integer(c_int64_t) :: id
    call finish(c_recv(g%p, buf, int(source, c_int), int(tag, c_int), id), ierror)
    call give_op(id, op)
  end subroutine cdag_recv

  subroutine cdag_send_type(g, buf, count, datatype, dest, tag, op, ierror)
    type(cdag_graph), intent(in) :: g
    type(*), dimension(..), intent(in), target :: buf
    integer, intent(in) :: count, dest, tag
    type(MPI_Datatype), intent(in) :: datatype
    integer(cdag_op_kind), intent(out), optional :: op
    integer, intent(out), optional :: ierror
    integer(c_int64_t) :: id
    call finish(c_send_type(g%p, buf, int(count, MPI_COUNT_KIND), int(datatype%MPI_VAL, c_int), int(dest, c_int), &
         int(tag, c_int), id), ierror)
    call give_op(id, op)
  end subroutine cdag_send_type

  subroutine cdag_recv_type(g, buf, count, datatype, source, tag, op, ierror)
    type(cdag_graph), intent(in) :: g
    type(*), dimension(..), intent(in), target :: buf
    integer, intent(in) :: count, source, tag
    type(MPI_Datatype), intent(in) :: datatype
    integer(cdag_op_kind), intent(out), optional :: op
    integer, intent(out), optional :: ierror
    integer(c_int64_t) :: id
    call finish(c_recv_type(g%p, buf, int(count, MPI_COUNT_KIND), int(datatype%MPI_VAL, c_int), int(source, c_int), &
         int(tag, c_int), id), ierror)
    call give_op(id, op)
  end subroutine cdag_recv_type

  ! inout = inout op in, elementwise; the element count is inout's size in datatype units.
  subroutine cdag_reduce_local(g, in, inout, datatype, operation, op, ierror)
    type(cdag_graph), intent(in) :: g
    type(*), dimension(..), intent(in), target :: in, inout
    type(MPI_Datatype), intent(in) :: datatype
    type(MPI_Op), intent(in) :: operation
    integer(cdag_op_kind), intent(out), optional :: op
    integer, intent(out), optional :: ierror
    integer(c_int64_t) :: id
    call finish(c_reduce_local(g%p, in, inout, int(datatype%MPI_VAL, c_int), int(operation%MPI_VAL, c_int), id), ierror)
    call give_op(id, op)
  end subroutine cdag_reduce_local

  subroutine cdag_copy_local(g, src, dst, op, ierror)
    type(cdag_graph), intent(in) :: g
    type(*), dimension(..), intent(in), target :: src, dst
    integer(cdag_op_kind), intent(out), optional :: op
    integer, intent(out), optional :: ierror
    integer(c_int64_t) :: id
    call finish(c_copy_local(g%p, src, dst, id), ierror)
    call give_op(id, op)
  end subroutine cdag_copy_local

  ! fn(arg) runs at this point of the rank's order each time the schedule runs: after what
  ! it reads (all of read) has arrived, before anything later touches read or write.
  subroutine cdag_compute(g, read, write, cost_ns, fn, arg, op, ierror)
    type(cdag_graph), intent(in) :: g
    type(*), dimension(..), intent(in), target :: read, write
    integer(c_int64_t), intent(in) :: cost_ns
    procedure(cdag_compute_fn) :: fn
    type(c_ptr), intent(in) :: arg
    integer(cdag_op_kind), intent(out), optional :: op
    integer, intent(out), optional :: ierror
    integer(c_int64_t) :: id
    call finish(c_compute(g%p, read, write, cost_ns, c_funloc(fn), arg, 0_c_int, id), ierror)
    call give_op(id, op)
  end subroutine cdag_compute

  ! C's read NULL, read_bytes CDAG_READS_ALL: reads every byte the rank wrote before it.
  subroutine cdag_compute_reads_all(g, write, cost_ns, fn, arg, op, ierror)
    type(cdag_graph), intent(in) :: g
    type(*), dimension(..), intent(in), target :: write
    integer(c_int64_t), intent(in) :: cost_ns
    procedure(cdag_compute_fn) :: fn
    type(c_ptr), intent(in) :: arg
    integer(cdag_op_kind), intent(out), optional :: op
    integer, intent(out), optional :: ierror
    integer(c_int64_t) :: id
    call finish(c_compute(g%p, write, write, cost_ns, c_funloc(fn), arg, 1_c_int, id), ierror)
    call give_op(id, op)
  end subroutine cdag_compute_reads_all

  subroutine cdag_scratch(g, buf, ierror)
    type(cdag_graph), intent(in) :: g
    type(*), dimension(..), intent(in), target :: buf
    integer, intent(out), optional :: ierror
    call finish(c_scratch(g%p, buf), ierror)
  end subroutine cdag_scratch

  subroutine cdag_depend(g, before, after, ierror)
    type(cdag_graph), intent(in) :: g
    integer(cdag_op_kind), intent(in) :: before, after
    integer, intent(out), optional :: ierror
    call finish(c_depend(g%p, before, after), ierror)
  end subroutine cdag_depend

  subroutine cdag_label(g, op, label, ierror)
    type(cdag_graph), intent(in) :: g
    integer(cdag_op_kind), intent(in) :: op
    character(len=*), intent(in) :: label
    integer, intent(out), optional :: ierror
    call finish(c_label(g%p, op, trim(label) // c_null_char), ierror)
  end subroutine cdag_label

  subroutine cdag_graph_free(g, ierror)
    type(cdag_graph), intent(inout) :: g
    integer, intent(out), optional :: ierror
    call finish(c_graph_free(g%p), ierror)
  end subroutine cdag_graph_free

  subroutine cdag_options_init(o)
    type(cdag_options), intent(out) :: o
    call c_options_init(o, c_sizeof(o))
  end subroutine cdag_options_init

  subroutine compile_options(g, options, s, ierror)
    type(cdag_graph), intent(in) :: g
    type(cdag_options), intent(in), target :: options
    type(cdag_schedule), intent(out) :: s
    integer, intent(out), optional :: ierror
    call finish(c_compile(g%p, c_loc(options), s%p), ierror)
  end subroutine compile_options

  subroutine compile_defaults(g, s, ierror)
    type(cdag_graph), intent(in) :: g
    type(cdag_schedule), intent(out) :: s
    integer, intent(out), optional :: ierror
    call finish(c_compile(g%p, c_null_ptr, s%p), ierror)
  end subroutine compile_defaults

  subroutine cdag_run(s, ierror)
    type(cdag_schedule), intent(in) :: s
    integer, intent(out), optional :: ierror
    call finish(c_schedule_call(s%p), ierror)
  end subroutine cdag_run

  subroutine cdag_start(s, ierror)
    type(cdag_schedule), intent(in) :: s
    integer, intent(out), optional :: ierror
    call finish(c_start(s%p), ierror)
  end subroutine cdag_start

  subroutine cdag_wait(s, ierror)
    type(cdag_schedule), intent(in) :: s
    integer, intent(out), optional :: ierror
    call finish(c_wait(s%p), ierror)
  end subroutine cdag_wait

  subroutine cdag_test(s, done, ierror)
    type(cdag_schedule), intent(in) :: s
    logical, intent(out) :: done
    integer, intent(out), optional :: ierror
    integer(c_int) :: d
    d = 0
    call finish(c_test(s%p, d), ierror)
    done = d /= 0
  end subroutine cdag_test

  ! The report (what was detected, what stayed point-to-point and why) on standard output.
  subroutine cdag_schedule_report(s, json, ierror)
    type(cdag_schedule), intent(in) :: s
    logical, intent(in), optional :: json
    integer, intent(out), optional :: ierror
    integer(c_int) :: j
    j = 0
    if (present(json)) then
       if (json) j = 1
    end if
    call finish(c_schedule_report(s%p, j), ierror)
  end subroutine cdag_schedule_report

  subroutine cdag_schedule_free(s, ierror)
    type(cdag_schedule), intent(inout) :: s
    integer, intent(out), optional :: ierror
    call finish(c_schedule_free(s%p), ierror)
  end subroutine cdag_schedule_free

  subroutine rebind_all(s, moves, copy, ierror)
    type(cdag_schedule), intent(in) :: s
    type(cdag_rebind), dimension(:), intent(in) :: moves
    type(cdag_schedule), intent(out) :: copy
    integer, intent(out), optional :: ierror
    call rebind_n(s, size(moves), moves, copy, ierror)
  end subroutine rebind_all

  ! n > size(moves) is CDAG_ERR_ARG on this rank, after the collective call (cdag_f.c).
  subroutine rebind_n(s, n, moves, copy, ierror)
    type(cdag_schedule), intent(in) :: s
    integer, intent(in) :: n
    type(cdag_rebind), dimension(:), intent(in) :: moves
    type(cdag_schedule), intent(out) :: copy
    integer, intent(out), optional :: ierror
    type(cdag_rebind) :: m(max(1, size(moves)))
    m(1:size(moves)) = moves
    call finish(c_f_schedule_rebind(s%p, int(n, c_int), int(size(moves), c_int), m, copy%p), ierror)
  end subroutine rebind_n

  ! src is read on the processes of `from`'s grid, dst written on those of `to`'s; elsewhere
  ! they may be omitted (C's NULL). An array smaller than the process's part of the matrix
  ! is CDAG_ERR_ARG (C cannot check it).
  subroutine cdag_redistribute(g, from, src, to, dst, elem_bytes, ierror)
    type(cdag_graph), intent(in) :: g
    type(cdag_layout), intent(in) :: from, to
    type(*), dimension(..), intent(in), target, optional :: src, dst
    integer, intent(in) :: elem_bytes
    integer, intent(out), optional :: ierror
    call finish(c_redistribute(g%p, from, src, to, dst, int(elem_bytes, c_int64_t)), ierror)
  end subroutine cdag_redistribute

  ! seg: the segment's number (its k-th call on every rank gives k, from 0).
  subroutine cdag_segment(g, base, seg, ierror)
    type(cdag_graph), intent(in) :: g
    type(*), dimension(..), intent(in), target :: base
    integer, intent(out) :: seg
    integer, intent(out), optional :: ierror
    integer(c_int) :: k
    k = -1
    call finish(c_segment(g%p, base, k), ierror)
    seg = int(k)
  end subroutine cdag_segment

  subroutine onesided(g, buf, put, target, seg, offset, op, ierror)
    type(cdag_graph), intent(in) :: g
    type(*), dimension(..), intent(in), target :: buf
    integer, intent(in) :: put, target, seg
    integer(c_int64_t), intent(in) :: offset
    integer(cdag_op_kind), intent(out), optional :: op
    integer, intent(out), optional :: ierror
    integer(c_int64_t) :: id
    id = CDAG_OP_NULL
    call finish(c_onesided(g%p, buf, int(put, c_int), int(target, c_int), int(seg, c_int), offset, id), ierror)
    call give_op(id, op)
  end subroutine onesided

  ! dst <- `size(dst)` bytes at byte `offset` of segment seg of rank target.
  subroutine get_i4(g, dst, target, seg, offset, op, ierror)
    type(cdag_graph), intent(in) :: g
    type(*), dimension(..), intent(in), target :: dst
    integer, intent(in) :: target, seg
    integer(4), intent(in) :: offset
    integer(cdag_op_kind), intent(out), optional :: op
    integer, intent(out), optional :: ierror
    call onesided(g, dst, 0, target, seg, int(offset, c_int64_t), op, ierror)
  end subroutine get_i4

  subroutine get_i8(g, dst, target, seg, offset, op, ierror)
    type(cdag_graph), intent(in) :: g
    type(*), dimension(..), intent(in), target :: dst
    integer, intent(in) :: target, seg
    integer(8), intent(in) :: offset
    integer(cdag_op_kind), intent(out), optional :: op
    integer, intent(out), optional :: ierror
    call onesided(g, dst, 0, target, seg, int(offset, c_int64_t), op, ierror)
  end subroutine get_i8

  ! src -> byte `offset` of segment seg of rank target.
  subroutine put_i4(g, src, target, seg, offset, op, ierror)
    type(cdag_graph), intent(in) :: g
    type(*), dimension(..), intent(in), target :: src
    integer, intent(in) :: target, seg
    integer(4), intent(in) :: offset
    integer(cdag_op_kind), intent(out), optional :: op
    integer, intent(out), optional :: ierror
    call onesided(g, src, 1, target, seg, int(offset, c_int64_t), op, ierror)
  end subroutine put_i4

  subroutine put_i8(g, src, target, seg, offset, op, ierror)
    type(cdag_graph), intent(in) :: g
    type(*), dimension(..), intent(in), target :: src
    integer, intent(in) :: target, seg
    integer(8), intent(in) :: offset
    integer(cdag_op_kind), intent(out), optional :: op
    integer, intent(out), optional :: ierror
    call onesided(g, src, 1, target, seg, int(offset, c_int64_t), op, ierror)
  end subroutine put_i8

  subroutine cdag_fence(g, ierror)
    type(cdag_graph), intent(in) :: g
    integer, intent(out), optional :: ierror
    call finish(c_fence(g%p), ierror)
  end subroutine cdag_fence

  ! Collective: rank 0 writes the whole graph to path as one global graph file (docs/format.md).
  subroutine cdag_graph_dump(g, path, ierror)
    type(cdag_graph), intent(in) :: g
    character(len=*), intent(in) :: path
    integer, intent(out), optional :: ierror
    call finish(c_graph_dump(g%p, trim(path) // c_null_char), ierror)
  end subroutine cdag_graph_dump

  subroutine cdag_graph_info(g, nprocs, nops, ierror)
    type(cdag_graph), intent(in) :: g
    integer, intent(out), optional :: nprocs
    integer(c_int64_t), intent(out), optional :: nops
    integer, intent(out), optional :: ierror
    integer(c_int) :: np
    integer(c_int64_t) :: no
    np = 0
    no = 0
    call finish(c_graph_info(g%p, np, no), ierror)
    if (present(nprocs)) nprocs = int(np)
    if (present(nops)) nops = no
  end subroutine cdag_graph_info

end module cdag
