// What the benchmarks beside the alltoallv sweep share (--inplace, --redistribute,
// --collectives): list arguments, the per-iteration maximum over ranks, medians, and
// writing rank 0's report as a table or JSON (plus an optional JSON copy).
#pragma once

#include "options.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

namespace a2av::bench {

// "a,b,,c" -> {"a", "b", "c"}.
std::vector<std::string> split_list(const std::string& text);

// Collective over MPI_COMM_WORLD.
double max_over_ranks(double value);
std::int64_t max_over_ranks(std::int64_t value);

double median_of(std::vector<double> values);  // 0 for none

// Rank 0 only: --format json writes `json` to --output (default stdout), else `table`;
// --json writes a copy. Returns the exit status (1 when writing failed).
int write_report(const BenchOptions& o, const std::function<void(std::ostream&)>& table,
                 const nlohmann::json& json);

}  // namespace a2av::bench
