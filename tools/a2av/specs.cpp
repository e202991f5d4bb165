#include "specs.hpp"

#include <a2av/alltoallv.hpp>

#include <fmt/core.h>

#include <algorithm>
#include <charconv>
#include <stdexcept>

namespace a2av::bench {
namespace {

std::string_view name_of(std::string_view spec) {
  return spec.substr(0, spec.find(':'));
}

const std::vector<a2av::AlgorithmDescription>& alltoallv_algorithms() {
  static const std::vector<a2av::AlgorithmDescription> found = [] {
    std::vector<a2av::AlgorithmDescription> all = a2av::algorithms();
    std::erase_if(all, [](const auto& a) { return a.family != "alltoallv"; });
    return all;
  }();
  return found;
}

// Whether the spec's algorithm has a parameter `key` whose values start at `min` or above.
bool takes(std::string_view spec, std::string_view key, std::int64_t min) {
  for (const auto& a : alltoallv_algorithms())
    if (a.name == name_of(spec))
      for (const auto& p : a.parameters)
        if (p.name == key && p.min >= min) return true;
  return false;
}

// A radix of TuNA's digit rounds (node_aware's radix 0 means none: not swept).
bool takes_radix(std::string_view spec) {
  return takes(spec, "radix", 2);
}

bool takes_block_count(std::string_view spec) {
  return takes(spec, "block_count", 1);
}

// Every spec `applies` to is replaced by one copy per value of `key`; others stay as they are.
template <class Values, class Applies>
std::vector<std::string> sweep(const std::vector<std::string>& specs, std::string_view key,
                               const Values& values, Applies applies) {
  if (values.empty()) return specs;
  std::vector<std::string> out;
  for (const auto& spec : specs) {
    if (!applies(spec)) {
      out.push_back(spec);
      continue;
    }
    for (auto value : values) out.push_back(with_param(spec, key, value));
  }
  return out;
}

int ceil_sqrt(int n) {
  int root = 1;
  while (root * root < n) ++root;
  return root;
}

}  // namespace

std::vector<std::string> split_specs(std::string_view list) {
  std::vector<std::string> specs;
  std::size_t start = 0;
  while (start <= list.size()) {
    const std::size_t comma = std::min(list.find(',', start), list.size());
    const std::string_view item = list.substr(start, comma - start);
    const bool continues = item.find('=') != std::string_view::npos &&
                           item.find(':') == std::string_view::npos && !specs.empty();
    if (continues)
      specs.back() += fmt::format(",{}", item);
    else if (!item.empty())
      specs.emplace_back(item);
    start = comma + 1;
  }
  return specs;
}

int radix_value(std::string_view text, int size) {
  int value = 0;
  if (text == "P") {
    value = size;
  } else if (text == "sqrtP") {
    value = ceil_sqrt(size);
  } else {
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || end != text.data() + text.size() || value < 2)
      throw std::invalid_argument(
          fmt::format("--radix: '{}' is not an integer >= 2, sqrtP or P", text));
  }
  return std::max(value, 2);
}

std::string with_param(std::string_view spec, std::string_view key, std::int64_t value) {
  const std::size_t colon = spec.find(':');
  std::string out(name_of(spec));
  char separator = ':';
  bool replaced = false;
  std::string_view rest = colon == std::string_view::npos ? "" : spec.substr(colon + 1);
  while (!rest.empty()) {
    const std::size_t comma = rest.find(',');
    const std::string_view item = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? "" : rest.substr(comma + 1);
    const bool same_key = item.substr(0, item.find('=')) == key;
    if (same_key && replaced) continue;  // a key given twice: keep one
    out += same_key ? fmt::format("{}{}={}", separator, key, value)
                    : fmt::format("{}{}", separator, item);
    replaced = replaced || same_key;
    separator = ',';
  }
  if (!replaced) out += fmt::format("{}{}={}", separator, key, value);
  return out;
}

std::vector<std::string> expand_specs(std::string_view list, const std::vector<int>& radices,
                                      const std::vector<std::int64_t>& block_counts, int size,
                                      int ranks_per_node) {
  std::vector<std::string> specs;
  for (auto& spec : split_specs(list)) {
    if (spec != "all") {
      specs.push_back(std::move(spec));
      continue;
    }
    for (const auto& a : alltoallv_algorithms()) {
      if (a.one_node_only && size > ranks_per_node) continue;
      specs.push_back(a.name);
      specs.insert(specs.end(), a.tuning_variants.begin(), a.tuning_variants.end());
    }
  }
  if (!radices.empty() && std::none_of(specs.begin(), specs.end(), takes_radix))
    specs.emplace_back("tuna");
  if (!block_counts.empty() && std::none_of(specs.begin(), specs.end(), takes_block_count))
    specs.emplace_back("scattered");
  specs = sweep(specs, "radix", radices, takes_radix);
  specs = sweep(specs, "block_count", block_counts, takes_block_count);

  std::vector<std::string> unique;
  for (auto& spec : specs)
    if (std::find(unique.begin(), unique.end(), spec) == unique.end())
      unique.push_back(std::move(spec));
  if (unique.empty()) throw std::invalid_argument("--algorithms: no algorithm given");
  // The bound's parser is the one the exchange uses: it throws a2av::Error for what it rejects.
  for (const auto& spec : unique) a2av::temp_memory_bound(spec, size, ranks_per_node, 0, 0);
  return unique;
}

}  // namespace a2av::bench
