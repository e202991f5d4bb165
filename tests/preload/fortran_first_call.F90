! No first-call deadlock for a Fortran program (docs/design.md), on a communicator made by each
! of MPI's constructors: MPI_COMM_DUP, MPI_COMM_DUP_WITH_INFO, MPI_COMM_SPLIT,
! MPI_COMM_SPLIT_TYPE, MPI_COMM_CREATE, MPI_COMM_CREATE_GROUP, MPI_CART_CREATE, MPI_CART_SUB,
! MPI_GRAPH_CREATE, MPI_DIST_GRAPH_CREATE_ADJACENT, MPI_DIST_GRAPH_CREATE and
! MPI_INTERCOMM_MERGE, each with every rank of MPI_COMM_WORLD. On each fresh communicator rank
! r > 0 first receives a token from rank r - 1 (synchronously sent), then starts
! MPI_IALLTOALLV; every rank passes the token on after its start, then waits. A start that
! waited for the other ranks would hang here. Then one MPI_ALLTOALLV and one MPI_ALLTOALL on
! MPI_COMM_WORLD. Built as fortran_alltoall.F90 is: mpif.h, `use mpi` (-DUSE_MPI),
! `use mpi_f08` (-DUSE_MPI_F08). Needs 2 ranks or more; rank 0 prints " No Errors".
#if defined(USE_MPI_F08)
#define COMM_T type(MPI_Comm)
#define GROUP_T type(MPI_Group)
#define REQUEST_T type(MPI_Request)
#else
#define COMM_T integer
#define GROUP_T integer
#define REQUEST_T integer
#endif
program fortran_first_call
#if defined(USE_MPI_F08)
  use mpi_f08
#elif defined(USE_MPI)
  use mpi
#endif
  implicit none
#if !defined(USE_MPI_F08) && !defined(USE_MPI)
  include 'mpif.h'
#endif
  integer :: rank, nranks, ierr, errors, total, next, prev, half
  integer :: dims(1), graph_index(1:64), edges(1:64), one(1), degree(1), dest(1)
  logical :: periods(1), remain(1)
  COMM_T :: made, cart, halves, inter
  GROUP_T :: everyone

  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  call MPI_COMM_SIZE(MPI_COMM_WORLD, nranks, ierr)
  next = mod(rank + 1, nranks)
  prev = mod(rank + nranks - 1, nranks)
  errors = 0

  call MPI_COMM_DUP(MPI_COMM_WORLD, made, ierr)
  call chain(made, errors)
  call MPI_COMM_DUP_WITH_INFO(MPI_COMM_WORLD, MPI_INFO_NULL, made, ierr)
  call chain(made, errors)
  call MPI_COMM_SPLIT(MPI_COMM_WORLD, 0, rank, made, ierr)
  call chain(made, errors)
  call MPI_COMM_SPLIT_TYPE(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, made, ierr)
  call chain(made, errors)
  call MPI_COMM_GROUP(MPI_COMM_WORLD, everyone, ierr)
  call MPI_COMM_CREATE(MPI_COMM_WORLD, everyone, made, ierr)
  call chain(made, errors)
  call MPI_COMM_CREATE_GROUP(MPI_COMM_WORLD, everyone, 5, made, ierr)
  call chain(made, errors)
  call MPI_GROUP_FREE(everyone, ierr)
  dims(1) = nranks
  periods(1) = .true.
  call MPI_CART_CREATE(MPI_COMM_WORLD, 1, dims, periods, .false., cart, ierr)
  remain(1) = .true.
  call MPI_CART_SUB(cart, remain, made, ierr)
  call chain(made, errors)
  call MPI_COMM_FREE(cart, ierr)
  ! A ring: node i's neighbours are i - 1 and i + 1.
  do half = 1, nranks
    graph_index(half) = 2 * half
    edges(2 * half - 1) = mod(half - 2 + nranks, nranks)
    edges(2 * half) = mod(half, nranks)
  end do
  call MPI_GRAPH_CREATE(MPI_COMM_WORLD, nranks, graph_index, edges, .false., made, ierr)
  call chain(made, errors)
  one(1) = prev
  dest(1) = next
  call MPI_DIST_GRAPH_CREATE_ADJACENT(MPI_COMM_WORLD, 1, one, MPI_UNWEIGHTED, 1, dest, &
                                      MPI_UNWEIGHTED, MPI_INFO_NULL, .false., made, ierr)
  call chain(made, errors)
  one(1) = rank
  degree(1) = 1
  call MPI_DIST_GRAPH_CREATE(MPI_COMM_WORLD, 1, one, degree, dest, MPI_UNWEIGHTED, &
                             MPI_INFO_NULL, .false., made, ierr)
  call chain(made, errors)
  ! Even and odd ranks, joined by an intercommunicator, merged again (odd ranks high).
  half = mod(rank, 2)
  call MPI_COMM_SPLIT(MPI_COMM_WORLD, half, rank, halves, ierr)
  call MPI_INTERCOMM_CREATE(halves, 0, MPI_COMM_WORLD, 1 - half, 9, inter, ierr)
  call MPI_INTERCOMM_MERGE(inter, half == 1, made, ierr)
  call chain(made, errors)
  call MPI_COMM_FREE(inter, ierr)
  call MPI_COMM_FREE(halves, ierr)

  call on_world(errors)
  call MPI_ALLREDUCE(errors, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (rank == 0 .and. total == 0) print *, 'No Errors'
  call MPI_FINALIZE(ierr)
  if (total /= 0) stop 1

contains

  ! The token chain around MPI_IALLTOALLV on `comm`, which it frees before the wait (the exchange
  ! completes normally); adds wrong blocks to errors.
  subroutine chain(comm, errors)
    COMM_T, intent(inout) :: comm
    integer, intent(inout) :: errors
    integer :: me, size, j, token, ierr
    integer, allocatable :: counts(:), displs(:), sendbuf(:)
    integer, allocatable, asynchronous :: recvbuf(:)
    REQUEST_T :: request

    call MPI_COMM_RANK(comm, me, ierr)
    call MPI_COMM_SIZE(comm, size, ierr)
    call blocks(me, size, counts, displs, sendbuf, recvbuf)
    token = 0
    if (me > 0) call MPI_RECV(token, 1, MPI_INTEGER, me - 1, 77, comm, MPI_STATUS_IGNORE, ierr)
    call MPI_IALLTOALLV(sendbuf, counts, displs, MPI_INTEGER, recvbuf, counts, displs, &
                        MPI_INTEGER, comm, request, ierr)
    if (me + 1 < size) call MPI_SSEND(token, 1, MPI_INTEGER, me + 1, 77, comm, ierr)
    call MPI_COMM_FREE(comm, ierr)
    call MPI_WAIT(request, MPI_STATUS_IGNORE, ierr)
    do j = 0, size - 1
      if (recvbuf(j) /= j * 1000 + me) errors = errors + 1
    end do
  end subroutine chain

  ! One MPI_ALLTOALLV and one MPI_ALLTOALL on MPI_COMM_WORLD, as the preload tests' statistics
  ! expect.
  subroutine on_world(errors)
    integer, intent(inout) :: errors
    integer :: me, size, j, ierr
    integer, allocatable :: counts(:), displs(:), sendbuf(:), recvbuf(:)

    call MPI_COMM_RANK(MPI_COMM_WORLD, me, ierr)
    call MPI_COMM_SIZE(MPI_COMM_WORLD, size, ierr)
    call blocks(me, size, counts, displs, sendbuf, recvbuf)
    call MPI_ALLTOALLV(sendbuf, counts, displs, MPI_INTEGER, recvbuf, counts, displs, &
                       MPI_INTEGER, MPI_COMM_WORLD, ierr)
    do j = 0, size - 1
      if (recvbuf(j) /= j * 1000 + me) errors = errors + 1
    end do
    recvbuf = -1
    call MPI_ALLTOALL(sendbuf, 1, MPI_INTEGER, recvbuf, 1, MPI_INTEGER, MPI_COMM_WORLD, ierr)
    do j = 0, size - 1
      if (recvbuf(j) /= j * 1000 + me) errors = errors + 1
    end do
  end subroutine on_world

  ! One integer to each rank, me * 1000 + its rank; recvbuf -1.
  subroutine blocks(me, size, counts, displs, sendbuf, recvbuf)
    integer, intent(in) :: me, size
    integer, allocatable, intent(out) :: counts(:), displs(:), sendbuf(:), recvbuf(:)
    integer :: j

    allocate(counts(0:size-1), displs(0:size-1), sendbuf(0:size-1), recvbuf(0:size-1))
    do j = 0, size - 1
      counts(j) = 1
      displs(j) = j
      sendbuf(j) = me * 1000 + j
    end do
    recvbuf = -1
  end subroutine blocks

end program fortran_first_call
