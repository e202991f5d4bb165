#include "tune_table.hpp"

#include <fmt/core.h>
#include <fmt/ranges.h>

#include <limits>
#include <sstream>

namespace a2av::tune {
namespace {

constexpr const char* kBaseline = "MPI_Alltoallv";
// What the library's heuristic runs below 64 ranks: the safest choice for a P never tuned.
constexpr const char* kFallback = "spread_out";
constexpr std::int64_t kNoBound = std::numeric_limits<std::int64_t>::max();

bool is_auto(const bench::Row& row) {
  return row.requested.substr(0, row.requested.find(':')) == "auto";
}

bool is_fallback(const Json& rule) {
  return rule.size() == 1 && rule.contains("algorithm");
}

// A rule for exactly this comm size: an earlier tuning of it, which this run replaces.
bool only_for(const Json& rule, int size) {
  if (!rule.contains("comm_size")) return false;
  const Json& range = rule.at("comm_size");
  return range.at(0).get<double>() == size && range.at(1).get<double>() == size;
}

// Whether `rule` matches only comm sizes below `size`, so it may stay ahead of size's rules
// without shadowing them.
bool below(const Json& rule, int size) {
  return rule.contains("comm_size") && rule.at("comm_size").at(1).get<double>() < size;
}

std::string merged_comment(const Json& existing, int size, const std::string& note) {
  const bool has = existing.is_object() && existing.contains("comment") &&
                   existing.at("comment").is_string();  // the library does not check its type
  std::istringstream lines(has ? existing.at("comment").get<std::string>() : "");
  const std::string own = fmt::format("P={}:", size);
  std::string comment;
  for (std::string line; std::getline(lines, line);)
    if (!line.empty() && !line.starts_with(own)) comment += line + '\n';
  return comment + note;
}

std::string format_value(const Json& value) {
  if (!value.is_array()) return value.dump();
  std::vector<std::string> items;
  for (const auto& item : value) items.push_back(item.dump());
  return fmt::format("[{}]", fmt::join(items, ", "));
}

std::string format_rule(const Json& rule) {
  std::vector<std::string> fields;
  for (const auto& [key, value] : rule.items())
    fields.push_back(fmt::format("{}: {}", Json(key).dump(), format_value(value)));
  return fmt::format("{{{}}}", fmt::join(fields, ", "));
}

}  // namespace

std::vector<Winner> fastest_per_size(const std::vector<bench::Row>& rows) {
  std::vector<Winner> winners;
  for (const auto& row : rows) {
    if (winners.empty() || winners.back().size != row.size) winners.emplace_back().size = row.size;
    Winner& w = winners.back();
    if (row.requested == kBaseline) {
      w.baseline_s = row.median_s;
    } else if (!is_auto(row) && (w.algorithm.empty() || row.median_s < w.median_s)) {
      w.algorithm = row.algorithm;
      w.median_s = row.median_s;
    }
  }
  return winners;
}

Json rules_for(int size, const std::vector<Winner>& winners) {
  Json rules = Json::array();
  std::int64_t low = 0;
  for (std::size_t k = 0; k < winners.size(); ++k) {
    const bool last = k + 1 == winners.size();
    if (!last && winners[k + 1].algorithm == winners[k].algorithm) continue;  // one rule
    const std::int64_t high = last ? kNoBound : winners[k].size;
    rules.push_back({{"comm_size", {size, size}},
                     {"max_block_bytes", {low, high}},
                     {"algorithm", winners[k].algorithm}});
    low = winners[k].size + 1;
  }
  return rules;
}

Json merge_table(const Json& existing, int size, const Json& rules, const std::string& note) {
  Json kept = Json::array();
  if (existing.is_object())
    for (const auto& rule : existing.at("rules"))
      if (!is_fallback(rule) && !only_for(rule, size)) kept.push_back(rule);
  Json merged = Json::array();
  std::size_t k = 0;
  for (; k < kept.size() && below(kept[k], size); ++k) merged.push_back(kept[k]);
  for (const auto& own : rules) merged.push_back(own);
  for (; k < kept.size(); ++k) merged.push_back(kept[k]);
  merged.push_back({{"algorithm", kFallback}});
  return {{"version", 1}, {"comment", merged_comment(existing, size, note)}, {"rules", merged}};
}

std::string format_table(const Json& table) {
  std::string text = fmt::format("{{\n  \"version\": {},\n  \"comment\": {},\n  \"rules\": [\n",
                                 table.at("version").dump(), table.at("comment").dump());
  const Json& rules = table.at("rules");
  for (std::size_t i = 0; i < rules.size(); ++i)
    text += fmt::format("    {}{}\n", format_rule(rules[i]), i + 1 < rules.size() ? "," : "");
  return text + "  ]\n}\n";
}

}  // namespace a2av::tune
