#include "algorithms_command.hpp"

#include <a2av/alltoallv.hpp>

#include <fmt/core.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <climits>
#include <stdexcept>

namespace a2av::tool {
namespace {

// A range's upper end that stands for "no limit" is not printed: "2..".
std::string range_of(const ParameterDescription& p) {
  if (p.max >= INT_MAX) return fmt::format("{}..", p.min);
  return fmt::format("{}..{}", p.min, p.max);
}

std::string default_of(const ParameterDescription& p) {
  return p.default_meaning.empty() ? std::to_string(p.default_value) : p.default_meaning;
}

std::string markdown_parameters(const AlgorithmDescription& a) {
  std::string out;
  for (const auto& p : a.parameters)
    out += fmt::format("{}`{}` ({}, default {})", out.empty() ? "" : ", ", p.name, range_of(p),
                       default_of(p));
  return out;
}

void print_markdown(const std::vector<AlgorithmDescription>& all, const std::string& family) {
  fmt::print("| name | parameters | what it does |\n| --- | --- | --- |\n");
  bool any = false;
  for (const auto& a : all) {
    if (a.family != family) continue;
    any = true;
    std::string what = a.summary;
    if (!a.restrictions.empty())
      what += fmt::format(". Needs {}; elsewhere runs `{}`", a.restrictions, a.fallback);
    if (a.bounds_in_flight) what += ". Bounds requests in flight";
    fmt::print("| `{}` | {} | {} |\n", a.name, markdown_parameters(a), what);
  }
  if (!any) throw std::invalid_argument(fmt::format("no algorithm family '{}'", family));
}

void print_text(const std::vector<AlgorithmDescription>& all) {
  std::string family;
  for (const auto& a : all) {
    if (a.family != family) fmt::print("{}{} algorithms\n", family.empty() ? "" : "\n", a.family);
    family = a.family;
    fmt::print("\n  {}: {}\n", a.name, a.summary);
    for (const auto& p : a.parameters)
      fmt::print("    {} ({}, default {}): {}\n", p.name, range_of(p), default_of(p), p.doc);
    if (!a.restrictions.empty())
      fmt::print("    needs {}; elsewhere runs {}\n", a.restrictions, a.fallback);
    if (a.bounds_in_flight) fmt::print("    bounds requests in flight (A2AV_MAX_IN_FLIGHT)\n");
    if (!a.tuning_variants.empty())
      fmt::print("    a2av tune also times: {}\n", fmt::join(a.tuning_variants, ", "));
    if (!a.source.empty()) fmt::print("    source: {}\n", a.source);
  }
}

void print_json(const std::vector<AlgorithmDescription>& all) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const auto& a : all) {
    nlohmann::ordered_json params = nlohmann::ordered_json::array();
    for (const auto& p : a.parameters)
      params.push_back({{"name", p.name},
                        {"type", "integer"},
                        {"min", p.min},
                        {"max", p.max},
                        {"default", p.default_value},
                        {"default_meaning", p.default_meaning},
                        {"doc", p.doc}});
    out.push_back({{"family", a.family},
                   {"name", a.name},
                   {"summary", a.summary},
                   {"parameters", params},
                   {"restrictions", a.restrictions},
                   {"fallback", a.fallback},
                   {"one_node_only", a.one_node_only},
                   {"bounds_in_flight", a.bounds_in_flight},
                   {"tuning_variants", a.tuning_variants},
                   {"source", a.source}});
  }
  fmt::print("{}\n", out.dump(2));
}

}  // namespace

CLI::App* add_algorithms_command(CLI::App& app, AlgorithmsOptions& options) {
  CLI::App* command = app.add_subcommand(
      "algorithms", "list every algorithm of every family, with its parameters (no MPI traffic)");
  auto* json = command->add_flag("--json", options.json, "as JSON, for programs");
  command->add_flag("--markdown", options.markdown, "as the README's markdown table of --family")
      ->excludes(json);
  command
      ->add_option("--family", options.family,
                   "family for --markdown: alltoallv, in-place, redistribution, sparse")
      ->capture_default_str();
  return command;
}

int run_algorithms(const AlgorithmsOptions& options) {
  const std::vector<AlgorithmDescription> all = a2av::algorithms();
  if (options.json)
    print_json(all);
  else if (options.markdown)
    print_markdown(all, options.family);
  else
    print_text(all);
  return 0;
}

}  // namespace a2av::tool
