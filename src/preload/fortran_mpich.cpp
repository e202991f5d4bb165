// Fortran callers under MPICH. Its mpif.h, `use mpi` and `use mpi_f08` bindings call the C
// MPI_Alltoallv and MPI_Alltoall (not PMPI_), handles and MPI_IN_PLACE converted, so
// c_bindings.cpp takes their exchanges as they are. Only mpi_f08's MPI_Finalize calls
// PMPI_Finalize: taken here so that the statistics are printed for such programs too.
#include <mpi.h>

extern "C" void mpi_finalize_f08_(MPI_Fint* ierror) {
  const int rc = MPI_Finalize();
  if (ierror) *ierror = rc;  // IERROR is optional in mpi_f08: absent, the pointer is null
}
