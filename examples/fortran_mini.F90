! fortran_mini.F90 - what hclock trace records of a Fortran MPI program, in the three ways
! Fortran calls MPI: compiled with -DSTYLE=1 (include 'mpif.h'), -DSTYLE=2 (use mpi) or
! -DSTYLE=3 (use mpi_f08). Ranks in pairs (0-1, 2-3, ...); each iteration, with its partner:
! MPI_Send/MPI_Recv both ways (one receive with a status, one with MPI_STATUS_IGNORE);
! MPI_Irecv + MPI_Isend completed by MPI_Waitall(MPI_STATUSES_IGNORE), by two MPI_Wait and
! by MPI_Test on the send (until done) + MPI_Waitany; MPI_Sendrecv; then MPI_Allreduce and MPI_Bcast on
! MPI_COMM_WORLD. At the end MPI_Barrier and one more MPI_Allreduce. Rank 0 prints one
! checksum line that depends only on the arithmetic; every rank prints its MPI_Test count on
! stderr ("fortran_mini: rank R tests N"), the one count that depends on timing.
!
!   mpif90 -cpp -DSTYLE=3 -o fortran_mini fortran_mini.F90
!   mpirun -np 2 fortran_mini [ITERATIONS]
!
! tests/trace/trace_test.py (case fortran) checks that the tracer records every call once
! and pairs every message, under Open MPI and MPICH.
program fortran_mini
#if STYLE == 3
  use mpi_f08
#elif STYLE == 2
  use mpi
#endif
  implicit none
#if STYLE == 1
  include 'mpif.h'
#endif
#if STYLE == 3
  type(MPI_Request) :: req(2)
  type(MPI_Status) :: st
#define SOURCE_OF(s) s%MPI_SOURCE
#else
  integer :: req(2)
  integer :: st(MPI_STATUS_SIZE)
#define SOURCE_OF(s) s(MPI_SOURCE)
#endif
  integer :: ierr, rank, nproc, peer, it, iters, tests, idx, bad
  logical :: flag
  double precision :: x(1), y(1), z(1), s, v(2), w(2)  ! arrays: mpif.h has no interfaces
  character(len=32) :: arg

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nproc, ierr)
  iters = 20
  if (command_argument_count() >= 1) then
    call get_command_argument(1, arg)
    read (arg, *) iters
  end if
  peer = ieor(rank, 1)
  if (peer >= nproc) peer = MPI_PROC_NULL
  s = 0d0
  tests = 0
  bad = 0
  y = 0d0
  do it = 1, iters
    x = dble(rank * 1000 + it)
    if (rank < peer) then
      call MPI_Send(x, 1, MPI_DOUBLE_PRECISION, peer, 1, MPI_COMM_WORLD, ierr)
      call MPI_Recv(y, 1, MPI_DOUBLE_PRECISION, peer, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
    else
      call MPI_Recv(y, 1, MPI_DOUBLE_PRECISION, peer, 1, MPI_COMM_WORLD, st, ierr)
      if (peer /= MPI_PROC_NULL .and. SOURCE_OF(st) /= peer) bad = bad + 1
      call MPI_Send(x, 1, MPI_DOUBLE_PRECISION, peer, 2, MPI_COMM_WORLD, ierr)
    end if
    s = s + y(1)
    call MPI_Irecv(y, 1, MPI_DOUBLE_PRECISION, peer, 3, MPI_COMM_WORLD, req(1), ierr)
    call MPI_Isend(x, 1, MPI_DOUBLE_PRECISION, peer, 3, MPI_COMM_WORLD, req(2), ierr)
    call MPI_Waitall(2, req, MPI_STATUSES_IGNORE, ierr)
    s = s + 2 * y(1)
    call MPI_Irecv(y, 1, MPI_DOUBLE_PRECISION, peer, 4, MPI_COMM_WORLD, req(1), ierr)
    call MPI_Isend(x, 1, MPI_DOUBLE_PRECISION, peer, 4, MPI_COMM_WORLD, req(2), ierr)
    call MPI_Wait(req(1), st, ierr)
    call MPI_Wait(req(2), MPI_STATUS_IGNORE, ierr)
    s = s + 3 * y(1)
    call MPI_Irecv(y, 1, MPI_DOUBLE_PRECISION, peer, 5, MPI_COMM_WORLD, req(1), ierr)
    call MPI_Isend(x, 1, MPI_DOUBLE_PRECISION, peer, 5, MPI_COMM_WORLD, req(2), ierr)
    flag = .false.
    do while (.not. flag)
      call MPI_Test(req(2), flag, MPI_STATUS_IGNORE, ierr)
      tests = tests + 1
    end do
    call MPI_Waitany(2, req, idx, st, ierr)
    if (req(1) /= MPI_REQUEST_NULL) bad = bad + 1  ! (MPICH 4.0's mpi_f08 returns idx 0)
    s = s + 4 * y(1)
    call MPI_Sendrecv(x, 1, MPI_DOUBLE_PRECISION, peer, 6, y, 1, MPI_DOUBLE_PRECISION, peer, 6, &
                      MPI_COMM_WORLD, st, ierr)
    s = s + 5 * y(1)
    call MPI_Allreduce(x, z, 1, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
    call MPI_Bcast(z, 1, MPI_DOUBLE_PRECISION, 0, MPI_COMM_WORLD, ierr)
    s = s + z(1)
  end do
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  v = (/ s, dble(bad) /)
  call MPI_Allreduce(v, w, 2, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
  write (0, '(a, i0, a, i0)') 'fortran_mini: rank ', rank, ' tests ', tests
  if (rank == 0) write (*, '(a, i0, a, f0.1, a, i0)') 'fortran_mini: ', iters, &
    ' iterations, checksum ', w(1), ', errors ', nint(w(2))
  call MPI_Finalize(ierr)
end program fortran_mini
