// fft: a distributed 3-D complex-to-complex FFT whose transposes go through a2av (TuNA paper,
// Section VI-A, with its N1 and N2 configurations), checked against FFTW's own MPI transform
// and by a forward-backward round trip; --bench times the exchanges under each algorithm.
#include "check.hpp"
#include "distributed_fft.hpp"
#include "exchange.hpp"

#include <fftw3-mpi.h>
#include <mpi.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <exception>
#include <sstream>
#include <string>
#include <vector>

namespace {

using fft::cplx;

constexpr double kTolerance = 1e-12;

struct Options {
  std::vector<std::int64_t> size{60, 45, 36};
  std::string config;  // "n1" or "n2": the paper's sizes for this rank count
  std::string decomposition = "slab";
  std::vector<int> grid{0, 0};
  std::string algorithm = "auto";
  bool bench = false;
  std::vector<std::string> algorithms{"vendor", "auto", "inplace_bitonic"};
  int iterations = 10;
  std::uint64_t seed = 1;
};

// N1 = ceil(0.625 P) x ceil(0.78125 P) x 8: ranks below ceil(0.625 P) hold one x plane and
// send one 8-element row to each of the first ceil(0.78125 P) ranks; the rest are idle.
// N2 = P x (4 (P-1) + 1) x 8: every rank sends 32 elements (64 FP64) to each rank but the
// last, which gets 8 (16 FP64). TuNA paper, Section VI-A.
fft::Shape problem_shape(const Options& o, int ranks) {
  const auto p = static_cast<std::int64_t>(ranks);
  if (o.config == "n1") return {(5 * p + 7) / 8, (25 * p + 31) / 32, 8};
  if (o.config == "n2") return {p, 4 * (p - 1) + 1, 8};
  return {o.size[0], o.size[1], o.size[2]};
}

struct Check {
  double error = 0;      // against FFTW MPI
  double roundtrip = 0;  // backward(forward(x)) / N against x
  bool ok() const { return error < kTolerance && roundtrip < kTolerance; }
};

Check run_checked(fft::DistributedFft& transform, fft::Exchange& exchange, std::uint64_t seed,
                  MPI_Comm comm) {
  std::vector<cplx> data;
  fft::fill_input(data, transform.input_layout(), seed);
  transform.forward(data, exchange);
  Check check;
  check.error = fft::error_vs_fftw_mpi(data, transform.output_layout(), seed, comm);
  transform.backward(data, exchange);
  check.roundtrip = fft::roundtrip_error(data, transform.backward_layout(), seed, comm);
  return check;
}

struct Timing {
  double total = 0;     // seconds per forward + backward: median over iterations of the
  double exchange = 0;  // max over ranks; exchange: the part inside a2av calls
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}

// One untimed warm-up, then `iterations` timed forward + backward transforms.
Timing time_transforms(fft::DistributedFft& transform, fft::Exchange& exchange, int iterations,
                       std::uint64_t seed, MPI_Comm comm) {
  std::vector<double> totals, exchanges;
  std::vector<cplx> data;
  for (int i = -1; i < iterations; ++i) {
    fft::fill_input(data, transform.input_layout(), seed);
    exchange.reset();
    MPI_Barrier(comm);
    const double t0 = MPI_Wtime();
    transform.forward(data, exchange);
    transform.backward(data, exchange);
    double t[2] = {MPI_Wtime() - t0, exchange.seconds()};
    MPI_Allreduce(MPI_IN_PLACE, t, 2, MPI_DOUBLE, MPI_MAX, comm);
    if (i < 0) continue;
    totals.push_back(t[0]);
    exchanges.push_back(t[1]);
  }
  return {median(totals), median(exchanges)};
}

std::string describe(const Options& o, const fft::Shape& n, const fft::DistributedFft& t,
                     int ranks) {
  std::ostringstream s;
  s << "fft " << o.decomposition << " " << n[0] << "x" << n[1] << "x" << n[2];
  if (!o.config.empty()) s << " (config " << o.config << ")";
  s << ", P=" << ranks << " (grid " << t.grid()[0] << "x" << t.grid()[1] << ")";
  return s.str();
}

int run_once(const Options& o, fft::DistributedFft& transform, int rank, MPI_Comm comm) {
  fft::Exchange exchange(o.algorithm);
  const Check check = run_checked(transform, exchange, o.seed, comm);
  if (rank == 0)
    std::printf("algorithm %s (ran %s): error vs FFTW MPI %.3g, round trip %.3g: %s\n",
                o.algorithm.c_str(), exchange.ran().c_str(), check.error, check.roundtrip,
                check.ok() ? "OK" : "FAILED");
  return check.ok() ? 0 : 1;
}

int run_bench(const Options& o, fft::DistributedFft& transform, int rank, MPI_Comm comm) {
  if (rank == 0)
    std::printf(
        "# %d iterations of forward + backward; ms per iteration, median of the max "
        "over ranks; speedup = vendor / this\n%-17s %-38s %10s %12s %9s %9s  %s\n",
        o.iterations, "algorithm", "ran", "total_ms", "exchange_ms", "speedup", "spd_total",
        "check");
  int failures = 0;
  Timing vendor{};
  for (const std::string& algorithm : o.algorithms) {
    fft::Exchange exchange(algorithm);
    const Check check = run_checked(transform, exchange, o.seed, comm);
    const Timing t = time_transforms(transform, exchange, o.iterations, o.seed, comm);
    if (algorithm == "vendor") vendor = t;
    failures += check.ok() ? 0 : 1;
    if (rank != 0) continue;
    std::printf("%-17s %-38s %10.3f %12.3f %9.2f %9.2f  %s (error %.2g, round trip %.2g)\n",
                algorithm.c_str(), exchange.ran().c_str(), t.total * 1e3, t.exchange * 1e3,
                vendor.exchange > 0 ? vendor.exchange / t.exchange : NAN,
                vendor.total > 0 ? vendor.total / t.total : NAN, check.ok() ? "OK" : "FAILED",
                check.error, check.roundtrip);
  }
  return failures == 0 ? 0 : 1;
}

void add_options(CLI::App& app, Options& o) {
  app.add_option("--size", o.size, "n0,n1,n2: the global array (x, y, z)")
      ->delimiter(',')
      ->expected(3)
      ->check(CLI::PositiveNumber);
  app.add_option("--config", o.config, "the TuNA paper's sizes for this rank count")
      ->check(CLI::IsMember({"n1", "n2"}));
  app.add_option("--decomposition", o.decomposition, "slab or pencil")
      ->check(CLI::IsMember({"slab", "pencil"}));
  app.add_option("--grid", o.grid, "R,C: pencil process grid (default: MPI_Dims_create)")
      ->delimiter(',')
      ->expected(2);
  app.add_option("--algorithm", o.algorithm,
                 "exchange: an a2av spec (auto, vendor, tuna:radix=2, ...) or inplace, "
                 "inplace_bitonic, inplace_pairwise (the in-place engine)");
  app.add_flag("--bench", o.bench, "time the transforms under each of --algorithms");
  app.add_option("--algorithms", o.algorithms, "for --bench")->delimiter(',');
  app.add_option("--iterations", o.iterations, "timed forward + backward pairs (--bench)")
      ->check(CLI::PositiveNumber);
  app.add_option("--seed", o.seed, "input seed");
}

int run(const Options& o, MPI_Comm comm) {
  int ranks = 0, rank = 0;
  MPI_Comm_size(comm, &ranks);
  MPI_Comm_rank(comm, &rank);
  const fft::Shape n = problem_shape(o, ranks);
  const auto decomposition =
      o.decomposition == "pencil" ? fft::Decomposition::pencil : fft::Decomposition::slab;
  fft::DistributedFft transform(n, decomposition, {o.grid[0], o.grid[1]}, comm);
  if (rank == 0) std::printf("%s\n", describe(o, n, transform, ranks).c_str());
  return o.bench ? run_bench(o, transform, rank, comm) : run_once(o, transform, rank, comm);
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  fftw_mpi_init();
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  CLI::App app{"Distributed 3-D FFT with a2av transposes (TuNA paper, Section VI-A)"};
  Options options;
  add_options(app, options);
  int status = 0;
  try {
    app.parse(argc, argv);
    status = run(options, MPI_COMM_WORLD);
  } catch (const CLI::ParseError& e) {
    status = rank == 0 ? app.exit(e) : (e.get_exit_code() != 0);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fft: rank %d: %s\n", rank, e.what());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  fftw_mpi_cleanup();
  MPI_Finalize();
  return status;
}
