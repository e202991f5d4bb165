// The other all-to-all entry points' arguments in the form a2av takes (MPI_Alltoallv_c's, with
// MPI_Count counts and MPI_Aint displacements): MPI_Alltoall's uniform blocks and the int
// arrays of the classic forms widened; and the degrees of a neighbourhood exchange.
#pragma once

#include <mpi.h>

#include <vector>

namespace a2av::preload {

// One side (send or receive) of an exchange as MPI_Alltoallv_c takes it.
struct Side {
  std::vector<MPI_Count> counts;
  std::vector<MPI_Aint> displs;  // in extents of `type`
  MPI_Datatype type = MPI_DATATYPE_NULL;

  // Null for a side not given (MPI_IN_PLACE's send side), as MPI_Alltoallv_c takes it.
  const MPI_Count* counts_or_null() const { return counts.empty() ? nullptr : counts.data(); }
  const MPI_Aint* displs_or_null() const { return displs.empty() ? nullptr : displs.data(); }
};

// `n` blocks of `count` elements back to back (MPI_Alltoall).
inline Side uniform_side(MPI_Count count, MPI_Datatype type, int n) {
  Side side{.counts = std::vector<MPI_Count>(n, count), .displs = {}, .type = type};
  for (int i = 0; i < n; ++i) side.displs.push_back(i * count);
  return side;
}

// The arrays as they are, widened (null arrays stay empty).
template <class Count, class Displ>
Side widened_side(const Count* counts, const Displ* displs, MPI_Datatype type, int n) {
  Side side;
  side.type = type;
  if (counts) side.counts.assign(counts, counts + n);
  if (displs) side.displs.assign(displs, displs + n);
  return side;
}

// The number of blocks each side of a neighbourhood exchange on `comm` has (in- and
// out-degree); 0 and 0 without a process topology (the exchange then reports the error).
inline void neighbour_degrees(MPI_Comm comm, int& in, int& out) {
  int kind = MPI_UNDEFINED, rank = 0, weighted = 0;
  in = out = 0;
  PMPI_Topo_test(comm, &kind);
  if (kind == MPI_CART) {
    PMPI_Cartdim_get(comm, &in);
    out = in *= 2;
  } else if (kind == MPI_GRAPH) {
    PMPI_Comm_rank(comm, &rank);
    PMPI_Graph_neighbors_count(comm, rank, &in);
    out = in;
  } else if (kind == MPI_DIST_GRAPH) {
    PMPI_Dist_graph_neighbors_count(comm, &in, &out, &weighted);
  }
}

}  // namespace a2av::preload
