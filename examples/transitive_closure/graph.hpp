// The input graph of the transitive closure (TuNA paper, Section VI-B): an edge-list file
// or a seeded R-MAT (Kronecker) graph.
#pragma once

#include "tuples.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace tc {

// Reads a text edge list: one edge "source target" per line, two decimal vertex ids in
// 0..4294967294 separated by blanks; blank lines and lines starting with '#' or '%' are
// ignored. Throws std::runtime_error naming the file and line of anything else.
std::vector<Tuple> read_edge_list(const std::string& path);

struct RmatParameters {
  int scale = 22;  // 2^scale vertex ids: with 1M edges, ~4.8M closure pairs in 48 iterations
  std::int64_t edges = 1'000'000;       // edges drawn (self loops and repeats are dropped later)
  double a = 0.45, b = 0.15, c = 0.15;  // quadrant probabilities; d = 1 - a - b - c
  std::uint64_t seed = 1;
};

// Edges first..last-1 of the R-MAT graph: edge i depends on (seed, i) alone, so each rank
// draws its share and any rank can draw them all. Self loops are dropped.
std::vector<Tuple> rmat_edges(const RmatParameters& p, std::int64_t first, std::int64_t last);

}  // namespace tc
