! waits_mini.f90 - examples/waits_mini.c in Fortran (use mpi): waiting made on purpose, each
! wait-state pattern once a round, the late process sleeping D before its part; the known
! answers of the wait-state analysis for a Fortran program. Each round begins, after its first
! barrier, with the same exchange between neighbours (messages both ways, for hclock align).
!
!   mpif90 -o waits_mini_f waits_mini.f90
!   mpirun -np 4 waits_mini_f [D_MS [ROUNDS]]      (4 ranks or more; default 50 ms, 2 rounds)
program waits_mini
  use mpi
  implicit none
  integer :: rank, nproc, ierr, x, y, round, rounds, q
  double precision :: d
  character(len=32) :: arg

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nproc, ierr)
  d = 50
  rounds = 2
  if (command_argument_count() >= 1) then
    call get_command_argument(1, arg)
    read (arg, *) d
  end if
  if (command_argument_count() >= 2) then
    call get_command_argument(2, arg)
    read (arg, *) rounds
  end if
  if (nproc < 4 .or. d <= 0 .or. rounds < 1) then
    if (rank == 0) write (0, '(a)') 'waits_mini_f: needs 4 ranks or more, D_MS > 0 and ' // &
      'ROUNDS >= 1; e.g. mpirun -np 4 waits_mini_f 50 2'
    call MPI_Finalize(ierr)
    stop 2
  end if
  x = rank
  do round = 1, rounds
    ! late sender: blocking, and through MPI_Irecv + MPI_Wait
    call MPI_Barrier(MPI_COMM_WORLD, ierr)
    call exchange()
    if (rank == 1) then
      call nap(d)
      call MPI_Send(x, 1, MPI_INTEGER, 0, 1, MPI_COMM_WORLD, ierr)
    else if (rank == 0) then
      call MPI_Recv(y, 1, MPI_INTEGER, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
    else if (rank == 3) then
      call nap(d)
      call MPI_Send(x, 1, MPI_INTEGER, 2, 2, MPI_COMM_WORLD, ierr)
    else if (rank == 2) then
      call MPI_Irecv(y, 1, MPI_INTEGER, 3, 2, MPI_COMM_WORLD, q, ierr)
      call MPI_Wait(q, MPI_STATUS_IGNORE, ierr)
    end if
    ! late receiver
    call MPI_Barrier(MPI_COMM_WORLD, ierr)
    if (rank == 0) then
      call MPI_Ssend(x, 1, MPI_INTEGER, 1, 3, MPI_COMM_WORLD, ierr)
    else if (rank == 1) then
      call nap(d)
      call MPI_Recv(y, 1, MPI_INTEGER, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
    end if
    ! wait at N x N, blocking and nonblocking
    call MPI_Barrier(MPI_COMM_WORLD, ierr)
    if (rank == 2) call nap(d)
    call MPI_Allreduce(x, y, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
    call MPI_Barrier(MPI_COMM_WORLD, ierr)
    if (rank == 3) call nap(d)
    call MPI_Iallreduce(x, y, 1, MPI_INTEGER, MPI_MAX, MPI_COMM_WORLD, q, ierr)
    call MPI_Wait(q, MPI_STATUS_IGNORE, ierr)
    ! wait at barrier
    call MPI_Barrier(MPI_COMM_WORLD, ierr)
    if (rank == 3) call nap(d)
    call MPI_Barrier(MPI_COMM_WORLD, ierr)
    ! late broadcast
    if (rank == 0) call nap(d)
    call MPI_Bcast(x, 1, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
    ! early reduce
    call MPI_Barrier(MPI_COMM_WORLD, ierr)
    if (rank /= 0) call nap(d)
    call MPI_Reduce(x, y, 1, MPI_INTEGER, MPI_SUM, 0, MPI_COMM_WORLD, ierr)
    ! wrong order
    call MPI_Barrier(MPI_COMM_WORLD, ierr)
    if (rank == 2) then
      call MPI_Send(x, 1, MPI_INTEGER, 0, 4, MPI_COMM_WORLD, ierr)
    else if (rank == 1) then
      call nap(d)
      call MPI_Send(x, 1, MPI_INTEGER, 0, 4, MPI_COMM_WORLD, ierr)
    else if (rank == 0) then
      call MPI_Recv(y, 1, MPI_INTEGER, 1, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
      call MPI_Recv(y, 1, MPI_INTEGER, 2, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
    end if
  end do
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  if (rank == 0) write (*, '(a,i0,a,f0.3,a)') 'waits_mini: ', rounds, ' rounds of ', d, ' ms'
  call MPI_Finalize(ierr)

contains

  ! messages both ways with rank - 1 and rank + 1: the even ranks with the next first, then
  ! the odd ones with theirs
  subroutine exchange()
    integer :: step, peer, z
    do step = 0, 1
      if (mod(rank, 2) == step) then
        peer = rank + 1
      else
        peer = rank - 1
      end if
      if (peer >= 0 .and. peer < nproc) call MPI_Sendrecv(x, 1, MPI_INTEGER, peer, 100, z, &
        1, MPI_INTEGER, peer, 100, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
    end do
  end subroutine exchange

  ! sleeps ms milliseconds (the core given away a millisecond at a time)
  subroutine nap(ms)
    use iso_c_binding, only: c_int
    double precision, intent(in) :: ms
    interface
      integer(c_int) function usleep(us) bind(c, name='usleep')
        import :: c_int
        integer(c_int), value :: us
      end function usleep
    end interface
    integer(8) :: t0, t, rate
    integer :: rc
    call system_clock(t0, rate)
    do
      call system_clock(t)
      if (dble(t - t0) * 1000 / dble(rate) >= ms) exit
      rc = usleep(1000_c_int)
    end do
  end subroutine nap
end program waits_mini
