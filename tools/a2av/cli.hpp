// The command line of `a2av bench`.
#pragma once

#include "options.hpp"

#include "cli11.hpp"

namespace a2av::bench {

// The sweep options (--algorithms, --radix, --block-count, -m, -i, -x) and the data options
// (--pattern, --seed, --datatype) that bench and tune share.
void add_sweep_options(CLI::App& cmd, BenchOptions& options);
void add_data_options(CLI::App& cmd, BenchOptions& options);

// Adds the `bench` subcommand to `app`; parsing fills `options`.
CLI::App* add_bench_command(CLI::App& app, BenchOptions& options);

}  // namespace a2av::bench
