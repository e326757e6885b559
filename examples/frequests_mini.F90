! frequests_mini.F90 - the requests hclock trace follows, from Fortran: compiled with
! -DSTYLE=1 (include 'mpif.h'), -DSTYLE=2 (use mpi) or -DSTYLE=3 (use mpi_f08). Ranks in
! pairs (0-1, 2-3, ...; an odd last rank has no partner). Before the loop: two persistent
! sends (MPI_Send_init, MPI_Ssend_init) and two persistent receives (MPI_Recv_init) with the
! partner. Each iteration:
!   - MPI_Startall of the four, completed by a MPI_Waitsome loop (odd iterations) or a
!     MPI_Testall loop (even ones);
!   - two messages by MPI_Isend (tags 10, 11; both sends completed by a MPI_Testany loop),
!     received by MPI_Mprobe + MPI_Mrecv and by a MPI_Improbe loop + MPI_Imrecv + MPI_Wait;
!   - MPI_Iallreduce and MPI_Ibarrier completed by one MPI_Waitall.
! Then once: MPI_Comm_split and MPI_Comm_dup of MPI_COMM_WORLD, MPI_Allreduce on the split
! one, MPI_Gather on the duplicate (root 0 with MPI_IN_PLACE and a send count of 0, which
! MPI ignores there), MPI_Alltoallv on MPI_COMM_WORLD (one double to each rank), MPI_Ireduce
! completed by MPI_Wait, a send by MPI_Isend + MPI_Request_free received by MPI_Recv, the
! persistent requests freed, MPI_Comm_free of both. Every received value is checked; rank 0
! prints one line (the same traced and untraced); every rank prints on stderr how often it
! called each polling function: "frequests_mini: rank R waitsome W testall T improbe I
! testany A".
!
!   mpif90 -cpp -DSTYLE=1 -o frequests_mini frequests_mini.F90
!   mpirun -np 2 frequests_mini [ITERATIONS]
program frequests_mini
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
  type(MPI_Request) :: preq(4), sreq(2), creq(2), req
  type(MPI_Status) :: st
  type(MPI_Message) :: msg
  type(MPI_Comm) :: split, dup
#else
  integer :: preq(4), sreq(2), creq(2), req
  integer :: st(MPI_STATUS_SIZE)
  integer :: msg, split, dup
#endif
  integer :: ierr, rank, nproc, peer, it, iters, i, outcount, idx, bad
  integer :: nwaitsome, ntestall, nimprobe, ntestany, ndone
  integer :: indices(4)
  integer, allocatable :: counts(:), displs(:)
  logical :: flag
  double precision :: sb(2), rb(2), m10(1), m11(1), x(1), y(1), g(64), one(1)
  double precision, allocatable :: a2a_s(:), a2a_r(:)
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
  bad = 0
  nwaitsome = 0
  ntestall = 0
  nimprobe = 0
  ntestany = 0
  call MPI_Send_init(sb(1), 1, MPI_DOUBLE_PRECISION, peer, 1, MPI_COMM_WORLD, preq(1), ierr)
  call MPI_Ssend_init(sb(2), 1, MPI_DOUBLE_PRECISION, peer, 2, MPI_COMM_WORLD, preq(2), ierr)
  call MPI_Recv_init(rb(1), 1, MPI_DOUBLE_PRECISION, peer, 1, MPI_COMM_WORLD, preq(3), ierr)
  call MPI_Recv_init(rb(2), 1, MPI_DOUBLE_PRECISION, peer, 2, MPI_COMM_WORLD, preq(4), ierr)
  do it = 1, iters
    sb = (/ dble(rank * 100 + it), dble(rank * 100 + it + 50) /)
    call MPI_Startall(4, preq, ierr)
    if (mod(it, 2) == 1) then
      ndone = 0
      do while (ndone < 4)
        call MPI_Waitsome(4, preq, outcount, indices, MPI_STATUSES_IGNORE, ierr)
        nwaitsome = nwaitsome + 1
        if (outcount == MPI_UNDEFINED) exit
        ndone = ndone + outcount
      end do
    else
      flag = .false.
      do while (.not. flag)
        call MPI_Testall(4, preq, flag, MPI_STATUSES_IGNORE, ierr)
        ntestall = ntestall + 1
      end do
    end if
    if (peer /= MPI_PROC_NULL) then
      if (rb(1) /= dble(peer * 100 + it) .or. rb(2) /= dble(peer * 100 + it + 50)) bad = bad + 1
    end if
    ! two messages received by matched probes
    x = dble(rank + it)
    call MPI_Isend(x, 1, MPI_DOUBLE_PRECISION, peer, 10, MPI_COMM_WORLD, sreq(1), ierr)
    call MPI_Isend(x, 1, MPI_DOUBLE_PRECISION, peer, 11, MPI_COMM_WORLD, sreq(2), ierr)
    if (peer /= MPI_PROC_NULL) then
      call MPI_Mprobe(peer, 10, MPI_COMM_WORLD, msg, st, ierr)
      call MPI_Mrecv(m10, 1, MPI_DOUBLE_PRECISION, msg, MPI_STATUS_IGNORE, ierr)
      flag = .false.
      do while (.not. flag)
        call MPI_Improbe(peer, 11, MPI_COMM_WORLD, flag, msg, st, ierr)
        nimprobe = nimprobe + 1
      end do
      call MPI_Imrecv(m11, 1, MPI_DOUBLE_PRECISION, msg, req, ierr)
      call MPI_Wait(req, st, ierr)
      if (m10(1) /= dble(peer + it) .or. m11(1) /= dble(peer + it)) bad = bad + 1
    end if
    ndone = 0
    do while (ndone < 2)
      call MPI_Testany(2, sreq, idx, flag, MPI_STATUS_IGNORE, ierr)
      ntestany = ntestany + 1
      if (flag .and. idx == MPI_UNDEFINED) exit  ! no active request left
      if (flag) ndone = ndone + 1
    end do
    call MPI_Iallreduce(x, y, 1, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, creq(1), ierr)
    call MPI_Ibarrier(MPI_COMM_WORLD, creq(2), ierr)
    call MPI_Waitall(2, creq, MPI_STATUSES_IGNORE, ierr)
    if (y(1) /= dble(nproc * it + nproc * (nproc - 1) / 2)) bad = bad + 1
  end do
  ! once
  call MPI_Comm_split(MPI_COMM_WORLD, 0, rank, split, ierr)
  call MPI_Comm_dup(MPI_COMM_WORLD, dup, ierr)
  one = 1d0
  call MPI_Allreduce(one, y, 1, MPI_DOUBLE_PRECISION, MPI_SUM, split, ierr)
  if (y(1) /= dble(nproc)) bad = bad + 1
  g = 0d0
  g(rank + 1) = dble(rank)
  if (rank == 0) then
    call MPI_Gather(MPI_IN_PLACE, 0, MPI_DOUBLE_PRECISION, g, 1, MPI_DOUBLE_PRECISION, 0, &
                    dup, ierr)
    do i = 1, min(nproc, 64)
      if (g(i) /= dble(i - 1)) bad = bad + 1
    end do
  else
    call MPI_Gather(g(rank + 1), 1, MPI_DOUBLE_PRECISION, g, 1, MPI_DOUBLE_PRECISION, 0, &
                    dup, ierr)
  end if
  allocate (counts(nproc), displs(nproc), a2a_s(nproc), a2a_r(nproc))
  counts = 1
  displs = (/ (i, i = 0, nproc - 1) /)
  a2a_s = dble(rank)
  call MPI_Alltoallv(a2a_s, counts, displs, MPI_DOUBLE_PRECISION, a2a_r, counts, displs, &
                     MPI_DOUBLE_PRECISION, MPI_COMM_WORLD, ierr)
  do i = 1, nproc
    if (a2a_r(i) /= dble(i - 1)) bad = bad + 1
  end do
  call MPI_Ireduce(one, y, 1, MPI_DOUBLE_PRECISION, MPI_SUM, 0, MPI_COMM_WORLD, req, ierr)
  call MPI_Wait(req, MPI_STATUS_IGNORE, ierr)
  if (rank == 0 .and. y(1) /= dble(nproc)) bad = bad + 1
  x = dble(rank + 7)
  call MPI_Isend(x, 1, MPI_DOUBLE_PRECISION, peer, 12, MPI_COMM_WORLD, req, ierr)
  call MPI_Request_free(req, ierr)
  call MPI_Recv(m10, 1, MPI_DOUBLE_PRECISION, peer, 12, MPI_COMM_WORLD, st, ierr)
  if (peer /= MPI_PROC_NULL .and. m10(1) /= dble(peer + 7)) bad = bad + 1
  do i = 1, 4
    call MPI_Request_free(preq(i), ierr)
  end do
  call MPI_Comm_free(split, ierr)
  call MPI_Comm_free(dup, ierr)
  x = dble(bad)
  call MPI_Allreduce(x, y, 1, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
  write (0, '(a, i0, a, i0, a, i0, a, i0, a, i0)') 'frequests_mini: rank ', rank, &
    ' waitsome ', nwaitsome, ' testall ', ntestall, ' improbe ', nimprobe, ' testany ', ntestany
  if (rank == 0) write (*, '(a, i0, a, i0, a)') 'frequests_mini: ', iters, &
    ' iterations, ', nint(y(1)), ' wrong values'
  call MPI_Finalize(ierr)
  if (nint(y(1)) /= 0) stop 1
end program frequests_mini
