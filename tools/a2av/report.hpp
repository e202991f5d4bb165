// The outputs of `a2av bench`: an OSU-like table for people, and CSV and JSON for scripts,
// in which every record carries every parameter of its run.
#pragma once

#include "bench.hpp"
#include "options.hpp"
#include "plan.hpp"
#include "world.hpp"

#include <ostream>
#include <string>
#include <vector>

namespace a2av::bench {

struct Report {
  const BenchOptions& options;
  const BenchPlan& plan;
  const World& world;
  const std::vector<Row>& rows;
  std::string command;  // the command line, for the JSON header
};

// One block per algorithm (size, median/min/max us, ratio, peak and bound bytes), then the
// best algorithm per size and its speedup over MPI_Alltoallv.
void write_table(std::ostream& out, const Report& report);

// Columns as the keys of the JSON records; a missing value is an empty field.
void write_csv(std::ostream& out, const Report& report);

// {"schema": "a2av-bench/1", "command": ..., "results": [one record per row]}.
void write_json(std::ostream& out, const Report& report);

}  // namespace a2av::bench
