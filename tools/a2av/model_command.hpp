// `a2av model`: the cost model (src/tuning/cost_model.hpp) from the command line. Plain
// arithmetic on one rank, no communication; P up to 16384 in seconds.
//   predict  times for specs x P x sizes under a machine file, and the best TuNA radix;
//   compare  predictions against the points of `a2av bench --json` files (relative error);
//   fit      a machine file fitted to such files by least squares.
#pragma once

#include "cli11.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace a2av::bench {

struct ModelOptions {
  std::string machine;
  std::vector<int> ranks{2048, 4096, 8192, 16384};
  std::string message_sizes = "16:16384";
  std::string algorithms = "tuna";
  std::vector<std::string> radices{"2", "4", "8", "16", "32", "sqrtP", "P"};
  std::string pattern = "uniform";
  std::uint64_t seed = 1;
  std::vector<std::string> compare;  // bench JSON files
  std::vector<std::string> fit;      // bench JSON files
  std::string output;                // fitted machine file
  std::string name = "fitted";
  int cores = 0;  // cores per node of the fitted machine
};

CLI::App* add_model_command(CLI::App& app, ModelOptions& options);

// Returns the exit status; throws std::invalid_argument or a2av::Error for bad input.
int run_model(const ModelOptions& options);

}  // namespace a2av::bench
