#include "tuning/data_files.hpp"

#include "core/check.hpp"
#include "core/environment.hpp"

#include <dlfcn.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <system_error>

namespace a2av {

namespace fs = std::filesystem;

namespace {

// The folder liba2av was loaded from (the executable's, when linked statically).
fs::path library_folder() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&data_directory), &info) == 0 || !info.dli_fname) return {};
  std::error_code ec;
  const fs::path library = fs::canonical(info.dli_fname, ec);
  return ec ? fs::path{} : library.parent_path();
}

bool is_folder(const fs::path& path) {
  std::error_code ec;
  return fs::is_directory(path, ec);
}

}  // namespace

fs::path data_directory() {
  const std::string_view chosen = env_string("A2AV_DATA_DIR");
  if (!chosen.empty()) return fs::path(chosen);
  const fs::path folder = library_folder();
  if (folder.empty()) return {};
  // A2AV_LIB_TO_DATA: the install's libdir -> datadir/a2av (CMake's GNUInstallDirs layout).
  for (const fs::path& candidate : {folder / A2AV_LIB_TO_DATA, folder / "share" / "a2av"})
    if (is_folder(candidate)) return candidate.lexically_normal();
  return {};
}

std::vector<std::string> data_names(DataKind kind) {
  std::vector<std::string> names;
  const fs::path folder = data_directory() / kind.folder;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(folder, ec))
    if (entry.path().extension() == kind.extension) names.push_back(entry.path().stem());
  std::sort(names.begin(), names.end());
  return names;
}

std::string find_data_file(DataKind kind, const std::string& name_or_path) {
  std::error_code ec;
  if (fs::is_regular_file(name_or_path, ec)) return name_or_path;
  const bool plain_name = name_or_path.find('/') == std::string::npos && !name_or_path.empty();
  if (plain_name) {
    const fs::path file =
        data_directory() / kind.folder / (name_or_path + std::string(kind.extension));
    if (fs::is_regular_file(file, ec)) return file;
  }
  const fs::path where = data_directory();
  if (where.empty())
    fail(A2AV_ERR_ARG, "{}: no such file, and no a2av data directory was found (A2AV_DATA_DIR)",
         name_or_path);
  fail(A2AV_ERR_ARG, "{}: no such file, nor a name of {}/{} (on offer: {})", name_or_path,
       where.string(), kind.folder, fmt::join(data_names(kind), ", "));
}

}  // namespace a2av
