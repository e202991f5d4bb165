#include "tuning/table.hpp"

#include "alltoallv/registry.hpp"
#include "core/check.hpp"

#include <nlohmann/json.hpp>

#include <fstream>
#include <sstream>

namespace a2av {
namespace {

using nlohmann::json;

constexpr const char* kRangeKeys[] = {"comm_size", "ranks_per_node", "max_block_bytes",
                                      "mean_block_bytes", "sparsity"};

int line_at(const std::string& text, std::size_t offset) {
  int line = 1;
  for (std::size_t i = 0; i < offset && i < text.size(); ++i) line += text[i] == '\n';
  return line;
}

// Lines where the objects inside the "rules" array begin (objects at depth 3), found by a
// scan of the text that skips strings, so errors in rule k can name its line.
std::vector<int> rule_lines(const std::string& text) {
  std::vector<int> lines;
  int depth = 0, line = 1;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\n') ++line;
    if (in_string) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        in_string = false;
      continue;
    }
    if (c == '"') in_string = true;
    if (c == '{' || c == '[') {
      ++depth;
      if (c == '{' && depth == 3) lines.push_back(line);
    }
    if (c == '}' || c == ']') --depth;
  }
  return lines;
}

Range parse_range(const json& value, const std::string& where, const char* key) {
  if (!value.is_array() || value.size() != 2 || !value[0].is_number() || !value[1].is_number() ||
      value[0].get<double>() > value[1].get<double>())
    fail(A2AV_ERR_ALGORITHM, "{}: {} must be [low, high] with low <= high", where, key);
  return {value[0].get<double>(), value[1].get<double>()};
}

TuningRule parse_rule(const json& object, const std::string& where) {
  if (!object.is_object()) fail(A2AV_ERR_ALGORITHM, "{}: a rule must be an object", where);
  TuningRule rule;
  std::optional<Range>* ranges[] = {&rule.comm_size, &rule.ranks_per_node, &rule.max_block_bytes,
                                    &rule.mean_block_bytes, &rule.sparsity};
  for (const auto& [key, value] : object.items()) {
    if (key == "algorithm") {
      if (!value.is_string()) fail(A2AV_ERR_ALGORITHM, "{}: algorithm must be a string", where);
      rule.algorithm = value.get<std::string>();
      continue;
    }
    const auto* known = std::find(std::begin(kRangeKeys), std::end(kRangeKeys), key);
    if (known == std::end(kRangeKeys))
      fail(A2AV_ERR_ALGORITHM,
           "{}: unknown key '{}'; accepted: algorithm, comm_size, ranks_per_node, "
           "max_block_bytes, mean_block_bytes, sparsity",
           where, key);
    *ranges[known - std::begin(kRangeKeys)] = parse_range(value, where, *known);
  }
  if (rule.algorithm.empty()) fail(A2AV_ERR_ALGORITHM, "{}: the rule names no algorithm", where);
  try {
    if (!parse_spec(rule.algorithm).algorithm->run)
      fail(A2AV_ERR_ALGORITHM, "{}: a rule cannot choose 'auto'", where);
  } catch (const Error& e) {
    throw Error(A2AV_ERR_ALGORITHM, fmt::format("{}: {}", where, e.what()));
  }
  return rule;
}

}  // namespace

TuningTable TuningTable::load(const std::string& path) {
  std::ifstream in(path);
  if (!in) fail(A2AV_ERR_ALGORITHM, "tuning file {}: cannot be read", path);
  std::stringstream text;
  text << in.rdbuf();
  return parse(text.str(), path);
}

TuningTable TuningTable::parse(const std::string& text, const std::string& name) {
  json document;
  try {
    document = json::parse(text);
  } catch (const json::parse_error& e) {
    fail(A2AV_ERR_ALGORITHM, "tuning file {}, line {}: not valid JSON ({})", name,
         line_at(text, e.byte), e.what());
  }
  if (!document.is_object() || !document.contains("rules") || !document["rules"].is_array())
    fail(A2AV_ERR_ALGORITHM, "tuning file {}, line 1: expected {{\"rules\": [...]}}", name);
  for (const auto& [key, value] : document.items())
    if (key != "rules" && key != "version" && key != "comment")
      fail(A2AV_ERR_ALGORITHM, "tuning file {}: unknown top-level key '{}'", name, key);
  TuningTable table;
  table.name_ = name;
  const std::vector<int> lines = rule_lines(text);
  const json& rules = document["rules"];
  for (std::size_t i = 0; i < rules.size(); ++i) {
    const int line = i < lines.size() ? lines[i] : 1;
    TuningRule rule =
        parse_rule(rules[i], fmt::format("tuning file {}, line {} (rule {})", name, line, i + 1));
    rule.line = line;
    table.rules_.push_back(std::move(rule));
  }
  return table;
}

const TuningRule* TuningTable::match(const ExchangeStats& s) const {
  auto fits = [](const std::optional<Range>& r, double v) { return !r || r->holds(v); };
  for (const auto& rule : rules_)
    if (fits(rule.comm_size, s.size) && fits(rule.ranks_per_node, s.ranks_per_node) &&
        fits(rule.max_block_bytes, static_cast<double>(s.max_block)) &&
        fits(rule.mean_block_bytes, s.mean_block) && fits(rule.sparsity, s.sparsity))
      return &rule;
  return nullptr;
}

}  // namespace a2av
