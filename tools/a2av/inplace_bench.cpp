#include "inplace_bench.hpp"

#include "patterns.hpp"
#include "side_bench.hpp"
#include "world.hpp"

#include <a2av/inplace.hpp>

#include <fmt/core.h>
#include <fmt/ostream.h>
#include <mpi.h>
#include <sys/resource.h>

#include <algorithm>
#include <cstring>
#include <nlohmann/json.hpp>
#include <numeric>
#include <stdexcept>
#include <vector>

namespace a2av::bench {
namespace {

constexpr const char* kVendor = "MPI_Alltoallv";

unsigned char value(int src, int dst, std::int64_t b) {
  return static_cast<unsigned char>(src * 131 + dst * 31 + b * 7 + (b >> 8));
}

struct Case {
  std::string pattern;
  CountMatrix counts;  // elements
  std::int64_t length = 0;
  std::int64_t send_total = 0, recv_total = 0;  // this rank's
};

Case make_case(const std::string& pattern, std::int64_t elements, std::uint64_t seed,
               const World& w) {
  Case c{pattern, make_counts(parse_pattern(pattern), w.size, elements / w.size, seed)};
  for (int i = 0; i < w.size; ++i) {
    std::int64_t row = 0, col = 0;
    for (int j = 0; j < w.size; ++j) row += c.counts[i][j], col += c.counts[j][i];
    c.length = std::max({c.length, row, col});
    if (i == w.rank) c.send_total = row;
  }
  for (int i = 0; i < w.size; ++i) c.recv_total += c.counts[i][w.rank];
  return c;
}

void fill_send(const Case& c, int rank, int elem, unsigned char* out) {
  for (std::size_t j = 0; j < c.counts.size(); ++j)
    for (std::int64_t b = 0; b < c.counts[rank][j] * elem; ++b)
      *out++ = value(rank, static_cast<int>(j), b);
}

// Whether `in` holds S(rank) in source order; agreed over all ranks.
bool received_correctly(const Case& c, int rank, int elem, const unsigned char* in) {
  int ok = 1;
  for (std::size_t i = 0; i < c.counts.size() && ok; ++i)
    for (std::int64_t b = 0; b < c.counts[i][rank] * elem && ok; ++b)
      ok = *in++ == value(static_cast<int>(i), rank, b);
  MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  return ok;
}

std::int64_t peak_rss_bytes() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return max_over_ranks(static_cast<std::int64_t>(usage.ru_maxrss) * 1024);
}

struct InplaceResult {
  std::string pattern, requested, algorithm;
  std::vector<double> seconds;
  double median = 0, ratio = 0;
  std::int64_t extra_bytes = 0, data_bytes = 0, peak_runs = 0, peak_rss = 0;
  std::vector<double> auto_estimates;  // inplace_auto: replayed {bitonic, pairwise} bytes
  bool validated = false;
};

struct Settings {
  int iterations, warmup, elem;
  MPI_Datatype type;
};

InplaceResult time_inplace(const Case& c, const std::string& spec, const Settings& s,
                           const World& w, std::vector<unsigned char>& buf) {
  InplaceResult r;
  r.pattern = c.pattern;
  r.requested = spec;
  std::vector<MPI_Count> counts(c.counts[w.rank].begin(), c.counts[w.rank].end());
  InplaceInfo info;
  for (int it = 0; it < s.warmup + s.iterations; ++it) {
    fill_send(c, w.rank, s.elem, buf.data());
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    exchange_inplace(buf.data(), c.length, counts, s.type, MPI_COMM_WORLD, spec, &info);
    const double t = max_over_ranks(MPI_Wtime() - t0);
    if (it == 0 && !(r.validated = received_correctly(c, w.rank, s.elem, buf.data())))
      throw std::runtime_error(fmt::format("{} on {}: wrong result", spec, c.pattern));
    if (it >= s.warmup) r.seconds.push_back(t);
  }
  r.algorithm = info.algorithm;
  r.auto_estimates = info.auto_estimates;
  r.extra_bytes = max_over_ranks(info.peak_temp_bytes);
  r.peak_runs = max_over_ranks(info.peak_runs);
  r.data_bytes = c.length * s.elem;
  return r;
}

InplaceResult time_vendor(const Case& c, const Settings& s, const World& w) {
  InplaceResult r;
  r.pattern = c.pattern;
  r.requested = r.algorithm = kVendor;
  std::vector<int> sc(w.size), sd(w.size), rc(w.size), rd(w.size);
  for (int j = 0; j < w.size; ++j) {
    sc[j] = static_cast<int>(c.counts[w.rank][j]);
    rc[j] = static_cast<int>(c.counts[j][w.rank]);
    sd[j] = j ? sd[j - 1] + sc[j - 1] : 0;
    rd[j] = j ? rd[j - 1] + rc[j - 1] : 0;
  }
  std::vector<unsigned char> send(static_cast<std::size_t>(c.send_total * s.elem) + 1);
  std::vector<unsigned char> recv(static_cast<std::size_t>(c.recv_total * s.elem) + 1);
  fill_send(c, w.rank, s.elem, send.data());
  for (int it = 0; it < s.warmup + s.iterations; ++it) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    MPI_Alltoallv(send.data(), sc.data(), sd.data(), s.type, recv.data(), rc.data(), rd.data(),
                  s.type, MPI_COMM_WORLD);
    const double t = max_over_ranks(MPI_Wtime() - t0);
    if (it == 0) r.validated = received_correctly(c, w.rank, s.elem, recv.data());
    if (it >= s.warmup) r.seconds.push_back(t);
  }
  r.data_bytes = c.length * s.elem;
  return r;
}

std::vector<std::string> inplace_specs(const std::string& algorithms) {
  if (algorithms == "all") return {"inplace_bitonic", "inplace_pairwise", "inplace_auto"};
  return split_list(algorithms);
}

void write_table(std::ostream& out, const std::vector<InplaceResult>& results, const World& w,
                 const BenchOptions& o) {
  fmt::print(out, "# a2av bench --inplace: P = {}, N = {} elements of {} B per rank, {}\n", w.size,
             o.elements, o.element_bytes, w.mpi_library);
  fmt::print(out, "# time: median over {} iterations of the max over ranks; ratio: / vendor\n",
             o.iterations);
  fmt::print(out, "{:<11} {:<17} {:<38} {:>10} {:>7} {:>12} {:>8} {:>6} {:>10}\n", "pattern",
             "requested", "ran", "median_s", "ratio", "extra_bytes", "extra_%", "runs", "rss_MiB");
  for (const InplaceResult& r : results)
    fmt::print(out, "{:<11} {:<17} {:<38} {:>10.4f} {:>7.2f} {:>12} {:>8.3f} {:>6} {:>10.1f}\n",
               r.pattern, r.requested, r.algorithm, r.median, r.ratio, r.extra_bytes,
               r.data_bytes ? 100.0 * r.extra_bytes / r.data_bytes : 0.0, r.peak_runs,
               r.peak_rss / 1048576.0);
}

nlohmann::json to_json(const std::vector<InplaceResult>& results, const World& w,
                       const BenchOptions& o, const std::string& command) {
  nlohmann::json records = nlohmann::json::array();
  for (const InplaceResult& r : results)
    records.push_back({{"pattern", r.pattern},
                       {"requested", r.requested},
                       {"algorithm", r.algorithm},
                       {"ranks", w.size},
                       {"elements_per_rank", o.elements},
                       {"element_bytes", o.element_bytes},
                       {"median_s", r.median},
                       {"seconds", r.seconds},
                       {"ratio_vs_vendor", r.ratio},
                       {"extra_bytes", r.extra_bytes},
                       {"data_bytes", r.data_bytes},
                       {"peak_runs", r.peak_runs},
                       {"peak_rss_bytes", r.peak_rss},
                       {"auto_estimates_bytes", r.auto_estimates},
                       {"validated", r.validated}});
  return {{"schema", "a2av-bench-inplace/1"},
          {"command", command},
          {"mpi_library", w.mpi_library},
          {"results", records}};
}

}  // namespace

int run_inplace_bench(const BenchOptions& o, const std::string& command) {
  const World w = find_world();
  MPI_Datatype type;
  MPI_Type_contiguous(o.element_bytes, MPI_BYTE, &type);
  MPI_Type_commit(&type);
  const Settings s{o.iterations, o.warmup, o.element_bytes, type};
  std::vector<Case> cases;
  for (const auto& pattern : split_list(o.pattern))
    cases.push_back(make_case(pattern, o.elements, o.seed, w));
  std::vector<InplaceResult> results;
  // In-place first, in one buffer sized for the largest case: the RSS peak so far is the
  // in-place one.
  std::int64_t largest = 0;
  for (const Case& c : cases) largest = std::max(largest, c.length);
  {
    std::vector<unsigned char> buf(static_cast<std::size_t>(largest * o.element_bytes));
    for (const Case& c : cases)
      for (const auto& spec : inplace_specs(o.algorithms)) {
        results.push_back(time_inplace(c, spec, s, w, buf));
        results.back().peak_rss = peak_rss_bytes();
      }
  }
  std::vector<InplaceResult> vendor;
  for (const Case& c : cases) {
    vendor.push_back(time_vendor(c, s, w));
    vendor.back().peak_rss = peak_rss_bytes();
  }
  MPI_Type_free(&type);
  std::vector<InplaceResult> all;
  for (InplaceResult& v : vendor) {
    v.median = median_of(v.seconds);
    v.ratio = 1;
    all.push_back(v);
    for (InplaceResult& r : results)
      if (r.pattern == v.pattern) {
        r.median = median_of(r.seconds);
        r.ratio = r.median / v.median;
        all.push_back(r);
      }
  }
  if (w.rank != 0) return 0;
  return write_report(
      o, [&](std::ostream& out) { write_table(out, all, w, o); }, to_json(all, w, o, command));
}

}  // namespace a2av::bench
