// The tuning table `a2av tune` writes (docs/tuning.md): the fastest validated spec per
// message size at one comm size P, as first-match rules over max_block_bytes, merged with
// the rules of other comm sizes from an existing table. No MPI here, so it is unit-tested.
#pragma once

#include "bench.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace a2av::tune {

using Json = nlohmann::ordered_json;

// The fastest candidate at one sweep point.
struct Winner {
  std::int64_t size = 0;  // the sweep point's message size S, bytes
  std::string algorithm;  // the spec that ran, every parameter resolved
  double median_s = 0;
  double baseline_s = 0;  // the plain MPI_Alltoallv median at this point
};

// Per sweep point (rows as bench::run_sweep returns them), the row with the lowest median
// other than the MPI_Alltoallv baseline and auto; on a tie the first listed wins.
std::vector<Winner> fastest_per_size(const std::vector<bench::Row>& rows);

// Rules for comm size `size`: winner k covers max_block_bytes (S[k-1], S[k]], the first one
// from 0 and the last one without bound; neighbours with the same algorithm become one rule.
Json rules_for(int size, const std::vector<Winner>& winners);

// The whole table: the rules of `existing` (null: none) except those for exactly this comm
// size and the fallbacks, `rules` placed ahead of every kept rule that could match `size`,
// then one spread_out fallback. The comment keeps `existing`'s lines but this size's and
// adds `note`, which must begin with "P=<size>: ".
Json merge_table(const Json& existing, int size, const Json& rules, const std::string& note);

// One rule per line, so the file reads as a table and the line numbers in the library's
// load errors point at one rule each.
std::string format_table(const Json& table);

}  // namespace a2av::tune
