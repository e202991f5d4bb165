// The 0-1 analysis of the bitonic merger (Mundani and Rank [Mundani11], Sections II-B,
// II-C, III-A, III-B; Fig. 1 and Fig. 2), on 64-bit words, no MPI.
//
// Why the enumeration is fast: a comparator step of Fig. 1 pairs i with i + d (bit d of i
// clear), so a state passes the merger unchanged exactly when s[i] <= s[j] for every index j
// whose bits contain those of i: the fixpoints are the monotone Boolean functions on log2 N
// variables (Dedekind numbers 6, 20, 168, 7581, 7828354 for N = 4..64), and the incorrect
// states are those minus the N + 1 sorted words. One merge pass always ends in a fixpoint
// (Section II-B's "all 1's shifted downward as far as possible"): the first step leaves
// top = a AND b <= bottom = a OR b, which the identical half-mergers preserve, as comparator
// networks are monotone. So the fixpoints of N are the pairs (a, b) of fixpoints of N/2 with
// a <= b bitwise (the paper's "combinations of the 1-distributions in subsequent halves"):
// 7581^2 subset tests give all 7.8 million states of N = 64.
#include <a2av/route.hpp>

#include "core/check.hpp"

#include <algorithm>
#include <bit>

namespace a2av {
namespace {

constexpr int kMaxSize = 64;

std::uint64_t low_bits(int n) {
  return n >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << n) - 1;
}

// One parallel comparator step: every position i in `lower` meets i + d and keeps the minimum
// (AND), i + d the maximum (OR); positions in no pair keep their bit.
std::uint64_t compare_step(std::uint64_t x, std::uint64_t lower, int d) {
  const std::uint64_t lo = x & lower, hi = (x >> d) & lower;
  return (x & ~(lower | (lower << d))) | (lo & hi) | ((lo | hi) << d);
}

class Network01 {
 public:
  explicit Network01(int size) : size_(size) {
    if (size < 1 || size > kMaxSize || !std::has_single_bit(static_cast<unsigned>(size)))
      fail(A2AV_ERR_ARG, "0-1 analysis: N = {} is not a power of two in 1..{}", size, kMaxSize);
    for (int d = size / 2; d >= 1; d /= 2) merge_lower_.push_back(merge_pairs(d));
    odd_lower_ = neighbour_pairs(1);
    even_lower_ = neighbour_pairs(0);
  }

  std::uint64_t all() const { return low_bits(size_); }

  std::uint64_t merge(std::uint64_t x) const {
    int d = size_ / 2;
    for (std::uint64_t lower : merge_lower_) x = compare_step(x, lower, d), d /= 2;
    return x;
  }

  std::uint64_t correct(std::uint64_t x, Correction method) const {
    x = compare_step(x, odd_lower_, 1);
    return method == Correction::transposition ? compare_step(x, even_lower_, 1) : x;
  }

  bool sorted(std::uint64_t x) const { return x == (all() & ~low_bits(size_ - std::popcount(x))); }

  // Ends: see correction_rounds_01.
  int rounds(std::uint64_t x, Correction method) const {
    int r = 0;
    for (; !sorted(x); ++r) x = merge(correct(x, method));
    return r;
  }

 private:
  // Lower ends of the pairs (i, i + d) of a merge step: bit d of i clear.
  std::uint64_t merge_pairs(int d) const {
    std::uint64_t m = 0;
    for (int i = 0; i < size_; ++i)
      if ((i & d) == 0) m |= std::uint64_t{1} << i;
    return m;
  }

  // Lower ends of the transposition pairs (i, i + 1), i = first, first + 2, ...
  std::uint64_t neighbour_pairs(int first) const {
    std::uint64_t m = 0;
    for (int i = first; i + 1 < size_; i += 2) m |= std::uint64_t{1} << i;
    return m;
  }

  int size_;
  std::vector<std::uint64_t> merge_lower_;  // distance size/2, size/4, ..., 1
  std::uint64_t odd_lower_ = 0, even_lower_ = 0;
};

std::vector<std::uint64_t> all_fixpoints(int size);

// Calls visit(s) for every fixpoint s of the merger of `size` inputs, sorted ones included.
template <class Visit>
void for_each_fixpoint(int size, Visit&& visit) {
  if (size == 1) {
    visit(std::uint64_t{0});
    visit(std::uint64_t{1});
    return;
  }
  const int half = size / 2;
  const std::vector<std::uint64_t> halves = all_fixpoints(half);
  for (std::uint64_t b : halves)
    for (std::uint64_t a : halves)
      if ((a & ~b) == 0) visit(a | (b << half));
}

// Not a template, so that the recursion instantiates for_each_fixpoint once.
std::vector<std::uint64_t> all_fixpoints(int size) {
  std::vector<std::uint64_t> states;
  for_each_fixpoint(size, [&](std::uint64_t s) { states.push_back(s); });
  return states;
}

// Counts a state needing r rounds; the first state found needing the most is kept.
void tally(std::vector<std::uint64_t>& histogram, std::uint64_t& slowest, std::uint64_t state,
           int r) {
  if (static_cast<int>(histogram.size()) <= r) {
    histogram.resize(r + 1);
    slowest = state;
  }
  ++histogram[r];
}

}  // namespace

std::uint64_t bitonic_merge_01(std::uint64_t state, int size) {
  return Network01(size).merge(state);
}

int correction_rounds_01(std::uint64_t state, int size, Correction method) {
  return Network01(size).rounds(state, method);
}

std::vector<std::uint64_t> incorrect_states(int size) {
  if (size > 32) fail(A2AV_ERR_ARG, "incorrect_states: N = {} above 32; use fixpoint_census", size);
  const Network01 net(size);
  std::vector<std::uint64_t> states;
  for_each_fixpoint(size, [&](std::uint64_t s) {
    if (!net.sorted(s)) states.push_back(s);
  });
  std::sort(states.begin(), states.end());
  return states;
}

FixpointCensus fixpoint_census(int size) {
  const Network01 net(size);
  FixpointCensus census{.size = size, .first_phase = {0}, .transposition = {0}};
  for_each_fixpoint(size, [&](std::uint64_t s) {
    if (net.sorted(s)) return;
    ++census.incorrect;
    tally(census.first_phase, census.slowest_first_phase, s,
          net.rounds(s, Correction::first_phase));
    tally(census.transposition, census.slowest_transposition, s,
          net.rounds(s, Correction::transposition));
  });
  return census;
}

int predicted_rounds(std::span<const int> dest, Correction method) {
  const int ranks = static_cast<int>(dest.size());
  const Network01 net(static_cast<int>(std::bit_ceil(static_cast<unsigned>(std::max(ranks, 1)))));
  int most = 0;
  for (int t = 1; t < ranks; ++t) {
    // 1 where the key is >= t; the virtual ranks hold +infinity.
    std::uint64_t word = net.all() & ~low_bits(ranks);
    for (int i = 0; i < ranks; ++i)
      if (dest[i] >= t) word |= std::uint64_t{1} << i;
    most = std::max(most, net.rounds(net.merge(word), method));
  }
  return most;
}

}  // namespace a2av
