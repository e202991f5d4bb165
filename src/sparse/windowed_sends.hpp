// A sparse exchange's MPI sends under the bound on requests in flight (docs/design.md,
// "Messages in flight"): posted in order while fewer than the bound are in flight, each
// completion making room for the next. Never waited for: a rank that cannot post more goes
// on receiving, which is what its peers' sends need to complete.
#pragma once

#include "core/memory.hpp"
#include "sparse/byte_message.hpp"
#include "sparse/sparse.hpp"

#include <mpi.h>

#include <deque>
#include <vector>

namespace a2av {

class WindowedSends {
 public:
  // `synchronous`: MPI_Issend (NBX counts a completed send as matched), else MPI_Isend.
  WindowedSends(std::vector<const Parcel*> parcels, int tag, MPI_Comm comm, bool synchronous,
                MemoryTracker& memory);
  ~WindowedSends();
  WindowedSends(const WindowedSends&) = delete;
  WindowedSends& operator=(const WindowedSends&) = delete;

  // Completes what has completed and posts more while there is room; true once every message
  // is posted and complete.
  bool advance();

 private:
  std::vector<const Parcel*> parcels_;
  std::size_t next_ = 0;            // the first parcel not posted
  std::vector<MPI_Request> slots_;  // at most the bound; null where free
  std::vector<int> done_;           // MPI_Testsome's indices
  std::deque<ByteMessage> types_;   // of the messages posted, until the exchange ends
  int in_flight_ = 0;
  int tag_;
  MPI_Comm comm_;
  bool synchronous_;
  MemoryTracker& memory_;
  std::int64_t held_ = 0;
};

}  // namespace a2av
