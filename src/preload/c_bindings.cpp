// liba2av_preload.so: LD_PRELOAD it under mpiexec and the all-to-all calls of an unmodified
// program go through a2av's selection (PMPI interposition; the vendor algorithm becomes the
// PMPI function). This file: the C entry points, which the Fortran ones of the MPI
// libraries that call the C function (MPICH) reach as well (fortran_openmpi.cpp for Open MPI).
// What a2av does not take (intercommunicators) goes straight to PMPI; an argument a2av
// rejects is handed to PMPI as well, so the program sees its MPI's own error behaviour.
#include <a2av/a2av.h>

#include "alltoallv/algorithm.hpp"
#include "preload/routes.hpp"

#include <cstdio>

namespace a2av::preload {
namespace {

int mpi_error_for(int code) {
  switch (code) {
    case A2AV_ERR_COUNTS:
      return MPI_ERR_TRUNCATE;
    case A2AV_ERR_DATATYPE:
      return MPI_ERR_TYPE;
    case A2AV_ERR_CAPACITY:
      return MPI_ERR_NO_MEM;
    default:
      return MPI_ERR_OTHER;
  }
}

// A bad A2AV_ALGORITHM should not pass unnoticed, nor flood the output.
void warn_once(const char* message) {
  static bool warned = false;
  if (!warned) std::fprintf(stderr, "a2av preload: %s; using the MPI library's own\n", message);
  warned = true;
}

template <class Body>
int timed(const char* function, const char* route_or_null, Body body) {
  const bool stats = stats_enabled();
  const double start = stats ? PMPI_Wtime() : 0;
  const int rc = body();
  if (stats && rc == MPI_SUCCESS)
    record(function, route_or_null ? route_or_null : A2AV_Last_algorithm(), PMPI_Wtime() - start);
  return rc;
}

bool intracommunicator(MPI_Comm comm) {
  int inter = 0;
  return comm != MPI_COMM_NULL && PMPI_Comm_test_inter(comm, &inter) == MPI_SUCCESS && !inter;
}

// One entry point: `a2av` (returning an A2AV_ code) where a2av takes the call, else `pmpi`.
template <class A2av, class Pmpi>
int route(const char* function, const char* pmpi_name, MPI_Comm comm, A2av a2av, Pmpi pmpi) {
  set_vendor_alltoallv(&PMPI_Alltoallv);  // a2av's own "vendor" must not come back here
  if (!intracommunicator(comm)) return timed(function, pmpi_name, pmpi);
  const int rc = timed(function, nullptr, a2av);
  if (rc == A2AV_SUCCESS) return MPI_SUCCESS;
  if (rc == A2AV_ERR_ALGORITHM) warn_once(A2AV_Last_error_message());
  if (rc == A2AV_ERR_ARG || rc == A2AV_ERR_DATATYPE || rc == A2AV_ERR_ALGORITHM)
    return timed(function, pmpi_name, pmpi);  // agreed by every rank: let MPI report it its way
  MPI_Comm_call_errhandler(comm, mpi_error_for(rc));
  return mpi_error_for(rc);
}

}  // namespace
}  // namespace a2av::preload

using a2av::preload::route;

extern "C" {

int MPI_Alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[],
                  MPI_Datatype sendtype, void* recvbuf, const int recvcounts[], const int rdispls[],
                  MPI_Datatype recvtype, MPI_Comm comm) {
  return route(
      "MPI_Alltoallv", "PMPI_Alltoallv", comm,
      [&] {
        return A2AV_Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                              recvtype, comm);
      },
      [&] {
        return PMPI_Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                              recvtype, comm);
      });
}

int MPI_Alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                 int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  return route(
      "MPI_Alltoall", "PMPI_Alltoall", comm,
      [&] {
        return A2AV_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
      },
      [&] {
        return PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
      });
}

int MPI_Ialltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[],
                   MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                   const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                   MPI_Request* request) {
  return route(
      "MPI_Ialltoallv", "PMPI_Ialltoallv", comm,
      [&] {
        return A2AV_Ialltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                               recvtype, comm, request);
      },
      [&] {
        return PMPI_Ialltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                               recvtype, comm, request);
      });
}

int MPI_Finalize(void) {
  if (a2av::preload::stats_enabled()) a2av::preload::print_stats();
  return PMPI_Finalize();
}

}  // extern "C"
