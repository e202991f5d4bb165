// Nonblocking point-to-point on byte ranges of any 64-bit length: messages longer than
// max_piece() bytes are split into pieces, which MPI's non-overtaking rule keeps in order.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

namespace a2av {

// A count disagreement found while data moves. It is remembered rather than thrown so that
// the algorithm finishes its protocol and no peer is left waiting; the driver raises it.
class Mismatch {
 public:
  void note(std::string message) {
    if (message_.empty()) message_ = std::move(message);
  }
  void raise() const;  // throws A2AV_ERR_COUNTS if anything was noted

 private:
  std::string message_;
};

// Messages longer than this many bytes are split: 2^30 by default, or A2AV_MAX_MESSAGE.
std::int64_t max_piece();

class Requests {
 public:
  void isend(const void* data, std::int64_t bytes, int peer, int tag, MPI_Comm comm);
  void irecv(void* data, std::int64_t bytes, int peer, int tag, MPI_Comm comm);
  // Takes over a request posted elsewhere; expected_bytes < 0 for a send.
  void adopt(MPI_Request request, std::int64_t expected_bytes);
  // Waits for all. A receive that got fewer bytes than posted, or was truncated (the
  // sender's count disagreed), is noted in `mismatch`; other failures throw A2AV_ERR_MPI.
  void wait_all(Mismatch& mismatch);
  bool empty() const { return requests_.empty(); }

 private:
  std::vector<MPI_Request> requests_;
  std::vector<std::int64_t> expected_;  // bytes per request; -1 for sends
};

// Blocking exchange of two byte ranges with (possibly different) peers.
void sendrecv(const void* send, std::int64_t send_bytes, int dest, void* recv,
              std::int64_t recv_bytes, int source, int tag, MPI_Comm comm, Mismatch& mismatch);

}  // namespace a2av
