// The nonblocking exchange: MPI_Ialltoallv's semantics, the request completed by the
// caller's MPI_Wait or MPI_Test (core/progress_request.hpp).
#pragma once

#include "core/call.hpp"
#include "driver/nonblocking_setup.hpp"

#include <mpi.h>

#include <cstdint>
#include <memory>

namespace a2av {

struct NonblockingStart {
  MPI_Request request = MPI_REQUEST_NULL;
  const char* schedule = "";         // what runs behind the request
  std::int64_t peak_temp_bytes = 0;  // held until the exchange completes
};

// Checks this rank's arguments (throws a2av::Error; nothing is agreed across ranks, as with
// MPI_Ialltoallv, so a rank that gets an error must not leave its peers waiting) and starts
// the exchange, without waiting for the other ranks (driver/nonblocking_setup.hpp). The count
// and displacement arrays are read here only. A call equal to the one a kept exchange ran
// (CallCopy::repeats: every argument compared) is not checked again.
// `ints`: the caller's own int arrays, where it has them (A2AV_Ialltoallv). Where the MPI
// library's exchange serves the call (a communicator not set up, an intercommunicator) it reads
// them, as MPI lets it until completion, and its request is the caller's, with none of a2av's
// around it: 0.35 us less a call at P = 2 (a copy of the arrays, a generalized request).
struct IntArrays {
  const int* sendcounts;
  const int* sdispls;
  const int* recvcounts;
  const int* rdispls;
};
NonblockingStart start_ialltoallv(const Call& call, const IntArrays* ints = nullptr);

// The bound on requests in flight of the nonblocking schedules: A2AV_ALGORITHM's in_flight=N,
// else A2AV_MAX_IN_FLIGHT.
int nonblocking_in_flight();

// This rank's arguments checked (throws a2av::Error): in the thread's CheckedCall, reused as
// the blocking driver's, up to RecentCalls::kMaxRecentSize ranks, else in `fresh`. An exchange
// keeps its own copies of what it needs.
const CheckedCall& checked_call(const Call& call, int size, CheckedCall& fresh);

// An exchange of type T ready to begin `call`, as the operation started `sequence`-th on
// `setup`'s communicator: a kept one that ran an equal call starts it again unchecked
// (T::again), else a kept or new one takes the call checked (T::prepare); `args` go to both.
template <class T, class... Args>
std::unique_ptr<T> ready_exchange(const Call& call, NonblockingSetup& setup, std::uint64_t sequence,
                                  const Args&... args) {
  auto [exchange, repeats] = setup.exchange<T>(call);
  if (repeats) {
    exchange->again(sequence, args...);
  } else {
    CheckedCall fresh;
    exchange->prepare(call, checked_call(call, setup.context().size, fresh), sequence, args...);
  }
  return std::move(exchange);
}

// The direct schedule for a checked call (its datatypes' layout), on `setup`'s communicator,
// as the operation started `sequence`-th there.
std::unique_ptr<StagedOperation> make_direct_exchange(const Call& call, const TypeInfo& send_type,
                                                      const TypeInfo& recv_type,
                                                      NonblockingSetup& setup,
                                                      std::uint64_t sequence);

}  // namespace a2av
