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
void announce_error_tuna(const CommContext& ctx, const ParamValues& params, int code,
                         PeerErrors& peers);

// The run, radix resolution and memory bound the hierarchical variants share with tuna.
void run_tuna(const AlgorithmCall& ex, const ParamValues& params);
void resolve_tuna_shape(Spec& spec, int group);
std::int64_t tuna_bound(const BoundInput& in, const ParamValues& p);

}  // namespace a2av
