// plan_reuse: what a persistent plan saves. For each spec, `repeat` exchanges of the same
// buffers and counts (uniform 0..S bytes), timed as one block after a barrier (max over
// ranks): through A2AV_Alltoallv_with each time, then through one plan's A2AV_Start. The
// median of `trials` such blocks, per exchange, beside the vendor MPI_Alltoallv.
//
//   mpiexec -n 4 plan_reuse --sizes 16,1024 --repeat 100
#include <a2av/a2av.h>

#include <fmt/core.h>
#include <mpi.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <functional>
#include <random>
#include <string>
#include <vector>

namespace {

struct Exchange {
  std::vector<MPI_Count> sc, rc;
  std::vector<MPI_Aint> sd, rd;
  std::vector<int> isc, isd, irc, ird;
  std::vector<char> send, recv;
};

Exchange make_exchange(int rank, int size, std::int64_t max_block) {
  std::mt19937_64 rng(3);
  std::vector<std::int64_t> m(static_cast<std::size_t>(size) * size);
  for (auto& v : m) v = static_cast<std::int64_t>(rng() % (max_block + 1));
  Exchange e;
  MPI_Aint s = 0, r = 0;
  for (int j = 0; j < size; ++j) {
    e.sc.push_back(m[rank * size + j]);
    e.rc.push_back(m[j * size + rank]);
    e.sd.push_back(s);
    e.rd.push_back(r);
    s += e.sc.back();
    r += e.rc.back();
  }
  e.isc.assign(e.sc.begin(), e.sc.end());
  e.isd.assign(e.sd.begin(), e.sd.end());
  e.irc.assign(e.rc.begin(), e.rc.end());
  e.ird.assign(e.rd.begin(), e.rd.end());
  e.send.assign(s, 1);
  e.recv.assign(r, 0);
  return e;
}

// Median over trials of (time for `repeat` calls, max over ranks) / repeat.
double per_exchange(const std::function<void()>& call, int repeat, int trials) {
  std::vector<double> times;
  for (int t = 0; t < trials + 1; ++t) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double start = MPI_Wtime();
    for (int i = 0; i < repeat; ++i) call();
    double elapsed = (MPI_Wtime() - start) / repeat;
    MPI_Allreduce(MPI_IN_PLACE, &elapsed, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (t > 0) times.push_back(elapsed);  // the first block warms up
  }
  std::nth_element(times.begin(), times.begin() + times.size() / 2, times.end());
  return times[times.size() / 2];
}

void check(int rc) {
  if (rc != A2AV_SUCCESS) {
    fmt::print(stderr, "a2av: {}\n", A2AV_Last_error_message());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  CLI::App app{"Per-exchange time with and without a persistent plan"};
  std::vector<std::int64_t> sizes{16, 1024};
  std::vector<std::string> specs{"shared_memory", "spread_out", "tuna:radix=2", "tuna"};
  int repeat = 100, trials = 11;
  app.add_option("--sizes", sizes, "max block bytes S")->delimiter(',');
  app.add_option("--specs", specs, "algorithm specs")->delimiter(';');
  app.add_option("--repeat", repeat, "exchanges per timed block")->check(CLI::PositiveNumber);
  app.add_option("--trials", trials, "timed blocks")->check(CLI::PositiveNumber);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    MPI_Finalize();
    return code;
  }
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (rank == 0)
    fmt::print("{:>6} {:>7} {:<14} {:>11} {:>11} {:>11} {:>8}\n", "P", "S", "spec", "vendor_us",
               "call_us", "plan_us", "saved");
  for (std::int64_t s : sizes) {
    Exchange e = make_exchange(rank, size, s);
    const double vendor = per_exchange(
        [&] {
          MPI_Alltoallv(e.send.data(), e.isc.data(), e.isd.data(), MPI_BYTE, e.recv.data(),
                        e.irc.data(), e.ird.data(), MPI_BYTE, MPI_COMM_WORLD);
        },
        repeat, trials);
    for (const auto& spec : specs) {
      const double call = per_exchange(
          [&] {
            check(A2AV_Alltoallv_with(spec.c_str(), e.send.data(), e.sc.data(), e.sd.data(),
                                      MPI_BYTE, e.recv.data(), e.rc.data(), e.rd.data(), MPI_BYTE,
                                      MPI_COMM_WORLD));
          },
          repeat, trials);
      A2AV_Plan plan = nullptr;
      check(A2AV_Alltoallv_init(e.send.data(), e.sc.data(), e.sd.data(), MPI_BYTE, e.recv.data(),
                                e.rc.data(), e.rd.data(), MPI_BYTE, MPI_COMM_WORLD, spec.c_str(),
                                &plan));
      const double planned = per_exchange([&] { check(A2AV_Start(plan)); }, repeat, trials);
      A2AV_Plan_free(&plan);
      if (rank == 0)
        fmt::print("{:>6} {:>7} {:<14} {:>11.2f} {:>11.2f} {:>11.2f} {:>7.0f}%\n", size, s, spec,
                   vendor * 1e6, call * 1e6, planned * 1e6, 100 * (1 - planned / call));
    }
  }
  MPI_Finalize();
  return 0;
}
