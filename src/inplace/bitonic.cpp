// inplace_bitonic: the all-to-all as a parallel sort of the elements by key (final global
// position), on Batcher's bitonic sorting network with blocks of C elements per rank and
// compare-split comparators (Zhuang et al. [Zhuang09], Section 3.2, Fig. 2-3).
// The network is the form whose comparators all put the minimum on the lower rank (a flip
// across each merge block, then half-cleaners), so for P not a power of two the virtual
// ranks P..2^L-1 hold +infinity, are never touched, and every comparator reaching one is
// skipped. Block networks with merge-split comparators sort by the 0-1 principle for
// sorted blocks (Knuth, TAOCP 5.3.4 ex. 38).
//
// Cost: L(L+1)/2 steps, L = ceil(log2 P); each step exchanges two run lists (O(P) each),
// swaps the m elements that must cross (never more than C, fillers not sent), and merges
// two run lists locally (merge_runs). Extra memory: the chunk buffer plus run lists.
#include "inplace/algorithms.hpp"

namespace a2av::inplace {
namespace {

void compare_split(State& s, int peer, bool lower) {
  const Runs theirs = exchange_runs(s, peer);
  const std::int64_t c = s.length();
  const std::int64_t m = lower ? upper_share(s.runs, theirs, c) : upper_share(theirs, s.runs, c);
  if (m == 0) return;
  const std::int64_t keep = c - m;
  if (lower) {  // our last m elements for their first m
    const Runs out = slice_runs(s.runs, keep, m), in = slice_runs(theirs, 0, m);
    swap_range(s, peer, s.base + keep * s.elem(), out, in);
    s.runs = merge_runs(s.base, s.elem(), slice_runs(s.runs, 0, keep), in, s.scratch);
  } else {
    const Runs out = slice_runs(s.runs, 0, m), in = slice_runs(theirs, keep, m);
    swap_range(s, peer, s.base, out, in);
    s.runs = merge_runs(s.base, s.elem(), in, slice_runs(s.runs, m, keep), s.scratch);
  }
  s.note_runs(s.runs.size());
}

}  // namespace

std::int64_t upper_share(std::span<const Run> lower, std::span<const Run> upper, std::int64_t c) {
  std::size_t i = 0, j = 0;
  std::int64_t taken = 0, from_upper = 0;
  while (taken < c && j < upper.size()) {
    if (i < lower.size() && lower[i].key < upper[j].key) {
      taken += lower[i++].length;
      continue;
    }
    const std::int64_t t = std::min(upper[j++].length, c - taken);
    from_upper += t;
    taken += t;
  }
  return from_upper;
}

Runs bitonic_keep(std::span<const Run> mine, std::span<const Run> theirs, std::int64_t m,
                  bool lower, std::int64_t c) {
  if (lower) return merge_run_lists(slice_runs(mine, 0, c - m), slice_runs(theirs, 0, m));
  return merge_run_lists(slice_runs(theirs, c - m, m), slice_runs(mine, m, c - m));
}

void run_bitonic(State& state) {
  const int rank = state.ctx.rank;
  for_each_bitonic_step(rank, state.ctx.size,
                        [&](int peer) { compare_split(state, peer, rank < peer); });
}

}  // namespace a2av::inplace
