// Fortran callers under Open MPI. Its mpif.h and `use mpi` bindings (mpi_alltoallv_ in each of
// gfortran's and other compilers' manglings) and `use mpi_f08`'s (mpi_alltoallv_f08_) call
// PMPI_Alltoallv themselves, so the C entry point never sees a Fortran program's exchange.
// These take the Fortran arguments (handles as MPI_Fint, Open MPI's MPI_IN_PLACE and
// MPI_BOTTOM sentinels, which are addresses of common blocks) and call the C entry point.
// The persistent exchanges need MPI_START, MPI_STARTALL, MPI_REQUEST_FREE and MPI_COMM_FREE as
// well, which must reach persistent.cpp for every request the Fortran MPIX_..._INIT calls
// made; MPI_INIT, MPI_INIT_THREAD and every constructor of intracommunicators but
// MPI_COMM_IDUP go through the C functions so that their communicators are set up as they are
// made (communicators.cpp).
// MPICH needs almost none of this: its Fortran bindings call MPI_Alltoallv (not PMPI_)
// already (fortran_mpich.cpp).
#include "preload/fortran_common.hpp"

#include <mpi-ext.h>  // MPIX_Alltoallv_init
#include <mpi.h>
// Open MPI's own declarations of its Fortran sentinels (OMPI_IS_FORTRAN_IN_PLACE, ...).
#include <mpif-c-constants-decl.h>

#include <algorithm>
#include <vector>

static_assert(sizeof(MPI_Fint) == sizeof(int), "Fortran INTEGER count arrays passed as int[]");

using namespace a2av::preload::fortran;

namespace {

void* c_buffer(void* fortran_buffer) {
  if (OMPI_IS_FORTRAN_IN_PLACE(fortran_buffer)) return MPI_IN_PLACE;
  if (OMPI_IS_FORTRAN_BOTTOM(fortran_buffer)) return MPI_BOTTOM;
  return fortran_buffer;
}

// A graph's edge weights: Open MPI's Fortran MPI_UNWEIGHTED and MPI_WEIGHTS_EMPTY are
// addresses of common blocks, as MPI_IN_PLACE is.
const int* c_weights(const MPI_Fint* weights) {
  if (OMPI_IS_FORTRAN_UNWEIGHTED(weights)) return MPI_UNWEIGHTED;
  if (OMPI_IS_FORTRAN_WEIGHTS_EMPTY(weights)) return MPI_WEIGHTS_EMPTY;
  return weights;
}

// Runs `make` (an MPI code, the new communicator through its pointer) for a Fortran caller:
// NEWCOMM's handle and IERROR.
template <class Make>
void make_comm(MPI_Fint* newcomm, MPI_Fint* ierror, Make make) {
  MPI_Comm made = MPI_COMM_NULL;
  set_ierror(ierror, make(&made));
  *newcomm = PMPI_Comm_c2f(made);
}

// The C request's Fortran handle, and IERROR.
void set_request(MPI_Fint* request, MPI_Request c_request, MPI_Fint* ierror, int rc) {
  *request = PMPI_Request_c2f(c_request);
  set_ierror(ierror, rc);
}

}  // namespace

extern "C" {

void mpi_alltoallv_(void* sendbuf, const MPI_Fint* sendcounts, const MPI_Fint* sdispls,
                    const MPI_Fint* sendtype, void* recvbuf, const MPI_Fint* recvcounts,
                    const MPI_Fint* rdispls, const MPI_Fint* recvtype, const MPI_Fint* comm,
                    MPI_Fint* ierror) {
  set_ierror(ierror, MPI_Alltoallv(c_buffer(sendbuf), sendcounts, sdispls, PMPI_Type_f2c(*sendtype),
                                   c_buffer(recvbuf), recvcounts, rdispls, PMPI_Type_f2c(*recvtype),
                                   PMPI_Comm_f2c(*comm)));
}

void mpi_alltoall_(void* sendbuf, const MPI_Fint* sendcount, const MPI_Fint* sendtype,
                   void* recvbuf, const MPI_Fint* recvcount, const MPI_Fint* recvtype,
                   const MPI_Fint* comm, MPI_Fint* ierror) {
  set_ierror(ierror, MPI_Alltoall(c_buffer(sendbuf), *sendcount, PMPI_Type_f2c(*sendtype),
                                  c_buffer(recvbuf), *recvcount, PMPI_Type_f2c(*recvtype),
                                  PMPI_Comm_f2c(*comm)));
}

void mpi_ialltoallv_(void* sendbuf, const MPI_Fint* sendcounts, const MPI_Fint* sdispls,
                     const MPI_Fint* sendtype, void* recvbuf, const MPI_Fint* recvcounts,
                     const MPI_Fint* rdispls, const MPI_Fint* recvtype, const MPI_Fint* comm,
                     MPI_Fint* request, MPI_Fint* ierror) {
  MPI_Request c_request = MPI_REQUEST_NULL;
  set_ierror(ierror,
             MPI_Ialltoallv(c_buffer(sendbuf), sendcounts, sdispls, PMPI_Type_f2c(*sendtype),
                            c_buffer(recvbuf), recvcounts, rdispls, PMPI_Type_f2c(*recvtype),
                            PMPI_Comm_f2c(*comm), &c_request));
  *request = PMPI_Request_c2f(c_request);
}

void mpi_neighbor_alltoallv_(void* sendbuf, const MPI_Fint* sendcounts, const MPI_Fint* sdispls,
                             const MPI_Fint* sendtype, void* recvbuf, const MPI_Fint* recvcounts,
                             const MPI_Fint* rdispls, const MPI_Fint* recvtype,
                             const MPI_Fint* comm, MPI_Fint* ierror) {
  set_ierror(ierror,
             MPI_Neighbor_alltoallv(c_buffer(sendbuf), sendcounts, sdispls,
                                    PMPI_Type_f2c(*sendtype), c_buffer(recvbuf), recvcounts,
                                    rdispls, PMPI_Type_f2c(*recvtype), PMPI_Comm_f2c(*comm)));
}

void mpix_alltoallv_init_(void* sendbuf, const MPI_Fint* sendcounts, const MPI_Fint* sdispls,
                          const MPI_Fint* sendtype, void* recvbuf, const MPI_Fint* recvcounts,
                          const MPI_Fint* rdispls, const MPI_Fint* recvtype, const MPI_Fint* comm,
                          const MPI_Fint* info, MPI_Fint* request, MPI_Fint* ierror) {
  MPI_Request c_request = MPI_REQUEST_NULL;
  set_ierror(ierror,
             MPIX_Alltoallv_init(c_buffer(sendbuf), sendcounts, sdispls, PMPI_Type_f2c(*sendtype),
                                 c_buffer(recvbuf), recvcounts, rdispls, PMPI_Type_f2c(*recvtype),
                                 PMPI_Comm_f2c(*comm), PMPI_Info_f2c(*info), &c_request));
  *request = PMPI_Request_c2f(c_request);
}

void mpi_ialltoall_(void* sendbuf, const MPI_Fint* sendcount, const MPI_Fint* sendtype,
                    void* recvbuf, const MPI_Fint* recvcount, const MPI_Fint* recvtype,
                    const MPI_Fint* comm, MPI_Fint* request, MPI_Fint* ierror) {
  MPI_Request c_request = MPI_REQUEST_NULL;
  const int rc =
      MPI_Ialltoall(c_buffer(sendbuf), *sendcount, PMPI_Type_f2c(*sendtype), c_buffer(recvbuf),
                    *recvcount, PMPI_Type_f2c(*recvtype), PMPI_Comm_f2c(*comm), &c_request);
  set_request(request, c_request, ierror, rc);
}

void mpi_ineighbor_alltoallv_(void* sendbuf, const MPI_Fint* sendcounts, const MPI_Fint* sdispls,
                              const MPI_Fint* sendtype, void* recvbuf, const MPI_Fint* recvcounts,
                              const MPI_Fint* rdispls, const MPI_Fint* recvtype,
                              const MPI_Fint* comm, MPI_Fint* request, MPI_Fint* ierror) {
  MPI_Request c_request = MPI_REQUEST_NULL;
  const int rc = MPI_Ineighbor_alltoallv(
      c_buffer(sendbuf), sendcounts, sdispls, PMPI_Type_f2c(*sendtype), c_buffer(recvbuf),
      recvcounts, rdispls, PMPI_Type_f2c(*recvtype), PMPI_Comm_f2c(*comm), &c_request);
  set_request(request, c_request, ierror, rc);
}

void mpix_alltoall_init_(void* sendbuf, const MPI_Fint* sendcount, const MPI_Fint* sendtype,
                         void* recvbuf, const MPI_Fint* recvcount, const MPI_Fint* recvtype,
                         const MPI_Fint* comm, const MPI_Fint* info, MPI_Fint* request,
                         MPI_Fint* ierror) {
  MPI_Request c_request = MPI_REQUEST_NULL;
  const int rc = MPIX_Alltoall_init(c_buffer(sendbuf), *sendcount, PMPI_Type_f2c(*sendtype),
                                    c_buffer(recvbuf), *recvcount, PMPI_Type_f2c(*recvtype),
                                    PMPI_Comm_f2c(*comm), PMPI_Info_f2c(*info), &c_request);
  set_request(request, c_request, ierror, rc);
}

void mpix_neighbor_alltoallv_init_(void* sendbuf, const MPI_Fint* sendcounts,
                                   const MPI_Fint* sdispls, const MPI_Fint* sendtype, void* recvbuf,
                                   const MPI_Fint* recvcounts, const MPI_Fint* rdispls,
                                   const MPI_Fint* recvtype, const MPI_Fint* comm,
                                   const MPI_Fint* info, MPI_Fint* request, MPI_Fint* ierror) {
  MPI_Request c_request = MPI_REQUEST_NULL;
  const int rc =
      MPIX_Neighbor_alltoallv_init(c_buffer(sendbuf), sendcounts, sdispls, PMPI_Type_f2c(*sendtype),
                                   c_buffer(recvbuf), recvcounts, rdispls, PMPI_Type_f2c(*recvtype),
                                   PMPI_Comm_f2c(*comm), PMPI_Info_f2c(*info), &c_request);
  set_request(request, c_request, ierror, rc);
}

void mpi_start_(MPI_Fint* request, MPI_Fint* ierror) {
  start(request, ierror);
}

void mpi_startall_(const MPI_Fint* count, MPI_Fint* requests, MPI_Fint* ierror) {
  startall(count, requests, ierror);
}

void mpi_request_free_(MPI_Fint* request, MPI_Fint* ierror) {
  request_free(request, ierror);
}

void mpi_comm_free_(MPI_Fint* comm, MPI_Fint* ierror) {
  comm_free(comm, ierror);
}

// So that the statistics are printed for Fortran programs too.
void mpi_finalize_(MPI_Fint* ierror) {
  set_ierror(ierror, MPI_Finalize());
}

// Through the C functions, which set the communicators up as they are made
// (communicators.cpp): the most common ways a Fortran program makes its communicators.
void mpi_init_(MPI_Fint* ierror) {
  set_ierror(ierror, MPI_Init(nullptr, nullptr));
}

void mpi_init_thread_(const MPI_Fint* required, MPI_Fint* provided, MPI_Fint* ierror) {
  int c_provided = MPI_THREAD_SINGLE;
  set_ierror(ierror, MPI_Init_thread(nullptr, nullptr, *required, &c_provided));
  *provided = c_provided;
}

void mpi_comm_dup_(const MPI_Fint* comm, MPI_Fint* newcomm, MPI_Fint* ierror) {
  make_comm(newcomm, ierror,
            [&](MPI_Comm* made) { return MPI_Comm_dup(PMPI_Comm_f2c(*comm), made); });
}

void mpi_comm_split_(const MPI_Fint* comm, const MPI_Fint* color, const MPI_Fint* key,
                     MPI_Fint* newcomm, MPI_Fint* ierror) {
  make_comm(newcomm, ierror, [&](MPI_Comm* made) {
    return MPI_Comm_split(PMPI_Comm_f2c(*comm), *color, *key, made);
  });
}

// PERIODS and REORDER are LOGICALs: nonzero is true (gfortran's .true. is 1, others' -1).
void mpi_cart_create_(const MPI_Fint* comm_old, const MPI_Fint* ndims, const MPI_Fint* dims,
                      const MPI_Fint* periods, const MPI_Fint* reorder, MPI_Fint* comm_cart,
                      MPI_Fint* ierror) {
  std::vector<int> c_periods(periods, periods + std::max(0, static_cast<int>(*ndims)));
  for (int& period : c_periods) period = period != 0;
  make_comm(comm_cart, ierror, [&](MPI_Comm* made) {
    return MPI_Cart_create(PMPI_Comm_f2c(*comm_old), *ndims, dims, c_periods.data(), *reorder != 0,
                           made);
  });
}

void mpi_comm_dup_with_info_(const MPI_Fint* comm, const MPI_Fint* info, MPI_Fint* newcomm,
                             MPI_Fint* ierror) {
  make_comm(newcomm, ierror, [&](MPI_Comm* made) {
    return MPI_Comm_dup_with_info(PMPI_Comm_f2c(*comm), PMPI_Info_f2c(*info), made);
  });
}

void mpi_comm_split_type_(const MPI_Fint* comm, const MPI_Fint* split_type, const MPI_Fint* key,
                          const MPI_Fint* info, MPI_Fint* newcomm, MPI_Fint* ierror) {
  make_comm(newcomm, ierror, [&](MPI_Comm* made) {
    return MPI_Comm_split_type(PMPI_Comm_f2c(*comm), *split_type, *key, PMPI_Info_f2c(*info), made);
  });
}

void mpi_comm_create_(const MPI_Fint* comm, const MPI_Fint* group, MPI_Fint* newcomm,
                      MPI_Fint* ierror) {
  make_comm(newcomm, ierror, [&](MPI_Comm* made) {
    return MPI_Comm_create(PMPI_Comm_f2c(*comm), PMPI_Group_f2c(*group), made);
  });
}

void mpi_comm_create_group_(const MPI_Fint* comm, const MPI_Fint* group, const MPI_Fint* tag,
                            MPI_Fint* newcomm, MPI_Fint* ierror) {
  make_comm(newcomm, ierror, [&](MPI_Comm* made) {
    return MPI_Comm_create_group(PMPI_Comm_f2c(*comm), PMPI_Group_f2c(*group), *tag, made);
  });
}

// HIGH is a LOGICAL.
void mpi_intercomm_merge_(const MPI_Fint* intercomm, const MPI_Fint* high, MPI_Fint* newintracomm,
                          MPI_Fint* ierror) {
  make_comm(newintracomm, ierror, [&](MPI_Comm* made) {
    return MPI_Intercomm_merge(PMPI_Comm_f2c(*intercomm), *high != 0, made);
  });
}

// REMAIN_DIMS is a LOGICAL array, one per dimension of COMM.
void mpi_cart_sub_(const MPI_Fint* comm, const MPI_Fint* remain_dims, MPI_Fint* newcomm,
                   MPI_Fint* ierror) {
  const MPI_Comm c_comm = PMPI_Comm_f2c(*comm);
  int ndims = 0;
  if (PMPI_Cartdim_get(c_comm, &ndims) != MPI_SUCCESS) ndims = 0;
  std::vector<int> remain(remain_dims, remain_dims + std::max(0, ndims));
  for (int& dimension : remain) dimension = dimension != 0;
  make_comm(newcomm, ierror,
            [&](MPI_Comm* made) { return MPI_Cart_sub(c_comm, remain.data(), made); });
}

// REORDER is a LOGICAL.
void mpi_graph_create_(const MPI_Fint* comm_old, const MPI_Fint* nnodes, const MPI_Fint* index,
                       const MPI_Fint* edges, const MPI_Fint* reorder, MPI_Fint* comm_graph,
                       MPI_Fint* ierror) {
  make_comm(comm_graph, ierror, [&](MPI_Comm* made) {
    return MPI_Graph_create(PMPI_Comm_f2c(*comm_old), *nnodes, index, edges, *reorder != 0, made);
  });
}

void mpi_dist_graph_create_adjacent_(const MPI_Fint* comm_old, const MPI_Fint* indegree,
                                     const MPI_Fint* sources, const MPI_Fint* sourceweights,
                                     const MPI_Fint* outdegree, const MPI_Fint* destinations,
                                     const MPI_Fint* destweights, const MPI_Fint* info,
                                     const MPI_Fint* reorder, MPI_Fint* comm_dist_graph,
                                     MPI_Fint* ierror) {
  make_comm(comm_dist_graph, ierror, [&](MPI_Comm* made) {
    return MPI_Dist_graph_create_adjacent(
        PMPI_Comm_f2c(*comm_old), *indegree, sources, c_weights(sourceweights), *outdegree,
        destinations, c_weights(destweights), PMPI_Info_f2c(*info), *reorder != 0, made);
  });
}

void mpi_dist_graph_create_(const MPI_Fint* comm_old, const MPI_Fint* n, const MPI_Fint* sources,
                            const MPI_Fint* degrees, const MPI_Fint* destinations,
                            const MPI_Fint* weights, const MPI_Fint* info, const MPI_Fint* reorder,
                            MPI_Fint* comm_dist_graph, MPI_Fint* ierror) {
  make_comm(comm_dist_graph, ierror, [&](MPI_Comm* made) {
    return MPI_Dist_graph_create(PMPI_Comm_f2c(*comm_old), *n, sources, degrees, destinations,
                                 c_weights(weights), PMPI_Info_f2c(*info), *reorder != 0, made);
  });
}

// The other manglings, and mpi_f08's entry points (same arguments: a TYPE(MPI_Comm) is one
// INTEGER passed by reference).
#define A2AV_FORTRAN_ALIAS(name, target) decltype(target) name __attribute__((alias(#target)));
#define A2AV_FORTRAN_NAMES(lower, upper)  \
  A2AV_FORTRAN_ALIAS(lower, lower##_)     \
  A2AV_FORTRAN_ALIAS(lower##__, lower##_) \
  A2AV_FORTRAN_ALIAS(upper, lower##_)     \
  A2AV_FORTRAN_ALIAS(lower##_f08_, lower##_)
A2AV_FORTRAN_NAMES(mpi_alltoallv, MPI_ALLTOALLV)
A2AV_FORTRAN_NAMES(mpi_alltoall, MPI_ALLTOALL)
A2AV_FORTRAN_NAMES(mpi_ialltoallv, MPI_IALLTOALLV)
A2AV_FORTRAN_NAMES(mpi_neighbor_alltoallv, MPI_NEIGHBOR_ALLTOALLV)
A2AV_FORTRAN_NAMES(mpix_alltoallv_init, MPIX_ALLTOALLV_INIT)
A2AV_FORTRAN_NAMES(mpi_ialltoall, MPI_IALLTOALL)
A2AV_FORTRAN_NAMES(mpi_ineighbor_alltoallv, MPI_INEIGHBOR_ALLTOALLV)
A2AV_FORTRAN_NAMES(mpix_alltoall_init, MPIX_ALLTOALL_INIT)
A2AV_FORTRAN_NAMES(mpix_neighbor_alltoallv_init, MPIX_NEIGHBOR_ALLTOALLV_INIT)
A2AV_FORTRAN_NAMES(mpi_start, MPI_START)
A2AV_FORTRAN_NAMES(mpi_startall, MPI_STARTALL)
A2AV_FORTRAN_NAMES(mpi_init, MPI_INIT)
A2AV_FORTRAN_NAMES(mpi_init_thread, MPI_INIT_THREAD)
A2AV_FORTRAN_NAMES(mpi_comm_dup, MPI_COMM_DUP)
A2AV_FORTRAN_NAMES(mpi_comm_split, MPI_COMM_SPLIT)
A2AV_FORTRAN_NAMES(mpi_cart_create, MPI_CART_CREATE)
A2AV_FORTRAN_NAMES(mpi_comm_dup_with_info, MPI_COMM_DUP_WITH_INFO)
A2AV_FORTRAN_NAMES(mpi_comm_split_type, MPI_COMM_SPLIT_TYPE)
A2AV_FORTRAN_NAMES(mpi_comm_create, MPI_COMM_CREATE)
A2AV_FORTRAN_NAMES(mpi_comm_create_group, MPI_COMM_CREATE_GROUP)
A2AV_FORTRAN_NAMES(mpi_intercomm_merge, MPI_INTERCOMM_MERGE)
A2AV_FORTRAN_NAMES(mpi_cart_sub, MPI_CART_SUB)
A2AV_FORTRAN_NAMES(mpi_graph_create, MPI_GRAPH_CREATE)
A2AV_FORTRAN_NAMES(mpi_dist_graph_create_adjacent, MPI_DIST_GRAPH_CREATE_ADJACENT)
A2AV_FORTRAN_NAMES(mpi_dist_graph_create, MPI_DIST_GRAPH_CREATE)
A2AV_FORTRAN_NAMES(mpi_request_free, MPI_REQUEST_FREE)
A2AV_FORTRAN_NAMES(mpi_comm_free, MPI_COMM_FREE)
A2AV_FORTRAN_NAMES(mpi_finalize, MPI_FINALIZE)

}  // extern "C"
