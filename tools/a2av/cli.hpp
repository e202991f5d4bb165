// The command line of `a2av bench`.
#pragma once

#include "options.hpp"

#include <CLI/CLI.hpp>

namespace a2av::bench {

// Adds the `bench` subcommand to `app`; parsing fills `options`.
CLI::App* add_bench_command(CLI::App& app, BenchOptions& options);

}  // namespace a2av::bench
