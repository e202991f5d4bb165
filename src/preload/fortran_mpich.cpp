// Fortran callers under MPICH. Its mpif.h, `use mpi` and `use mpi_f08` bindings call the C
// MPI_Alltoallv, MPI_Alltoall, MPI_Ialltoallv, MPI_Alltoallv_init and MPI_Neighbor_alltoallv
// (not PMPI_), handles and MPI_IN_PLACE converted, so c_bindings.cpp and persistent.cpp take
// them as they are. But mpi_f08's MPI_Start, MPI_Startall, MPI_Request_free and MPI_Finalize
// call PMPI_: taken here, so that a persistent exchange's request reaches persistent.cpp and
// the statistics are printed for such programs too. (mpi_f08 handles are one INTEGER passed
// by reference; IERROR is optional: absent, the pointer is null.)
#include "preload/fortran_common.hpp"

using namespace a2av::preload::fortran;

extern "C" {

void mpi_start_f08_(MPI_Fint* request, MPI_Fint* ierror) {
  start(request, ierror);
}

void mpi_startall_f08_(const MPI_Fint* count, MPI_Fint* requests, MPI_Fint* ierror) {
  startall(count, requests, ierror);
}

void mpi_request_free_f08_(MPI_Fint* request, MPI_Fint* ierror) {
  request_free(request, ierror);
}

void mpi_finalize_f08_(MPI_Fint* ierror) {
  set_ierror(ierror, MPI_Finalize());
}

}  // extern "C"
