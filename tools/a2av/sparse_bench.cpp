#include "sparse_bench.hpp"

#include "plan.hpp"
#include "side_bench.hpp"
#include "validate.hpp"
#include "world.hpp"

#include <a2av/sparse.hpp>

#include <fmt/core.h>
#include <fmt/ostream.h>
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <random>
#include <stdexcept>
#include <vector>

namespace a2av::bench {
namespace {

// k distinct destinations other than `me`, drawn with `rng`.
std::vector<int> distinct_peers(int me, int size, int k, std::mt19937_64& rng) {
  std::vector<int> others;
  for (int r = 0; r < size; ++r)
    if (r != me) others.push_back(r);
  std::shuffle(others.begin(), others.end(), rng);
  others.resize(std::min<std::size_t>(others.size(), static_cast<std::size_t>(std::max(k, 0))));
  return others;
}

// The periodic stencil's neighbours: -1 and +1 in each dimension of a near-cubic grid.
std::vector<int> stencil_peers(int me, int size, int dims) {
  std::vector<int> extent(dims, 0);
  MPI_Dims_create(size, dims, extent.data());
  std::vector<int> coord(dims), peers;
  for (int d = dims - 1, rest = me; d >= 0; --d) coord[d] = rest % extent[d], rest /= extent[d];
  for (int d = 0; d < dims; ++d)
    for (int step : {-1, 1}) {
      std::vector<int> c = coord;
      c[d] = (c[d] + step + extent[d]) % extent[d];
      int rank = 0;
      for (int e = 0; e < dims; ++e) rank = rank * extent[e] + c[e];
      if (extent[d] > 1) peers.push_back(rank);
    }
  return peers;
}

// The destinations of this rank's messages under `pattern`: "random:k", "stencil2d",
// "stencil3d" or "powerlaw" (k = (P-1) x^3 for x uniform in (0, 1]: most ranks send to a
// few, a few to many).
std::vector<int> destinations(const std::string& pattern, int me, int size, std::uint64_t seed) {
  std::mt19937_64 rng(seed * 1000003 + me);
  if (pattern.rfind("random:", 0) == 0)
    return distinct_peers(me, size, std::stoi(pattern.substr(7)), rng);
  if (pattern == "stencil2d") return stencil_peers(me, size, 2);
  if (pattern == "stencil3d") return stencil_peers(me, size, 3);
  if (pattern == "powerlaw") {
    const double x = std::uniform_real_distribution<double>(0, 1)(rng);
    return distinct_peers(me, size, std::max(1, static_cast<int>((size - 1) * x * x * x)), rng);
  }
  throw std::invalid_argument(fmt::format(
      "--pattern: unknown sparse pattern '{}' (random:K, stencil2d, stencil3d, powerlaw)",
      pattern));
}

// What arrived, per source, concatenated: what both ways of exchanging must agree on.
using BySource = std::vector<std::pair<int, std::vector<std::byte>>>;

// Plain MPI as users write it: pack per destination, MPI_Alltoall of the counts,
// MPI_Alltoallv. Returns what arrived per source.
BySource plain_mpi(const std::vector<int>& to, const std::vector<std::byte>& payload, int size,
                   std::vector<int>& counts, std::vector<std::byte>& packed,
                   std::vector<std::byte>& received) {
  std::fill(counts.begin(), counts.end(), 0);
  int* sendcounts = counts.data();
  int *recvcounts = sendcounts + size, *sdispls = recvcounts + size, *rdispls = sdispls + size;
  for (int d : to) sendcounts[d] += static_cast<int>(payload.size());
  for (int r = 0, total = 0; r < size; ++r) sdispls[r] = total, total += sendcounts[r];
  packed.resize(static_cast<std::size_t>(sdispls[size - 1] + sendcounts[size - 1]) + 1);
  std::vector<int> cursor(sdispls, sdispls + size);
  for (int d : to) {
    std::copy(payload.begin(), payload.end(), packed.begin() + cursor[d]);
    cursor[d] += static_cast<int>(payload.size());
  }
  MPI_Alltoall(sendcounts, 1, MPI_INT, recvcounts, 1, MPI_INT, MPI_COMM_WORLD);
  for (int r = 0, total = 0; r < size; ++r) rdispls[r] = total, total += recvcounts[r];
  received.resize(static_cast<std::size_t>(rdispls[size - 1] + recvcounts[size - 1]) + 1);
  MPI_Alltoallv(packed.data(), sendcounts, sdispls, MPI_BYTE, received.data(), recvcounts, rdispls,
                MPI_BYTE, MPI_COMM_WORLD);
  BySource out;
  for (int r = 0; r < size; ++r)
    if (recvcounts[r] > 0)
      out.push_back(
          {r, {received.begin() + rdispls[r], received.begin() + rdispls[r] + recvcounts[r]}});
  return out;
}

BySource by_source(const SparseResult& result) {
  BySource out;
  for (const IncomingMessage& m : result.messages()) {
    if (m.data.empty()) continue;
    if (out.empty() || out.back().first != m.source) out.push_back({m.source, {}});
    out.back().second.insert(out.back().second.end(), m.data.begin(), m.data.end());
  }
  return out;
}

struct Point {
  std::string pattern;
  std::int64_t bytes;
  std::vector<int> to;
  std::vector<std::byte> payload;
};

// Every rank's messages are what plain MPI delivers (agreed across ranks), else throws.
void check_against_plain(const SparseResult& result, const Point& p, const std::string& algorithm,
                         const World& w, std::vector<int>& counts, std::vector<std::byte>& packed,
                         std::vector<std::byte>& received) {
  int ok = by_source(result) == plain_mpi(p.to, p.payload, w.size, counts, packed, received);
  MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (!ok)
    throw ValidationFailure(fmt::format("{} on {} ({} B): not what MPI_Alltoallv delivers",
                                        algorithm, p.pattern, p.bytes));
}

struct SparseTiming {
  std::string pattern, requested, ran;
  std::int64_t bytes = 0, max_messages = 0, peak_bytes = 0;
  double median = 0;
  std::vector<double> seconds;
};

SparseTiming measure(const Point& p, const std::string& algorithm, const BenchOptions& o,
                     const World& w) {
  SparseTiming r{p.pattern, algorithm, algorithm, p.bytes, 0, 0, 0, {}};
  std::int64_t messages = static_cast<std::int64_t>(p.to.size());
  MPI_Allreduce(MPI_IN_PLACE, &messages, 1, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD);
  r.max_messages = messages;
  std::vector<OutgoingMessage> out;
  for (int d : p.to) out.push_back({d, p.payload});
  std::vector<int> counts(4 * w.size);
  std::vector<std::byte> packed, received;
  const bool plain = algorithm == "mpi";
  for (int it = 0; it < o.warmup + o.iterations; ++it) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    BySource got;
    SparseResult result;
    if (plain)
      got = plain_mpi(p.to, p.payload, w.size, counts, packed, received);
    else
      result = sparse_exchange(out, MPI_COMM_WORLD, {.algorithm = algorithm});
    const double t = max_over_ranks(MPI_Wtime() - t0);
    if (it == 0 && !plain) {
      if (o.validate) check_against_plain(result, p, algorithm, w, counts, packed, received);
      r.ran = result.algorithm();
      r.peak_bytes = max_over_ranks(result.peak_temp_bytes());
    }
    if (it == 0 && plain)
      r.peak_bytes = max_over_ranks(
          static_cast<std::int64_t>(counts.size() * sizeof(int) + packed.size() + received.size()));
    if (it >= o.warmup) r.seconds.push_back(t);
  }
  r.median = median_of(r.seconds);
  return r;
}

void write_table(std::ostream& out, const std::vector<SparseTiming>& results, const World& w,
                 const BenchOptions& o) {
  fmt::print(out, "# a2av bench --sparse: P = {}, {}\n", w.size, w.mpi_library);
  fmt::print(out,
             "# time: median over {} iterations of the max over ranks; ratio: against 'mpi' "
             "(MPI_Alltoall of counts + MPI_Alltoallv, packing included) at the same point\n",
             o.iterations);
  fmt::print(out, "{:<11} {:>7} {:>6} {:<7} {:<7} {:>11} {:>7} {:>12}\n", "pattern", "bytes",
             "max_k", "asked", "ran", "median_us", "ratio", "temp_bytes");
  for (const SparseTiming& r : results) {
    double plain = 0;
    for (const SparseTiming& q : results)
      if (q.requested == "mpi" && q.pattern == r.pattern && q.bytes == r.bytes) plain = q.median;
    fmt::print(out, "{:<11} {:>7} {:>6} {:<7} {:<7} {:>11.1f} {:>7.2f} {:>12}\n", r.pattern,
               r.bytes, r.max_messages, r.requested, r.ran, 1e6 * r.median,
               plain > 0 ? r.median / plain : 0.0, r.peak_bytes);
  }
}

nlohmann::json to_json(const std::vector<SparseTiming>& results, const World& w,
                       const std::string& command) {
  nlohmann::json records = nlohmann::json::array();
  for (const SparseTiming& r : results)
    records.push_back({{"pattern", r.pattern},
                       {"requested", r.requested},
                       {"algorithm", r.ran},
                       {"ranks", w.size},
                       {"message_bytes", r.bytes},
                       {"max_messages_per_rank", r.max_messages},
                       {"median_s", r.median},
                       {"seconds", r.seconds},
                       {"peak_temp_bytes", r.peak_bytes}});
  return {{"schema", "a2av-bench-sparse/1"},
          {"command", command},
          {"mpi_library", w.mpi_library},
          {"results", records}};
}

}  // namespace

int run_sparse_bench(const BenchOptions& o, const std::string& command) {
  const World w = find_world();
  std::vector<SparseTiming> results;
  try {
    for (const std::string& pattern : split_list(o.pattern))
      for (std::int64_t bytes : message_sizes(o.message_sizes)) {
        const Point p{pattern, bytes, destinations(pattern, w.rank, w.size, o.seed),
                      std::vector<std::byte>(bytes, static_cast<std::byte>(w.rank))};
        for (const std::string& algorithm : split_list(o.algorithms))
          results.push_back(measure(p, algorithm, o, w));
      }
  } catch (const ValidationFailure& e) {
    if (w.rank == 0) fmt::print(stderr, "a2av bench --sparse: {}\n", e.what());
    throw;
  }
  if (w.rank != 0) return 0;
  return write_report(
      o, [&](std::ostream& out) { write_table(out, results, w, o); }, to_json(results, w, command));
}

}  // namespace a2av::bench
