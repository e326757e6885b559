! trace_cost_f.F90 - trace_cost.c's twin in Fortran: what hclock trace costs a Fortran program
! (bench/trace --fortran STYLE builds it with -DSTYLE=1 include 'mpif.h', 2 use mpi, 3 use
! mpi_f08, runs it with and without the tracer and subtracts).
!
!   mpirun -np 2 trace_cost_f [CALLS [ALLREDUCES]]
!
! 1. CALLS times MPI_Comm_rank, each call timed alone with system_clock (ns) around it;
! 2. ALLREDUCES 8 B MPI_Allreduce, timed in chunks of 1000.
! Rank 0 prints one JSON line: {"call_median_ns", "call_p99_ns", "allreduce_ns"} (medians
! and p99 from a histogram of 1 ns bins up to 100 us).
program trace_cost_f
#if STYLE == 3
  use mpi_f08
#elif STYLE == 2
  use mpi
#endif
  implicit none
#if STYLE == 1
  include 'mpif.h'
#endif
  integer, parameter :: i8 = selected_int_kind(18), NB = 100000
  integer(i8) :: t0, t1, hist(0:NB), hist2(0:NB)
  integer :: ierr, rank, r, k
  integer(i8) :: i, calls, ars, nc
  double precision :: x(1), y(1)
  character(len=32) :: arg

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  calls = 200000
  ars = 100000
  if (command_argument_count() >= 1) then
    call get_command_argument(1, arg)
    read (arg, *) calls
  end if
  if (command_argument_count() >= 2) then
    call get_command_argument(2, arg)
    read (arg, *) ars
  end if
  hist = 0
  do i = 1, calls
    call system_clock(t0)
    call MPI_Comm_rank(MPI_COMM_WORLD, r, ierr)
    call system_clock(t1)
    hist(min(t1 - t0, int(NB, i8))) = hist(min(t1 - t0, int(NB, i8))) + 1
  end do
  x = dble(rank)
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  hist2 = 0
  nc = 0
  do i = 1, ars / 1000
    call system_clock(t0)
    do k = 1, 1000
      call MPI_Allreduce(x, y, 1, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
    end do
    call system_clock(t1)
    hist2(min((t1 - t0) / 1000, int(NB, i8))) = hist2(min((t1 - t0) / 1000, int(NB, i8))) + 1
    nc = nc + 1
  end do
  if (rank == 0) write (*, '(a, i0, a, i0, a, i0, a)') '{"call_median_ns": ', &
    quantile(hist, calls, 50), ', "call_p99_ns": ', quantile(hist, calls, 99), &
    ', "allreduce_ns": ', quantile(hist2, nc, 50), '}'
  call MPI_Finalize(ierr)
contains
  ! the bin of the pct-th percentile of n values counted in h (trace_cost.c's d[n*pct/100])
  integer(i8) function quantile(h, n, pct)
    integer(i8), intent(in) :: h(0:NB), n
    integer, intent(in) :: pct
    integer(i8) :: c, want
    want = n * pct / 100 + 1
    c = 0
    do quantile = 0, NB
      c = c + h(quantile)
      if (c >= want) return
    end do
    quantile = NB
  end function quantile
end program trace_cost_f
