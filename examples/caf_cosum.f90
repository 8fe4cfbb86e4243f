! cdag example in Fortran — the Coarray Fortran co_sum of the paper (reflog), written with
! module cdag: a binomial-tree reduction to image 1 (rank 0) with local sums through a
! scratch buffer, then a binomial-tree broadcast of the result. cdag finds the allreduce
! in it (3 images or more). The program checks r = sum of x over images, compares the
! compiled schedule with the graph run as written, and prints both times per iteration.
! Usage: mpiexec -n 4 ./caf_cosum [iterations] [elements]
program caf_cosum
  use mpi_f08
  use cdag
  implicit none
  integer :: rank, nprocs, iters, n, it, detect, bad
  character(len=32) :: arg
  integer(8), allocatable, target :: x(:), r(:), tmp(:)
  type(cdag_graph) :: g
  type(cdag_schedule) :: s
  type(cdag_options) :: o
  double precision :: t0, per(0:1)

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs)
  iters = 10
  n = 1024
  if (command_argument_count() >= 1) then
     call get_command_argument(1, arg)
     read (arg, *) iters
  end if
  if (command_argument_count() >= 2) then
     call get_command_argument(2, arg)
     read (arg, *) n
  end if
  allocate(x(n), r(n), tmp(n))
  bad = 0
  do detect = 0, 1
     call cdag_graph_create(MPI_COMM_WORLD, g)
     call reflog(g)
     call cdag_options_init(o)
     o%detect = detect
     call cdag_compile(g, o, s)
     call cdag_graph_free(g)
     if (detect == 1 .and. rank == 0) call cdag_schedule_report(s)
     call MPI_Barrier(MPI_COMM_WORLD)
     t0 = MPI_Wtime()
     do it = 1, iters
        call fill(it)
        call cdag_run(s)
        call check(it)
     end do
     per(detect) = (MPI_Wtime() - t0) / iters
     call cdag_schedule_free(s)
  end do
  call MPI_Allreduce(MPI_IN_PLACE, bad, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  if (rank == 0) then
     write (*, '(a,i0,a,i0,a,f10.2,a,f10.2,a)') 'caf_cosum: ', nprocs, ' images, ', n, ' int64: as written ', &
          per(0) * 1e6, ' us, compiled ', per(1) * 1e6, ' us per iteration'
     if (bad == 0) then
        write (*, '(a)') 'caf_cosum: OK'
     else
        write (*, '(a,i0,a)') 'caf_cosum: FAILED (', bad, ' wrong elements)'
     end if
  end if
  call MPI_Finalize()
  if (bad /= 0) error stop 1

contains

  subroutine reflog(g)
    type(cdag_graph), intent(in) :: g
    integer :: mask
    call cdag_scratch(g, tmp)
    call cdag_copy_local(g, x, r)
    mask = 1
    do while (mask < nprocs)          ! reduce up the binomial tree
       if (iand(rank, mask) /= 0) then
          call cdag_send(g, r, rank - mask, 1)
          exit
       else if (rank + mask < nprocs) then
          call cdag_recv(g, tmp, rank + mask, 1)
          call cdag_reduce_local(g, tmp, r, MPI_INTEGER8, MPI_SUM)
       end if
       mask = mask * 2
    end do
    mask = 1
    do while (mask < nprocs)          ! broadcast down it
       if (iand(rank, mask) /= 0) then
          call cdag_recv(g, r, rank - mask, 2)
          exit
       end if
       mask = mask * 2
    end do
    mask = mask / 2
    do while (mask > 0)
       if (rank + mask < nprocs) call cdag_send(g, r, rank + mask, 2)
       mask = mask / 2
    end do
  end subroutine reflog

  subroutine fill(it)
    integer, intent(in) :: it
    integer :: k
    do k = 1, n
       x(k) = int(it, 8) * 1000003_8 + int(rank, 8) * 7919_8 + k
    end do
    r = -1
  end subroutine fill

  subroutine check(it)
    integer, intent(in) :: it
    integer :: k
    integer(8) :: want
    do k = 1, n
       want = int(nprocs, 8) * (int(it, 8) * 1000003_8 + k) + 7919_8 * int(nprocs, 8) * int(nprocs - 1, 8) / 2
       if (r(k) /= want) bad = bad + 1
    end do
  end subroutine check

end program caf_cosum
