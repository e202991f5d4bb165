#include "tune_command.hpp"

#include "cli.hpp"

#include "bench.hpp"
#include "datatype.hpp"
#include "plan.hpp"
#include "report.hpp"
#include "tune_table.hpp"
#include "tuning/table.hpp"
#include "world.hpp"

#include <a2av/error.hpp>

#include <fmt/core.h>
#include <mpi.h>

#include <climits>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace a2av::tune {
namespace {

using bench::BenchPlan;
using bench::Row;
using bench::World;

void add_output_options(CLI::App& cmd, TuneOptions& o) {
  cmd.add_option("-o,--output", o.output, "the tuning table to write (default a2av-tuning.json)");
  cmd.add_option("--merge", o.merge,
                 "keep the rules for other comm sizes from this table (it may be --output)");
  cmd.add_option("--json", o.sweep.json, "also write the sweep's results as bench's JSON");
  cmd.add_flag("--progress", o.sweep.progress,
               "show a progress line on stderr even when it is no terminal");
}

// With --algorithms all (the default) the radices and block counts worth trying, unless given;
// an explicit list runs as listed, as in bench, rather than gaining tuna and scattered.
bench::BenchOptions with_default_sweeps(bench::BenchOptions sweep) {
  if (sweep.algorithms != "all") return sweep;
  if (sweep.radices.empty()) sweep.radices = {"2", "4", "sqrtP", "P"};
  if (sweep.block_counts.empty()) sweep.block_counts = {1, 4, 16};
  return sweep;
}

// bench's plan without auto: a rule cannot choose auto, and its choice is what is tuned.
BenchPlan candidate_plan(const bench::BenchOptions& options, const World& world) {
  BenchPlan plan = bench::make_plan(options, world);
  std::erase_if(plan.specs,
                [](const std::string& spec) { return spec.substr(0, spec.find(':')) == "auto"; });
  if (plan.specs.empty()) throw std::invalid_argument("--algorithms: no candidate but auto");
  return plan;
}

// Rank 0 alone touches files (ranks need not share a file system); its verdict goes to every
// rank, so all end alike, and main prints rank 0's message.
void agree(const std::string& rank0_error) {
  int bad = !rank0_error.empty();
  MPI_Bcast(&bad, 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (bad) throw std::invalid_argument(rank0_error);
}

Json read_existing(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::invalid_argument(fmt::format("--merge: cannot read '{}'", path));
  std::stringstream text;
  text << in.rdbuf();
  try {
    TuningTable::parse(text.str(), path);  // what the library would reject, rejected here
  } catch (const a2av::Error& e) {
    throw std::invalid_argument(fmt::format("--merge: {}", e.what()));
  }
  return Json::parse(text.str());
}

// Appending truncates nothing: --output may be the --merge table, read only after the sweep.
bool writable(const std::string& path) {
  std::error_code ignored;  // the open below is the test; these only tidy up
  const bool existed = std::filesystem::exists(path, ignored);
  const bool ok = static_cast<bool>(std::ofstream(path, std::ios::app));
  if (ok && !existed) std::filesystem::remove(path, ignored);
  return ok;
}

// Before the sweep, so a bad --merge table or an unwritable path fails in seconds.
Json prepare_files(const TuneOptions& o, const World& w) {
  Json existing;
  std::string error;
  if (w.rank == 0) {
    try {
      if (!o.merge.empty()) existing = read_existing(o.merge);
      if (!writable(o.output))
        throw std::invalid_argument(fmt::format("--output: cannot write '{}'", o.output));
      if (!o.sweep.json.empty() && !writable(o.sweep.json))
        throw std::invalid_argument(fmt::format("--json: cannot write '{}'", o.sweep.json));
    } catch (const std::exception& e) {  // any, or the other ranks would wait for ever
      error = e.what();
    }
  }
  agree(error);
  return existing;
}

std::string note(const TuneOptions& o, const BenchPlan& plan, const World& w) {
  const bench::BenchOptions& s = o.sweep;
  return fmt::format(
      "P={}: a2av tune, {} ranks per node, pattern {}, seed {}, datatype {}, {}..{} B; "
      "fastest median of {} iterations (after {} warm-up) among {} validated candidates; {}",
      w.size, w.ranks_per_node, s.pattern, s.seed, plan.datatype.name, plan.sizes.front(),
      plan.sizes.back(), s.iterations, s.warmup, plan.specs.size(), w.mpi_library);
}

std::string write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
  out.flush();
  return out ? "" : fmt::format("writing '{}' failed", path);
}

// Read back as A2AV_TUNING_FILE would be: the library must accept the file and choose each
// winner at its own size.
std::string check_written(const std::string& path, const World& w,
                          const std::vector<Winner>& winners) {
  try {
    const TuningTable table = TuningTable::load(path);
    for (const auto& winner : winners) {
      ExchangeStats stats;
      stats.size = w.size;
      stats.ranks_per_node = w.ranks_per_node;
      stats.max_block = winner.size;
      const TuningRule* rule = table.match(stats);
      if (!rule || rule->algorithm != winner.algorithm)
        return fmt::format("'{}' does not choose {} at {} bytes", path, winner.algorithm,
                           winner.size);
    }
  } catch (const a2av::Error& e) {
    return e.what();
  }
  return "";
}

std::string write_sweep(const TuneOptions& o, const bench::Report& report) {
  std::ofstream out(o.sweep.json);
  bench::write_json(out, report);
  out.flush();
  return out ? "" : fmt::format("writing '{}' failed", o.sweep.json);
}

void print_winners(const TuneOptions& o, const BenchPlan& plan, const World& w,
                   const std::vector<Winner>& winners) {
  fmt::print("# a2av tune: P={}, {} ranks per node, pattern {}, seed {}, datatype {} ({} B)\n",
             w.size, w.ranks_per_node, o.sweep.pattern, o.sweep.seed, plan.datatype.name,
             plan.datatype.bytes);
  fmt::print(
      "# {} candidates validated against MPI_Alltoallv; fastest median of {} iterations after "
      "{} warm-up; times in us, max over ranks\n",
      plan.specs.size(), o.sweep.iterations, o.sweep.warmup);
  std::size_t width = 7;
  for (const auto& winner : winners) width = std::max(width, winner.algorithm.size());
  fmt::print("# {:>10} {:<{}} {:>12} {:>18}\n", "Size (B)", "Fastest", width, "Median (us)",
             "MPI_Alltoallv (us)");
  for (const auto& winner : winners)
    fmt::print("  {:>10} {:<{}} {:>12.2f} {:>18.2f}\n", winner.size, winner.algorithm, width,
               winner.median_s * 1e6, winner.baseline_s * 1e6);
}

// Rank 0: the table (checked), the sweep's JSON if asked, the summary; throws what failed.
int write_outputs(const TuneOptions& o, const BenchPlan& plan, const World& w,
                  const std::vector<Row>& rows, const Json& existing, const std::string& command) {
  const std::vector<Winner> winners = fastest_per_size(rows);
  const Json rules = rules_for(w.size, winners);
  const Json table = merge_table(existing, w.size, rules, note(o, plan, w));
  std::string error = write_file(o.output, format_table(table));
  if (error.empty()) error = check_written(o.output, w, winners);
  if (error.empty() && !o.sweep.json.empty())
    error = write_sweep(o, bench::Report{o.sweep, plan, w, rows, command});
  if (!error.empty()) throw std::runtime_error(error);
  print_winners(o, plan, w, winners);
  fmt::print(
      "# wrote {}: {} rule(s) for P={}, {} kept from --merge, 1 fallback; read back and "
      "accepted by the library\n",
      o.output, rules.size(), w.size, table.at("rules").size() - rules.size() - 1);
  return 0;
}

// The other ranks wait in a broadcast for rank 0's status, so nothing may escape from here.
int finish_on_rank0(const TuneOptions& o, const BenchPlan& plan, const World& w,
                    const std::vector<Row>& rows, const Json& existing,
                    const std::string& command) {
  try {
    return write_outputs(o, plan, w, rows, existing, command);
  } catch (const std::exception& e) {
    fmt::print(stderr, "a2av tune: error: {}\n", e.what());
    return 1;
  }
}

}  // namespace

CLI::App* add_tune_command(CLI::App& app, TuneOptions& options) {
  CLI::App* cmd = app.add_subcommand(
      "tune",
      "time the alltoallv algorithms at this P and write the fastest per message size as a "
      "tuning table for A2AV_TUNING_FILE (run under mpiexec)");
  bench::add_sweep_options(*cmd, options.sweep);
  bench::add_data_options(*cmd, options.sweep);
  cmd->remove_option(cmd->get_option("--validate"));  // tuning always validates
  cmd->get_option("--algorithms")
      ->description(
          "candidate specs, comma-separated as for bench, or 'all' (default): every registered "
          "algorithm, with radices 2,4,sqrtP,P and block counts 1,4,16 unless given; auto is "
          "never a candidate");
  add_output_options(*cmd, options);
  return cmd;
}

int run_tune(const TuneOptions& given, const std::string& command) {
  TuneOptions options = given;
  options.sweep = with_default_sweeps(given.sweep);
  const World world = bench::find_world();
  const BenchPlan plan = candidate_plan(options.sweep, world);
  const Json existing = prepare_files(options, world);
  const std::vector<Row> rows = bench::run_sweep(plan, options.sweep, world);
  int status = world.rank == 0 ? finish_on_rank0(options, plan, world, rows, existing, command) : 0;
  MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
  return status;
}

}  // namespace a2av::tune
