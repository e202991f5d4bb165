// The byte view of a nonblocking call for as long as its operation runs: its own copies of
// the count and displacement arrays (the caller's may be gone once the start returns: the
// preload's converted arrays are), and packed copies of data in non-contiguous datatypes
// (core/call.hpp's NormalizedCall), so the schedules see one byte range per peer whatever
// the datatypes. Not for MPI_IN_PLACE (the direct schedule takes those calls).
#pragma once

#include "core/call.hpp"
#include "core/memory.hpp"

#include <cstdint>
#include <vector>

namespace a2av {

class NonblockingBlocks {
 public:
  // Packs the send data if its type is not contiguous.
  NonblockingBlocks(const Call& call, const CheckedCall& checked, int size);
  NonblockingBlocks(const NonblockingBlocks&) = delete;
  NonblockingBlocks& operator=(const NonblockingBlocks&) = delete;

  const ByteBlocks& send() const { return view_.send(); }
  const ByteBlocks& recv() const { return view_.recv(); }
  // This rank's block to itself; false (and as much as fits copied) if the two sides'
  // sizes disagree.
  bool copy_own_block(int rank) const;
  // Once the exchange is complete: the received data to the caller's buffer if its type
  // is not contiguous.
  void finish() { view_.finish(); }
  // The packed copies and the arrays.
  std::int64_t temp_bytes() const;

 private:
  std::vector<MPI_Count> sendcounts_, recvcounts_;
  std::vector<MPI_Aint> sdispls_, rdispls_;
  MemoryTracker memory_;  // before view_, which releases into it
  NormalizedCall view_;
};

}  // namespace a2av
