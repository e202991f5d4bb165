// sample_sort: sorts random 64-bit keys (or key-value records) across the ranks with
// a2av::sample_sort (regular sampling, Shi-Schaeffer) or a2av::bucket_sort, as in the lecture's
// "Sorting" part ([Lecture14] in docs/references.md). It verifies that the
// output is sorted across ranks and a permutation of the input (order-independent hash) and
// that no rank exceeds the balance bound n/p + n/s - p, and exits non-zero if any check fails.
// --bench times the phases (local sort, splitters, exchange, merge; median over repetitions
// of the max over ranks) with the exchange under "vendor" (MPI_Alltoallv) and "auto".
#include <a2av/sort.hpp>

#include <mpi.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

namespace {

struct Args {
  std::int64_t keys_per_rank = 1 << 20;
  std::string distribution = "uniform";
  std::string method = "sample";
  std::string algorithm = "auto";
  bool records = false;
  bool bench = false;
  int repetitions = 5;
  int samples = 0;
  std::uint64_t seed = 1;
};

int rank_of() {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}

int size_of() {
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return size;
}

std::uint64_t mix(std::uint64_t x) {  // splitmix64's finalizer
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// uniform: all 2^64 keys equally likely; skewed: most keys crowd the bottom of the range
// (u^8 scaled), which bucket sort cannot balance; duplicates: 16 distinct keys.
std::uint64_t next_key(const std::string& distribution, std::mt19937_64& rng) {
  if (distribution == "skewed") {
    const double u = std::uniform_real_distribution<double>(0.0, 1.0)(rng);
    return static_cast<std::uint64_t>(std::ldexp(std::pow(u, 8), 63)) << 1 | (rng() & 1);
  }
  if (distribution == "duplicates") return mix(rng() % 16);
  return rng();
}

std::uint64_t key_of(std::uint64_t k) {
  return k;
}
std::uint64_t key_of(const a2av::KeyValue& r) {
  return r.key;
}
std::uint64_t hash_of(std::uint64_t k) {
  return mix(k);
}
std::uint64_t hash_of(const a2av::KeyValue& r) {
  return mix(r.key) ^ mix(r.value + 1);
}

template <class T>
std::vector<T> make_input(const Args& args) {
  const auto rank = static_cast<std::uint64_t>(rank_of());
  std::mt19937_64 rng(args.seed * 1000003 + rank);
  std::vector<T> data(static_cast<std::size_t>(args.keys_per_rank));
  for (std::size_t i = 0; i < data.size(); ++i) {
    const std::uint64_t key = next_key(args.distribution, rng);
    if constexpr (std::is_same_v<T, a2av::KeyValue>)
      data[i] = {key, rank << 40 | i};  // the value names where the record started
    else
      data[i] = key;
  }
  return data;
}

// Order-independent hash of the multiset over all ranks: equal before and after a sort.
template <class T>
std::uint64_t digest(const std::vector<T>& data) {
  std::uint64_t local = 0, global = 0;
  for (const T& x : data) local += hash_of(x);
  MPI_Allreduce(&local, &global, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
  return global;
}

// Locally sorted, and no rank starts below the last key of a non-empty rank before it.
template <class T>
bool globally_sorted(const std::vector<T>& data) {
  const auto by_key = [](const T& a, const T& b) { return key_of(a) < key_of(b); };
  int ok = std::is_sorted(data.begin(), data.end(), by_key);
  const std::array<std::uint64_t, 3> mine = {!data.empty(), data.empty() ? 0 : key_of(data.front()),
                                             data.empty() ? 0 : key_of(data.back())};
  std::vector<std::uint64_t> all(3 * static_cast<std::size_t>(size_of()));
  MPI_Allgather(mine.data(), 3, MPI_UINT64_T, all.data(), 3, MPI_UINT64_T, MPI_COMM_WORLD);
  std::uint64_t last = 0;
  for (std::size_t r = 0; r < all.size(); r += 3) {
    if (!all[r]) continue;
    if (all[r + 1] < last) ok = 0;
    last = all[r + 2];
  }
  int all_ok = 0;
  MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  return all_ok;
}

template <class T>
a2av::SortResult sort(std::vector<T>& data, const Args& args, const std::string& algorithm) {
  const a2av::SortOptions options{.algorithm = algorithm, .samples = args.samples};
  return args.method == "bucket" ? a2av::bucket_sort(data, MPI_COMM_WORLD, options)
                                 : a2av::sample_sort(data, MPI_COMM_WORLD, options);
}

// Sorts a fresh input once and checks it; rank 0 reports. Returns the result if it is right.
template <class T>
bool sort_and_verify(const Args& args, const std::string& algorithm, a2av::SortResult* out) {
  auto data = make_input<T>(args);
  const std::uint64_t before = digest(data);
  MPI_Barrier(MPI_COMM_WORLD);
  *out = sort(data, args, algorithm);
  const bool sorted = globally_sorted(data);
  const bool same = digest(data) == before;
  if (rank_of() == 0 && !(sorted && same))
    std::printf("FAILED: %s%s\n", sorted ? "" : "output not sorted ",
                same ? "" : "output not a permutation of the input");
  return sorted && same;
}

// Prints the largest rank against n/p, the library's bound and the lecture's bound; returns
// false when sample sort broke its bound.
bool report_balance(const a2av::SortResult& result, const Args& args) {
  const auto b = a2av::balance(result.count, MPI_COMM_WORLD);
  const int p = size_of();
  const int s = args.samples ? args.samples : p;
  const bool within = result.bound < 0 || b.max_count <= result.bound;
  if (rank_of() == 0) {
    std::printf(
        "# balance: n %lld, largest rank %lld = %.4f n/p", static_cast<long long>(b.total),
        static_cast<long long>(b.max_count),
        b.total ? static_cast<double>(b.max_count) * p / static_cast<double>(b.total) : 1.0);
    if (result.bound < 0)
      std::printf(" (bucket sort: no bound)\n");
    else
      std::printf("; bound %lld (lecture n/p + n/s - p with s = %d: %lld): %s\n",
                  static_cast<long long>(result.bound), s,
                  static_cast<long long>(a2av::lecture_bound(b.total, p, s)),
                  within ? "within the bound" : "OVER THE BOUND");
  }
  return within;
}

using Phases = std::array<double, 5>;  // local sort, splitters, exchange, merge, total

Phases max_over_ranks(const a2av::SortTimes& t) {
  Phases mine = {t.local_sort, t.splitters, t.exchange, t.merge, t.total()}, max{};
  MPI_Allreduce(mine.data(), max.data(), 5, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return max;
}

Phases median(std::vector<Phases> runs) {
  Phases m{};
  for (std::size_t c = 0; c < m.size(); ++c) {
    std::vector<double> column;
    for (const auto& r : runs) column.push_back(r[c]);
    std::nth_element(column.begin(), column.begin() + column.size() / 2, column.end());
    m[c] = column[column.size() / 2];
  }
  return m;
}

// One warm-up and `repetitions` timed sorts per exchange algorithm, each on a fresh input and
// each verified; the algorithms alternate so that drift in the machine's load hits both alike.
// Prints a row of medians per algorithm.
template <class T>
bool bench(const Args& args) {
  if (rank_of() == 0) {
    std::printf("# %s sort, P = %d, %lld %s per rank, %s keys, median of %d (max over ranks)\n",
                args.method.c_str(), size_of(), static_cast<long long>(args.keys_per_rank),
                args.records ? "records" : "keys", args.distribution.c_str(), args.repetitions);
    std::printf("%-8s %-14s %11s %11s %11s %11s %11s\n", "exchange", "ran", "local [ms]",
                "split [ms]", "exch [ms]", "merge [ms]", "total [ms]");
  }
  const std::array<std::string, 2> algorithms = {"vendor", "auto"};
  std::array<std::vector<Phases>, 2> runs;
  std::array<a2av::SortResult, 2> results;
  bool ok = true;
  for (int i = 0; i <= args.repetitions; ++i) {
    for (std::size_t a = 0; a < algorithms.size(); ++a) {
      ok = sort_and_verify<T>(args, algorithms[a], &results[a]) && ok;
      if (i > 0) runs[a].push_back(max_over_ranks(results[a].seconds));
    }
  }
  for (std::size_t a = 0; a < algorithms.size(); ++a) {
    const Phases m = median(runs[a]);
    if (rank_of() == 0)
      std::printf("%-8s %-14s %11.2f %11.2f %11.2f %11.2f %11.2f\n", algorithms[a].c_str(),
                  results[a].algorithm.c_str(), m[0] * 1e3, m[1] * 1e3, m[2] * 1e3, m[3] * 1e3,
                  m[4] * 1e3);
  }
  return report_balance(results[1], args) && ok;
}

template <class T>
bool run(const Args& args) {
  if (args.bench) return bench<T>(args);
  a2av::SortResult result;
  bool ok = sort_and_verify<T>(args, args.algorithm, &result);
  const Phases t = max_over_ranks(result.seconds);
  if (rank_of() == 0 && ok)
    std::printf(
        "%s sort of %lld %s per rank on %d ranks: sorted, permutation verified; "
        "exchange %s; %.2f ms (local sort %.2f, splitters %.2f, exchange %.2f, merge "
        "%.2f, max over ranks)\n",
        args.method.c_str(), static_cast<long long>(args.keys_per_rank),
        args.records ? "records" : "keys", size_of(), result.algorithm.c_str(), t[4] * 1e3,
        t[0] * 1e3, t[1] * 1e3, t[2] * 1e3, t[3] * 1e3);
  ok = report_balance(result, args) && ok;
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  CLI::App app{"Sorts random keys across the ranks with a2av; run under mpiexec", "sample_sort"};
  Args args;
  app.add_option("--keys-per-rank", args.keys_per_rank, "Keys (or records) each rank starts with")
      ->check(CLI::Range(std::int64_t{0}, std::int64_t{1} << 34));
  app.add_option("--distribution", args.distribution, "Key distribution")
      ->check(CLI::IsMember({"uniform", "skewed", "duplicates"}));
  app.add_option("--method", args.method, "Sample sort or the lecture's bucket sort")
      ->check(CLI::IsMember({"sample", "bucket"}));
  app.add_flag("--records", args.records, "Sort 16-byte key-value records instead of keys");
  app.add_option("--algorithm", args.algorithm, "a2av spec of the exchange (auto, vendor, ...)");
  app.add_option("--samples", args.samples, "Samples per rank s (0: P)")
      ->check(CLI::Range(0, 1 << 20));
  app.add_flag("--bench", args.bench, "Time the phases with the exchange under vendor and auto");
  app.add_option("--repetitions", args.repetitions, "Timed sorts per algorithm with --bench")
      ->check(CLI::Range(1, 1000));
  app.add_option("--seed", args.seed, "Seed of the key generator");
  int rc = 0;
  try {
    app.parse(argc, argv);
    const bool ok = args.records ? run<a2av::KeyValue>(args) : run<std::uint64_t>(args);
    rc = ok ? 0 : 1;
  } catch (const CLI::ParseError& e) {
    rc = rank_of() == 0 ? app.exit(e) : (e.get_exit_code() != 0);
  } catch (const a2av::Error& e) {
    if (rank_of() == 0) std::fprintf(stderr, "sample_sort: %s\n", e.what());
    rc = 1;
  }
  MPI_Finalize();
  return rc;
}
