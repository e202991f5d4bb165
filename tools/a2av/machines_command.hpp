// `a2av machines`: the data files the install carries (share/a2av, src/tuning/data_files.hpp):
// the cost model's machine files, by name, and the SimGrid platforms. No MPI traffic; rank 0
// prints. Also the text of `a2av --version` and of the help's footer, which say where they are.
#pragma once

#include "cli11.hpp"

#include <string>

namespace a2av::tool {

struct MachinesOptions {
  bool json = false;
};

CLI::App* add_machines_command(CLI::App& app, MachinesOptions& options);

// Prints to stdout; returns the exit status.
int run_machines(const MachinesOptions& options);

// a2av's version, the MPI it was built for and runs on, and the data directory.
std::string version_text();

// For every command's help: where the data files are.
std::string data_footer();

}  // namespace a2av::tool
