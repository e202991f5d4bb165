#include "plan.hpp"

#include "specs.hpp"

#include <a2av/error.hpp>

#include <fmt/core.h>

#include <algorithm>
#include <charconv>
#include <climits>
#include <stdexcept>

namespace a2av::bench {
namespace {

// Up to 2^40: far beyond what the int-counted baseline allows, and doubling cannot overflow.
std::int64_t parse_bytes(std::string_view text) {
  std::int64_t value = -1;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value < 0 ||
      value > (std::int64_t{1} << 40))
    throw std::invalid_argument(
        fmt::format("--message-size: '{}' is not a byte count 0..2^40 (expected [min:]max)", text));
  return value;
}

// The MPI_Alltoallv reference takes int counts and displacements in elements: every rank's
// send and receive totals must fit.
void check_fits_int(const CountMatrix& counts, int element_bytes, std::int64_t bytes) {
  const std::size_t n = counts.size();
  for (std::size_t i = 0; i < n; ++i) {
    std::int64_t row = 0, column = 0;
    for (std::size_t j = 0; j < n; ++j) {
      row += counts[i][j] / element_bytes;
      column += counts[j][i] / element_bytes;
    }
    if (std::max(row, column) > INT_MAX)
      throw std::invalid_argument(
          fmt::format("--message-size: at {} bytes rank {} exchanges {} elements, more than the "
                      "MPI_Alltoallv baseline can count (int)",
                      bytes, i, std::max(row, column)));
  }
}

std::vector<int> radix_values(const std::vector<std::string>& texts, int size) {
  std::vector<int> radices;
  for (const auto& text : texts) {
    const int radix = radix_value(text, size);
    if (std::find(radices.begin(), radices.end(), radix) == radices.end()) radices.push_back(radix);
  }
  return radices;
}

std::vector<std::string> checked_specs(const BenchOptions& o, const World& w) {
  try {
    return expand_specs(o.algorithms, radix_values(o.radices, w.size), o.block_counts, w.size,
                        w.ranks_per_node);
  } catch (const a2av::Error& e) {
    throw std::invalid_argument(fmt::format("--algorithms: {}", e.what()));
  }
}

PatternSpec checked_pattern(const std::string& text) {
  try {
    return parse_pattern(text);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(fmt::format("--pattern: {}", e.what()));
  }
}

}  // namespace

std::vector<std::int64_t> message_sizes(std::string_view text) {
  const std::size_t colon = text.find(':');
  const std::int64_t max =
      parse_bytes(text.substr(colon == std::string_view::npos ? 0 : colon + 1));
  const std::int64_t min = colon == std::string_view::npos ? std::min<std::int64_t>(16, max)
                                                           : parse_bytes(text.substr(0, colon));
  if (min > max)
    throw std::invalid_argument(fmt::format("--message-size: min {} is above max {}", min, max));
  std::vector<std::int64_t> sizes;
  for (std::int64_t s = min; s <= max; s = std::max<std::int64_t>(1, 2 * s)) sizes.push_back(s);
  return sizes;
}

BenchPlan make_plan(const BenchOptions& options, const World& world) {
  BenchPlan plan{message_sizes(options.message_sizes), checked_specs(options, world),
                 checked_pattern(options.pattern), find_datatype(options.datatype)};
  // Make every matrix once now, so a bad file or an oversized point fails before any timing.
  for (std::int64_t bytes : plan.sizes)
    check_fits_int(counts_at(plan, options, world.size, bytes), plan.datatype.bytes, bytes);
  return plan;
}

CountMatrix counts_at(const BenchPlan& plan, const BenchOptions& options, int size,
                      std::int64_t bytes) {
  try {
    return make_counts(plan.pattern, size, bytes, options.seed);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(fmt::format("--pattern: {}", e.what()));
  }
}

}  // namespace a2av::bench
