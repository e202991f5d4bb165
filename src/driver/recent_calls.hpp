// The checked form of the last few calls a thread made, so that a call repeated with the
// same arguments (the loop of most applications) skips the argument checks, the choice of
// algorithm and the byte layout: an automatic, per-thread persistent plan. A call that is
// not found is prepared in the least recently used slot, reusing its storage, so that the
// driver allocates nothing once the slots are warm.
//
// Only calls whose errors are agreed in band, or not at all (vendor), are kept
// (exchange.hpp, Prepared::repeatable):
// everything their Prepared holds follows from this rank's own arguments and P, so equal
// arguments give an equal Prepared. A call that agrees on statistics first depends on the
// other ranks' counts, which may have changed, and is never kept. Neither is one that goes
// through temporary copies (non-contiguous datatypes).
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

#include "driver/exchange.hpp"

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

  // The Prepared of an equal earlier call, or null. The most recent hit is tried first.
  Prepared* find(const Call& call, std::string_view spec, bool validate);

  // The least recently used slot, for a call that was not found. Until keep_if_repeatable
  // keeps it, the slot is not found, and when the claim ends it lets go of the temporary
  // copies the call charged to its tracker.
  class Claim {
   public:
    explicit Claim(RecentCalls& calls);
    ~Claim();
    Claim(const Claim&) = delete;
    Claim& operator=(const Claim&) = delete;

    Prepared& prepared() { return calls_.slots_[slot_].prepared; }
    // After prepare_into(prepared()): keeps the call if it qualifies (see above).
    void keep_if_repeatable(const Call& call, std::string_view spec, bool validate);

   private:
    RecentCalls& calls_;
    std::size_t slot_;
    bool kept_ = false;
  };

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

  std::array<Key, kSlots> keys_;
  std::array<Slot, kSlots> slots_;
  std::uint64_t clock_ = 0;
  std::size_t last_hit_ = 0;
};

// This thread's recent calls.
RecentCalls& recent_calls();

}  // namespace a2av
