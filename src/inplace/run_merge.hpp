// Local data movement of the in-place exchange, at run granularity, with one bounded
// scratch buffer (the exchange's chunk buffer) as the only extra memory.
//
// merge_runs merges two adjacent key-ordered run lists. Runs of the two lists never
// interleave (runs.hpp), so the merge is a stable merge whose items are whole runs: the
// adaptive scheme of std::inplace_merge (libstdc++ __merge_adaptive) with runs for items.
// If one side fits in the scratch, one buffered pass (linear); otherwise split the side with
// more runs at its middle run, find that key's place in the other side, rotate the two
// middle parts and recurse, so each level moves every byte at most once and there are at
// most log2(runs) levels: O(n log R) byte moves for n elements in R runs, O(1) memory
// besides the scratch. Element-level merging (merge.hpp) is not usable here because the
// elements carry no keys; the run lists do.
#pragma once

#include "inplace/runs.hpp"

#include <cstddef>
#include <cstdint>
#include <span>

namespace a2av::inplace {

struct Scratch {
  std::byte* data;
  std::int64_t bytes;
};

// Rotates [first, last) so that [middle, last) comes first (Gries-Mills block swaps, or one
// pass through the scratch when the smaller part fits).
void rotate_bytes(std::byte* first, std::byte* middle, std::byte* last, Scratch scratch);

// base holds the elements of `left` then those of `right`, each in key order; afterwards it
// holds them all in key order. Returns the merged run list.
Runs merge_runs(std::byte* base, std::int64_t elem_size, std::span<const Run> left,
                std::span<const Run> right, Scratch scratch);

}  // namespace a2av::inplace
