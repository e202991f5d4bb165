#include "environment_command.hpp"

#include <a2av/environment.hpp>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <string>
#include <vector>

namespace a2av::tool {
namespace {

void print_json(const std::vector<EnvironmentVariable>& all) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const EnvironmentVariable& v : all)
    out.push_back(
        {{"name", v.name}, {"type", v.type}, {"default", v.default_value}, {"doc", v.doc}});
  fmt::print("{}\n", out.dump(2));
}

void print_text(const std::vector<EnvironmentVariable>& all) {
  std::size_t name = 8, type = 4, value = 7;
  for (const EnvironmentVariable& v : all) {
    name = std::max(name, v.name.size());
    type = std::max(type, v.type.size());
    value = std::max(value, v.default_value.size());
  }
  fmt::print("{:<{}}  {:<{}}  {:<{}}  {}\n", "variable", name, "type", type, "default", value,
             "effect");
  for (const EnvironmentVariable& v : all)
    fmt::print("{:<{}}  {:<{}}  {:<{}}  {}\n", v.name, name, v.type, type,
               v.default_value.empty() ? "-" : v.default_value, value, v.doc);
}

}  // namespace

CLI::App* add_environment_command(CLI::App& app, EnvironmentOptions& o) {
  CLI::App* cmd = app.add_subcommand(
      "environment", "the environment variables the library reads: type, default, effect");
  cmd->add_flag("--json", o.json, "as a JSON array of {name, type, default, doc}");
  return cmd;
}

int run_environment(const EnvironmentOptions& o) {
  const std::vector<EnvironmentVariable> all = environment_variables();
  if (o.json)
    print_json(all);
  else
    print_text(all);
  return 0;
}

}  // namespace a2av::tool
