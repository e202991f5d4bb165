// The in-place algorithms over a prepared State (sequence.hpp); each leaves state.runs
// final (is_final) on every rank.
#pragma once

#include "inplace/sequence.hpp"

#include "core/spec.hpp"

#include <span>

namespace a2av {
// The in-place family's table: inplace_bitonic, inplace_pairwise, inplace_auto
// (exchange_inplace.cpp).
std::span<const FamilyAlgorithm> inplace_algorithms();
}  // namespace a2av

namespace a2av::inplace {

void run_bitonic(State& state);   // bitonic.cpp
void run_pairwise(State& state);  // pairwise.cpp

// Whether inplace_auto takes the pairwise algorithm (auto.cpp); collective.
struct AutoChoice {
  bool pairwise;
  double pairwise_cost;  // estimated element moves on the slowest rank
  double bitonic_cost;
};
AutoChoice choose_algorithm(State& state);

// The bitonic network's partners of `rank`, step by step, skipping virtual ranks >= size.
template <class Fn>
void for_each_bitonic_step(int rank, int size, Fn fn) {
  int levels = 0;
  while ((1 << levels) < size) ++levels;
  for (int k = 1; k <= levels; ++k)
    for (int j = k - 1; j >= 0; --j) {
      // The first step of a merge pairs across the whole block (flip), the rest are
      // half-cleaners; either way the lower rank keeps the minimum.
      const int peer = j == k - 1 ? rank ^ ((1 << k) - 1) : rank ^ (1 << j);
      if (peer < size) fn(peer);
    }
}

// Elements of `upper` among the C smallest of both lists: what a compare-split swaps.
std::int64_t upper_share(std::span<const Run> lower, std::span<const Run> upper, std::int64_t c);

// The runs a rank holds after a compare-split that swapped m elements.
Runs bitonic_keep(std::span<const Run> mine, std::span<const Run> theirs, std::int64_t m,
                  bool lower, std::int64_t c);

}  // namespace a2av::inplace
