! No first-call deadlock for a Fortran program (docs/design.md): on a fresh MPI_COMM_DUP of
! MPI_COMM_WORLD, rank r > 0 first receives a token from rank r - 1 (synchronously sent), then
! starts MPI_IALLTOALLV; every rank passes the token on after its start, then waits. A start
! that waited for the other ranks would hang here. Then one MPI_ALLTOALLV and one MPI_ALLTOALL
! on MPI_COMM_WORLD. Built as fortran_alltoall.F90 is: mpif.h,
! `use mpi` (-DUSE_MPI), `use mpi_f08` (-DUSE_MPI_F08). Rank 0 prints " No Errors".
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
  integer :: rank, nranks, ierr, j, token, errors, total
  integer, allocatable :: counts(:), displs(:), sendbuf(:)
  integer, allocatable, asynchronous :: recvbuf(:)
#if defined(USE_MPI_F08)
  type(MPI_Comm) :: comm
  type(MPI_Request) :: request
#else
  integer :: comm, request
#endif

  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  call MPI_COMM_SIZE(MPI_COMM_WORLD, nranks, ierr)
  call MPI_COMM_DUP(MPI_COMM_WORLD, comm, ierr)
  allocate(counts(0:nranks-1), displs(0:nranks-1), sendbuf(0:nranks-1), recvbuf(0:nranks-1))
  do j = 0, nranks - 1
    counts(j) = 1
    displs(j) = j
    sendbuf(j) = rank * 1000 + j
  end do
  recvbuf = -1
  token = 0
  if (rank > 0) call MPI_RECV(token, 1, MPI_INTEGER, rank - 1, 77, comm, MPI_STATUS_IGNORE, ierr)
  call MPI_IALLTOALLV(sendbuf, counts, displs, MPI_INTEGER, recvbuf, counts, displs, MPI_INTEGER, &
                      comm, request, ierr)
  if (rank + 1 < nranks) call MPI_SSEND(token, 1, MPI_INTEGER, rank + 1, 77, comm, ierr)
  call MPI_WAIT(request, MPI_STATUS_IGNORE, ierr)
  errors = 0
  do j = 0, nranks - 1
    if (recvbuf(j) /= j * 1000 + rank) errors = errors + 1
  end do
  ! Then one MPI_ALLTOALLV and one MPI_ALLTOALL on MPI_COMM_WORLD, as the preload tests'
  ! statistics expect.
  recvbuf = -1
  call MPI_ALLTOALLV(sendbuf, counts, displs, MPI_INTEGER, recvbuf, counts, displs, MPI_INTEGER, &
                     MPI_COMM_WORLD, ierr)
  do j = 0, nranks - 1
    if (recvbuf(j) /= j * 1000 + rank) errors = errors + 1
  end do
  recvbuf = -1
  call MPI_ALLTOALL(sendbuf, 1, MPI_INTEGER, recvbuf, 1, MPI_INTEGER, MPI_COMM_WORLD, ierr)
  do j = 0, nranks - 1
    if (recvbuf(j) /= j * 1000 + rank) errors = errors + 1
  end do
  call MPI_ALLREDUCE(errors, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (rank == 0 .and. total == 0) print *, 'No Errors'
  call MPI_COMM_FREE(comm, ierr)
  call MPI_FINALIZE(ierr)
  if (total /= 0) stop 1
end program fortran_first_call
