// The in-place algorithms over a prepared State (sequence.hpp); each leaves state.runs
// final (is_final) on every rank.
#pragma once

#include "inplace/sequence.hpp"

namespace a2av::inplace {

void run_bitonic(State& state);   // bitonic.cpp
void run_pairwise(State& state);  // pairwise.cpp

// Whether inplace_auto takes the pairwise algorithm (auto.cpp); collective.
struct AutoChoice {
  bool pairwise;
  double pairwise_cost;  // estimated element moves on the slowest rank
  double bitonic_cost;
};
AutoChoice choose_algorithm(const State& state);

// Compare-split steps the bitonic network makes on P ranks: L(L+1)/2, L = ceil(log2 P).
int bitonic_steps(int size);

}  // namespace a2av::inplace
