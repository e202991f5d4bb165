// `a2av environment`: the environment variables the library reads (name, type, default, one
// line of doc), from its own table (src/core/environment.hpp): for people, or as JSON for
// programs (tests/tool/check_readme_env.py checks the README's table against it). No MPI
// traffic; rank 0 prints.
#pragma once

#include "cli11.hpp"

namespace a2av::tool {

struct EnvironmentOptions {
  bool json = false;
};

CLI::App* add_environment_command(CLI::App& app, EnvironmentOptions& options);

// Prints to stdout; returns the exit status.
int run_environment(const EnvironmentOptions& options);

}  // namespace a2av::tool
