// inplace_bitonic: the all-to-all as a parallel sort of the elements by key (final global
// position), on Batcher's bitonic sorting network with blocks of C elements per rank and
// compare-split comparators (zhuang-memory-efficient-alltoallv.txt, Section 3.2, Fig. 2-3).
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

// Elements of `upper` among the C smallest of both lists.
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

int ceil_log2(int n) {
  int l = 0;
  while ((1 << l) < n) ++l;
  return l;
}

}  // namespace

int bitonic_steps(int size) {
  const int l = ceil_log2(size);
  return l * (l + 1) / 2;
}

void run_bitonic(State& state) {
  const int rank = state.ctx.rank, size = state.ctx.size;
  const int levels = ceil_log2(size);
  for (int k = 1; k <= levels; ++k) {
    for (int j = k - 1; j >= 0; --j) {
      // The first step of a merge pairs across the whole block (flip), the rest are
      // half-cleaners; either way the lower rank keeps the minimum.
      const int peer = j == k - 1 ? rank ^ ((1 << k) - 1) : rank ^ (1 << j);
      if (peer >= size) continue;
      compare_split(state, peer, rank < peer);
    }
  }
}

}  // namespace a2av::inplace
