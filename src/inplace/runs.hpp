// A rank's part of the in-place exchange described as runs, never per element.
//
// Every element has a key: its final global position, dest * C + offset, where C is the
// agreed per-rank length and offset its place in S(dest) = s(0,dest) ... s(P-1,dest)
// followed by the fillers of dest (C - recv_total(dest) of them). Sorting all P * C elements
// by key is the exchange, and keys are distinct, so a rank's elements, kept in key order
// in memory, are a list of runs: intervals of consecutive keys. Two runs of different ranks
// never interleave, so merging two run lists moves whole runs (split at most at a cut).
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

namespace a2av::inplace {

struct Run {
  std::int64_t key = 0;     // key of the first element
  std::int64_t length = 0;  // elements
  std::int64_t filler = 0;  // 1: placeholders with no data (never sent)

  std::int64_t end() const { return key + length; }
};

using Runs = std::vector<Run>;

// Appends, joining with the last run when the keys continue it.
inline void append_run(Runs& runs, Run run) {
  if (run.length == 0) return;
  if (!runs.empty() && runs.back().end() == run.key && runs.back().filler == run.filler) {
    runs.back().length += run.length;
    return;
  }
  runs.push_back(run);
}

inline std::int64_t total_length(std::span<const Run> runs) {
  std::int64_t n = 0;
  for (const Run& r : runs) n += r.length;
  return n;
}

inline std::int64_t real_length(std::span<const Run> runs) {
  std::int64_t n = 0;
  for (const Run& r : runs) n += r.filler ? 0 : r.length;
  return n;
}

// The runs covering element positions [first, first + count) of the list.
inline Runs slice_runs(std::span<const Run> runs, std::int64_t first, std::int64_t count) {
  Runs out;
  std::int64_t pos = 0;
  for (const Run& r : runs) {
    const std::int64_t lo = std::max(first, pos), hi = std::min(first + count, pos + r.length);
    if (lo < hi) append_run(out, {r.key + (lo - pos), hi - lo, r.filler});
    pos += r.length;
    if (pos >= first + count) break;
  }
  return out;
}

// Elements of the list with key below `key`.
inline std::int64_t count_below(std::span<const Run> runs, std::int64_t key) {
  std::int64_t n = 0;
  for (const Run& r : runs) {
    if (r.key >= key) break;
    n += std::min(r.length, key - r.key);
  }
  return n;
}

// Both lists in key order, merged.
inline Runs merge_run_lists(std::span<const Run> a, std::span<const Run> b) {
  Runs out;
  out.reserve(a.size() + b.size());
  std::size_t i = 0, j = 0;
  while (i < a.size() || j < b.size()) {
    const bool take_a = j == b.size() || (i < a.size() && a[i].key < b[j].key);
    append_run(out, take_a ? a[i++] : b[j++]);
  }
  return out;
}

}  // namespace a2av::inplace
