#include "world.hpp"

#include "core/comm_context.hpp"

#include <mpi.h>

namespace a2av::bench {

std::string mpi_library_version() {
  char text[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int length = 0;
  MPI_Get_library_version(text, &length);
  const std::string all(text);  // Open MPI counts the terminating NUL in `length`
  return all.substr(0, all.find('\n'));
}

World find_world() {
  World w;
  MPI_Comm_rank(MPI_COMM_WORLD, &w.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &w.size);
  MPI_Comm node, group;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, w.rank, MPI_INFO_NULL, &node);
  // Nodes as the library sees them: groups of A2AV_EMULATE_NODES ranks if set (README).
  const int q = a2av::emulated_node_size();
  MPI_Comm_split(node, q > 0 ? w.rank / q : 0, w.rank, &group);
  MPI_Comm_size(group, &w.ranks_per_node);
  MPI_Comm_free(&group);
  MPI_Comm_free(&node);
  w.mpi_library = mpi_library_version();
  return w;
}

}  // namespace a2av::bench
