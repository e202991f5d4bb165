#include "collectives_bench.hpp"

#include "side_bench.hpp"

#include "plan.hpp"
#include "validate.hpp"
#include "world.hpp"

#include <a2av/collectives.hpp>

#include <fmt/core.h>
#include <fmt/ostream.h>
#include <mpi.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <vector>

namespace a2av::bench {
namespace {

using coll::Algorithm;
using coll::Collective;

constexpr int kRoot = 0;
constexpr int kElement = sizeof(int);  // data are MPI_INT, reductions MPI_SUM

// What to run: one collective with some of its algorithms.
struct Selection {
  Collective collective;
  std::vector<Algorithm> algorithms;
};

// --algorithms: "all", or items "bcast" (every algorithm) and "bcast:binomial".
std::vector<Selection> parse_selection(const std::string& text) {
  std::vector<Selection> selected;
  const auto add = [&](Collective c, std::vector<Algorithm> algorithms) {
    auto it = std::find_if(selected.begin(), selected.end(),
                           [&](const Selection& s) { return s.collective == c; });
    if (it == selected.end()) it = selected.insert(selected.end(), {c, {}});
    for (Algorithm a : algorithms)
      if (std::find(it->algorithms.begin(), it->algorithms.end(), a) == it->algorithms.end())
        it->algorithms.push_back(a);
  };
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) {
    if (item == "all") {
      for (int c = 0; c <= static_cast<int>(Collective::alltoall); ++c)
        add(static_cast<Collective>(c), coll::algorithms(static_cast<Collective>(c)));
      continue;
    }
    const auto colon = item.find(':');
    const Collective c = coll::parse_collective(item.substr(0, colon));
    add(c, colon == std::string::npos
               ? coll::algorithms(c)
               : std::vector<Algorithm>{coll::parse_algorithm(item.substr(colon + 1))});
  }
  return selected;
}

// Buffer lengths in elements for `count` per rank: the vector or one rank's block.
struct Shape {
  std::int64_t send, recv;
};
Shape shape(Collective c, int p, std::int64_t count) {
  switch (c) {
    case Collective::bcast:
      return {0, count};
    case Collective::reduce:
    case Collective::allreduce:
      return {count, count};
    case Collective::scatter:
      return {p * count, count};
    case Collective::gather:
    case Collective::allgather:
      return {count, p * count};
    case Collective::alltoall:
      return {p * count, p * count};
  }
  return {0, 0};
}

// One call; no algorithm: the vendor's.
void run(Collective c, std::optional<Algorithm> a, const int* send, int* recv, int count) {
  const MPI_Comm w = MPI_COMM_WORLD;
  if (a) switch (c) {
      case Collective::bcast:
        return coll::bcast(recv, count, MPI_INT, kRoot, w, *a);
      case Collective::reduce:
        return coll::reduce(send, recv, count, MPI_INT, MPI_SUM, kRoot, w, *a);
      case Collective::allreduce:
        return coll::allreduce(send, recv, count, MPI_INT, MPI_SUM, w, *a);
      case Collective::scatter:
        return coll::scatter(send, recv, count, MPI_INT, kRoot, w, *a);
      case Collective::gather:
        return coll::gather(send, recv, count, MPI_INT, kRoot, w, *a);
      case Collective::allgather:
        return coll::allgather(send, recv, count, MPI_INT, w, *a);
      case Collective::alltoall:
        return coll::alltoall(send, recv, count, MPI_INT, w, *a);
    }
  switch (c) {
    case Collective::bcast:
      MPI_Bcast(recv, count, MPI_INT, kRoot, w);
      return;
    case Collective::reduce:
      MPI_Reduce(send, recv, count, MPI_INT, MPI_SUM, kRoot, w);
      return;
    case Collective::allreduce:
      MPI_Allreduce(send, recv, count, MPI_INT, MPI_SUM, w);
      return;
    case Collective::scatter:
      MPI_Scatter(send, count, MPI_INT, recv, count, MPI_INT, kRoot, w);
      return;
    case Collective::gather:
      MPI_Gather(send, count, MPI_INT, recv, count, MPI_INT, kRoot, w);
      return;
    case Collective::allgather:
      MPI_Allgather(send, count, MPI_INT, recv, count, MPI_INT, w);
      return;
    case Collective::alltoall:
      MPI_Alltoall(send, count, MPI_INT, recv, count, MPI_INT, w);
      return;
  }
}

// Half the round trip of `bytes` between ranks 0 and 1, median of 21; the same on all ranks.
double half_round_trip(const World& w, int bytes) {
  std::vector<char> buf(static_cast<std::size_t>(bytes));
  std::vector<double> times;
  for (int it = 0; it < 24; ++it) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    if (w.rank == 0) {
      MPI_Send(buf.data(), bytes, MPI_CHAR, 1, 0, MPI_COMM_WORLD);
      MPI_Recv(buf.data(), bytes, MPI_CHAR, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else if (w.rank == 1) {
      MPI_Recv(buf.data(), bytes, MPI_CHAR, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Send(buf.data(), bytes, MPI_CHAR, 0, 0, MPI_COMM_WORLD);
    }
    if (it >= 3) times.push_back((MPI_Wtime() - t0) / 2);
  }
  std::nth_element(times.begin(), times.begin() + times.size() / 2, times.end());
  double median = times[times.size() / 2];
  MPI_Bcast(&median, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  return median;
}

// Seconds per byte of MPI_SUM on ints, max over ranks.
double reduce_gamma() {
  const int n = 1 << 18;
  std::vector<int> a(n, 1), b(n, 2);
  std::vector<double> times;
  for (int it = 0; it < 7; ++it) {
    const double t0 = MPI_Wtime();
    MPI_Reduce_local(a.data(), b.data(), n, MPI_INT, MPI_SUM);
    times.push_back(MPI_Wtime() - t0);
  }
  return max_over_ranks(*std::min_element(times.begin(), times.end()) / (n * kElement));
}

struct Model {
  coll::Machine machine;
  std::string source;
};

Model measure_model(const BenchOptions& o, const World& w) {
  Model m{{o.alpha, o.beta, reduce_gamma()}, "command line"};
  if (o.alpha > 0 && o.beta > 0) return m;
  if (w.size < 2) return {{1e-6, 1e-10, m.machine.gamma}, "defaults (one rank: no ping-pong)"};
  const int big = 1 << 20;
  const double small = half_round_trip(w, 8), large = half_round_trip(w, big);
  if (o.alpha <= 0) m.machine.alpha = small;
  if (o.beta <= 0) m.machine.beta = std::max(large - small, 0.0) / (big - 8);
  m.source = "ping-pong between ranks 0 and 1";
  return m;
}

struct CollectiveResult {
  Collective collective = Collective::bcast;
  std::string algorithm;   // or "vendor"
  std::int64_t bytes = 0;  // per rank: the vector, or one rank's block
  std::vector<double> seconds;
  double median = 0, vendor = 0, model = 0;
};

// Every algorithm once against the vendor on poisoned buffers; throws on a difference.
void validate(Collective c, const std::vector<Algorithm>& algorithms, const std::vector<int>& send,
              std::int64_t recv_count, int count, const World& w) {
  std::vector<int> want(static_cast<std::size_t>(recv_count), -7);
  if (c == Collective::bcast && w.rank == kRoot) want.assign(want.size(), 11);
  std::vector<int> got = want;
  run(c, std::nullopt, send.data(), want.data(), count);
  for (Algorithm a : algorithms) {
    std::vector<int> mine = got;
    run(c, a, send.data(), mine.data(), count);
    int same = mine == want;
    MPI_Allreduce(MPI_IN_PLACE, &same, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!same)
      throw ValidationFailure(fmt::format("{}:{} at {} bytes differs from the vendor",
                                          coll::name(c), coll::name(a), count * kElement));
  }
}

std::vector<CollectiveResult> time_point(const Selection& s, std::int64_t count,
                                         const BenchOptions& o, const Model& model,
                                         const World& w) {
  const Shape sh = shape(s.collective, w.size, count);
  std::vector<int> send(static_cast<std::size_t>(sh.send));
  for (std::size_t i = 0; i < send.size(); ++i) send[i] = static_cast<int>(i % 1000) + w.rank;
  std::vector<int> recv(static_cast<std::size_t>(sh.recv) + 1);
  const int n = static_cast<int>(count);
  validate(s.collective, s.algorithms, send, sh.recv, n, w);
  std::vector<std::optional<Algorithm>> entries{std::nullopt};
  entries.insert(entries.end(), s.algorithms.begin(), s.algorithms.end());
  std::vector<double> local;
  for (int it = 0; it < o.warmup + o.iterations; ++it)
    for (const auto& e : entries) {
      MPI_Barrier(MPI_COMM_WORLD);
      const double t0 = MPI_Wtime();
      run(s.collective, e, send.data(), recv.data(), n);
      if (it >= o.warmup) local.push_back(MPI_Wtime() - t0);
    }
  MPI_Allreduce(MPI_IN_PLACE, local.data(), static_cast<int>(local.size()), MPI_DOUBLE, MPI_MAX,
                MPI_COMM_WORLD);
  std::vector<CollectiveResult> results;
  for (std::size_t e = 0; e < entries.size(); ++e) {
    CollectiveResult r;
    r.collective = s.collective;
    r.algorithm = entries[e] ? std::string(coll::name(*entries[e])) : "vendor";
    r.bytes = count * kElement;
    for (std::size_t i = e; i < local.size(); i += entries.size()) r.seconds.push_back(local[i]);
    r.median = median_of(r.seconds);
    r.vendor = e == 0 ? r.median : results.front().median;
    if (entries[e])
      r.model = coll::predict(s.collective, *entries[e], w.size, r.bytes, model.machine);
    results.push_back(std::move(r));
  }
  return results;
}

void write_table(std::ostream& out, const std::vector<CollectiveResult>& results, const Model& m,
                 const World& w, const BenchOptions& o) {
  fmt::print(out, "# a2av bench --collectives: P = {}, MPI_INT (MPI_SUM), root {}, {}\n", w.size,
             kRoot, w.mpi_library);
  fmt::print(out, "# time: median over {} iterations of the max over ranks; ratio: / vendor\n",
             o.iterations);
  fmt::print(out, "# model: alpha = {:.3g} s, beta = {:.3g} s/B, gamma = {:.3g} s/B ({})\n",
             m.machine.alpha, m.machine.beta, m.machine.gamma, m.source);
  fmt::print(out, "# bytes: per rank, the vector (bcast, reduce, allreduce) or one block\n");
  fmt::print(out, "{:<10} {:<19} {:>9} {:>11} {:>11} {:>7} {:>11} {:>7}\n", "collective",
             "algorithm", "bytes", "median_us", "vendor_us", "ratio", "model_us", "meas/mod");
  for (const CollectiveResult& r : results) {
    if (r.algorithm == "vendor") continue;
    fmt::print(out, "{:<10} {:<19} {:>9} {:>11.2f} {:>11.2f} {:>7.2f} {:>11.2f} {:>7.2f}\n",
               coll::name(r.collective), r.algorithm, r.bytes, r.median * 1e6, r.vendor * 1e6,
               r.median / r.vendor, r.model * 1e6, r.model > 0 ? r.median / r.model : 0.0);
  }
}

nlohmann::json to_json(const std::vector<CollectiveResult>& results, const Model& m, const World& w,
                       const std::string& command) {
  nlohmann::json records = nlohmann::json::array();
  for (const CollectiveResult& r : results)
    records.push_back({{"collective", coll::name(r.collective)},
                       {"algorithm", r.algorithm},
                       {"ranks", w.size},
                       {"bytes", r.bytes},
                       {"median_s", r.median},
                       {"vendor_median_s", r.vendor},
                       {"ratio_vs_vendor", r.median / r.vendor},
                       {"model_s", r.model},
                       {"seconds", r.seconds}});
  return {{"schema", "a2av-bench-collectives/1"},
          {"command", command},
          {"mpi_library", w.mpi_library},
          {"machine",
           {{"alpha_s", m.machine.alpha},
            {"beta_s_per_byte", m.machine.beta},
            {"gamma_s_per_byte", m.machine.gamma},
            {"source", m.source}}},
          {"results", records}};
}

}  // namespace

int run_collectives_bench(const BenchOptions& o, const std::string& command) {
  const World w = find_world();
  const auto selection = parse_selection(o.algorithms);
  const auto sizes = message_sizes(o.message_sizes);
  const Model model = measure_model(o, w);
  std::vector<CollectiveResult> results;
  try {
    for (const Selection& s : selection)
      for (std::int64_t bytes : sizes)
        for (CollectiveResult& r :
             time_point(s, std::max<std::int64_t>(1, bytes / kElement), o, model, w))
          results.push_back(std::move(r));
  } catch (const ValidationFailure& e) {
    if (w.rank == 0) fmt::print(stderr, "a2av bench --collectives: {}\n", e.what());
    throw;
  }
  if (w.rank != 0) return 0;
  return write_report(
      o, [&](std::ostream& out) { write_table(out, results, model, w, o); },
      to_json(results, model, w, command));
}

}  // namespace a2av::bench
