// A request the caller completes with its own MPI_Wait or MPI_Test while a2av's operation
// behind it advances inside those calls: an MPI generalized request (MPI_Grequest_start)
// plus a hook into the MPI library's progress, which the standard does not provide:
//  - MPICH: MPIX_Grequest_start's poll function, called by MPI_Wait/MPI_Test;
//  - Open MPI: a callback registered with opal_progress (found at run time), which every
//    MPI_Wait/MPI_Test and blocking call runs; it advances every pending operation;
//  - any other MPI: the operation runs to completion when it starts (correct, no overlap).
#pragma once

#include <mpi.h>

#include <memory>

namespace a2av {

class Operation {
 public:
  virtual ~Operation() = default;
  // Advances without blocking; true once complete. Called only until it returns true.
  virtual bool progress() = 0;
  // After completion: MPI_SUCCESS or the MPI error code that MPI_Wait returns.
  virtual int error() const = 0;
};

// Makes `operation` the request's; the request completes when the operation does.
MPI_Request start_request(std::unique_ptr<Operation> operation);

}  // namespace a2av
