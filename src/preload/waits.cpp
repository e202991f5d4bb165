// MPI_Wait, MPI_Test and their kin, for the persistent exchanges started locally under MPICH
// (persistent.cpp). MPICH advances a generalized request only inside a test or wait on that
// very request, and the program waits on another one (the persistent receive that the
// exchange's end completes), so these calls first advance the exchanges that wait for it
// (a2av::progress_completions), and a wait tests in a loop while any does. With none (always
// under Open MPI, whose progress engine runs a2av's by itself) each is the MPI library's own,
// after one load. MPICH's mpif.h and `use mpi` bindings call these; fortran_mpich.cpp takes
// mpi_f08's, which call PMPI_.
#include "core/progress_request.hpp"

#include <mpi.h>

using a2av::completions_wait_for_progress;
using a2av::progress_completions;

namespace {

// `wait` (an MPI code) once no exchange waits for progress; till then, rounds of `test`
// (an MPI code; sets its flag once the wait would return) after one pass over the exchanges.
template <class Test, class Wait>
int waited(Test test, Wait wait) {
  while (completions_wait_for_progress()) {
    progress_completions();
    int done = 0;
    if (const int rc = test(&done); rc != MPI_SUCCESS || done) return rc;
  }
  return wait();
}

}  // namespace

extern "C" {

int MPI_Wait(MPI_Request* request, MPI_Status* status) {
  return waited([&](int* done) { return PMPI_Test(request, done, status); },
                [&] { return PMPI_Wait(request, status); });
}

int MPI_Waitall(int count, MPI_Request requests[], MPI_Status statuses[]) {
  return waited([&](int* done) { return PMPI_Testall(count, requests, done, statuses); },
                [&] { return PMPI_Waitall(count, requests, statuses); });
}

int MPI_Waitany(int count, MPI_Request requests[], int* index, MPI_Status* status) {
  return waited([&](int* done) { return PMPI_Testany(count, requests, index, done, status); },
                [&] { return PMPI_Waitany(count, requests, index, status); });
}

int MPI_Waitsome(int incount, MPI_Request requests[], int* outcount, int indices[],
                 MPI_Status statuses[]) {
  return waited(
      [&](int* done) {
        const int rc = PMPI_Testsome(incount, requests, outcount, indices, statuses);
        *done = *outcount != 0;  // MPI_UNDEFINED, as the wait, where every request is inactive
        return rc;
      },
      [&] { return PMPI_Waitsome(incount, requests, outcount, indices, statuses); });
}

int MPI_Test(MPI_Request* request, int* flag, MPI_Status* status) {
  progress_completions();
  return PMPI_Test(request, flag, status);
}

int MPI_Testall(int count, MPI_Request requests[], int* flag, MPI_Status statuses[]) {
  progress_completions();
  return PMPI_Testall(count, requests, flag, statuses);
}

int MPI_Testany(int count, MPI_Request requests[], int* index, int* flag, MPI_Status* status) {
  progress_completions();
  return PMPI_Testany(count, requests, index, flag, status);
}

int MPI_Testsome(int incount, MPI_Request requests[], int* outcount, int indices[],
                 MPI_Status statuses[]) {
  progress_completions();
  return PMPI_Testsome(incount, requests, outcount, indices, statuses);
}

int MPI_Request_get_status(MPI_Request request, int* flag, MPI_Status* status) {
  progress_completions();
  return PMPI_Request_get_status(request, flag, status);
}

}  // extern "C"
