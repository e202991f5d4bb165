// The reference for checking: the closure computed on one rank by a search from every
// vertex, an algorithm independent of the distributed semi-naive join.
#pragma once

#include "tuples.hpp"

#include <cstdint>
#include <vector>

namespace tc {

struct ClosureSummary {
  std::uint64_t size = 0;  // pairs (u, v) with a path of one edge or more from u to v
  std::uint64_t hash = 0;  // sum of mix(pair) over those pairs, mod 2^64
};

ClosureSummary serial_closure(std::vector<Tuple> edges);

}  // namespace tc
