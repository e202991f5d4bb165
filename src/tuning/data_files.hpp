// The data a2av installs under <prefix>/share/a2av (the repository's data/ folder): machine
// files of the cost model (machines/*.json), SimGrid platforms (platforms/*.xml) and the
// tuning-table schema (schemas/). Found from where liba2av itself lives, so a moved prefix
// still finds its own; A2AV_DATA_DIR overrides.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace a2av {

struct DataKind {
  std::string_view folder;     // under the data directory: "machines"
  std::string_view extension;  // of its files: ".json"
};
inline constexpr DataKind kMachineFiles{"machines", ".json"};
inline constexpr DataKind kPlatformFiles{"platforms", ".xml"};

// A2AV_DATA_DIR, else the installed share/a2av beside the library, else the build tree's
// copy; empty when none exists.
std::filesystem::path data_directory();

// The names on offer (file names without extension), sorted; empty without a data directory.
std::vector<std::string> data_names(DataKind kind);

// An existing file as given, else the data file of that name ("polaris" ->
// <data>/machines/polaris.json). Throws A2AV_ERR_ARG naming what is on offer.
std::string find_data_file(DataKind kind, const std::string& name_or_path);

}  // namespace a2av
