#include "timing.hpp"

#include <a2av/a2av.h>

#include <fmt/core.h>
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <random>

namespace a2av::bench {
namespace {

// A call that passed validation and then fails is a library fault with no agreed way out:
// peers may be blocked inside the exchange, so only MPI_Abort ends the run reliably.
[[noreturn]] void abort_run(const Entry& e, int rc) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  fmt::print(stderr, "a2av bench: rank {}: {} failed while timing: {}\n", rank,
             e.baseline() ? "MPI_Alltoallv" : e.requested,
             e.baseline() ? fmt::format("MPI error {}", rc) : A2AV_Error_string(rc));
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, 1);
  std::abort();
}

double time_one(const Entry& e, Buffers& buffers) {
  MPI_Barrier(MPI_COMM_WORLD);
  const double start = MPI_Wtime();
  int rc = MPI_SUCCESS;
  if (e.baseline())
    rc = buffers.run_baseline();
  else if (e.copy_bound())
    buffers.run_copy_bound();
  else
    rc = buffers.run(e.requested);
  const double seconds = MPI_Wtime() - start;
  if (rc != MPI_SUCCESS) abort_run(e, rc);
  return seconds;
}

}  // namespace

void time_entries(std::vector<Entry>& entries, Buffers& buffers, int iterations, int warmup,
                  Progress& progress, const std::string& label) {
  const std::size_t n = entries.size();
  std::vector<double> local(static_cast<std::size_t>(iterations) * n);  // iteration-major
  // A new order every iteration, the same on every rank (one seed, one binary): no entry
  // always follows the same one, whose code and data it would find in the caches or not.
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::mt19937 shuffler(20261123);
  for (int it = 0; it < warmup + iterations; ++it) {
    std::shuffle(order.begin(), order.end(), shuffler);
    for (const std::size_t e : order) {
      const double seconds = time_one(entries[e], buffers);
      if (it >= warmup) local[static_cast<std::size_t>(it - warmup) * n + e] = seconds;
    }
    if (progress.due())
      progress.show(fmt::format("{}: iteration {}/{}", label, it + 1, warmup + iterations));
  }
  // One reduction for the whole loop keeps collectives out of the timed iterations.
  MPI_Allreduce(MPI_IN_PLACE, local.data(), static_cast<int>(local.size()), MPI_DOUBLE, MPI_MAX,
                MPI_COMM_WORLD);
  for (std::size_t i = 0; i < local.size(); ++i) entries[i % n].seconds.push_back(local[i]);
}

}  // namespace a2av::bench
