#include "bench.hpp"

#include "buffers.hpp"
#include "entry.hpp"
#include "progress.hpp"
#include "timing.hpp"
#include "validate.hpp"

#include "alltoallv/registry.hpp"

#include <fmt/core.h>

#include <algorithm>

namespace a2av::bench {
namespace {

constexpr const char* kBaseline = "MPI_Alltoallv";

bool is_auto(const Entry& e) {
  return e.requested.substr(0, e.requested.find(':')) == "auto";
}

// The bound on requests in flight an entry's spec asks for (0: the default); what ran does
// not say it.
int in_flight_of(const Entry& e) {
  return e.requested.empty() ? 0 : parse_spec(e.requested).in_flight;
}

// Whether `e` runs what a listed non-auto entry runs already, under the same bound; auto's
// choice is its own row.
bool duplicate(const std::vector<Entry>& entries, const Entry& e) {
  return !is_auto(e) && std::any_of(entries.begin(), entries.end(), [&](const Entry& x) {
    return !is_auto(x) && x.algorithm == e.algorithm && in_flight_of(x) == in_flight_of(e);
  });
}

// Validates (or, without --validate, just runs once) everything before timing anything.
std::vector<Entry> probe_all(const BenchPlan& plan, const BenchOptions& options, Buffers& buffers,
                             std::int64_t bytes, const World& world) {
  std::vector<Entry> entries;
  if (options.baseline) {
    make_reference(buffers, options.validate, bytes, world);
    entries.emplace_back().algorithm = kBaseline;
  }
  for (const auto& spec : plan.specs) {
    Entry e;
    e.requested = spec;
    probe(e, buffers, options.validate, options.baseline, bytes, world);
    if (!duplicate(entries, e)) entries.push_back(std::move(e));
  }
  if (options.copy_bound) {  // last: without the baseline, the first entry is the reference
    Entry& bound = entries.emplace_back();
    bound.requested = bound.algorithm = kCopyBound;
  }
  return entries;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

Row summarize(const Entry& e, double baseline_median, std::int64_t bytes, const Buffers& buffers,
              bool validated) {
  const auto [lo, hi] = std::minmax_element(e.seconds.begin(), e.seconds.end());
  Row row;
  row.requested = e.baseline() ? kBaseline : e.requested;
  row.algorithm = e.algorithm;
  row.size = bytes;
  row.max_block_bytes = buffers.max_block_bytes();
  row.median_s = median(e.seconds);
  row.min_s = *lo;
  row.max_s = *hi;
  row.ratio = row.median_s / baseline_median;
  row.validated = validated && !e.copy_bound();  // the bound exchanges nothing
  if (e.a2av()) {  // a2av's accounting does not see inside the MPI library
    row.peak_bytes = e.peak_bytes;
    row.bound_bytes = e.bound_bytes;
    row.max_in_flight = e.max_in_flight;
  }
  return row;
}

}  // namespace

std::vector<Row> run_sweep(const BenchPlan& plan, const BenchOptions& options, const World& world) {
  Progress progress(world.rank, options.progress);
  std::vector<Row> rows;
  for (std::size_t point = 0; point < plan.sizes.size(); ++point) {
    const std::int64_t bytes = plan.sizes[point];
    const std::string label =
        fmt::format("a2av bench: {} bytes ({}/{})", bytes, point + 1, plan.sizes.size());
    if (progress.due()) progress.show(fmt::format("{}: validating", label));
    Buffers buffers(counts_at(plan, options, world.size, bytes), world.rank, plan.datatype);
    auto entries = probe_all(plan, options, buffers, bytes, world);
    time_entries(entries, buffers, options.iterations, options.warmup, progress, label);
    const double baseline = median(entries.front().seconds);
    for (const auto& e : entries)
      rows.push_back(summarize(e, baseline, bytes, buffers, options.validate));
  }
  return rows;
}

}  // namespace a2av::bench
