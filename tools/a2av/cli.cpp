#include "cli.hpp"

#include "datatype.hpp"
#include "patterns.hpp"

#include <fmt/core.h>

#include <climits>
#include <cstdint>

namespace a2av::bench {
namespace {

std::string pattern_description() {
  std::string text = "count pattern; S is the message size of each sweep point (default uniform):";
  for (const auto& line : pattern_help()) text += "\n  " + line;
  return text;
}

void add_output_options(CLI::App& cmd, BenchOptions& o) {
  cmd.add_option("--format", o.format, "table (default), csv or json")
      ->check(CLI::IsMember({"table", "csv", "json"}));
  cmd.add_option("-o,--output", o.output, "write the --format output here (default stdout)");
  cmd.add_option("--json", o.json, "also write the results as JSON to this file");
  cmd.add_flag("--progress", o.progress,
               "show a progress line on stderr even when it is no terminal (under mpiexec "
               "the ranks' stderr is a pipe)");
}

}  // namespace

void add_sweep_options(CLI::App& cmd, BenchOptions& o) {
  cmd.add_option("--algorithms", o.algorithms,
                 "comma-separated specs (tuna:radix=4,batch=1,spread_out) or 'all' "
                 "(default); the MPI_Alltoallv baseline always runs");
  cmd.add_option("--radix", o.radices,
                 "repeat every tuna-family spec (plain tuna if none) over these radices: "
                 "integers, sqrtP (ceil(sqrt(P))), P")
      ->delimiter(',');
  cmd.add_option("--block-count", o.block_counts,
                 "repeat every scattered and hierarchical spec (plain scattered if none) over "
                 "these block counts")
      ->delimiter(',')
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{INT_MAX}));
  cmd.add_option("-m,--message-size", o.message_sizes,
                 "[min:]max bytes; powers of two times min up to max (default 16:1048576)");
  cmd.add_option("-i,--iterations", o.iterations, "timed iterations per size (default 100)")
      ->check(CLI::Range(1, INT_MAX));
  cmd.add_option("-x,--warmup", o.warmup, "discarded warm-up iterations (default 10)")
      ->check(CLI::Range(0, INT_MAX));
}

void add_data_options(CLI::App& cmd, BenchOptions& o) {
  cmd.add_option("--pattern", o.pattern, pattern_description());
  cmd.add_option("--seed", o.seed, "seed of the count matrix (default 1)");
  cmd.add_option("--datatype", o.datatype,
                 fmt::format("element type: {} (default char); counts = bytes / element size, "
                             "rounded down",
                             datatype_names()));
  cmd.add_flag("--validate,!--no-validate", o.validate,
               "check every algorithm byte for byte against MPI_Alltoallv before timing "
               "(default on)");
  cmd.add_flag("--baseline,!--no-baseline", o.baseline,
               "time MPI_Alltoallv as the reference (default on); without it, ratios are to "
               "the first algorithm and results are checked by their content");
  cmd.add_flag("--copy-bound", o.copy_bound,
               "also time memcpy_bound: each rank copies its receive volume once with memcpy, "
               "all ranks at once (one copy per byte, no exchange; the bound large blocks are "
               "compared against)");
}

CLI::App* add_bench_command(CLI::App& app, BenchOptions& options) {
  CLI::App* cmd = app.add_subcommand(
      "bench", "validate and time alltoallv algorithms against MPI_Alltoallv (run under mpiexec)");
  add_sweep_options(*cmd, options);
  add_data_options(*cmd, options);
  add_output_options(*cmd, options);
  cmd->add_flag("--inplace", options.inplace,
                "time the in-place exchange (A2AV_Exchange_inplace) instead: --algorithms from "
                "inplace_bitonic, inplace_pairwise, inplace_auto (all by default), --pattern a "
                "comma-separated list (default zhuang1,zhuang2,zhuang3,zhuang4), 5 iterations "
                "and 1 warm-up unless given");
  cmd->add_option("--elements", options.elements,
                  "--inplace: elements per rank, N (default 1048576); S = N / P")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{1} << 40));
  cmd->add_option("--element-bytes", options.element_bytes,
                  "--inplace: bytes per element (default 16)")
      ->check(CLI::Range(1, 1 << 20));
  cmd->add_flag("--collectives", options.collectives,
                "time the textbook collectives (a2av/collectives.hpp) against the vendor calls "
                "instead, with the lecture's alpha-beta prediction: --algorithms from 'all' "
                "(default), bcast, reduce, allreduce, scatter, gather, allgather, alltoall, each "
                "alone or as collective:algorithm; -m 16:1048576, 10 iterations and 2 warm-ups "
                "unless given");
  cmd->add_option("--alpha", options.alpha,
                  "--collectives: model latency in seconds (default: ping-pong of ranks 0, 1)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--beta", options.beta,
                  "--collectives: model seconds per byte (default: ping-pong of ranks 0, 1)")
      ->check(CLI::PositiveNumber);
  cmd->add_flag("--redistribute", options.redistribute,
                "time block redistribution (a2av/redistribute.hpp) on the MADRE paper's five "
                "experiments instead: --algorithms from parking, cyclic, cyclic:dictionary=1, "
                "auto (all by default), 3 iterations and 1 warm-up unless given");
  cmd->add_option("--blocks", options.blocks, "--redistribute: blocks per rank (default 2500)")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{1} << 40));
  cmd->add_option("--block-bytes", options.block_bytes,
                  "--redistribute: bytes per block (default 16000)")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{1} << 30));
  cmd->add_option("--experiments", options.experiments,
                  "--redistribute: comma-separated experiments 1-5 of the paper's Section 4 "
                  "(default all)");
  cmd->add_flag(
      "--sparse", options.sparse,
      "time the sparse exchange (a2av/sparse.hpp) instead: --algorithms from nbx, grid, "
      "dense, shared_memory, auto and mpi (MPI_Alltoall of counts + MPI_Alltoallv; all "
      "by default), --pattern from random:K, stencil2d, stencil3d, powerlaw, -m 16:4096, 10 "
      "iterations and 2 warm-ups unless given; --no-validate skips the check against "
      "plain MPI");
  return cmd;
}

}  // namespace a2av::bench
