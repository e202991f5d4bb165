// The communicators a program creates (MPI_COMM_WORLD at MPI_Init included) are set up for a2av
// as they are made (A2AV_PRELOAD_PREPARE, default where A2AV_COMM_IDUP=0: Open MPI, whose
// MPI_Comm_idup breaks the program's other nonblocking collectives), where a2av's setup would
// wait for the other ranks, which a start must not, so that nonblocking starts run a2av's
// exchanges from the first rather than the MPI library's (docs/design.md, "Nonblocking
// starts"). Every member of a new communicator is inside the call that makes it, so the setup's
// collectives there wait for nobody else. The price: two MPI_Comm_dup, an MPI_Comm_split_type and
// an MPI_Allreduce per communicator made, whether or not the program exchanges on it (MPI_Comm_dup
// + MPI_Comm_free took 4-6x as long: 19-27 against 4-6 us at P = 2). A communicator from
// MPI_Comm_idup cannot be set up as it is made (the call must not wait): its nonblocking starts go
// to the MPI library until a blocking a2av call on it has set it up (ready_for_start), as every
// communicator's do without A2AV_PRELOAD_PREPARE. a2av's own communicators do not come here
// (core/comm_context.cpp makes them through PMPI_). Open MPI's Fortran bindings call PMPI_
// directly: fortran_openmpi.cpp brings MPI_INIT, MPI_INIT_THREAD and every constructor of
// intracommunicators here.
#include <a2av/a2av.h>
#include <a2av/error.hpp>

#include "core/comm_context.hpp"
#include "core/environment.hpp"
#include "preload/routes.hpp"

using namespace a2av::preload;

namespace {

bool sets_up_at_creation() {
  static const bool on = a2av::env_flag("A2AV_PRELOAD_PREPARE");
  return on;
}

// `rc` from the MPI library's call that made `*made` (read only after it): the program's new
// intracommunicator set up.
int set_up(int rc, const MPI_Comm* made) {
  if (rc != MPI_SUCCESS || *made == MPI_COMM_NULL || !sets_up_at_creation() ||
      !intracommunicator(*made))
    return rc;
  A2AV_Comm_prepare(*made);  // where it fails, the first call sets a2av up, as it would anyway
  return rc;
}

const MPI_Comm world = MPI_COMM_WORLD;

}  // namespace

bool a2av::preload::ready_for_start(MPI_Comm comm) {
  try {
    return !a2av::setup_waits(comm) || !intracommunicator(comm);
  } catch (const a2av::Error&) {  // a handle MPI does not know: a2av's call reports it
    return true;
  }
}

extern "C" {

int MPI_Init(int* argc, char*** argv) {
  return set_up(PMPI_Init(argc, argv), &world);
}

int MPI_Init_thread(int* argc, char*** argv, int required, int* provided) {
  return set_up(PMPI_Init_thread(argc, argv, required, provided), &world);
}

int MPI_Comm_dup(MPI_Comm comm, MPI_Comm* newcomm) {
  return set_up(PMPI_Comm_dup(comm, newcomm), newcomm);
}

int MPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm* newcomm) {
  return set_up(PMPI_Comm_dup_with_info(comm, info, newcomm), newcomm);
}

int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm* newcomm) {
  return set_up(PMPI_Comm_split(comm, color, key, newcomm), newcomm);
}

int MPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info, MPI_Comm* newcomm) {
  return set_up(PMPI_Comm_split_type(comm, split_type, key, info, newcomm), newcomm);
}

int MPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm* newcomm) {
  return set_up(PMPI_Comm_create(comm, group, newcomm), newcomm);
}

int MPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm* newcomm) {
  return set_up(PMPI_Comm_create_group(comm, group, tag, newcomm), newcomm);
}

int MPI_Intercomm_merge(MPI_Comm intercomm, int high, MPI_Comm* newintracomm) {
  return set_up(PMPI_Intercomm_merge(intercomm, high, newintracomm), newintracomm);
}

int MPI_Cart_create(MPI_Comm comm, int ndims, const int dims[], const int periods[], int reorder,
                    MPI_Comm* comm_cart) {
  return set_up(PMPI_Cart_create(comm, ndims, dims, periods, reorder, comm_cart), comm_cart);
}

int MPI_Cart_sub(MPI_Comm comm, const int remain_dims[], MPI_Comm* newcomm) {
  return set_up(PMPI_Cart_sub(comm, remain_dims, newcomm), newcomm);
}

int MPI_Graph_create(MPI_Comm comm, int nnodes, const int index[], const int edges[], int reorder,
                     MPI_Comm* comm_graph) {
  return set_up(PMPI_Graph_create(comm, nnodes, index, edges, reorder, comm_graph), comm_graph);
}

int MPI_Dist_graph_create(MPI_Comm comm, int n, const int sources[], const int degrees[],
                          const int destinations[], const int weights[], MPI_Info info, int reorder,
                          MPI_Comm* comm_dist_graph) {
  return set_up(PMPI_Dist_graph_create(comm, n, sources, degrees, destinations, weights, info,
                                       reorder, comm_dist_graph),
                comm_dist_graph);
}

int MPI_Dist_graph_create_adjacent(MPI_Comm comm, int indegree, const int sources[],
                                   const int sourceweights[], int outdegree,
                                   const int destinations[], const int destweights[], MPI_Info info,
                                   int reorder, MPI_Comm* comm_dist_graph) {
  return set_up(
      PMPI_Dist_graph_create_adjacent(comm, indegree, sources, sourceweights, outdegree,
                                      destinations, destweights, info, reorder, comm_dist_graph),
      comm_dist_graph);
}

}  // extern "C"
