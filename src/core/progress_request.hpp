// A request the caller completes with its own MPI_Wait or MPI_Test while a2av's operation
// behind it advances inside those calls: an MPI generalized request (MPI_Grequest_start)
// plus a hook into the MPI library's progress, which the standard does not provide:
//  - MPICH: MPIX_Grequest_start's poll function, called by MPI_Wait/MPI_Test on that request;
//  - Open MPI: a callback registered with opal_progress (found at run time), which every
//    MPI_Wait/MPI_Test and blocking call runs; it advances every pending operation;
//  - any other MPI: the operation runs to completion when it starts (correct, no overlap).
#pragma once

#include <mpi.h>

#include <functional>
#include <memory>
#include <mutex>

namespace a2av {

class Operation {
 public:
  virtual ~Operation() = default;
  // Advances without blocking; true once complete. Called only until it returns true.
  virtual bool progress() = 0;
  // After completion: MPI_SUCCESS or the MPI error code that MPI_Wait returns.
  virtual int error() const = 0;
  // It is complete (its request completes next): it ends here, or is kept to serve a later
  // call (under a ProgressHold).
  virtual void retire() { delete this; }
};

// Makes `operation` the request's; the request completes when the operation does.
MPI_Request start_request(std::unique_ptr<Operation> operation);

// Takes `request` (any MPI request; set to MPI_REQUEST_NULL, the caller no longer waits for
// it) and calls `then` with its error (MPI_SUCCESS or an MPI code) once it completes: from
// inside the MPI call whose progress completes it under Open MPI (its progress callback runs in
// every MPI call), and under MPICH, whose poll function runs only inside a wait on the
// operation's own request, from inside progress_completions(). Not under any other MPI, which
// has no hook, nor in the simulation.
void when_complete(MPI_Request& request, std::function<void(int error)> then);

// Whether when_complete calls its `then` here (Open MPI with its progress hook found, MPICH).
bool when_complete_available();

// Under MPICH: whether requests given to when_complete wait for progress_completions(), which
// advances them one pass (nothing from inside a2av's own progress, nor while another thread
// does it). The preload's MPI_Wait, MPI_Test and their kin call it. False elsewhere.
bool completions_wait_for_progress();
void progress_completions();

// Whether the loop advancing the calling operation yields the core itself after a pass that
// did nothing: Open MPI's progress engine on an oversubscribed node. An operation that would
// yield when it cannot advance then leaves it to the loop (yielding twice per pass cost a
// third of a 16 B exchange at P = 4 on 2 cores).
bool progress_loop_yields();

// Whether threads may call MPI at the same time (MPI_THREAD_MULTIPLE; read once, after
// MPI_Init), and so must take turns over what they share.
bool threads_may_race();
// `mutex` locked where threads may race, else left alone (nothing to pay below
// MPI_THREAD_MULTIPLE). For a lock held for nothing but the state it guards.
std::unique_lock<std::mutex> lock_if_threads(std::mutex& mutex);

// Any thread's MPI calls may advance any thread's operations (MPI_THREAD_MULTIPLE; a request
// may be waited for by another thread than the one that started it), one thread at a time.
// While a ProgressHold lives, no other thread advances, starts or frees an operation, and
// this thread's own MPI calls advance none; it nests. For what touches state that operations
// in flight share (a communicator's cells). Never held across a blocking MPI call: a peer's
// progress may depend on this rank's other threads. A no-op in the simulation (one thread).
class ProgressHold {
 public:
  ProgressHold();
  ~ProgressHold();
  ProgressHold(const ProgressHold&) = delete;
  ProgressHold& operator=(const ProgressHold&) = delete;

 private:
  bool outermost_;
};

}  // namespace a2av
