// What the nonblocking schedules share: the first error of an operation, reported by
// MPI_Wait, and posting that leaves nothing in flight when a post fails.
#pragma once

#include "core/check.hpp"
#include "core/progress_request.hpp"

#include <mpi.h>

#include <vector>

namespace a2av {

class NonblockingOperation : public Operation {
 public:
  int error() const override { return error_; }

 protected:
  void note(int code) {
    if (error_ == MPI_SUCCESS) error_ = code;
  }

  // After posting into `requests`: if `rc` failed, cancels and frees every request posted so
  // far and throws the MPI error.
  static void posted(int rc, const char* what, std::vector<MPI_Request>& requests) {
    if (rc == MPI_SUCCESS) return;
    for (MPI_Request& r : requests)
      if (r != MPI_REQUEST_NULL && MPI_Cancel(&r) == MPI_SUCCESS) MPI_Request_free(&r);
    check_mpi(rc, what);
  }

 private:
  int error_ = MPI_SUCCESS;
};

}  // namespace a2av
