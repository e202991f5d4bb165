// `a2av bench` from parsed options to written reports.
#pragma once

#include "options.hpp"

#include <string>

namespace a2av::bench {

// Collective over MPI_COMM_WORLD. Returns the exit status; throws std::invalid_argument for
// bad arguments and ValidationFailure for a wrong result, alike on every rank.
int run_bench(const BenchOptions& options, const std::string& command);

}  // namespace a2av::bench
