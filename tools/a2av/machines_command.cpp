#include "machines_command.hpp"

#include "tuning/cost_model.hpp"
#include "tuning/data_files.hpp"
#include "world.hpp"

#include <a2av/version.h>

#include <fmt/core.h>
#include <fmt/ranges.h>
#include <mpi.h>
#include <nlohmann/json.hpp>

#include <vector>

namespace a2av::tool {
namespace {

std::string built_for() {
#if defined(OMPI_MAJOR_VERSION)
  return fmt::format("Open MPI {}.{}.{}", OMPI_MAJOR_VERSION, OMPI_MINOR_VERSION,
                     OMPI_RELEASE_VERSION);
#elif defined(MPICH_VERSION)
  return fmt::format("MPICH {}", MPICH_VERSION);
#else
  return fmt::format("an MPI {}.{} library", MPI_VERSION, MPI_SUBVERSION);
#endif
}

std::string data_folder_text() {
  const auto folder = data_directory();
  return folder.empty() ? "(not found; set A2AV_DATA_DIR)" : folder.string();
}

// The head of a machine file's `source`, where its figures come from, to fit one line.
std::string source_head(const std::string& text) {
  constexpr std::size_t kWidth = 72;
  std::size_t end = text.size();
  for (const char* stop : {": ", ". ", "; ", " ("}) end = std::min(end, text.find(stop));
  return end <= kWidth ? text.substr(0, end) : text.substr(0, kWidth - 3) + "...";
}

}  // namespace

CLI::App* add_machines_command(CLI::App& app, MachinesOptions& o) {
  CLI::App* cmd = app.add_subcommand(
      "machines",
      "the machine files `a2av model --machine NAME` and A2AV_MACHINE_FILE accept, "
      "and the SimGrid platforms (scripts/simulate.sh)");
  cmd->add_flag("--json", o.json, "as JSON: {data_directory, machines: [...], platforms: [...]}");
  return cmd;
}

int run_machines(const MachinesOptions& o) {
  const std::vector<std::string> names = data_names(kMachineFiles);
  std::vector<Machine> machines;
  for (const std::string& name : names) machines.push_back(Machine::load(name));
  const std::vector<std::string> platforms = data_names(kPlatformFiles);
  if (o.json) {
    nlohmann::ordered_json out = {{"data_directory", data_directory().string()}};
    out["machines"] = nlohmann::ordered_json::array();
    for (std::size_t i = 0; i < names.size(); ++i)
      out["machines"].push_back({{"name", names[i]},
                                 {"file", find_data_file(kMachineFiles, names[i])},
                                 {"ranks_per_node", machines[i].ranks_per_node},
                                 {"source", machines[i].source}});
    out["platforms"] = platforms;
    fmt::print("{}\n", out.dump(2));
    return 0;
  }
  fmt::print("data directory: {}\n\n{:<12}  {:>10}  {}\n", data_folder_text(), "machine",
             "ranks/node", "figures from");
  for (std::size_t i = 0; i < names.size(); ++i)
    fmt::print("{:<12}  {:>10}  {}\n", names[i], machines[i].ranks_per_node,
               source_head(machines[i].source));
  fmt::print("\nplatforms (scripts/simulate.sh): {}\n", fmt::join(platforms, ", "));
  return 0;
}

std::string version_text() {
  return fmt::format("a2av {}\nbuilt for: {}\nrunning on: {}\ndata directory: {}",
                     A2AV_VERSION_STRING, built_for(), bench::mpi_library_version(),
                     data_folder_text());
}

std::string data_footer() {
  return fmt::format(
      "Data files (machine files, platforms, schemas): {}\n`a2av machines` lists "
      "them; a machine is named by file name or given as a path.",
      data_folder_text());
}

}  // namespace a2av::tool
