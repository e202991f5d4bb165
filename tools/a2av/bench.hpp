// The sweep of `a2av bench`: for each message size, validate every algorithm, time them
// together, and summarize each as one row.
#pragma once

#include "options.hpp"
#include "plan.hpp"
#include "world.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace a2av::bench {

// One algorithm at one message size.
struct Row {
  std::string requested;             // the spec as listed; "MPI_Alltoallv" for the baseline
  std::string algorithm;             // the spec that ran, parameters resolved
  std::int64_t size = 0;             // the sweep point's message size S, bytes
  std::int64_t max_block_bytes = 0;  // largest block actually sent, whole elements
  double median_s = 0, min_s = 0, max_s = 0;
  double ratio = 0;                           // median over the MPI_Alltoallv median
  std::optional<std::int64_t> peak_bytes;     // max over ranks; a2av algorithms only
  std::optional<std::int64_t> bound_bytes;    // a2av::temp_memory_bound; a2av algorithms only
  std::optional<std::int64_t> max_in_flight;  // A2AV_Last_in_flight, max over ranks; a2av only
  bool validated = false;
};

// Collective. Rows come size by size, the baseline first; specs that resolve to one already
// run (a clamped radix, say) are dropped, except `auto`, whose choice is the point. Throws
// ValidationFailure on every rank when any check fails.
std::vector<Row> run_sweep(const BenchPlan& plan, const BenchOptions& options, const World& world);

}  // namespace a2av::bench
