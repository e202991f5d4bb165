// compare_algorithms: validates every requested alltoallv algorithm against the MPI library's
// MPI_Alltoallv, then times them all with the OSU / TuNA-paper method (barrier outside the
// timed region, warm-up discarded, per-iteration time = max over ranks, median/min/max over
// iterations) and reports each one's peak temporary memory beside its documented bound.
//
//   mpiexec -n 4 compare_algorithms --sizes 16,1024,16384 --json compare.json
#include <a2av/a2av.h>
#include <a2av/alltoallv.hpp>

#include <fmt/core.h>
#include <mpi.h>
#include <CLI/CLI.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <random>
#include <string>
#include <vector>

namespace {

struct Settings {
  std::vector<std::int64_t> sizes{16, 1024, 16384};
  std::string pattern = "uniform";
  std::uint64_t seed = 1;
  int iterations = 50;
  int warmup = 5;
  std::string algorithms;
  std::string json;
};

// One timed entry; an empty spec is the plain MPI_Alltoallv baseline.
struct Entry {
  std::string requested;
  std::string resolved;
  std::int64_t peak = 0;
  std::int64_t bound = 0;
  std::vector<double> seconds;
};

constexpr unsigned char kPoison = 0xA5;
constexpr std::size_t kGuard = 64;  // poisoned bytes past the receive blocks catch overruns

unsigned char pattern_byte(int src, int dst, std::int64_t index) {
  return static_cast<unsigned char>((src * 131 + dst * 31 + index * 7) & 0xff);
}

int ceil_sqrt(int n) {
  int root = 1;
  while (root * root < n) ++root;
  return root;
}

// Specs are separated by commas; an item with '=' but no ':' continues the previous spec's
// parameters, so "tuna:radix=2,batch=1,spread_out" is two specs.
std::vector<std::string> split_specs(const std::string& list) {
  std::vector<std::string> specs;
  std::size_t start = 0;
  while (start <= list.size()) {
    const std::size_t comma = std::min(list.find(',', start), list.size());
    const std::string item = list.substr(start, comma - start);
    const bool continues = item.find('=') != std::string::npos &&
                           item.find(':') == std::string::npos && !specs.empty();
    if (continues)
      specs.back() += "," + item;
    else if (!item.empty())
      specs.push_back(item);
    start = comma + 1;
  }
  return specs;
}

std::vector<std::string> default_specs(int size) {
  std::vector<std::string> specs;
  for (const auto& a : a2av::algorithms())
    if (a.name != "auto") specs.push_back(a.name);
  for (int radix : {2, 4, ceil_sqrt(size), size})
    if (radix >= 2 && radix <= size) specs.push_back(fmt::format("tuna:radix={}", radix));
  if (size % 2 == 0) {
    specs.push_back("tuna_coalesced:ranks_per_node=2");
    specs.push_back("tuna_staggered:ranks_per_node=2");
  }
  specs.push_back("scattered:block_count=4");
  return specs;
}

// The P x P byte-count matrix, row i = what rank i sends; the same on every rank because
// every rank draws it from the same seed.
std::vector<std::vector<std::int64_t>> count_matrix(const Settings& s, int size,
                                                    std::int64_t max_block) {
  std::mt19937_64 rng(s.seed);
  std::vector<std::vector<std::int64_t>> counts(size, std::vector<std::int64_t>(size, max_block));
  if (s.pattern == "uniform")
    for (auto& row : counts)
      for (auto& c : row) c = static_cast<std::int64_t>(rng() % (max_block + 1));
  return counts;
}

// The buffers of one rank for one size, with int copies of the counts for MPI_Alltoallv.
struct Buffers {
  std::vector<MPI_Count> sendcounts, recvcounts;
  std::vector<MPI_Aint> sdispls, rdispls;
  std::vector<int> sendcounts_int, recvcounts_int, sdispls_int, rdispls_int;
  std::vector<unsigned char> send, recv, reference;

  Buffers(const std::vector<std::vector<std::int64_t>>& counts, int rank) {
    const int size = static_cast<int>(counts.size());
    for (int peer = 0; peer < size; ++peer) {
      sendcounts.push_back(counts[rank][peer]);
      recvcounts.push_back(counts[peer][rank]);
    }
    sdispls = a2av::packed_displacements(sendcounts);
    rdispls = a2av::packed_displacements(recvcounts);
    sendcounts_int.assign(sendcounts.begin(), sendcounts.end());
    recvcounts_int.assign(recvcounts.begin(), recvcounts.end());
    sdispls_int.assign(sdispls.begin(), sdispls.end());
    rdispls_int.assign(rdispls.begin(), rdispls.end());
    send.resize(sdispls.back() + sendcounts.back());
    for (int peer = 0; peer < size; ++peer)
      for (std::int64_t k = 0; k < sendcounts[peer]; ++k)
        send[sdispls[peer] + k] = pattern_byte(rank, peer, k);
    recv.resize(rdispls.back() + recvcounts.back() + kGuard);
  }

  int run_vendor() {
    return MPI_Alltoallv(send.data(), sendcounts_int.data(), sdispls_int.data(), MPI_BYTE,
                         recv.data(), recvcounts_int.data(), rdispls_int.data(), MPI_BYTE,
                         MPI_COMM_WORLD);
  }
  int run(const Entry& e) {
    if (e.requested.empty()) return run_vendor();
    return A2AV_Alltoallv_with(e.requested.c_str(), send.data(), sendcounts.data(), sdispls.data(),
                               MPI_BYTE, recv.data(), recvcounts.data(), rdispls.data(), MPI_BYTE,
                               MPI_COMM_WORLD);
  }
  void poison() { std::fill(recv.begin(), recv.end(), kPoison); }
};

[[noreturn]] void abort_run(const std::string& message) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  std::fprintf(stderr, "compare_algorithms: rank %d: %s\n", rank, message.c_str());
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, 1);
  std::abort();
}

// The vendor's result is the reference; check it against the data encoding first, so a
// harness mistake cannot pass as agreement.
void make_reference(Buffers& b, int rank, std::int64_t size_bytes) {
  b.poison();
  if (b.run_vendor() != MPI_SUCCESS) abort_run("MPI_Alltoallv failed");
  for (std::size_t src = 0; src < b.recvcounts.size(); ++src)
    for (std::int64_t k = 0; k < b.recvcounts[src]; ++k)
      if (b.recv[b.rdispls[src] + k] != pattern_byte(static_cast<int>(src), rank, k))
        abort_run(
            fmt::format("MPI_Alltoallv gave wrong data from rank {} at size {}", src, size_bytes));
  b.reference = b.recv;
}

std::int64_t max_over_ranks(std::int64_t value) {
  MPI_Allreduce(MPI_IN_PLACE, &value, 1, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD);
  return value;
}

// Runs the spec once on poisoned buffers, compares with the reference, and records the
// resolved spec, peak temporary bytes and documented bound (both maxed over ranks).
void validate(Entry& e, Buffers& b, std::int64_t size_bytes, int size, int ranks_per_node,
              std::int64_t max_block) {
  b.poison();
  if (int rc = b.run(e))
    abort_run(fmt::format("{} at size {} returned {}: {}", e.requested, size_bytes,
                          A2AV_Error_string(rc), A2AV_Last_error_message()));
  if (b.recv != b.reference) {
    const auto at = std::mismatch(b.recv.begin(), b.recv.end(), b.reference.begin()).first;
    abort_run(fmt::format("{} at size {} gave wrong data at receive byte {}", e.requested,
                          size_bytes, at - b.recv.begin()));
  }
  e.resolved = A2AV_Last_algorithm();
  e.peak = max_over_ranks(A2AV_Last_peak_bytes());
  std::int64_t send_total = 0;
  for (MPI_Count c : b.sendcounts) send_total += c;
  e.bound = max_over_ranks(
      a2av::temp_memory_bound(e.resolved, size, ranks_per_node, max_block, send_total));
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

std::string mpi_library_version() {
  char text[MPI_MAX_LIBRARY_VERSION_STRING];
  int length = 0;
  MPI_Get_library_version(text, &length);
  const std::string all(text);  // Open MPI counts the terminating NUL in `length`
  return all.substr(0, all.find('\n'));
}

// Where this run happens; the same on every rank except `rank`.
struct World {
  int rank = 0;
  int size = 0;
  int ranks_per_node = 0;
  std::string library;
};

World find_world() {
  World w;
  MPI_Comm_rank(MPI_COMM_WORLD, &w.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &w.size);
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, w.rank, MPI_INFO_NULL, &node);
  MPI_Comm_size(node, &w.ranks_per_node);
  MPI_Comm_free(&node);
  w.library = mpi_library_version();
  return w;
}

// Rank 0: prints one size's table and appends its rows, with every parameter, to `results`.
void report(const Settings& s, const World& w, std::int64_t bytes, std::int64_t max_block,
            const std::vector<Entry>& entries, nlohmann::ordered_json& results) {
  using json = nlohmann::ordered_json;
  const double vendor = median(entries[0].seconds);
  std::size_t width = 0;
  for (const auto& e : entries) width = std::max(width, e.resolved.size());
  fmt::print(
      "\n# P={} ranks_per_node={} pattern={} seed={} max_block={} bytes, {} iterations "
      "({} warm-up)\n",
      w.size, w.ranks_per_node, s.pattern, s.seed, bytes, s.iterations, s.warmup);
  fmt::print("{:<{}} {:>10} {:>10} {:>10} {:>7} {:>11} {:>11}\n", "algorithm", width, "median_us",
             "min_us", "max_us", "ratio", "peak_bytes", "bound_bytes");
  for (const auto& e : entries) {
    const auto [lo, hi] = std::minmax_element(e.seconds.begin(), e.seconds.end());
    const double med = median(e.seconds);
    const bool baseline = e.requested.empty();  // a2av's accounting does not apply
    fmt::print("{:<{}} {:>10.1f} {:>10.1f} {:>10.1f} {:>7.2f} {:>11} {:>11}{}\n", e.resolved, width,
               med * 1e6, *lo * 1e6, *hi * 1e6, med / vendor,
               baseline ? "-" : std::to_string(e.peak), baseline ? "-" : std::to_string(e.bound),
               e.peak > e.bound ? "  (peak above bound)" : "");
    results.push_back({{"mpi_library", w.library},
                       {"ranks", w.size},
                       {"ranks_per_node", w.ranks_per_node},
                       {"pattern", s.pattern},
                       {"seed", s.seed},
                       {"size", bytes},
                       {"max_block", max_block},
                       {"iterations", s.iterations},
                       {"warmup", s.warmup},
                       {"requested", e.requested},
                       {"spec", e.resolved},
                       {"median_s", med},
                       {"min_s", *lo},
                       {"max_s", *hi},
                       {"ratio_vs_vendor", med / vendor},
                       {"peak_temp_bytes", baseline ? json() : json(e.peak)},
                       {"bound_bytes", baseline ? json() : json(e.bound)}});
  }
}

int run(const Settings& s) {
  const World w = find_world();
  for (std::int64_t bytes : s.sizes)
    if (bytes < 0 || bytes * w.size > INT_MAX) {
      if (w.rank == 0)
        fmt::print(stderr,
                   "size {} is out of range: the MPI_Alltoallv reference needs P * S "
                   "bytes per rank to fit an int\n",
                   bytes);
      return 2;
    }
  const auto specs = s.algorithms.empty() ? default_specs(w.size) : split_specs(s.algorithms);

  nlohmann::ordered_json results = nlohmann::ordered_json::array();
  for (std::int64_t bytes : s.sizes) {
    const auto counts = count_matrix(s, w.size, bytes);
    std::int64_t max_block = 0;
    for (const auto& row : counts)
      max_block = std::max(max_block, *std::max_element(row.begin(), row.end()));
    Buffers b(counts, w.rank);
    make_reference(b, w.rank, bytes);

    // Validate everything before timing anything; drop specs that resolve to one already
    // listed (a radix clamped to P, ranks_per_node equal to what was detected).
    std::vector<Entry> entries{{"", "MPI_Alltoallv", 0, 0, {}}};
    for (const auto& spec : specs) {
      Entry e{spec, "", 0, 0, {}};
      validate(e, b, bytes, w.size, w.ranks_per_node, max_block);
      const bool seen = std::any_of(entries.begin(), entries.end(),
                                    [&](const Entry& x) { return x.resolved == e.resolved; });
      if (!seen) entries.push_back(std::move(e));
    }

    // Round-robin over entries inside each iteration, so drifting machine noise falls on
    // every algorithm alike. Per-iteration maxima are reduced once, after the loop.
    std::vector<double> local;
    for (int it = 0; it < s.warmup + s.iterations; ++it)
      for (auto& e : entries) {
        MPI_Barrier(MPI_COMM_WORLD);
        const double t0 = MPI_Wtime();
        if (int rc = b.run(e))
          abort_run(fmt::format("{} at size {} failed while timing: {}", e.resolved, bytes,
                                A2AV_Error_string(rc)));
        const double t1 = MPI_Wtime();
        if (it >= s.warmup) local.push_back(t1 - t0);
      }
    MPI_Allreduce(MPI_IN_PLACE, local.data(), static_cast<int>(local.size()), MPI_DOUBLE, MPI_MAX,
                  MPI_COMM_WORLD);
    for (std::size_t i = 0; i < local.size(); ++i)
      entries[i % entries.size()].seconds.push_back(local[i]);
    if (w.rank == 0) report(s, w, bytes, max_block, entries, results);
  }
  if (w.rank == 0 && !s.json.empty()) {
    std::ofstream out(s.json);
    out << results.dump(2) << '\n';
    if (!out) {
      fmt::print(stderr, "cannot write {}\n", s.json);
      return 1;
    }
    fmt::print("\nwrote {}\n", s.json);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);

  Settings s;
  CLI::App app{"Validate and time a2av's alltoallv algorithms against MPI_Alltoallv"};
  app.add_option("--sizes", s.sizes, "max block bytes S, comma-separated")->delimiter(',');
  app.add_option("--pattern", s.pattern, "block sizes: uniform (random 0..S) or constant (S)")
      ->check(CLI::IsMember({"uniform", "constant"}));
  app.add_option("--seed", s.seed, "seed of the count matrix");
  app.add_option("--iterations", s.iterations, "timed iterations")->check(CLI::PositiveNumber);
  app.add_option("--warmup", s.warmup, "discarded warm-up iterations")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--algorithms", s.algorithms,
                 "comma-separated specs, e.g. tuna:radix=4,batch=1,spread_out "
                 "(default: every algorithm and a few parameter settings)");
  app.add_option("--json", s.json, "write every result with its parameters to this file");
  int rc = 0;
  try {
    app.parse(argc, argv);
    rc = run(s);
  } catch (const CLI::ParseError& e) {
    // Every rank parses the same arguments; only rank 0 prints the message or help.
    rc = rank == 0 ? app.exit(e) : e.get_exit_code();
  }
  MPI_Finalize();
  return rc;
}
