// The element types `a2av bench --datatype` accepts, by name.
#pragma once

#include <mpi.h>

#include <string>
#include <string_view>

namespace a2av::bench {

struct Datatype {
  std::string name;
  MPI_Datatype type;
  int bytes;  // MPI_Type_size
};

// Throws std::invalid_argument listing the accepted names.
Datatype find_datatype(std::string_view name);

// "byte, char, ..." for help texts.
std::string datatype_names();

}  // namespace a2av::bench
