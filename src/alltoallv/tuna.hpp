// The TuNA engine, shared by `tuna` and the hierarchical variants.
#pragma once

#include "alltoallv/tuna_schedule.hpp"

#include <cstdint>
#include <utility>
#include <vector>

namespace a2av {

// The blocks of one TuNA exchange; `recv` sizes are what this rank expects.
struct TunaBlocks {
  const ByteBlocks& send;
  const ByteBlocks& recv;
};

// How TuNA runs: its shape (tuna_schedule.hpp); `peers` set for in-band agreement on
// errors (core/p2p.hpp, PeerErrors), with `failed_code` nonzero on a rank whose own arguments
// failed (it then runs the schedule with empty blocks and drops what reaches it).
struct TunaOptions : TunaShape {
  PeerErrors* peers = nullptr;
  int failed_code = 0;
};

// Runs TuNA among the ranks of `group` on byte blocks with known receive sizes.
void tuna_exchange(const CommContext& group, const TunaBlocks& blocks, const TunaOptions& options,
                   MemoryTracker& memory, Mismatch& mismatch);

// In-band agreement for a rank that rejected its arguments while its peers run TuNA: it runs
// the rounds with empty blocks, forwarding its peers' blocks and its code.
void announce_error_tuna(const CommContext& ctx, const Params& params, int code, PeerErrors& peers);
// The same for the hierarchical variants (flat TuNA's where they run it).
void announce_error_tuna_coalesced(const CommContext& ctx, const Params& params, int code,
                                   PeerErrors& peers);
void announce_error_tuna_staggered(const CommContext& ctx, const Params& params, int code,
                                   PeerErrors& peers);

}  // namespace a2av
