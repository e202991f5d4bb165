// Count patterns for benchmarks: seeded generators of the P x P matrix of block sizes in
// bytes (row i: what rank i sends to each rank), the same on every rank for the same
// arguments, so a run can be replayed. Spec syntax: "name[:key=value,...]" or "file:PATH".
#pragma once

#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace a2av::bench {

// counts[i][j]: bytes rank i sends rank j.
using CountMatrix = std::vector<std::vector<std::int64_t>>;

struct PatternSpec {
  std::string name;                      // e.g. "uniform", "normal", "zhuang2", "file"
  std::map<std::string, double> params;  // e.g. {"mean", 1000}, defaults filled in
  std::string path;                      // for "file"
};

// Throws std::invalid_argument naming the accepted patterns or keys.
PatternSpec parse_pattern(std::string_view text);

// The matrix for P ranks, largest block size S bytes (each pattern documents how it uses S),
// and seed. Throws std::invalid_argument for a malformed or wrongly sized file.
CountMatrix make_counts(const PatternSpec& pattern, int size, std::int64_t max_block,
                        std::uint64_t seed);

// One line per pattern: "name[:keys] - what it generates".
std::vector<std::string> pattern_help();

}  // namespace a2av::bench
