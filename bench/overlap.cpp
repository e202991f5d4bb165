// overlap: how much of a nonblocking exchange hides behind computation, the method of the
// OSU micro-benchmarks' osu_ialltoallv. For each block size S (every rank sends S bytes to
// every rank) and each side (the vendor MPI_Ialltoallv, A2AV_Ialltoallv):
//   pure    = start; wait                      (median over trials, max over ranks)
//   total   = start; compute for `pure`; wait  (the computation spins, calling MPI_Test on
//             the request every `test_every` microseconds; 0 = never, as in OSU's default)
//   overlap = 100 * (1 - (total - pure) / pure), clamped to 0..100: the share of the
//             exchange's time that the computation hid.
//
//   mpiexec -n 2 overlap --sizes 1024,65536,1048576 --test-every 0,50
#include <a2av/a2av.h>

#include <fmt/core.h>
#include <mpi.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <functional>
#include <string>
#include <vector>

namespace {

struct Exchange {
  std::vector<int> counts, displs;
  std::vector<char> send, recv;
};

Exchange make_exchange(int size, int block) {
  Exchange e;
  for (int j = 0; j < size; ++j) {
    e.counts.push_back(block);
    e.displs.push_back(j * block);
  }
  e.send.assign(static_cast<std::size_t>(size) * block, 1);
  e.recv.assign(static_cast<std::size_t>(size) * block, 0);
  return e;
}

using Start = std::function<MPI_Request()>;

// Spins for `seconds`, testing `request` every `test_every` seconds (never if 0).
void compute(double seconds, double test_every, MPI_Request& request) {
  const double start = MPI_Wtime();
  double next_test = test_every > 0 ? start + test_every : 1e300;
  int done = 0;
  for (double now = start; now - start < seconds; now = MPI_Wtime()) {
    if (now >= next_test && !done) {
      MPI_Test(&request, &done, MPI_STATUS_IGNORE);
      next_test = now + test_every;
    }
  }
}

// Median over trials of one start-(compute)-wait, max over ranks.
double timed(const Start& start, double compute_seconds, double test_every, int trials) {
  std::vector<double> times;
  for (int t = 0; t < trials + 2; ++t) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double begin = MPI_Wtime();
    MPI_Request request = start();
    if (compute_seconds > 0) compute(compute_seconds, test_every, request);
    MPI_Wait(&request, MPI_STATUS_IGNORE);
    double elapsed = MPI_Wtime() - begin;
    MPI_Allreduce(MPI_IN_PLACE, &elapsed, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (t >= 2) times.push_back(elapsed);  // two warm-up runs
  }
  std::nth_element(times.begin(), times.begin() + times.size() / 2, times.end());
  return times[times.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  CLI::App app{"Overlap of computation with MPI_Ialltoallv and A2AV_Ialltoallv (OSU method)"};
  std::vector<int> sizes{1024, 16384, 262144};
  std::vector<double> test_every_us{0, 50};
  int trials = 21;
  app.add_option("--sizes", sizes, "block bytes per rank pair")->delimiter(',');
  app.add_option("--test-every", test_every_us, "MPI_Test interval in us (0: never)")
      ->delimiter(',');
  app.add_option("--trials", trials, "timed runs per case")->check(CLI::PositiveNumber);
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
    fmt::print("{:>4} {:>8} {:>9} {:<18} {:>10} {:>10} {:>8}\n", "P", "S", "test_us", "side",
               "pure_us", "total_us", "overlap");
  for (int s : sizes) {
    Exchange e = make_exchange(size, s);
    const Start vendor = [&] {
      MPI_Request r;
      MPI_Ialltoallv(e.send.data(), e.counts.data(), e.displs.data(), MPI_BYTE, e.recv.data(),
                     e.counts.data(), e.displs.data(), MPI_BYTE, MPI_COMM_WORLD, &r);
      return r;
    };
    const Start a2av = [&] {
      MPI_Request r = MPI_REQUEST_NULL;
      if (A2AV_Ialltoallv(e.send.data(), e.counts.data(), e.displs.data(), MPI_BYTE, e.recv.data(),
                          e.counts.data(), e.displs.data(), MPI_BYTE, MPI_COMM_WORLD,
                          &r) != A2AV_SUCCESS) {
        fmt::print(stderr, "a2av: {}\n", A2AV_Last_error_message());
        MPI_Abort(MPI_COMM_WORLD, 1);
      }
      return r;
    };
    for (double every : test_every_us) {
      for (const auto& [name, start] :
           {std::pair{"MPI_Ialltoallv", vendor}, std::pair{"A2AV_Ialltoallv", a2av}}) {
        const double pure = timed(start, 0, 0, trials);
        const double total = timed(start, pure, every * 1e-6, trials);
        const double overlap = std::clamp(100 * (1 - (total - pure) / pure), 0.0, 100.0);
        if (rank == 0)
          fmt::print("{:>4} {:>8} {:>9} {:<18} {:>10.2f} {:>10.2f} {:>7.0f}%\n", size, s, every,
                     name, pure * 1e6, total * 1e6, overlap);
      }
    }
  }
  MPI_Finalize();
  return 0;
}
