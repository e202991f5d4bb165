// node_aware's parameters and the facts of its schedule that the cost model and the
// selector share with it (node_aware.cpp).
#pragma once

#include "core/spec.hpp"

#include <climits>
#include <cstdint>

namespace a2av {

inline constexpr Param kAggregateAbove{
    "direct_above", 0, std::int64_t{1} << 62, 8192,
    "blocks larger than this many bytes travel directly, not aggregated (at most 1 MiB / P)"};
inline constexpr Param kAgents{
    "agents", 0, INT_MAX, 0, "ranks of a node that exchange with remote nodes", "0: all of them"};
inline constexpr Param kNodeRadix{
    "radix",
    0,
    INT_MAX,
    0,
    "TuNA's rounds over the nodes with this radix (clamped to 2..N; nodes of one size)",
    "0: each pair of nodes exchanges one message"};

// The largest block node_aware aggregates at P = size: direct_above, at most 1 MiB / P (its
// staging budget per rank).
std::int64_t node_aware_threshold(std::int64_t direct_above, int size);
// The local rank of `node` (of `ranks` ranks) that exchanges with node `remote` of `nodes`:
// remote nodes dealt round-robin, starting after `node`, over its first `agents` ranks (0: all).
int node_aware_agent(int node, int remote, int nodes, int ranks, std::int64_t agents);

}  // namespace a2av
