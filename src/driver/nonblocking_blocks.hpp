// What a nonblocking call keeps for as long as its operation runs: its own copies of the count
// and displacement arrays (the caller's may be gone once the start returns: the preload's
// converted arrays are), and, for the schedules that move bytes, packed copies of data in
// non-contiguous datatypes (core/call.hpp's NormalizedCall), so that they see one byte range
// per peer whatever the datatypes. The byte view is not for MPI_IN_PLACE (the direct schedule
// takes those calls).
#pragma once

#include "core/call.hpp"
#include "core/memory.hpp"

#include <cstdint>
#include <vector>

namespace a2av {

// The call with its arrays copied (those it has: not the send side of MPI_IN_PLACE).
class CallCopy {
 public:
  CallCopy() = default;
  CallCopy(const CallCopy&) = delete;
  CallCopy& operator=(const CallCopy&) = delete;
  // Copies `call`'s arrays, reusing this copy's storage; its datatypes' layout beside them.
  void assign(const Call& call, int size, const TypeInfo& send_type, const TypeInfo& recv_type);
  // Whether `call` is the call copied: the same buffers, datatype handles and layouts (queried
  // again: a freed handle may come back as another type), counts and displacements. Never
  // for MPI_IN_PLACE, nor for a copy never assigned.
  bool repeats(const Call& call, int size) const;

  const Call& call() const { return call_; }
  std::int64_t bytes() const;

 private:
  std::vector<MPI_Count> sendcounts_, recvcounts_;
  std::vector<MPI_Aint> sdispls_, rdispls_;
  TypeInfo send_type_{}, recv_type_{};
  Call call_{};
};

class NonblockingBlocks {
 public:
  NonblockingBlocks() = default;
  NonblockingBlocks(const NonblockingBlocks&) = delete;
  NonblockingBlocks& operator=(const NonblockingBlocks&) = delete;
  // Takes `call`, reusing this object's storage; packs the send data if its type is not
  // contiguous.
  void assign(const Call& call, const CheckedCall& checked, int size);

  // The same call again (CallCopy::repeats): the layout stands; packs the send data anew.
  bool repeats(const Call& call, int size) const { return copy_.repeats(call, size); }
  void again() { view_.begin(); }

  const Call& call() const { return copy_.call(); }
  const TypeInfo& send_type() const { return view_.send_type(); }
  const TypeInfo& recv_type() const { return view_.recv_type(); }
  const ByteBlocks& send() const { return view_.send(); }
  const ByteBlocks& recv() const { return view_.recv(); }
  // This rank's block to itself; false (and as much as fits copied) if the two sides'
  // sizes disagree.
  bool copy_own_block(int rank) const;
  // Once the exchange is complete: the received data to the caller's buffer if its type
  // is not contiguous.
  void finish() { view_.finish(); }
  // Whether the data goes through packed copies.
  bool copies() const { return view_.copies(); }
  // The packed copies and the arrays.
  std::int64_t temp_bytes() const;

 private:
  CallCopy copy_;
  MemoryTracker memory_;  // before view_, which releases into it
  NormalizedCall view_;
};

}  // namespace a2av
