// liba2av_preload.so: LD_PRELOAD it under mpiexec and the all-to-all calls of an unmodified
// program go through a2av's selection (PMPI interposition; the vendor algorithm becomes the
// PMPI function). This file: the C entry points, which the Fortran ones of the MPI
// libraries that call the C function (MPICH) reach as well (fortran_openmpi.cpp for Open MPI;
// persistent.cpp for the persistent calls and MPI_Start).
// What a2av does not take (intercommunicators; the alltoallw forms and some large-count
// ones, see vendor() below) goes straight to PMPI; an argument a2av rejects is handed to
// PMPI as well, so the program sees its MPI's own error behaviour. The large-count forms
// (MPI_Alltoallv_c, ...) are taken where the MPI library has them: MPI-4 (MPICH 4; Open MPI
// 4.1 has none).
#include <a2av/a2av.h>

#include "preload/routes.hpp"
#include "preload/shapes.hpp"

using namespace a2av::preload;

namespace {

// MPI_Alltoallw's kin (per-peer datatypes) and the large-count nonblocking and neighbourhood
// forms go to the MPI library, counted under their names. a2av could take some of their calls
// (one datatype per side; counts within int), but whether a call qualifies is known to each
// rank only, and ranks that chose differently would never meet.
constexpr const char* kPerPeerTypes = "per-peer datatypes:PMPI";

template <class Pmpi>
int vendor(const char* function, const char* why, Pmpi pmpi) {
  return timed(function, why, pmpi, Record::all);
}

#if MPI_VERSION >= 4
int alltoallv_c(const void* sendbuf, const Side& send, void* recvbuf, const Side& recv,
                MPI_Comm comm) {
  return A2AV_Alltoallv_c(sendbuf, send.counts_or_null(), send.displs_or_null(), send.type, recvbuf,
                          recv.counts_or_null(), recv.displs_or_null(), recv.type, comm);
}
#endif

}  // namespace

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
  return route_start(
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

int MPI_Alltoallw(const void* sendbuf, const int sendcounts[], const int sdispls[],
                  const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[],
                  const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm) {
  return vendor("MPI_Alltoallw", kPerPeerTypes, [&] {
    return PMPI_Alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                          recvtypes, comm);
  });
}

int MPI_Ialltoallw(const void* sendbuf, const int sendcounts[], const int sdispls[],
                   const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[],
                   const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                   MPI_Request* request) {
  return vendor("MPI_Ialltoallw", kPerPeerTypes, [&] {
    return PMPI_Ialltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                           recvtypes, comm, request);
  });
}

int MPI_Ialltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  return route_start(
      "MPI_Ialltoall", "PMPI_Ialltoall", comm,
      [&] {
        return A2AV_Ialltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
                              request);
      },
      [&] {
        return PMPI_Ialltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
                              request);
      });
}

int MPI_Ineighbor_alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[],
                            MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                            const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                            MPI_Request* request) {
  return route_start(
      "MPI_Ineighbor_alltoallv", "PMPI_Ineighbor_alltoallv", comm,
      [&] {
        return A2AV_Ineighbor_alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                                        rdispls, recvtype, comm, request);
      },
      [&] {
        return PMPI_Ineighbor_alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                                        rdispls, recvtype, comm, request);
      });
}

int MPI_Neighbor_alltoallw(const void* sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                           const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[],
                           const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
                           MPI_Comm comm) {
  return vendor("MPI_Neighbor_alltoallw", kPerPeerTypes, [&] {
    return PMPI_Neighbor_alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts,
                                   rdispls, recvtypes, comm);
  });
}

#if MPI_VERSION >= 4
int MPI_Alltoallv_c(const void* sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                    MPI_Datatype sendtype, void* recvbuf, const MPI_Count recvcounts[],
                    const MPI_Aint rdispls[], MPI_Datatype recvtype, MPI_Comm comm) {
  return route(
      "MPI_Alltoallv_c", "PMPI_Alltoallv_c", comm,
      [&] {
        return A2AV_Alltoallv_c(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                                rdispls, recvtype, comm);
      },
      [&] {
        return PMPI_Alltoallv_c(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                                rdispls, recvtype, comm);
      });
}

int MPI_Alltoall_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                   MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  return route(
      "MPI_Alltoall_c", "PMPI_Alltoall_c", comm,
      [&] {
        const int n = peers(comm);
        return alltoallv_c(sendbuf, uniform_side(sendcount, sendtype, n), recvbuf,
                           uniform_side(recvcount, recvtype, n), comm);
      },
      [&] {
        return PMPI_Alltoall_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
      });
}

int MPI_Ialltoallv_c(const void* sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                     MPI_Datatype sendtype, void* recvbuf, const MPI_Count recvcounts[],
                     const MPI_Aint rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                     MPI_Request* request) {
  return vendor("MPI_Ialltoallv_c", kLargeCounts, [&] {
    return PMPI_Ialltoallv_c(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                             recvtype, comm, request);
  });
}

int MPI_Ialltoall_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                    MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                    MPI_Request* request) {
  return vendor("MPI_Ialltoall_c", kLargeCounts, [&] {
    return PMPI_Ialltoall_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
                            request);
  });
}

int MPI_Alltoallw_c(const void* sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                    const MPI_Datatype sendtypes[], void* recvbuf, const MPI_Count recvcounts[],
                    const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm) {
  return vendor("MPI_Alltoallw_c", kPerPeerTypes, [&] {
    return PMPI_Alltoallw_c(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                            recvtypes, comm);
  });
}

int MPI_Ialltoallw_c(const void* sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                     const MPI_Datatype sendtypes[], void* recvbuf, const MPI_Count recvcounts[],
                     const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                     MPI_Request* request) {
  return vendor("MPI_Ialltoallw_c", kPerPeerTypes, [&] {
    return PMPI_Ialltoallw_c(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                             recvtypes, comm, request);
  });
}

int MPI_Neighbor_alltoallv_c(const void* sendbuf, const MPI_Count sendcounts[],
                             const MPI_Aint sdispls[], MPI_Datatype sendtype, void* recvbuf,
                             const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                             MPI_Datatype recvtype, MPI_Comm comm) {
  return vendor("MPI_Neighbor_alltoallv_c", kLargeCounts, [&] {
    return PMPI_Neighbor_alltoallv_c(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                                     rdispls, recvtype, comm);
  });
}

int MPI_Ineighbor_alltoallv_c(const void* sendbuf, const MPI_Count sendcounts[],
                              const MPI_Aint sdispls[], MPI_Datatype sendtype, void* recvbuf,
                              const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                              MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  return vendor("MPI_Ineighbor_alltoallv_c", kLargeCounts, [&] {
    return PMPI_Ineighbor_alltoallv_c(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                                      rdispls, recvtype, comm, request);
  });
}

int MPI_Neighbor_alltoallw_c(const void* sendbuf, const MPI_Count sendcounts[],
                             const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
                             void* recvbuf, const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                             const MPI_Datatype recvtypes[], MPI_Comm comm) {
  return vendor("MPI_Neighbor_alltoallw_c", kPerPeerTypes, [&] {
    return PMPI_Neighbor_alltoallw_c(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts,
                                     rdispls, recvtypes, comm);
  });
}
#endif  // MPI_VERSION >= 4

int MPI_Finalize(void) {
  if (a2av::preload::stats_enabled()) a2av::preload::print_stats();
  return PMPI_Finalize();
}

}  // extern "C"
