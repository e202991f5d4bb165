// a2av: the command-line tool of the a2av library; an MPI program, run it under mpiexec.
//
//   mpiexec -n 4 a2av bench --algorithms all -m 16:16384 --json bench.json
//
// Every rank parses the same arguments and so fails alike on bad ones; rank 0 prints.
// Exit status: 0 done, 1 a result failed validation or could not be written, 2 bad arguments.
#include "algorithms_command.hpp"
#include "bench_command.hpp"
#include "cli.hpp"
#include "collectives_bench.hpp"
#include "environment_command.hpp"
#include "fixpoints_command.hpp"
#include "inplace_bench.hpp"
#include "machines_command.hpp"
#include "model_command.hpp"
#include "redistribute_bench.hpp"
#include "sparse_bench.hpp"
#include "tune_command.hpp"
#include "validate.hpp"

#include <a2av/error.hpp>

#include <fmt/core.h>
#include <mpi.h>
#include "cli11.hpp"

#include <string>

namespace {

constexpr int kUsageError = 2;

std::string command_line(int argc, char** argv) {
  std::string text = "a2av";
  for (int i = 1; i < argc; ++i) text += fmt::format(" {}", argv[i]);
  return text;
}

int run(int argc, char** argv, int rank) {
  CLI::App app{"a2av: benchmark the a2av alltoallv algorithms; run under mpiexec", "a2av"};
  app.require_subcommand(1);
  a2av::bench::BenchOptions bench;
  const CLI::App* bench_command = a2av::bench::add_bench_command(app, bench);
  a2av::bench::ModelOptions model;
  const CLI::App* model_command = a2av::bench::add_model_command(app, model);
  a2av::tune::TuneOptions tune;
  const CLI::App* tune_command = a2av::tune::add_tune_command(app, tune);
  a2av::tool::AlgorithmsOptions algorithms;
  const CLI::App* algorithms_command = a2av::tool::add_algorithms_command(app, algorithms);
  a2av::tool::EnvironmentOptions environment;
  const CLI::App* environment_command = a2av::tool::add_environment_command(app, environment);
  a2av::fixpoints::FixpointOptions fixpoints;
  const CLI::App* fixpoints_command = a2av::fixpoints::add_fixpoints_command(app, fixpoints);
  a2av::tool::MachinesOptions machines;
  const CLI::App* machines_command = a2av::tool::add_machines_command(app, machines);
  app.set_version_flag("--version", a2av::tool::version_text());
  const std::string footer = a2av::tool::data_footer();
  app.footer(footer);
  for (CLI::App* command : app.get_subcommands({})) command->footer(footer);
  try {
    app.parse(argc, argv);
    if (*bench_command && bench.inplace) {
      if (!bench_command->count("--pattern")) bench.pattern = "zhuang1,zhuang2,zhuang3,zhuang4";
      if (!bench_command->count("--iterations")) bench.iterations = 5;
      if (!bench_command->count("--warmup")) bench.warmup = 1;
      return a2av::bench::run_inplace_bench(bench, command_line(argc, argv));
    }
    if (*bench_command && bench.collectives) {
      if (!bench_command->count("--message-size")) bench.message_sizes = "16:1048576";
      if (!bench_command->count("--iterations")) bench.iterations = 10;
      if (!bench_command->count("--warmup")) bench.warmup = 2;
      return a2av::bench::run_collectives_bench(bench, command_line(argc, argv));
    }
    if (*bench_command && bench.redistribute) {
      if (!bench_command->count("--algorithms"))
        bench.algorithms = "parking,cyclic,cyclic:dictionary=1,auto";
      if (!bench_command->count("--iterations")) bench.iterations = 3;
      if (!bench_command->count("--warmup")) bench.warmup = 1;
      return a2av::bench::run_redistribute_bench(bench, command_line(argc, argv));
    }
    if (*bench_command && bench.sparse) {
      if (!bench_command->count("--algorithms"))
        bench.algorithms = "mpi,nbx,grid,dense,shared_memory,auto";
      if (!bench_command->count("--pattern"))
        bench.pattern = "random:1,random:4,random:16,random:64,stencil2d,stencil3d,powerlaw";
      if (!bench_command->count("--message-size")) bench.message_sizes = "16:4096";
      if (!bench_command->count("--iterations")) bench.iterations = 10;
      if (!bench_command->count("--warmup")) bench.warmup = 2;
      return a2av::bench::run_sparse_bench(bench, command_line(argc, argv));
    }
    if (*bench_command) return a2av::bench::run_bench(bench, command_line(argc, argv));
    if (*model_command) return rank == 0 ? a2av::bench::run_model(model) : 0;
    if (*tune_command) return a2av::tune::run_tune(tune, command_line(argc, argv));
    if (*fixpoints_command) return rank == 0 ? a2av::fixpoints::run_fixpoints(fixpoints) : 0;
    if (*environment_command) return rank == 0 ? a2av::tool::run_environment(environment) : 0;
    if (*algorithms_command) return rank == 0 ? a2av::tool::run_algorithms(algorithms) : 0;
    if (*machines_command) return rank == 0 ? a2av::tool::run_machines(machines) : 0;
  } catch (const CLI::ParseError& e) {
    const int rc = rank == 0 ? app.exit(e) : e.get_exit_code();
    return rc == 0 ? 0 : kUsageError;
  } catch (const a2av::bench::ValidationFailure&) {
    return 1;  // the ranks that saw it have said why
  } catch (const std::invalid_argument& e) {
    if (rank == 0)
      fmt::print(stderr, "a2av {}: error: {}\n", app.get_subcommands().front()->get_name(),
                 e.what());
    return kUsageError;
  } catch (const a2av::Error& e) {
    if (rank == 0) fmt::print(stderr, "a2av: error: {}\n", e.what());
    return kUsageError;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const int rc = run(argc, argv, rank);
  MPI_Finalize();
  return rc;
}
