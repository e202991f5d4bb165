// Sparse exchanges: every rank sends messages to ranks of its choosing and receives whatever is
// sent to it, without knowing its sources or their sizes in advance (graph analytics, particle
// migration, mesh synchronisation). Unlike alltoallv, nothing on the call path holds an array
// of the communicator's size, except on the dense fallback (docs/algorithms.md, "Sparse").
#pragma once

#include <a2av/error.hpp>

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace a2av {

// Received bytes: a vector whose growth leaves new bytes unwritten (std::vector would zero
// them, one more pass over every received byte before MPI writes it).
template <class T>
struct DefaultInitAllocator : std::allocator<T> {
  template <class U>
  struct rebind {
    using other = DefaultInitAllocator<U>;
  };
  template <class U>
  void construct(U* at) noexcept {
    ::new (static_cast<void*>(at)) U;
  }
  template <class U, class... Args>
  void construct(U* at, Args&&... args) {
    ::new (static_cast<void*>(at)) U(std::forward<Args>(args)...);
  }
};
using ReceivedBytes = std::vector<std::byte, DefaultInitAllocator<std::byte>>;

// A message to send: `data` goes to rank `destination` of the communicator. A rank may send
// several messages to one destination (they arrive in the order given), or to itself.
struct OutgoingMessage {
  int destination;
  std::span<const std::byte> data;
};

// A message received: `data` views storage owned by the SparseResult.
struct IncomingMessage {
  int source;
  std::span<const std::byte> data;
};

struct SparseOptions {
  // "nbx", "grid", "dense", "shared_memory" (all ranks on one node) or "auto"; empty:
  // A2AV_SPARSE_ALGORITHM, then auto.
  std::string_view algorithm{};
};

// What arrived, ordered by source; one source's messages in the order it sent them.
class SparseResult {
 public:
  SparseResult() = default;
  // Its received bytes' storage is kept by the thread for its next exchange (up to 16 MiB):
  // a loop of exchanges allocates and grows no buffer once warm.
  ~SparseResult();
  SparseResult(SparseResult&&) noexcept = default;
  SparseResult& operator=(SparseResult&&) noexcept = default;
  SparseResult(const SparseResult&) = delete;  // the messages view this result's storage
  SparseResult& operator=(const SparseResult&) = delete;

  std::span<const IncomingMessage> messages() const { return messages_; }
  const std::string& algorithm() const { return algorithm_; }  // what ran
  // Temporary memory the exchange allocated beyond the received data, and that data's size.
  std::int64_t peak_temp_bytes() const { return peak_temp_bytes_; }
  std::int64_t received_bytes() const { return static_cast<std::int64_t>(storage_.size()); }
  // The most point-to-point requests this rank had in flight during the exchange (bounded
  // by A2AV_MAX_IN_FLIGHT, docs/design.md "Messages in flight").
  int max_in_flight() const { return max_in_flight_; }

 private:
  friend class SparseResultBuilder;
  ReceivedBytes storage_;
  std::vector<IncomingMessage> messages_;
  std::string algorithm_;
  std::int64_t peak_temp_bytes_ = 0;
  int max_in_flight_ = 0;
};

// Collective over `comm` (an intracommunicator). Errors (a destination outside the
// communicator, null data with a size) are agreed: every rank throws a2av::Error with the same
// code, naming the rank at fault, and the messages that did arrive are dropped.
SparseResult sparse_exchange(std::span<const OutgoingMessage> messages, MPI_Comm comm,
                             const SparseOptions& options = {});

}  // namespace a2av
