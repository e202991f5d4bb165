// What the nonblocking schedules share: the first error of an operation, reported by
// MPI_Wait; their MPI requests, tested in order with the counts their receives expect; and
// posting that leaves nothing in flight when a post fails.
#pragma once

#include "core/check.hpp"
#include "core/progress_request.hpp"

#include <mpi.h>

#include <cstdint>
#include <vector>

namespace a2av {

class NonblockingOperation : public Operation {
 public:
  int error() const override { return error_; }

 protected:
  void note(int code) {
    if (error_ == MPI_SUCCESS) error_ = code;
  }

  // A request to post into, and the count its receive must get in `type` units of
  // all_tested() (-1: a send, or a receive whose size is not checked).
  MPI_Request& add(int expected = -1) {
    expected_.push_back(expected);
    return requests_.emplace_back(MPI_REQUEST_NULL);
  }

  // If `rc` (a post into add()) failed: cancels and frees every request posted so far and
  // throws the MPI error.
  void posted(int rc, const char* what) {
    if (rc == MPI_SUCCESS) return;
    for (MPI_Request& r : requests_)
      if (r != MPI_REQUEST_NULL && MPI_Cancel(&r) == MPI_SUCCESS) MPI_Request_free(&r);
    check_mpi(rc, what);
  }

  // Tests the requests in order; true once all are complete. Failures and receives whose
  // count (in units of `type`) is not the expected one are noted.
  bool all_tested(MPI_Datatype type) {
    for (; tested_ < requests_.size(); ++tested_) {
      int done = 0, count = 0;
      MPI_Status status;
      const int rc = MPI_Test(&requests_[tested_], &done, &status);
      if (rc != MPI_SUCCESS) {
        note(rc);
        continue;
      }
      if (!done) return false;
      if (expected_[tested_] < 0) continue;
      MPI_Get_count(&status, type, &count);
      if (count != expected_[tested_]) note(MPI_ERR_TRUNCATE);
    }
    return true;
  }

  // Posted and not yet found complete by all_tested().
  int in_flight() const { return static_cast<int>(requests_.size() - tested_); }

  void reserve_requests(std::size_t count) {
    requests_.reserve(count);
    expected_.reserve(count);
  }

  void clear_requests() {
    requests_.clear();
    expected_.clear();
    tested_ = 0;
  }

  // Ready for another call: no requests (their storage kept), no error.
  void restart_requests() {
    clear_requests();
    error_ = MPI_SUCCESS;
  }

  std::int64_t request_bytes() const {
    return static_cast<std::int64_t>(requests_.capacity() * sizeof(MPI_Request) +
                                     expected_.capacity() * sizeof(int));
  }

 private:
  std::vector<MPI_Request> requests_;
  std::vector<int> expected_;  // by request
  std::size_t tested_ = 0;     // requests_[0, tested_) are complete
  int error_ = MPI_SUCCESS;
};

}  // namespace a2av
