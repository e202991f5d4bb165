// `a2av fixpoints [N...]`: the incorrect states (fixpoints) of the bitonic merger on 0-1
// inputs and the correction rounds each needs, per correction method of Section III-A
// (Mundani and Rank [Mundani11], Sections II-C, III-A, III-B; docs/route.md). Plain
// computation on one rank; N up to 64 (N = 32 in milliseconds, N = 64 in seconds).
#pragma once

#include "cli11.hpp"

#include <string>
#include <vector>

namespace a2av::fixpoints {

struct FixpointOptions {
  std::vector<int> sizes{4, 8, 16, 32};
  std::string json;  // also write the table here
};

CLI::App* add_fixpoints_command(CLI::App& app, FixpointOptions& options);

// Returns the exit status; throws a2av::Error for a bad N, std::invalid_argument for an
// unwritable --json file.
int run_fixpoints(const FixpointOptions& options);

}  // namespace a2av::fixpoints
