// Fortran callers under MPICH. Its mpif.h, `use mpi` and `use mpi_f08` bindings call the C
// MPI_Alltoallv, MPI_Alltoall, MPI_Ialltoallv, MPI_Alltoallv_init and MPI_Neighbor_alltoallv
// (not PMPI_), handles and MPI_IN_PLACE converted, so c_bindings.cpp and persistent.cpp take
// them as they are. But mpi_f08's MPI_Start, MPI_Startall, MPI_Request_free, MPI_Comm_free and
// MPI_Finalize call PMPI_: taken here, so that a persistent exchange's request (and a freed
// communicator's) reaches persistent.cpp and the statistics are printed for such programs too.
// So do its waits and tests: taken here to advance a2av's exchanges as waits.cpp does for C,
// then MPICH's own (found by dlsym), which convert the arguments. (mpi_f08 handles are one INTEGER
// passed by reference, its statuses C's; IERROR is optional: absent, the pointer is null; a LOGICAL
// flag is a C int.)
#include "core/progress_request.hpp"
#include "preload/fortran_common.hpp"

#include <dlfcn.h>

using namespace a2av::preload::fortran;
using a2av::completions_wait_for_progress;
using a2av::progress_completions;

namespace {

// MPICH's own mpi_f08 entry point `name`.
template <class Function>
Function* mpich(const char* name) {
  return reinterpret_cast<Function*>(dlsym(RTLD_NEXT, name));
}

using F = MPI_Fint;
using TestFn = void(F*, F*, void*, F*);              // request, flag, status, ierror
using TestallFn = void(F*, F*, F*, void*, F*);       // count, requests, flag, statuses, ..
using TestanyFn = void(F*, F*, F*, F*, void*, F*);   // count, requests, index, flag, ..
using TestsomeFn = void(F*, F*, F*, F*, void*, F*);  // incount, requests, outcount, ..
using WaitFn = void(F*, void*, F*);                  // request, status, ierror
using WaitallFn = void(F*, F*, void*, F*);           // count, requests, statuses, ierror
using WaitanyFn = void(F*, F*, F*, void*, F*);       // count, requests, index, status, ..
using WaitsomeFn = void(F*, F*, F*, F*, void*, F*);  // incount, requests, outcount, ..

// As waits.cpp's: `wait` once no exchange waits for progress; till then rounds of `test`
// (given its flag and IERROR; true once the wait would return).
template <class Test, class Wait>
void waited(Test test, Wait wait, F* ierror) {
  while (completions_wait_for_progress()) {
    progress_completions();
    F rc = MPI_SUCCESS;
    if (test(&rc) || rc != MPI_SUCCESS) return set_ierror(ierror, rc);
  }
  wait();
}

}  // namespace

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

void mpi_comm_free_f08_(MPI_Fint* comm, MPI_Fint* ierror) {
  comm_free(comm, ierror);
}

void mpi_wait_f08_(F* request, void* status, F* ierror) {
  static auto* const test = mpich<TestFn>("mpi_test_f08_");
  static auto* const wait = mpich<WaitFn>("mpi_wait_f08_");
  waited(
      [&](F* rc) {
        F flag = 0;
        test(request, &flag, status, rc);
        return flag != 0;
      },
      [&] { wait(request, status, ierror); }, ierror);
}

void mpi_waitall_f08_(F* count, F* requests, void* statuses, F* ierror) {
  static auto* const test = mpich<TestallFn>("mpi_testall_f08_");
  static auto* const wait = mpich<WaitallFn>("mpi_waitall_f08_");
  waited(
      [&](F* rc) {
        F flag = 0;
        test(count, requests, &flag, statuses, rc);
        return flag != 0;
      },
      [&] { wait(count, requests, statuses, ierror); }, ierror);
}

void mpi_waitany_f08_(F* count, F* requests, F* index, void* status, F* ierror) {
  static auto* const test = mpich<TestanyFn>("mpi_testany_f08_");
  static auto* const wait = mpich<WaitanyFn>("mpi_waitany_f08_");
  waited(
      [&](F* rc) {
        F flag = 0;
        test(count, requests, index, &flag, status, rc);
        return flag != 0;
      },
      [&] { wait(count, requests, index, status, ierror); }, ierror);
}

void mpi_waitsome_f08_(F* incount, F* requests, F* outcount, F* indices, void* statuses,
                       F* ierror) {
  static auto* const test = mpich<TestsomeFn>("mpi_testsome_f08_");
  static auto* const wait = mpich<WaitsomeFn>("mpi_waitsome_f08_");
  waited(
      [&](F* rc) {
        test(incount, requests, outcount, indices, statuses, rc);
        return *outcount != 0;
      },
      [&] { wait(incount, requests, outcount, indices, statuses, ierror); }, ierror);
}

void mpi_test_f08_(F* request, F* flag, void* status, F* ierror) {
  static auto* const test = mpich<TestFn>("mpi_test_f08_");
  progress_completions();
  test(request, flag, status, ierror);
}

void mpi_testall_f08_(F* count, F* requests, F* flag, void* statuses, F* ierror) {
  static auto* const test = mpich<TestallFn>("mpi_testall_f08_");
  progress_completions();
  test(count, requests, flag, statuses, ierror);
}

void mpi_testany_f08_(F* count, F* requests, F* index, F* flag, void* status, F* ierror) {
  static auto* const test = mpich<TestanyFn>("mpi_testany_f08_");
  progress_completions();
  test(count, requests, index, flag, status, ierror);
}

void mpi_testsome_f08_(F* incount, F* requests, F* outcount, F* indices, void* statuses,
                       F* ierror) {
  static auto* const test = mpich<TestsomeFn>("mpi_testsome_f08_");
  progress_completions();
  test(incount, requests, outcount, indices, statuses, ierror);
}

void mpi_request_get_status_f08_(F* request, F* flag, void* status, F* ierror) {
  static auto* const get_status = mpich<TestFn>("mpi_request_get_status_f08_");
  progress_completions();
  get_status(request, flag, status, ierror);
}

void mpi_finalize_f08_(MPI_Fint* ierror) {
  set_ierror(ierror, MPI_Finalize());
}

}  // extern "C"
