// Fortran callers under MPICH. Its mpif.h, `use mpi` and `use mpi_f08` bindings call the C
// MPI_Alltoallv, MPI_Alltoall, MPI_Ialltoallv, MPI_Alltoallv_init and MPI_Neighbor_alltoallv
// (not PMPI_), handles and MPI_IN_PLACE converted, so c_bindings.cpp and persistent.cpp take
// them as they are. But mpi_f08's MPI_Start, MPI_Startall, MPI_Request_free and MPI_Finalize
// call PMPI_: taken here, so that a persistent exchange's request reaches persistent.cpp and
// the statistics are printed for such programs too. (mpi_f08 handles are one INTEGER passed
// by reference; IERROR is optional: absent, the pointer is null.)
#include <mpi.h>

#include <vector>

namespace {

void set_ierror(MPI_Fint* ierror, int rc) {
  if (ierror) *ierror = rc;
}

}  // namespace

extern "C" {

void mpi_start_f08_(MPI_Fint* request, MPI_Fint* ierror) {
  MPI_Request c_request = MPI_Request_f2c(*request);
  set_ierror(ierror, MPI_Start(&c_request));
}

void mpi_startall_f08_(const MPI_Fint* count, MPI_Fint* requests, MPI_Fint* ierror) {
  std::vector<MPI_Request> c_requests(*count);
  for (int i = 0; i < *count; ++i) c_requests[i] = MPI_Request_f2c(requests[i]);
  set_ierror(ierror, MPI_Startall(*count, c_requests.data()));
}

void mpi_request_free_f08_(MPI_Fint* request, MPI_Fint* ierror) {
  MPI_Request c_request = MPI_Request_f2c(*request);
  set_ierror(ierror, MPI_Request_free(&c_request));
  *request = MPI_Request_c2f(c_request);
}

void mpi_finalize_f08_(MPI_Fint* ierror) {
  set_ierror(ierror, MPI_Finalize());
}

}  // extern "C"
