#include "datatype.hpp"

#include <fmt/core.h>

#include <stdexcept>
#include <utility>

namespace a2av::bench {
namespace {

// Contiguous predefined types whose every byte is significant, so the byte-exact check of
// the received data holds (long double is left out: its padding bytes need not travel).
const std::pair<std::string_view, MPI_Datatype> kTypes[] = {
    {"byte", MPI_BYTE},   {"char", MPI_CHAR},     {"short", MPI_SHORT},
    {"int", MPI_INT},     {"long", MPI_LONG},     {"int64", MPI_INT64_T},
    {"float", MPI_FLOAT}, {"double", MPI_DOUBLE}, {"double_complex", MPI_C_DOUBLE_COMPLEX},
};

}  // namespace

Datatype find_datatype(std::string_view name) {
  for (const auto& [known, type] : kTypes)
    if (known == name) {
      int bytes = 0;
      MPI_Type_size(type, &bytes);
      return {std::string(name), type, bytes};
    }
  throw std::invalid_argument(
      fmt::format("--datatype: unknown type '{}'; accepted: {}", name, datatype_names()));
}

std::string datatype_names() {
  std::string names;
  for (const auto& [known, type] : kTypes)
    names += fmt::format("{}{}", names.empty() ? "" : ", ", known);
  return names;
}

}  // namespace a2av::bench
