// The table for people, laid out as OSU's benchmarks print theirs: a '#' header, then one
// line per message size, one block per algorithm.
#include "report.hpp"

#include "entry.hpp"

#include <fmt/core.h>

#include <algorithm>

namespace a2av::bench {
namespace {

std::string bytes_or_dash(const std::optional<std::int64_t>& value) {
  return value ? std::to_string(*value) : "-";
}

void write_header(std::ostream& out, const Report& r) {
  out << fmt::format(
      "# a2av bench: P={}, {} ranks per node, pattern {}, seed {}, datatype {} "
      "({} B)\n",
      r.world.size, r.world.ranks_per_node, r.options.pattern, r.options.seed, r.plan.datatype.name,
      r.plan.datatype.bytes);
  const std::string& reference = r.rows.empty() ? "MPI_Alltoallv" : r.rows.front().requested;
  out << fmt::format("# {} iterations after {} warm-up, {}; times in us, max over ranks\n",
                     r.options.iterations, r.options.warmup,
                     !r.options.validate  ? "NOT validated"
                     : r.options.baseline ? "validated against MPI_Alltoallv"
                                          : "validated by content");
  out << fmt::format(
      "# ratio = median / {} median (below 1 is faster); peak = temporary bytes "
      "(max over ranks), bound = documented bound\n",
      reference);
  if (r.options.copy_bound)
    out << fmt::format(
        "# {}: each rank copies its receive volume once with memcpy, all ranks "
        "at once, no exchange\n",
        kCopyBound);
  out << fmt::format("# {}\n", r.world.mpi_library);
}

// One algorithm's rows; `auto` may run something else at each size, shown in a last column.
void write_block(std::ostream& out, const std::vector<const Row*>& rows) {
  const bool varies = std::any_of(rows.begin(), rows.end(), [&](const Row* row) {
    return row->algorithm != rows.front()->algorithm;
  });
  const std::string& requested = rows.front()->requested;
  const std::string& ran = rows.front()->algorithm;
  out << "\n# " << requested << (varies || ran == requested ? "" : " (ran " + ran + ")") << '\n';
  out << fmt::format("# {:>10} {:>12} {:>12} {:>12} {:>8} {:>12} {:>12}{}\n", "Size (B)",
                     "Median (us)", "Min (us)", "Max (us)", "Ratio", "Peak (B)", "Bound (B)",
                     varies ? "  Ran" : "");
  for (const Row* row : rows)
    out << fmt::format("  {:>10} {:>12.2f} {:>12.2f} {:>12.2f} {:>8.2f} {:>12} {:>12}{}\n",
                       row->size, row->median_s * 1e6, row->min_s * 1e6, row->max_s * 1e6,
                       row->ratio, bytes_or_dash(row->peak_bytes), bytes_or_dash(row->bound_bytes),
                       varies ? "  " + row->algorithm : "");
}

// The fastest a2av algorithm at each size against the reference (rows come size by size,
// the reference first: MPI_Alltoallv, or with --no-baseline the first algorithm).
void write_summary(std::ostream& out, const std::vector<Row>& rows) {
  std::vector<std::pair<const Row*, const Row*>> best;  // baseline, fastest other
  for (const Row& row : rows) {
    if (row.requested == kCopyBound) continue;  // a bound, not an algorithm
    if (best.empty() || best.back().first->size != row.size) {
      best.push_back({&row, nullptr});
    } else if (!best.back().second || row.median_s < best.back().second->median_s) {
      best.back().second = &row;
    }
  }
  std::size_t width = 4;
  if (best.empty()) return;
  for (auto& [base, fastest] : best) {
    if (!fastest) fastest = base;  // only the reference ran
    width = std::max(width, fastest->requested.size());
  }
  const std::string reference = best.front().first->requested;
  out << fmt::format("\n# Best algorithm per size; speedup = {} median / its median\n", reference);
  out << fmt::format("# {:>10} {:<{}} {:>12} {:>18} {:>8}\n", "Size (B)", "Best", width,
                     "Median (us)", reference + " (us)", "Speedup");
  for (const auto& [base, fastest] : best)
    out << fmt::format("  {:>10} {:<{}} {:>12.2f} {:>18.2f} {:>8.2f}\n", base->size,
                       fastest->requested, width, fastest->median_s * 1e6, base->median_s * 1e6,
                       base->median_s / fastest->median_s);
}

}  // namespace

void write_table(std::ostream& out, const Report& report) {
  write_header(out, report);
  std::vector<std::string> order;  // requested specs, in first-seen order
  for (const Row& row : report.rows)
    if (std::find(order.begin(), order.end(), row.requested) == order.end())
      order.push_back(row.requested);
  for (const auto& requested : order) {
    std::vector<const Row*> block;
    for (const Row& row : report.rows)
      if (row.requested == requested) block.push_back(&row);
    write_block(out, block);
  }
  write_summary(out, report.rows);
}

}  // namespace a2av::bench
