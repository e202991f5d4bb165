#include "redistribute_bench.hpp"

#include "side_bench.hpp"
#include "world.hpp"

#include <a2av/redistribute.hpp>

#include <fmt/core.h>
#include <fmt/ostream.h>
#include <mpi.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <vector>

namespace a2av::bench {
namespace {

// One experiment's map on this rank: where each of its blocks goes.
struct Map {
  std::string name;
  std::int64_t moving = 0;  // blocks per rank that carry data (the rest are free)
  std::vector<int> rank;
  std::vector<MPI_Count> index;
};

Map cycle_map(const World& w, std::int64_t m, std::int64_t moving, const std::string& name) {
  Map map{name, moving, std::vector<int>(m, -1), std::vector<MPI_Count>(m, 0)};
  for (std::int64_t j = 0; j < moving; ++j) map.rank[j] = (w.rank + 1) % w.size, map.index[j] = j;
  return map;
}

// Rank 0 is all free; the others' blocks spread over all ranks in global order.
Map one_free_rank_map(const World& w, std::int64_t m) {
  Map map{"4: all free space on rank 0", w.rank == 0 ? 0 : m, std::vector<int>(m, -1),
          std::vector<MPI_Count>(m, 0)};
  if (w.rank == 0) return map;
  for (std::int64_t j = 0; j < m; ++j) {
    const std::int64_t g = (w.rank - 1) * m + j;
    map.rank[j] = static_cast<int>(g % w.size);
    map.index[j] = g / w.size;
  }
  return map;
}

// Block j of rank i goes to block (d i + j) / P of rank (d i + j) % P, d = 80% of m.
Map transpose_map(const World& w, std::int64_t m) {
  const std::int64_t d = m * 4 / 5;
  Map map{"5: transpose, 20% free", d, std::vector<int>(m, -1), std::vector<MPI_Count>(m, 0)};
  for (std::int64_t j = 0; j < d; ++j) {
    const std::int64_t g = d * w.rank + j;
    map.rank[j] = static_cast<int>(g % w.size);
    map.index[j] = g / w.size;
  }
  return map;
}

std::vector<Map> experiment_maps(int which, const World& w, std::int64_t m) {
  switch (which) {
    case 1:
      return {cycle_map(w, m, m, "1: cycle, no free space")};
    case 2:
      return {cycle_map(w, m, m * 4 / 5, "2: cycle, 20% free")};
    case 3: {
      std::vector<Map> maps;
      for (int tenths = 5; tenths <= 10; ++tenths)
        maps.push_back(
            cycle_map(w, m, m * tenths / 10, fmt::format("3: cycle, {}% free", 100 - 10 * tenths)));
      return maps;
    }
    case 4:
      return {one_free_rank_map(w, m)};
    case 5:
      return {transpose_map(w, m)};
    default:
      throw std::invalid_argument(fmt::format("--experiments: no experiment {} (1-5)", which));
  }
}

unsigned char content(int rank, std::int64_t block, std::int64_t byte) {
  return static_cast<unsigned char>(rank * 37 + block * 11 + byte * 5 + (byte >> 7) + 1);
}

void fill(std::vector<unsigned char>& blocks, int rank, std::int64_t bytes) {
  for (std::size_t i = 0; i < blocks.size(); ++i)
    blocks[i] =
        content(rank, static_cast<std::int64_t>(i) / bytes, static_cast<std::int64_t>(i) % bytes);
}

// Every block that arrived here holds its origin's bytes; agreed over all ranks. The
// sources are found by asking every rank for its map (an MPI_Allgatherv of the maps: fine
// for a benchmark, not something the engine ever does).
bool arrived_intact(const Map& map, const std::vector<unsigned char>& blocks, std::int64_t m,
                    std::int64_t bytes, const World& w) {
  std::vector<int> ranks(static_cast<std::size_t>(m * w.size));
  std::vector<MPI_Count> indices(ranks.size());
  MPI_Allgather(map.rank.data(), static_cast<int>(m), MPI_INT, ranks.data(), static_cast<int>(m),
                MPI_INT, MPI_COMM_WORLD);
  MPI_Allgather(map.index.data(), static_cast<int>(m), MPI_COUNT, indices.data(),
                static_cast<int>(m), MPI_COUNT, MPI_COMM_WORLD);
  int ok = 1;
  for (std::size_t k = 0; k < ranks.size() && ok; ++k) {
    if (ranks[k] != w.rank) continue;
    const int src = static_cast<int>(k / m);
    const auto block = static_cast<std::int64_t>(k % m);
    for (std::int64_t b = 0; b < bytes && ok; ++b)
      ok = blocks[indices[k] * bytes + b] == content(src, block, b);
  }
  MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  return ok;
}

struct RedistributeResult {
  std::string experiment, requested, ran;
  std::int64_t free_per_rank = 0;
  double median = 0;
  std::vector<double> seconds;
  std::int64_t moved = 0, steps = 0, peak_bytes = 0, depth = 0;
  bool validated = false;
};

RedistributeResult measure(const Map& map, const std::string& algorithm, const BenchOptions& o,
                           const World& w, std::vector<unsigned char>& blocks) {
  RedistributeResult r;
  r.experiment = map.name;
  r.requested = algorithm;
  r.free_per_rank = o.blocks - map.moving;
  Redistributor redistributor(blocks.data(), o.blocks, o.block_bytes, MPI_COMM_WORLD, algorithm);
  for (int it = 0; it < o.warmup + o.iterations; ++it) {
    fill(blocks, w.rank, o.block_bytes);
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    const RedistStats stats = redistributor.run(map.rank, map.index);
    const double t = max_over_ranks(MPI_Wtime() - t0);
    if (it == 0) {
      r.validated = arrived_intact(map, blocks, o.blocks, o.block_bytes, w);
      if (!r.validated)
        throw std::runtime_error(fmt::format("{} on {}: wrong result", algorithm, map.name));
      r.ran = stats.algorithm;
      r.moved = stats.blocks_moved;
      MPI_Allreduce(MPI_IN_PLACE, &r.moved, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
      r.steps = max_over_ranks(stats.steps);
      r.peak_bytes = max_over_ranks(stats.peak_temp_bytes);
      r.depth = max_over_ranks(stats.schedule_depth);
    }
    if (it >= o.warmup) r.seconds.push_back(t);
  }
  r.median = median_of(r.seconds);
  return r;
}

void write_table(std::ostream& out, const std::vector<RedistributeResult>& results, const World& w,
                 const BenchOptions& o) {
  fmt::print(out, "# a2av bench --redistribute: P = {}, {} blocks of {} B per rank, {}\n", w.size,
             o.blocks, o.block_bytes, w.mpi_library);
  fmt::print(out, "# time: median over {} iterations of the max over ranks\n", o.iterations);
  fmt::print(out, "{:<28} {:<20} {:<20} {:>10} {:>9} {:>7} {:>12} {:>8} {:>7}\n", "experiment",
             "requested", "ran", "median_s", "moved", "steps", "extra_bytes", "extra_%", "depth");
  const double data = static_cast<double>(o.blocks * o.block_bytes);
  for (const RedistributeResult& r : results)
    fmt::print(out, "{:<28} {:<20} {:<20} {:>10.4f} {:>9} {:>7} {:>12} {:>8.3f} {:>7}\n",
               r.experiment, r.requested, r.ran, r.median, r.moved, r.steps, r.peak_bytes,
               100.0 * r.peak_bytes / data, r.depth);
}

nlohmann::json to_json(const std::vector<RedistributeResult>& results, const World& w,
                       const BenchOptions& o, const std::string& command) {
  nlohmann::json records = nlohmann::json::array();
  for (const RedistributeResult& r : results)
    records.push_back({{"experiment", r.experiment},
                       {"requested", r.requested},
                       {"algorithm", r.ran},
                       {"ranks", w.size},
                       {"blocks_per_rank", o.blocks},
                       {"block_bytes", o.block_bytes},
                       {"free_per_rank", r.free_per_rank},
                       {"median_s", r.median},
                       {"seconds", r.seconds},
                       {"blocks_moved", r.moved},
                       {"steps", r.steps},
                       {"peak_extra_bytes", r.peak_bytes},
                       {"schedule_depth_blocks", r.depth},
                       {"validated", r.validated}});
  return {{"schema", "a2av-bench-redistribute/1"},
          {"command", command},
          {"mpi_library", w.mpi_library},
          {"results", records}};
}

}  // namespace

int run_redistribute_bench(const BenchOptions& o, const std::string& command) {
  const World w = find_world();
  std::vector<unsigned char> blocks(static_cast<std::size_t>(o.blocks * o.block_bytes));
  std::vector<RedistributeResult> results;
  for (const std::string& item : split_list(o.experiments))
    for (const Map& map : experiment_maps(std::stoi(item), w, o.blocks))
      for (const std::string& algorithm : split_list(o.algorithms))
        results.push_back(measure(map, algorithm, o, w, blocks));
  if (w.rank != 0) return 0;
  return write_report(
      o, [&](std::ostream& out) { write_table(out, results, w, o); },
      to_json(results, w, o, command));
}

}  // namespace a2av::bench
