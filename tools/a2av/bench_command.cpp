#include "bench_command.hpp"

#include "bench.hpp"
#include "plan.hpp"
#include "report.hpp"
#include "world.hpp"

#include <fmt/core.h>
#include <fmt/ranges.h>
#include <mpi.h>

#include <fstream>
#include <iostream>
#include <stdexcept>
#include <utility>
#include <vector>

namespace a2av::bench {
namespace {

// Rank 0 writes every report. Its files are opened before the sweep, so a bad path fails
// in seconds rather than after the run, and on every rank.
struct Outputs {
  std::ofstream output, json;

  Outputs(const BenchOptions& o, const World& w) {
    std::vector<std::string> failed;
    for (auto [file, path] : {std::pair{&output, &o.output}, std::pair{&json, &o.json}}) {
      if (w.rank != 0 || path->empty()) continue;
      file->open(*path);
      if (!*file) failed.push_back(fmt::format("cannot write '{}'", *path));
    }
    int bad = !failed.empty();
    MPI_Bcast(&bad, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (bad)
      throw std::invalid_argument(w.rank == 0 ? fmt::format("{}", fmt::join(failed, "; "))
                                              : "cannot open an output file");
  }
};

void write(std::ostream& out, const std::string& format, const Report& report) {
  if (format == "csv")
    write_csv(out, report);
  else if (format == "json")
    write_json(out, report);
  else
    write_table(out, report);
}

}  // namespace

int run_bench(const BenchOptions& options, const std::string& command) {
  const World world = find_world();
  const BenchPlan plan = make_plan(options, world);
  Outputs outputs(options, world);
  const std::vector<Row> rows = run_sweep(plan, options, world);
  if (world.rank != 0) return 0;

  const Report report{options, plan, world, rows, command};
  std::ostream& out = options.output.empty() ? std::cout : outputs.output;
  write(out, options.format, report);
  if (!options.json.empty()) write_json(outputs.json, report);
  out.flush();
  outputs.json.flush();
  if (!out || (!options.json.empty() && !outputs.json)) {
    fmt::print(stderr, "a2av bench: error: writing the results failed\n");
    return 1;
  }
  return 0;
}

}  // namespace a2av::bench
