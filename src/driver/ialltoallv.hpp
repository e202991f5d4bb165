// The nonblocking exchange: MPI_Ialltoallv's semantics, the request completed by the
// caller's MPI_Wait or MPI_Test (core/progress_request.hpp).
#pragma once

#include "core/call.hpp"

#include <mpi.h>

#include <cstdint>

namespace a2av {

struct NonblockingStart {
  MPI_Request request = MPI_REQUEST_NULL;
  const char* schedule = "";         // what runs behind the request
  std::int64_t peak_temp_bytes = 0;  // held until the request is freed
};

// Checks this rank's arguments (throws a2av::Error; nothing is agreed across ranks, as with
// MPI_Ialltoallv, so a rank that gets an error must not leave its peers waiting) and starts
// the exchange. The count and displacement arrays are read here only.
NonblockingStart start_ialltoallv(const Call& call);

}  // namespace a2av
