// `a2av algorithms`: the library's algorithm table (every family), from the algorithms' own
// descriptors: for people, as JSON for programs, or as the README's markdown table.
#pragma once

#include "cli11.hpp"

#include <string>

namespace a2av::tool {

struct AlgorithmsOptions {
  bool json = false;
  bool markdown = false;
  std::string family = "alltoallv";  // the family --markdown prints
};

CLI::App* add_algorithms_command(CLI::App& app, AlgorithmsOptions& options);

// Prints to stdout; returns the exit status.
int run_algorithms(const AlgorithmsOptions& options);

}  // namespace a2av::tool
