// liba2av_preload.so: LD_PRELOAD it under mpiexec and the all-to-all calls of an unmodified
// program go through a2av's selection (PMPI interposition; the vendor algorithm becomes the
// PMPI function). This file: the C entry points, which the Fortran ones of the MPI
// libraries that call the C function (MPICH) reach as well (fortran_openmpi.cpp for Open MPI;
// persistent.cpp for MPI_Alltoallv_init and MPI_Start).
// What a2av does not take (intercommunicators) goes straight to PMPI; an argument a2av
// rejects is handed to PMPI as well, so the program sees its MPI's own error behaviour.
#include <a2av/a2av.h>

#include "preload/routes.hpp"

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

int MPI_Neighbor_alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[],
                           MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                           const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm) {
  return route(
      "MPI_Neighbor_alltoallv", "PMPI_Neighbor_alltoallv", comm,
      [&] {
        return A2AV_Neighbor_alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                                       rdispls, recvtype, comm);
      },
      [&] {
        return PMPI_Neighbor_alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                                       rdispls, recvtype, comm);
      });
}

int MPI_Finalize(void) {
  if (a2av::preload::stats_enabled()) a2av::preload::print_stats();
  return PMPI_Finalize();
}

}  // extern "C"
