// The checked form of the last few calls a thread made, so that a call repeated with the
// same arguments (the loop of most applications) skips the argument checks, the choice of
// algorithm and the byte layout: an automatic, per-thread persistent plan. A call that is
// not found is prepared in the least recently used slot, reusing its storage, so that the
// driver allocates nothing once the slots are warm.
//
// The cache wraps the driver: one look-up when a call enters (prepare()), and, for a call not
// found, its preparation in the least recently used slot and one store as it leaves. With
// A2AV_VERBOSE nothing is found or kept, so that each call says what it chose.
//
// Only calls whose errors are agreed in band, or not at all (vendor), are kept
// (alltoallv.hpp, Prepared::repeatable):
// everything their Prepared holds follows from this rank's own arguments and P, so equal
// arguments give an equal Prepared. A call that agrees on statistics first depends on the
// other ranks' counts, which may have changed, and is never kept. Neither is one that goes
// through temporary copies (non-contiguous datatypes), nor one with MPI_IN_PLACE (its send
// arguments are not read: MPI lets them be anything).
//
// "Equal arguments" is checked in full on every call: the communicator handle, kept only
// while no communicator context has been freed since (contexts_generation(): a freed and
// re-created handle cannot match, and no lookup of the context is needed), the buffers, the
// datatype handles and their size and extents (queried again: a freed handle may come back
// as another type; not for vendor, which hands the types to MPI as they are), every count and
// displacement, the spec and the validation flag.
//
// Memory held between calls, per thread: per slot 8 arrays of P 64-bit values (the kept
// counts and displacements, and the byte layout), for P up to kMaxRecentSize; a call on more
// ranks gives its slot's storage back when it ends.
#pragma once

#include "driver/alltoallv.hpp"

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace a2av {

class RecentCalls {
 public:
  static constexpr int kMaxRecentSize = 256;
  static constexpr std::size_t kSlots = 16;

  // The slot a call's Prepared lives in, for the call. Where the call was prepared afresh
  // and not kept, the lease lets go, when it ends, of the temporary copies the call charged
  // to its tracker (so it must end before the tracker does).
  class Lease {
   public:
    Lease(RecentCalls& calls, std::size_t slot, bool releases)
        : calls_(&calls), slot_(slot), releases_(releases) {}
    Lease(Lease&& other) noexcept
        : calls_(other.calls_), slot_(other.slot_), releases_(other.releases_) {
      other.releases_ = false;
    }
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    ~Lease();

    Prepared& prepared() const;

   private:
    friend class RecentCalls;
    RecentCalls* calls_;
    std::size_t slot_;
    bool releases_;
  };

  // The Prepared of an equal earlier call (the most recent hit is tried first), or the call
  // prepared by the driver (prepare_into) in the least recently used slot and kept if it
  // qualifies (see above). Throws what the preparation throws.
  Lease prepare(const Call& call, std::string_view spec, bool validate, MemoryTracker& memory);

 private:
  // What is compared first, for all slots in a few cache lines.
  struct Key {
    MPI_Comm comm = MPI_COMM_NULL;  // MPI_COMM_NULL: empty
    std::uint64_t generation = 0;   // contexts_generation() when kept
    std::uint64_t last_used = 0;
    const void* sendbuf = nullptr;
    const void* recvbuf = nullptr;
    MPI_Datatype sendtype = MPI_DATATYPE_NULL;
    MPI_Datatype recvtype = MPI_DATATYPE_NULL;
    bool validate = false;
  };
  struct Slot {
    std::string spec_text;
    TypeInfo send_type, recv_type;
    // counts and displacements, send then receive, interleaved per peer: one pass compares
    std::vector<std::int64_t> layout;
    Prepared prepared;
  };
  bool matches(const Slot& slot, const Call& call, int size, std::string_view spec) const;
  // The slot of an equal earlier call, or kSlots.
  std::size_t find(const Call& call, std::string_view spec, bool validate);
  std::size_t claim_oldest();
  // Keeps the call prepared in `slot` if it qualifies; whether it did.
  bool keep_if_repeatable(std::size_t slot, const Call& call, std::string_view spec, bool validate);

  std::array<Key, kSlots> keys_;
  std::array<Slot, kSlots> slots_;
  std::uint64_t clock_ = 0;
  std::size_t last_hit_ = 0;
};

inline Prepared& RecentCalls::Lease::prepared() const {
  return calls_->slots_[slot_].prepared;
}

// This thread's recent calls.
RecentCalls& recent_calls();

}  // namespace a2av
