// `a2av tune`: runs bench's validated sweep over candidate specs at this P and writes the
// fastest spec per message size as a tuning table (docs/tuning.md, "a2av tune").
#pragma once

#include "options.hpp"

#include "cli11.hpp"

#include <string>

namespace a2av::tune {

struct TuneOptions {
  bench::BenchOptions sweep;  // as `a2av bench` takes it; format and output unused
  std::string output = "a2av-tuning.json";
  std::string merge;  // a table whose rules for other comm sizes are kept
};

// Adds the `tune` subcommand to `app`; parsing fills `options`.
CLI::App* add_tune_command(CLI::App& app, TuneOptions& options);

// Collective over MPI_COMM_WORLD; rank 0 reads and writes the files. Returns the exit status,
// alike on every rank; throws std::invalid_argument for bad arguments (the message on rank
// 0) and bench::ValidationFailure for a wrong result.
int run_tune(const TuneOptions& options, const std::string& command);

}  // namespace a2av::tune
