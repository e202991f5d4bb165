#include "world.hpp"

#include <mpi.h>

namespace a2av::bench {
namespace {

std::string mpi_library_version() {
  char text[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int length = 0;
  MPI_Get_library_version(text, &length);
  const std::string all(text);  // Open MPI counts the terminating NUL in `length`
  return all.substr(0, all.find('\n'));
}

}  // namespace

World find_world() {
  World w;
  MPI_Comm_rank(MPI_COMM_WORLD, &w.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &w.size);
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, w.rank, MPI_INFO_NULL, &node);
  MPI_Comm_size(node, &w.ranks_per_node);
  MPI_Comm_free(&node);
  w.mpi_library = mpi_library_version();
  return w;
}

}  // namespace a2av::bench
