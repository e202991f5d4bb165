#include "core/progress_request.hpp"

#include "core/check.hpp"
#include "core/per_thread.hpp"

#include <dlfcn.h>

#include <atomic>
#include <mutex>
#include <vector>

namespace a2av {
namespace {

#ifndef A2AV_SIMULATION
std::mutex& progress_mutex() {
  static std::mutex mutex;
  return mutex;
}

// Per thread, read on every MPI call: per_thread's fast TLS.
struct ThreadProgress {
  // Whether this thread holds progress_mutex(): MPI calls made under it run the progress
  // callback again, which must then do nothing.
  bool holding = false;
  // Whether this thread advances the operations from Open MPI's progress engine, which
  // yields the core after a pass with nothing done.
  bool engine_yields = false;
};

bool& holding() {
  return per_thread<ThreadProgress>().holding;
}
#endif

// Owned by its request from MPI_Grequest_start on: MPI calls free_state when the request is
// freed, which can be inside MPI_Grequest_complete, so nothing touches it after that call.
struct Retire {
  void operator()(Operation* operation) const { operation->retire(); }
};

struct Pending {
  std::unique_ptr<Operation, Retire> operation;  // until it completes (see step)
  MPI_Request request = MPI_REQUEST_NULL;
  std::function<void(int)> then;    // when_complete's, called before the request completes
  bool free_when_complete = false;  // when_complete's request, under MPICH (see attach)
  int error = MPI_SUCCESS;          // the operation's, once complete
};

// The MPI library orders a request's completion before its query and free functions, with
// atomics that ThreadSanitizer does not see (the library is not instrumented): told here.
#ifdef __SANITIZE_THREAD__
extern "C" void __tsan_acquire(void* address);
extern "C" void __tsan_release(void* address);
void completes(Pending* p) {
  __tsan_release(p);
}
void completed(Pending* p) {
  __tsan_acquire(p);
}
#else
void completes(Pending*) {}
void completed(Pending*) {}
#endif

// Completes the request (which may free `p`).
void complete(Pending* p) {
  completes(p);
  MPI_Grequest_complete(p->request);
}

int query(void* state, MPI_Status* status) {
  completed(static_cast<Pending*>(state));
  MPI_Status_set_elements(status, MPI_BYTE, 0);
  MPI_Status_set_cancelled(status, 0);
  status->MPI_SOURCE = MPI_UNDEFINED;
  status->MPI_TAG = MPI_UNDEFINED;
  return static_cast<Pending*>(state)->error;
}

// Under a ProgressHold: one step of the operation; once it is complete, keeps its error and
// retires it (kept for a later call or deleted: what it touches, other threads' operations
// share), before its request completes. So freeing the request touches nothing shared and
// needs no hold: MPICH frees it inside its global critical section, where waiting for the
// hold deadlocked against a thread that held it while waiting in an MPI call for that section.
bool step(Pending* p) {
  if (!p->operation) return true;
  if (!p->operation->progress()) return false;
  p->error = p->operation->error();
  p->operation.reset();
  return true;
}

int free_state(void* state) {
  std::unique_ptr<Pending> p(static_cast<Pending*>(state));
  completed(p.get());
  if (p->operation) {  // freed before it completed (erroneous for a collective)
    const ProgressHold hold;
    p.reset();
  }
  return MPI_SUCCESS;
}

int cancel(void*, int) {
  return MPI_SUCCESS;  // a collective cannot be cancelled; it completes as usual
}

// Whether the operation is complete, after one step.
bool advance(Pending* p) {
  const ProgressHold hold;
  return step(p);
}

// Runs the operation to its end and completes the request (which may free `p`). Held step by
// step, so that other threads' operations advance meanwhile.
void finish(Pending* p) {
  while (!advance(p)) {
  }
  complete(p);
}

#if !defined(A2AV_SIMULATION) && (defined(MPICH) || defined(OMPI_MAJOR_VERSION))

// The operations that progress_all() advances, under progress_mutex(): under Open MPI every
// pending one (its engine runs progress_all in every MPI call), under MPICH those given to
// when_complete (the preload's waits and tests run it: progress_completions). `count`,
// their number, is read without the lock, so that MPI calls pay none while there are none.
struct PendingList {
  std::vector<Pending*> operations;
  std::atomic<std::size_t> count{0};
  std::vector<Pending*> completed;  // by the last pass
};

PendingList& pending() {
  static PendingList list;
  return list;
}

void listed(Pending* p) {
  PendingList& list = pending();
  list.operations.push_back(p);
  list.count.store(list.operations.size(), std::memory_order_relaxed);
}

#ifdef OMPI_MAJOR_VERSION
// Open MPI's engine yields the core after a pass with nothing done where it is told to
// (opal_progress_yield_when_idle: set when the node has more ranks than cores).
bool engine_yields_when_idle() {
  static const auto* flag =
      static_cast<const bool*>(dlsym(RTLD_DEFAULT, "opal_progress_yield_when_idle"));
  return flag && *flag;
}

void set_yield_when_idle(bool yields) {
  using SetFn = void (*)(bool);
  static const auto fn =
      reinterpret_cast<SetFn>(dlsym(RTLD_DEFAULT, "opal_progress_set_yield_when_idle"));
  if (fn) fn(yields);
}
#endif

// One pass over the listed operations; completes the requests of those done (their `then`
// first). Returns how many completed.
int progress_all() {
  PendingList& list = pending();
  if (list.count.load(std::memory_order_relaxed) == 0 || holding()) return 0;
  std::unique_lock lock(progress_mutex(), std::defer_lock);
  if (threads_may_race() && !lock.try_lock()) return 0;  // another thread is advancing them
  ThreadProgress& thread = per_thread<ThreadProgress>();
  thread.holding = true;
#ifdef OMPI_MAJOR_VERSION
  // The engine yields once after this pass if it did nothing; the MPI calls of the operations
  // (MPI_Test, a pass of the engine each) must not yield again meanwhile.
  thread.engine_yields = engine_yields_when_idle();
  if (thread.engine_yields) set_yield_when_idle(false);
#endif
  list.completed.clear();
  std::erase_if(list.operations, [&](Pending* p) {
    if (!step(p)) return false;
    list.completed.push_back(p);
    return true;
  });
#ifdef OMPI_MAJOR_VERSION
  if (thread.engine_yields) set_yield_when_idle(true);
  thread.engine_yields = false;
#endif
  list.count.store(list.operations.size(), std::memory_order_relaxed);
  for (Pending* p : list.completed) {
    if (p->then) p->then(p->error);
    MPI_Request request = p->request;
    const bool free_request = p->free_when_complete;
    complete(p);                                   // may free p
    if (free_request) MPI_Request_free(&request);  // frees p
  }
  thread.holding = false;
  return static_cast<int>(list.completed.size());
}

// Another library's request, or one of ours already complete, as an operation: tested.
class Watch : public Operation {
 public:
  explicit Watch(MPI_Request request) : request_(request) {}
  bool progress() override {
    int done = 0;
    error_ = MPI_Test(&request_, &done, MPI_STATUS_IGNORE);
    return done || error_ != MPI_SUCCESS;
  }
  int error() const override { return error_; }

 private:
  MPI_Request request_;
  int error_ = MPI_SUCCESS;
};

#ifdef MPICH

// Every live operation, so that when_complete finds one of ours by its request (under MPICH
// the pending list holds only those given to it). Its own lock, held for nothing else: the
// free function leaves the list inside MPICH's global critical section (see step).
struct Live {
  std::mutex mutex;
  std::vector<Pending*> operations;
};

Live& live() {
  static Live list;
  return list;
}

Pending* pending_of(MPI_Request request) {
  const auto lock = lock_if_threads(live().mutex);
  for (Pending* p : live().operations)
    if (p->request == request) return p;
  return nullptr;
}

// MPI_Test calls poll, MPI_Wait calls wait (for one or several of our requests at once);
// neither is called once the request is complete, nor once it is freed (when_complete's).
int poll(void* state, MPI_Status*) {
  auto* p = static_cast<Pending*>(state);
  if (advance(p)) complete(p);
  return MPI_SUCCESS;
}

int wait(int count, void** states, double, MPI_Status*) {
  for (int i = 0; i < count; ++i) finish(static_cast<Pending*>(states[i]));
  return MPI_SUCCESS;
}

int free_live_state(void* state) {
  {
    const auto lock = lock_if_threads(live().mutex);
    std::erase(live().operations, static_cast<Pending*>(state));
  }
  return free_state(state);
}

void start(Pending* p) {
  check_mpi(MPIX_Grequest_start(query, free_live_state, cancel, poll, wait, p, &p->request),
            "MPIX_Grequest_start");
  const auto lock = lock_if_threads(live().mutex);
  live().operations.push_back(p);
}

// Under MPICH the operation leaves its poll function for the pending list.
void list_for_completion(Pending* p) {
  listed(p);
}

#else  // Open MPI

// Open MPI 4 has no poll function for generalized requests: its progress engine calls the
// callbacks registered with opal_progress_register (libopen-pal), and MPI_Wait/MPI_Test on
// a generalized request spin in that engine. The callback runs inside MPI calls of any thread,
// and the MPI calls it makes run the engine again: `holding` keeps it from re-entering itself,
// and a thread that finds another advancing the operations leaves them to it.
using ProgressCallback = int (*)();
using RegisterFn = int (*)(ProgressCallback);

RegisterFn progress_register() {
  static const auto fn =
      reinterpret_cast<RegisterFn>(dlsym(RTLD_DEFAULT, "opal_progress_register"));
  return fn;
}

bool registered() {
  static const bool ok = progress_register() && progress_register()(progress_all) == 0;
  return ok;
}

Pending* pending_of(MPI_Request request) {
  for (Pending* p : pending().operations)
    if (p->request == request) return p;
  return nullptr;
}

void start(Pending* p) {
  check_mpi(MPI_Grequest_start(query, free_state, cancel, p, &p->request), "MPI_Grequest_start");
  // Not advanced here: the transfers happen inside the caller's later MPI calls, which is
  // where computation between start and completion can hide them.
  if (!registered()) return finish(p);
  const ProgressHold hold;
  listed(p);
}

void list_for_completion(Pending*) {}  // every operation is listed from its start

#endif

void attach(MPI_Request& request, std::function<void(int)> then) {
  const ProgressHold hold;
  Pending* p = pending_of(request);
  if (!p) {
    request = start_request(std::make_unique<Watch>(request));
    p = pending_of(request);
  }
  p->then = std::move(then);
  list_for_completion(p);
#ifdef MPICH
  // MPICH's MPI_Request_free calls the free function at once, complete or not.
  p->free_when_complete = true;
  request = MPI_REQUEST_NULL;
#else
  MPI_Request_free(&request);          // the request lives until MPI_Grequest_complete
#endif
}

#else

void start(Pending* p) {
  check_mpi(MPI_Grequest_start(query, free_state, cancel, p, &p->request), "MPI_Grequest_start");
  finish(p);
}

#endif

}  // namespace

// Below MPI_THREAD_MULTIPLE one thread calls MPI at a time, and the thread's `holding` flag
// alone keeps the progress callback from re-entering itself: the progress mutex's lock and
// unlock, several per exchange, took a sixth of a 16 B nonblocking exchange at P = 2.
bool threads_may_race() {
  static const bool multiple = [] {
    int level = MPI_THREAD_SINGLE;
    MPI_Query_thread(&level);
    return level == MPI_THREAD_MULTIPLE;
  }();
  return multiple;
}

std::unique_lock<std::mutex> lock_if_threads(std::mutex& mutex) {
  std::unique_lock lock(mutex, std::defer_lock);
  if (threads_may_race()) lock.lock();
  return lock;
}

bool progress_loop_yields() {
#if defined(OMPI_MAJOR_VERSION) && !defined(A2AV_SIMULATION)
  return per_thread<ThreadProgress>().engine_yields;
#else
  return false;
#endif
}

#ifdef A2AV_SIMULATION
ProgressHold::ProgressHold() : outermost_(false) {}
ProgressHold::~ProgressHold() = default;
#else
ProgressHold::ProgressHold() : outermost_(!holding()) {
  if (!outermost_) return;
  if (threads_may_race()) progress_mutex().lock();
  holding() = true;
}

ProgressHold::~ProgressHold() {
  if (!outermost_) return;
  holding() = false;
  if (threads_may_race()) progress_mutex().unlock();
}
#endif

void when_complete(MPI_Request& request, std::function<void(int error)> then) {
#if !defined(A2AV_SIMULATION) && (defined(MPICH) || defined(OMPI_MAJOR_VERSION))
  attach(request, std::move(then));
#else
  (void)request, (void)then;
#endif
}

bool when_complete_available() {
#if defined(MPICH) && !defined(A2AV_SIMULATION)
  return true;
#elif defined(OMPI_MAJOR_VERSION) && !defined(A2AV_SIMULATION)
  return registered();
#else
  return false;
#endif
}

bool completions_wait_for_progress() {
#if defined(MPICH) && !defined(A2AV_SIMULATION)
  return pending().count.load(std::memory_order_relaxed) != 0;
#else
  return false;
#endif
}

void progress_completions() {
#if defined(MPICH) && !defined(A2AV_SIMULATION)
  progress_all();
#endif
}

MPI_Request start_request(std::unique_ptr<Operation> operation) {
  auto* p =
      new Pending{std::unique_ptr<Operation, Retire>(operation.release()), MPI_REQUEST_NULL, {}};
  start(p);
  return p->request;  // p lives until the caller frees the request
}

}  // namespace a2av
