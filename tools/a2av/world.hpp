// Where a run happens: rank, size, node layout and MPI library, for the report.
#pragma once

#include <string>

namespace a2av::bench {

struct World {
  int rank = 0;
  int size = 0;
  int ranks_per_node = 0;   // ranks on this rank's node (emulated: A2AV_EMULATE_NODES)
  std::string mpi_library;  // first line of MPI_Get_library_version
};

// Collective over MPI_COMM_WORLD.
World find_world();

// The first line of MPI_Get_library_version (local).
std::string mpi_library_version();

}  // namespace a2av::bench
