#include "core/spec.hpp"

#include "core/check.hpp"

#include <fmt/ranges.h>

#include <algorithm>
#include <charconv>
#include <climits>
#include <stdexcept>
#include <string>

namespace a2av {
namespace {

std::int64_t parse_value(std::string_view key, std::string_view text) {
  std::int64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size())
    fail(A2AV_ERR_ALGORITHM, "parameter {}: '{}' is not an integer", key, text);
  return value;
}

std::string accepted_names(std::span<const SpecGrammar> grammar) {
  std::vector<std::string_view> names;
  for (const auto& a : grammar) names.push_back(a.name);
  return fmt::format("{}", fmt::join(names, ", "));
}

std::string accepted_keys(const SpecGrammar& a, const SpecFamily& family) {
  std::vector<std::string> keys;
  for (const Param* p : a.params)
    keys.push_back(fmt::format("{} ({}..{})", p->key, p->min, p->max));
  if (family.accepts_validate) keys.push_back("validate (0..1)");
  if (family.accepts_in_flight) keys.push_back(fmt::format("in_flight (8..{})", INT_MAX));
  return keys.empty() ? std::string("none") : fmt::format("{}", fmt::join(keys, ", "));
}

}  // namespace

std::int64_t ParamValues::operator[](const Param& param) const {
  for (const auto& [p, value] : values_)
    if (p == &param) return value;
  throw std::logic_error(
      fmt::format("a2av: parameter {} read where the algorithm has none", param.key));
}

bool ParamValues::has(const Param& param) const {
  return std::any_of(values_.begin(), values_.end(), [&](auto& e) { return e.first == &param; });
}

void ParamValues::set(const Param& param, std::int64_t value) {
  for (auto& [p, v] : values_)
    if (p == &param) {
      v = value;
      return;
    }
  values_.emplace_back(&param, value);
}

ParsedSpec parse_spec(std::string_view text, std::span<const SpecGrammar> grammar,
                      const SpecFamily& family) {
  const auto colon = text.find(':');
  const std::string_view name = text.substr(0, colon);
  const auto found = std::find_if(grammar.begin(), grammar.end(),
                                  [&](const SpecGrammar& a) { return a.name == name; });
  if (found == grammar.end())
    fail(A2AV_ERR_ALGORITHM, "unknown {}algorithm '{}'; accepted: {}", family.prefix, name,
         accepted_names(grammar));
  ParsedSpec spec;
  spec.index = static_cast<std::size_t>(found - grammar.begin());
  for (const Param* p : found->params) spec.values.set(*p, p->fallback);
  std::string_view rest = colon == std::string_view::npos ? "" : text.substr(colon + 1);
  if (colon != std::string_view::npos && rest.empty())
    fail(A2AV_ERR_ALGORITHM, "'{}' has a ':' but no parameters", text);
  while (!rest.empty()) {
    const auto comma = rest.find(',');
    const std::string_view item = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? "" : rest.substr(comma + 1);
    const auto eq = item.find('=');
    if (eq == std::string_view::npos)
      fail(A2AV_ERR_ALGORITHM, "'{}' in '{}' is not key=value", item, text);
    const std::string_view key = item.substr(0, eq);
    const std::int64_t value = parse_value(key, item.substr(eq + 1));
    if (key == "validate" && family.accepts_validate) {
      if (value != 0 && value != 1) fail(A2AV_ERR_ALGORITHM, "validate must be 0 or 1");
      spec.validate = value == 1;
      continue;
    }
    if (key == "in_flight" && family.accepts_in_flight) {
      if (value < 8 || value > INT_MAX)
        fail(A2AV_ERR_ALGORITHM, "in_flight={} is out of range 8..{}", value, INT_MAX);
      spec.in_flight = static_cast<int>(value);
      continue;
    }
    const auto param = std::find_if(found->params.begin(), found->params.end(),
                                    [&](const Param* p) { return p->key == key; });
    if (param == found->params.end())
      fail(A2AV_ERR_ALGORITHM, "{} has no parameter '{}'; accepted: {}", name, key,
           accepted_keys(*found, family));
    if (value < (*param)->min || value > (*param)->max)
      fail(A2AV_ERR_ALGORITHM, "{}: {}={} is out of range {}..{}", name, key, value, (*param)->min,
           (*param)->max);
    spec.values.set(**param, value);
  }
  return spec;
}

std::vector<SpecGrammar> grammar_of(std::span<const FamilyAlgorithm> table) {
  std::vector<SpecGrammar> grammar;
  for (const auto& a : table) grammar.push_back({a.name, a.params});
  return grammar;
}

std::string format_spec(std::string_view name, const ParamValues& values) {
  std::string text(name);
  char sep = ':';
  for (const auto& [param, value] : values.entries()) {
    text += fmt::format("{}{}={}", sep, param->key, value);
    sep = ',';
  }
  return text;
}

}  // namespace a2av
