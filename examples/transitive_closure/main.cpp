// transitive_closure: all pairs (u, v) with a path from u to v, by semi-naive evaluation with
// one a2av all-to-all shuffle per iteration (TuNA paper, Section VI-B), checked against a
// serial closure on rank 0; --bench times the shuffles under each algorithm.
#include "closure.hpp"
#include "graph.hpp"
#include "serial.hpp"

#include <mpi.h>
#include <CLI/CLI.hpp>

#include <cmath>
#include <cstdio>
#include <exception>
#include <optional>
#include <string>
#include <vector>

namespace {

using tc::Tuple;

struct Options {
  std::string input;  // empty: R-MAT
  tc::RmatParameters rmat;
  std::string algorithm = "auto";
  bool bench = false;
  std::vector<std::string> algorithms{"vendor", "auto", "inplace_bitonic"};
  bool check = true;
  std::int64_t check_limit = 2'000'000;  // edges; larger graphs are not checked
};

struct Graph {
  std::vector<Tuple> mine;  // this rank's share of the edges
  std::vector<Tuple> all;   // every edge, on rank 0 when the check runs
  std::int64_t edges = 0;   // in the input (before dropping repeats)
};

bool checked(const Options& o, std::int64_t edges) {
  return o.check && edges <= o.check_limit;
}

// Every rank reads the file and keeps every P-th edge: no rank needs the graph alone but
// rank 0 for the check.
Graph load(const Options& o, int rank, int ranks) {
  Graph graph;
  if (!o.input.empty()) {
    std::vector<Tuple> all = tc::read_edge_list(o.input);
    graph.edges = static_cast<std::int64_t>(all.size());
    for (std::size_t i = rank; i < all.size(); i += ranks) graph.mine.push_back(all[i]);
    if (rank == 0 && checked(o, graph.edges)) graph.all = std::move(all);
    return graph;
  }
  const std::int64_t m = o.rmat.edges;
  graph.edges = m;
  graph.mine = tc::rmat_edges(o.rmat, m * rank / ranks, m * (rank + 1) / ranks);
  if (rank == 0 && checked(o, m)) graph.all = tc::rmat_edges(o.rmat, 0, m);
  return graph;
}

// The serial reference on rank 0, shared with every rank (nullopt: not checked).
std::optional<tc::ClosureSummary> reference(const Options& o, const Graph& graph, int rank) {
  if (!checked(o, graph.edges)) return std::nullopt;
  std::uint64_t s[2] = {0, 0};
  if (rank == 0) {
    const tc::ClosureSummary r = tc::serial_closure(graph.all);
    s[0] = r.size;
    s[1] = r.hash;
  }
  MPI_Bcast(s, 2, MPI_UINT64_T, 0, MPI_COMM_WORLD);
  return tc::ClosureSummary{s[0], s[1]};
}

const char* verdict(const tc::ClosureRun& run, const std::optional<tc::ClosureSummary>& ref) {
  if (!ref) return "not checked";
  return run.summary.size == ref->size && run.summary.hash == ref->hash ? "OK" : "FAILED";
}

bool failed(const tc::ClosureRun& run, const std::optional<tc::ClosureSummary>& ref) {
  return ref && std::string(verdict(run, ref)) != "OK";
}

double max_over_ranks(double x) {
  MPI_Allreduce(MPI_IN_PLACE, &x, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return x;
}

int run_once(const Options& o, const Graph& graph, const std::optional<tc::ClosureSummary>& ref,
             int rank) {
  const tc::ClosureRun run = tc::distributed_closure(graph.mine, o.algorithm, MPI_COMM_WORLD);
  const double total = max_over_ranks(run.seconds), exchange = max_over_ranks(run.exchange_seconds);
  if (rank == 0)
    std::printf(
        "closure: %llu pairs, hash %016llx, %d iterations, %.3f s (exchanges %.3f s, "
        "%s ran %s); serial check: %s\n",
        static_cast<unsigned long long>(run.summary.size),
        static_cast<unsigned long long>(run.summary.hash), run.iterations, total, exchange,
        o.algorithm.c_str(), run.ran.c_str(), verdict(run, ref));
  return failed(run, ref) ? 1 : 0;
}

int run_bench(const Options& o, const Graph& graph, const std::optional<tc::ClosureSummary>& ref,
              int rank) {
  if (rank == 0)
    std::printf(
        "# seconds, max over ranks; speedup = vendor / this\n"
        "%-18s %-38s %6s %9s %11s %9s %9s  %s\n",
        "algorithm", "ran", "iters", "total_s", "exchange_s", "speedup", "spd_total", "check");
  int failures = 0;
  double vendor_total = 0, vendor_exchange = 0;
  for (const std::string& algorithm : o.algorithms) {
    const tc::ClosureRun run = tc::distributed_closure(graph.mine, algorithm, MPI_COMM_WORLD);
    const double total = max_over_ranks(run.seconds);
    const double exchange = max_over_ranks(run.exchange_seconds);
    if (algorithm == "vendor") vendor_total = total, vendor_exchange = exchange;
    failures += failed(run, ref);
    if (rank == 0)
      std::printf("%-18s %-38s %6d %9.3f %11.3f %9.2f %9.2f  %s (%llu pairs)\n", algorithm.c_str(),
                  run.ran.c_str(), run.iterations, total, exchange,
                  vendor_exchange > 0 ? vendor_exchange / exchange : NAN,
                  vendor_total > 0 ? vendor_total / total : NAN, verdict(run, ref),
                  static_cast<unsigned long long>(run.summary.size));
  }
  return failures == 0 ? 0 : 1;
}

void add_options(CLI::App& app, Options& o) {
  app.add_option("--input", o.input, "edge-list file (see README); default: an R-MAT graph")
      ->check(CLI::ExistingFile);
  app.add_option("--scale", o.rmat.scale, "R-MAT: 2^scale vertex ids")->check(CLI::Range(1, 31));
  app.add_option("--edges", o.rmat.edges, "R-MAT: edges drawn")->check(CLI::PositiveNumber);
  app.add_option("--seed", o.rmat.seed, "R-MAT: seed");
  app.add_option("--algorithm", o.algorithm,
                 "shuffle: an a2av spec (auto, vendor, tuna:radix=2, ...) or inplace, "
                 "inplace_bitonic, inplace_pairwise (the in-place engine)");
  app.add_flag("--bench", o.bench, "run the closure under each of --algorithms");
  app.add_option("--algorithms", o.algorithms, "for --bench")->delimiter(',');
  app.add_flag("!--no-check", o.check, "skip the serial check on rank 0");
  app.add_option("--check-limit", o.check_limit, "check graphs of at most this many edges");
}

int run(const Options& o) {
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  const Graph graph = load(o, rank, ranks);
  if (rank == 0)
    std::printf("transitive_closure: %s, %lld edges, P=%d\n",
                o.input.empty() ? ("R-MAT scale " + std::to_string(o.rmat.scale) + " seed " +
                                   std::to_string(o.rmat.seed))
                                      .c_str()
                                : o.input.c_str(),
                static_cast<long long>(graph.edges), ranks);
  const auto ref = reference(o, graph, rank);
  return o.bench ? run_bench(o, graph, ref, rank) : run_once(o, graph, ref, rank);
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  CLI::App app{"Transitive closure with a2av shuffles (TuNA paper, Section VI-B)"};
  Options options;
  add_options(app, options);
  int status = 0;
  try {
    app.parse(argc, argv);
    status = run(options);
  } catch (const CLI::ParseError& e) {
    status = rank == 0 ? app.exit(e) : (e.get_exit_code() != 0);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "transitive_closure: rank %d: %s\n", rank, e.what());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  MPI_Finalize();
  return status;
}
