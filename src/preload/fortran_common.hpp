// What the Fortran entry points of both MPIs share: IERROR, and the request and communicator
// calls a persistent exchange needs (they must reach persistent.cpp through the C functions).
// Fortran handles are INTEGERs passed by reference (mpi_f08's TYPE(MPI_Request) is one).
#pragma once

#include <mpi.h>

#include <vector>

namespace a2av::preload::fortran {

// mpi_f08's IERROR is optional: absent, the pointer is null.
inline void set_ierror(MPI_Fint* ierror, int rc) {
  if (ierror) *ierror = rc;
}

inline void start(MPI_Fint* request, MPI_Fint* ierror) {
  MPI_Request c_request = PMPI_Request_f2c(*request);
  set_ierror(ierror, MPI_Start(&c_request));
}

inline void startall(const MPI_Fint* count, MPI_Fint* requests, MPI_Fint* ierror) {
  std::vector<MPI_Request> c_requests(*count);
  for (int i = 0; i < *count; ++i) c_requests[i] = PMPI_Request_f2c(requests[i]);
  set_ierror(ierror, MPI_Startall(*count, c_requests.data()));
}

inline void request_free(MPI_Fint* request, MPI_Fint* ierror) {
  MPI_Request c_request = PMPI_Request_f2c(*request);
  set_ierror(ierror, MPI_Request_free(&c_request));
  *request = PMPI_Request_c2f(c_request);
}

// Deferred while persistent requests on the communicator live (persistent.cpp).
inline void comm_free(MPI_Fint* comm, MPI_Fint* ierror) {
  MPI_Comm c_comm = PMPI_Comm_f2c(*comm);
  set_ierror(ierror, MPI_Comm_free(&c_comm));
  *comm = PMPI_Comm_c2f(c_comm);
}

}  // namespace a2av::preload::fortran
