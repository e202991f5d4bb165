#include "core/progress_request.hpp"

#include "core/check.hpp"

#include <dlfcn.h>

#include <vector>

namespace a2av {
namespace {

// Owned by its request from MPI_Grequest_start on: MPI calls free_state when the request is
// freed, which can be inside MPI_Grequest_complete, so nothing touches it after that call.
struct Pending {
  std::unique_ptr<Operation> operation;
  MPI_Request request = MPI_REQUEST_NULL;
};

int query(void* state, MPI_Status* status) {
  MPI_Status_set_elements(status, MPI_BYTE, 0);
  MPI_Status_set_cancelled(status, 0);
  status->MPI_SOURCE = MPI_UNDEFINED;
  status->MPI_TAG = MPI_UNDEFINED;
  return static_cast<Pending*>(state)->operation->error();
}

int free_state(void* state) {
  delete static_cast<Pending*>(state);
  return MPI_SUCCESS;
}

int cancel(void*, int) {
  return MPI_SUCCESS;  // a collective cannot be cancelled; it completes as usual
}

// Runs the operation to its end and completes the request (which may free `p`).
void finish(Pending* p) {
  while (!p->operation->progress()) {
  }
  MPI_Grequest_complete(p->request);
}

#if defined(MPICH) && !defined(A2AV_SIMULATION)

// MPI_Test calls poll, MPI_Wait calls wait (for one or several of our requests at once);
// neither is called once the request is complete.
int poll(void* state, MPI_Status*) {
  auto* p = static_cast<Pending*>(state);
  if (p->operation->progress()) MPI_Grequest_complete(p->request);
  return MPI_SUCCESS;
}

int wait(int count, void** states, double, MPI_Status*) {
  for (int i = 0; i < count; ++i) finish(static_cast<Pending*>(states[i]));
  return MPI_SUCCESS;
}

void start(Pending* p) {
  check_mpi(MPIX_Grequest_start(query, free_state, cancel, poll, wait, p, &p->request),
            "MPIX_Grequest_start");
}

#elif defined(OMPI_MAJOR_VERSION)

// Open MPI 4 has no poll function for generalized requests: its progress engine calls the
// callbacks registered with opal_progress_register (libopen-pal), and MPI_Wait/MPI_Test on
// a generalized request spin in that engine. The callback runs inside MPI calls, and the
// MPI calls it makes run the engine again: `running` keeps it from re-entering itself.
using ProgressCallback = int (*)();
using RegisterFn = int (*)(ProgressCallback);

std::vector<Pending*>& pending() {
  static std::vector<Pending*> list;  // operations not yet complete
  return list;
}

int progress_all() {
  static bool running = false;
  static std::vector<MPI_Request> completed;
  if (running || pending().empty()) return 0;
  running = true;
  auto& list = pending();
  completed.clear();
  std::erase_if(list, [](Pending* p) {
    if (!p->operation->progress()) return false;
    completed.push_back(p->request);
    return true;
  });
  for (MPI_Request r : completed) MPI_Grequest_complete(r);  // may free the Pending
  running = false;
  return static_cast<int>(completed.size());
}

RegisterFn progress_register() {
  static const auto fn =
      reinterpret_cast<RegisterFn>(dlsym(RTLD_DEFAULT, "opal_progress_register"));
  return fn;
}

bool registered() {
  static const bool ok = progress_register() && progress_register()(progress_all) == 0;
  return ok;
}

void start(Pending* p) {
  check_mpi(MPI_Grequest_start(query, free_state, cancel, p, &p->request), "MPI_Grequest_start");
  // Not advanced here: the transfers happen inside the caller's later MPI calls, which is
  // where computation between start and completion can hide them.
  if (registered()) return pending().push_back(p);
  finish(p);
}

#else

void start(Pending* p) {
  check_mpi(MPI_Grequest_start(query, free_state, cancel, p, &p->request), "MPI_Grequest_start");
  finish(p);
}

#endif

}  // namespace

MPI_Request start_request(std::unique_ptr<Operation> operation) {
  auto* p = new Pending{std::move(operation)};
  start(p);
  return p->request;  // p lives until the caller frees the request
}

}  // namespace a2av
