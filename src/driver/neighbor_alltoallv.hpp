// MPI_Neighbor_alltoallv's exchange: one block per edge of the communicator's process
// topology (Cartesian, graph or distributed graph).
#pragma once

#include "driver/ialltoallv.hpp"  // NonblockingStart

#include <mpi.h>

#include <cstdint>

namespace a2av {

// The arguments as MPI_Neighbor_alltoallv takes them: arrays of the in-degree (receive side)
// and out-degree (send side), displacements in extents of the datatype.
struct NeighborCall {
  const void* sendbuf;
  const int* sendcounts;
  const int* sdispls;
  MPI_Datatype sendtype;
  void* recvbuf;
  const int* recvcounts;
  const int* rdispls;
  MPI_Datatype recvtype;
  MPI_Comm comm;
};

// Checks this rank's arguments (nothing is agreed across ranks, as with MPI: a rank that gets
// an error must not leave its peers waiting), then exchanges. Throws a2av::Error.
// Returns the temporary bytes used (request and neighbour lists, O(degree)).
std::int64_t neighbor_alltoallv(const NeighborCall& call);

// MPI_Ineighbor_alltoallv: the same checks and messages, completed by the caller's MPI_Wait
// or MPI_Test. The count and displacement arrays are read here only.
NonblockingStart start_ineighbor_alltoallv(const NeighborCall& call);

}  // namespace a2av
