// The alltoallv algorithms: the table of their descriptors (algorithm.hpp), spec parsing
// ("name[:key=value[,key=value...]]", every name, key and value checked) and describe().
#pragma once

#include "alltoallv/algorithm.hpp"

#include <span>
#include <string>
#include <string_view>

namespace a2av {

// Every alltoallv algorithm, in the order `a2av algorithms` lists them. Adding an algorithm:
// its file defines `const AlgorithmDescriptor& NAME_algorithm()`, and one line here names it.
#define A2AV_ALLTOALLV_ALGORITHMS(X) \
  X(auto)                            \
  X(vendor)                          \
  X(linear)                          \
  X(spread_out)                      \
  X(scattered)                       \
  X(pairwise)                        \
  X(shared_memory)                   \
  X(tuna)                            \
  X(tuna_coalesced)                  \
  X(tuna_staggered)                  \
  X(node_aware)                      \
  X(bruck)

#define A2AV_DECLARE_ALGORITHM(name) const AlgorithmDescriptor& name##_algorithm();
A2AV_ALLTOALLV_ALGORITHMS(A2AV_DECLARE_ALGORITHM)
#undef A2AV_DECLARE_ALGORITHM

std::span<const AlgorithmDescriptor* const> algorithm_table();

// Throws A2AV_ERR_ALGORITHM with a message listing what is accepted.
Spec parse_spec(std::string_view text);

// What runs for `spec` on `topology`, as "name:key=value,...", with run-time defaults
// (radix=0, ...) resolved and a fallback shown as what it runs (AlgorithmDescriptor::resolve).
std::string describe(const Spec& spec, const Topology& topology);

}  // namespace a2av
