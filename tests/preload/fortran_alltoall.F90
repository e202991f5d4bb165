! A Fortran program as users write it: MPI_ALLTOALLV (also with MPI_IN_PLACE), MPI_IALLTOALLV,
! persistent MPI_ALLTOALLV_INIT and MPI_ALLTOALL_INIT (Open MPI 4.1: MPIX_,
! -DOPEN_MPI_EXTENSIONS), MPI_ALLTOALL, MPI_IALLTOALL, MPI_NEIGHBOR_ALLTOALLV and
! MPI_INEIGHBOR_ALLTOALLV, every value checked; the persistent request completed by each
! completion function. Built three times, once per way Fortran reaches
! MPI: include 'mpif.h' (default), `use mpi` (-DUSE_MPI) and `use mpi_f08` (-DUSE_MPI_F08).
! Rank 0 prints " No Errors" when all passed; stops with a non-zero code on any wrong value.
#if defined(OPEN_MPI_EXTENSIONS)
#  define ALLTOALLV_INIT MPIX_ALLTOALLV_INIT
#  define ALLTOALL_INIT MPIX_ALLTOALL_INIT
#else
#  define ALLTOALLV_INIT MPI_ALLTOALLV_INIT
#  define ALLTOALL_INIT MPI_ALLTOALL_INIT
#endif
program fortran_alltoall
#if defined(USE_MPI_F08)
  use mpi_f08
#  if defined(OPEN_MPI_EXTENSIONS)
  use mpi_f08_ext
#  endif
#elif defined(USE_MPI)
  use mpi
#  if defined(OPEN_MPI_EXTENSIONS)
  use mpi_ext
#  endif
#endif
  implicit none
#if !defined(USE_MPI_F08) && !defined(USE_MPI)
  include 'mpif.h'
#  if defined(OPEN_MPI_EXTENSIONS)
  include 'mpif-ext.h'
#  endif
#endif
  integer :: rank, nranks, ierr, j, k, errors, total, iteration, below, above
  integer, allocatable :: sc(:), sd(:), rc(:), rd(:), sendbuf(:)
  ! Written by MPI outside the calls that name it (nonblocking and persistent requests).
  integer, allocatable, asynchronous :: recvbuf(:)
  integer :: ncounts_send(2), ncounts_recv(2), ndispls(2), nsend(6), nrecv(6)
  integer :: which, outcount, indices(1), first_index, self_in
  logical :: done
#if defined(USE_MPI_F08)
  type(MPI_Request) :: request, requests(1)
  type(MPI_Comm) :: ring
#else
  integer :: request, requests(1), ring
#endif

  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  call MPI_COMM_SIZE(MPI_COMM_WORLD, nranks, ierr)
  allocate(sc(0:nranks-1), sd(0:nranks-1), rc(0:nranks-1), rd(0:nranks-1))
  errors = 0

  ! Rank i sends mod(i + j, 3) integers to rank j (zeros included).
  do j = 0, nranks - 1
    sc(j) = mod(rank + j, 3)
    rc(j) = mod(j + rank, 3)
  end do
  sd(0) = 0
  rd(0) = 0
  do j = 1, nranks - 1
    sd(j) = sd(j-1) + sc(j-1)
    rd(j) = rd(j-1) + rc(j-1)
  end do
  allocate(sendbuf(max(1, sum(sc))), recvbuf(max(1, sum(rc))))
  do j = 0, nranks - 1
    do k = 1, sc(j)
      sendbuf(sd(j) + k) = value(rank, j, k)
    end do
  end do
  do iteration = 1, 3
    recvbuf = -1
    call MPI_ALLTOALLV(sendbuf, sc, sd, MPI_INTEGER, recvbuf, rc, rd, MPI_INTEGER, &
                       MPI_COMM_WORLD, ierr)
    call check_blocks(recvbuf, rc, rd, 'MPI_ALLTOALLV')
  end do

  ! Nonblocking, completed by MPI_WAIT.
  recvbuf = -1
  call MPI_IALLTOALLV(sendbuf, sc, sd, MPI_INTEGER, recvbuf, rc, rd, MPI_INTEGER, &
                      MPI_COMM_WORLD, request, ierr)
  call MPI_WAIT(request, MPI_STATUS_IGNORE, ierr)
  call check_blocks(recvbuf, rc, rd, 'MPI_IALLTOALLV')

  ! Persistent: started by MPI_START then MPI_STARTALL, completed by MPI_WAIT and MPI_WAITALL.
  call ALLTOALLV_INIT(sendbuf, sc, sd, MPI_INTEGER, recvbuf, rc, rd, MPI_INTEGER, &
                      MPI_COMM_WORLD, MPI_INFO_NULL, request, ierr)
  recvbuf = -1
  call MPI_START(request, ierr)
  call MPI_WAIT(request, MPI_STATUS_IGNORE, ierr)
  call check_blocks(recvbuf, rc, rd, 'persistent MPI_ALLTOALLV (MPI_START)')
  recvbuf = -1
  requests(1) = request
  call MPI_STARTALL(1, requests, ierr)
  call MPI_WAITALL(1, requests, MPI_STATUSES_IGNORE, ierr)
  call check_blocks(recvbuf, rc, rd, 'persistent MPI_ALLTOALLV (MPI_STARTALL)')
  ! Then by each other completion function: MPI_TEST, MPI_TESTALL, MPI_TESTANY and MPI_TESTSOME
  ! in loops, MPI_WAITANY and MPI_WAITSOME (under MPICH the preload advances the exchange inside
  ! each). The index they give is the one the MPI library gives for a point-to-point request
  ! (1; 0 from MPICH 4.0's mpi_f08, pmodels/mpich#6270), which the preload must not change.
  call MPI_IRECV(self_in, 1, MPI_INTEGER, 0, 7, MPI_COMM_SELF, requests(1), ierr)
  call MPI_SEND(rank, 1, MPI_INTEGER, 0, 7, MPI_COMM_SELF, ierr)
  call MPI_WAITANY(1, requests, first_index, MPI_STATUS_IGNORE, ierr)
  requests(1) = request
  do iteration = 1, 6
    recvbuf = -1
    call MPI_START(requests(1), ierr)
    done = .false.
    outcount = 0
    which = first_index
    indices = first_index
    select case (iteration)
    case (1)
      do while (.not. done)
        call MPI_TEST(requests(1), done, MPI_STATUS_IGNORE, ierr)
      end do
    case (2)
      do while (.not. done)
        call MPI_TESTALL(1, requests, done, MPI_STATUSES_IGNORE, ierr)
      end do
    case (3)
      do while (.not. done)
        call MPI_TESTANY(1, requests, which, done, MPI_STATUS_IGNORE, ierr)
      end do
    case (4)
      do while (outcount == 0)
        call MPI_TESTSOME(1, requests, outcount, indices, MPI_STATUSES_IGNORE, ierr)
      end do
    case (5)
      call MPI_WAITANY(1, requests, which, MPI_STATUS_IGNORE, ierr)
    case default
      call MPI_WAITSOME(1, requests, outcount, indices, MPI_STATUSES_IGNORE, ierr)
    end select
    if (which /= first_index .or. indices(1) /= first_index) then
      errors = errors + 1
      print '(a,i0,a,i0,a,i0)', 'completion function ', iteration, ': index ', which, &
            ', indices(1) ', indices(1)
    end if
    call check_blocks(recvbuf, rc, rd, 'persistent MPI_ALLTOALLV (MPI_TEST and kin)')
  end do
  call MPI_REQUEST_FREE(request, ierr)

  ! The same exchange in place (the counts are symmetric).
  recvbuf(1:sum(sc)) = sendbuf(1:sum(sc))
  call MPI_ALLTOALLV(MPI_IN_PLACE, sc, sd, MPI_INTEGER, recvbuf, rc, rd, MPI_INTEGER, &
                     MPI_COMM_WORLD, ierr)
  call check_blocks(recvbuf, rc, rd, 'MPI_ALLTOALLV in place')

  ! MPI_ALLTOALL with two integers per rank, then in place.
  deallocate(sendbuf, recvbuf)
  allocate(sendbuf(2 * nranks), recvbuf(2 * nranks))
  do j = 0, nranks - 1
    sc(j) = 2
    sd(j) = 2 * j
    sendbuf(2*j + 1) = value(rank, j, 1)
    sendbuf(2*j + 2) = value(rank, j, 2)
  end do
  recvbuf = -1
  call MPI_ALLTOALL(sendbuf, 2, MPI_INTEGER, recvbuf, 2, MPI_INTEGER, MPI_COMM_WORLD, ierr)
  call check_blocks(recvbuf, sc, sd, 'MPI_ALLTOALL')
  recvbuf = sendbuf
  call MPI_ALLTOALL(MPI_IN_PLACE, 0, MPI_INTEGER, recvbuf, 2, MPI_INTEGER, MPI_COMM_WORLD, ierr)
  call check_blocks(recvbuf, sc, sd, 'MPI_ALLTOALL in place')
  recvbuf = -1
  call MPI_IALLTOALL(sendbuf, 2, MPI_INTEGER, recvbuf, 2, MPI_INTEGER, MPI_COMM_WORLD, request, &
                     ierr)
  call MPI_WAIT(request, MPI_STATUS_IGNORE, ierr)
  call check_blocks(recvbuf, sc, sd, 'MPI_IALLTOALL')
  call ALLTOALL_INIT(sendbuf, 2, MPI_INTEGER, recvbuf, 2, MPI_INTEGER, MPI_COMM_WORLD, &
                     MPI_INFO_NULL, request, ierr)
  recvbuf = -1
  call MPI_START(request, ierr)
  call MPI_WAIT(request, MPI_STATUS_IGNORE, ierr)
  call check_blocks(recvbuf, sc, sd, 'persistent MPI_ALLTOALL')
  call MPI_REQUEST_FREE(request, ierr)

  ! MPI_NEIGHBOR_ALLTOALLV on a periodic ring: block 1 goes down, block 2 up, so what comes
  ! from below is that rank's block 2 (s + mod(rank, 2) integers in block s).
  call MPI_CART_CREATE(MPI_COMM_WORLD, 1, [nranks], [.true.], .false., ring, ierr)
  call MPI_CART_SHIFT(ring, 0, 1, below, above, ierr)
  ncounts_send = [1 + mod(rank, 2), 2 + mod(rank, 2)]
  ncounts_recv = [2 + mod(below, 2), 1 + mod(above, 2)]
  ndispls = [0, 3]
  do j = 1, 2
    do k = 1, ncounts_send(j)
      nsend(ndispls(j) + k) = value(rank, j, k)
    end do
  end do
  nrecv = -1
  call MPI_NEIGHBOR_ALLTOALLV(nsend, ncounts_send, ndispls, MPI_INTEGER, nrecv, ncounts_recv, &
                              ndispls, MPI_INTEGER, ring, ierr)
  call check_ring('MPI_NEIGHBOR_ALLTOALLV')
  nrecv = -1
  call MPI_INEIGHBOR_ALLTOALLV(nsend, ncounts_send, ndispls, MPI_INTEGER, nrecv, ncounts_recv, &
                               ndispls, MPI_INTEGER, ring, request, ierr)
  call MPI_WAIT(request, MPI_STATUS_IGNORE, ierr)
  call check_ring('MPI_INEIGHBOR_ALLTOALLV')
  call MPI_COMM_FREE(ring, ierr)

  call MPI_ALLREDUCE(errors, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (rank == 0) then
    if (total == 0) then
      print '(a)', ' No Errors'
    else
      print '(a,i0,a)', ' Found ', total, ' errors'
    end if
  end if
  call MPI_FINALIZE(ierr)
  if (total /= 0) stop 1

contains

  subroutine check_ring(what)
    character(len=*), intent(in) :: what
    integer :: before
    before = errors
    do k = 1, ncounts_recv(1)
      if (nrecv(k) /= value(below, 2, k)) errors = errors + 1
    end do
    do k = 1, ncounts_recv(2)
      if (nrecv(3 + k) /= value(above, 1, k)) errors = errors + 1
    end do
    if (ierr /= MPI_SUCCESS) errors = errors + 1
    if (errors > before) print '(a,a,i0)', what, ': wrong values on rank ', rank
  end subroutine check_ring

  integer function value(from, to, k)
    integer, intent(in) :: from, to, k
    value = from * 1000003 + to * 1009 + k
  end function value

  subroutine check_blocks(buf, counts, displs, what)
    integer, intent(in) :: buf(:), counts(0:), displs(0:)
    character(len=*), intent(in) :: what
    integer :: source, element
    if (ierr /= MPI_SUCCESS) then
      errors = errors + 1
      print '(a,a,i0)', what, ': ierror = ', ierr
    end if
    do source = 0, nranks - 1
      do element = 1, counts(source)
        if (buf(displs(source) + element) /= value(source, rank, element)) then
          errors = errors + 1
          if (errors <= 10) print '(a,a,i0,a,i0)', what, ': rank ', rank, ' wrong value from ', &
                                 source
        end if
      end do
    end do
  end subroutine check_blocks

end program fortran_alltoall
