! allreduce_mini.f90 - the Fortran twin of allreduce_mini.c's core: what hclock trace
! sees of a Fortran MPI program. Each iteration: one 8-byte MPI_Allreduce (a sum) and
! one MPI_Sendrecv with both ring neighbours. Rank 0 prints one checksum line that depends
! only on the arithmetic.
!
!   mpirun -np P allreduce_mini_f [ITERATIONS]
!
! The tracer records its calls once each and pairs its messages, under Open MPI (whose
! Fortran bindings it wraps) and MPICH (whose bindings call the C MPI_ functions):
! tests/trace/trace_test.py, case fortran, with examples/fortran_mini.F90.
program allreduce_mini_f
  use mpi
  implicit none
  integer :: ierr, rank, nproc, it, iters, left, right
  integer :: status(MPI_STATUS_SIZE)
  double precision :: x, total, sum, got
  character(len=32) :: arg

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nproc, ierr)
  iters = 50
  if (command_argument_count() >= 1) then
    call get_command_argument(1, arg)
    read (arg, *) iters
  end if
  left = mod(rank + nproc - 1, nproc)
  right = mod(rank + 1, nproc)
  sum = 0d0
  do it = 1, iters
    x = dble(rank + 1) * dble(it)
    call MPI_Allreduce(x, total, 1, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
    call MPI_Sendrecv(x, 1, MPI_DOUBLE_PRECISION, right, 7, got, 1, MPI_DOUBLE_PRECISION, &
                      left, 7, MPI_COMM_WORLD, status, ierr)
    sum = sum + total + got
  end do
  call MPI_Allreduce(sum, total, 1, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (rank == 0) write (*, '(a, i0, a, f0.1)') 'allreduce_mini_f: ', iters, &
    ' iterations, checksum ', total
  call MPI_Finalize(ierr)
end program allreduce_mini_f
