// The state both in-place algorithms work on, and the steps they share: building each
// rank's key-ordered run list and memory layout from the counts, exchanging run lists with
// a partner, and swapping equal-length ranges with a partner through the chunk buffer.
// Source: Zhuang et al. [Zhuang09], Section 2 (problem), Section 3.1 (swap).
#pragma once

#include "core/comm_context.hpp"
#include "core/memory.hpp"
#include "inplace/run_merge.hpp"
#include "inplace/runs.hpp"

#include <mpi.h>

#include <cstdint>
#include <span>
#include <vector>

namespace a2av::inplace {

// What every rank agreed on, and this rank's counts: all O(P).
struct Layout {
  std::int64_t elem_size = 0;             // bytes per element
  std::int64_t length = 0;                // C: elements every rank holds during the exchange
  std::vector<std::int64_t> send;         // s(rank, j), elements
  std::vector<std::int64_t> recv;         // s(j, rank), elements
  std::vector<std::int64_t> recv_totals;  // receive total of every rank
  std::vector<std::int64_t> send_prefix;  // sum over ranks k < rank of s(k, j), per j
};

struct State {
  const CommContext& ctx;
  std::byte* base;  // the caller's buffer, C elements used
  const Layout& layout;
  Runs runs;                  // this rank's elements, in memory order = key order
  Scratch scratch;            // the chunk buffer, for swaps and merges
  std::size_t peak_runs = 0;  // largest run list seen, either side (metadata accounting)

  std::int64_t elem() const { return layout.elem_size; }
  std::int64_t length() const { return layout.length; }
  void note_runs(std::size_t n) { peak_runs = std::max(peak_runs, n); }
};

// This rank's runs before the exchange: for each destination its data, then its share of
// that destination's fillers (rank i's fillers are the global filler positions
// [i*C - sum_{k<i} send total(k), ...), destination by destination).
Runs initial_runs(int rank, const Layout& layout);

// The real elements of `runs` lie packed at `base` (the send data before the exchange, or a
// window's arrivals): moves each to its run's position, fillers becoming gaps. Backwards,
// so no byte is overwritten before it moves.
void spread_to_runs(std::byte* base, std::int64_t elem_size, std::span<const Run> runs);

// Whether `runs` is what rank `rank` must end with: its real keys then its fillers.
bool is_final(int rank, const Layout& layout, std::span<const Run> runs);

// The partner's run list for ours (both call it).
Runs exchange_runs(State& state, int peer);
void send_runs(State& state, int peer, std::span<const Run> runs);
Runs recv_runs(State& state, int peer);

// Swaps this rank's range at `range` (elements described by `mine`) with the partner's
// equal-length range (described by `theirs`), window by window through the scratch. Only
// real elements travel; fillers' places keep whatever they held.
void swap_range(State& state, int peer, std::byte* range, std::span<const Run> mine,
                std::span<const Run> theirs);

}  // namespace a2av::inplace
