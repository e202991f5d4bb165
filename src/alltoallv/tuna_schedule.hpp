// TuNA's schedule: its rounds, batches, store size, header and memory bound, as functions
// of P and the parameters alone. The engine (tuna.cpp) runs it and the cost model
// (tuning/cost_model.cpp) counts it, both from here.
// Source: Fan et al. [Fan24], Sections III-A..III-C, Algorithm 1.
#pragma once

#include "alltoallv/algorithm.hpp"

#include <climits>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace a2av {

// One TuNA round: send to rank+distance, receive from rank-distance. Every block whose
// distance (dest - source mod P) has base-radix digit `digit` equal to `value` moves.
struct TunaRound {
  int digit;
  int value;
  int distance;                // value * radix^digit
  std::vector<int> forwarded;  // distances of the blocks other than the direct one
};

// The rounds for P ranks and a radix already clamped to 2..P, digit by digit; within a digit
// the values in bit-reversed order, so that rounds in flight together (a batch, a window
// under the bound on requests) go to distances spread over the digit, not to one stretch
// of the ring behind one link.
std::vector<TunaRound> tuna_rounds(int size, int radix);
// The same, computed once per (P, radix) and thread: the engines' per-call lookup.
const std::vector<TunaRound>& cached_tuna_rounds(int size, int radix);

// The rounds in flight together: [first, last) index ranges of up to `batch` rounds, all
// of one digit (rounds of different digits depend on each other). The blocking tuna slides
// a window of `batch` rounds through each digit instead; the cost model takes its batches.
std::vector<std::pair<std::size_t, std::size_t>> tuna_batches(const std::vector<TunaRound>& rounds,
                                                              int batch);

// Blocks ever held in the temporary store: distances with two or more nonzero digits,
// i.e. P - (K+1) for K rounds (Fan et al. [Fan24], Section III-C).
int tuna_stored_blocks(int size, int radix);

// Radix and batch after defaults and clamping: radix 0 means ceil(sqrt(P)).
int tuna_radix(std::int64_t requested, int size);
int tuna_batch(std::int64_t requested, int radix);

// The ranks per node hierarchical TuNA runs with: `requested` if positive (emulated nodes),
// else the detected node size if nodes are uniform and contiguous; 0 when that size does not
// divide P or the nodes are unusable, and the exchange falls back to flat TuNA.
int hierarchical_node_size(std::int64_t requested, int size, int detected, bool uniform);

// The tuna family's parameters.
inline constexpr Param kRadix{
    "radix", 2, INT_MAX, 0, "base of the rounds, 2..P (larger is clamped to P)", "ceil(sqrt P)"};
inline constexpr Param kBatch{"batch",       1, INT_MAX, 0, "rounds of one digit in flight at once",
                              "radix-1: all"};
// The paper finds r = P (every block direct) best above 8 KiB on Polaris (Section V-B,
// Figure 7); so by default blocks above 8 KiB skip the rounds.
inline constexpr Param kDirectAbove{"direct_above", 0, std::int64_t{1} << 62, 8192,
                                    "blocks larger than this many bytes travel directly, not "
                                    "in rounds"};
// The hierarchical variants' own.
inline constexpr Param kNodesPerBatch{"block_count", 1, INT_MAX, 8,
                                      "remote nodes exchanged with per batch"};
inline constexpr Param kRanksPerNode{
    "ranks_per_node", 0, INT_MAX, 0, "ranks per node", "0: detected by MPI_COMM_TYPE_SHARED"};

// Radix, batch and the direct threshold of a tuna-family spec on `size` ranks.
struct TunaShape {
  int radix;
  int batch;
  std::int64_t direct_above;  // blocks above this many bytes travel directly, not in rounds
};
TunaShape tuna_shape(const ParamValues& params, int size);

// Under a bound of `limit` requests in flight (core/p2p.hpp, at least 8): a quarter for the
// large blocks, which wait until after the rounds where they would not fit, the rest for the
// rounds, three requests each (the direct block both ways, the forwarded message).
constexpr int tuna_large_budget(int limit) {
  return limit / 4 > 2 ? limit / 4 : 2;
}
constexpr int tuna_rounds_in_flight(int batch, int limit) {
  const int fit = (limit - tuna_large_budget(limit)) / 3;
  return batch < fit ? (batch > 1 ? batch : 1) : (fit > 1 ? fit : 1);
}

// Hierarchical TuNA's shares of the same bound: tuna's quarter for the large blocks, which
// wait until after phase 2 where they would not fit; the rest for phase 1's TuNA (which runs
// beside them) and, in phase 2, first for the node pairs of a batch, three requests each (the
// front's receive, the front and its entries sent), then, once those are done, for the
// window of the blocks that go alone.
struct HierarchicalShares {
  int large, rest, batch;
};
constexpr HierarchicalShares hierarchical_shares(int limit, int block_count) {
  const int large = tuna_large_budget(limit), rest = limit - large;
  const int fit = rest / 3 > 1 ? rest / 3 : 1;
  return {large, rest, block_count < fit ? (block_count > 1 ? block_count : 1) : fit};
}
static_assert(hierarchical_shares(8, 8).large + 3 * hierarchical_shares(8, 8).batch <= 8);

// Bytes of a forwarded message's header for `blocks` forwarded blocks: its length, the
// sender's knowledge of failed ranks (code, rank), and one size per block.
constexpr std::int64_t tuna_header_words(std::size_t blocks) {
  return 3 + static_cast<std::int64_t>(blocks);
}
constexpr std::int64_t tuna_header_bytes(std::size_t blocks) {
  return 8 * tuna_header_words(blocks);
}

// Documented bound on TuNA's temporary bytes for blocks of at most `max_block` bytes: only
// blocks of at most `direct_above` bytes are ever stored or packed, so the bound does not grow
// with larger blocks.
std::int64_t tuna_memory_bound(int size, const TunaShape& shape, std::int64_t max_block);

}  // namespace a2av
