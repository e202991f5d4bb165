// What the sparse exchange's algorithms share: the messages to send, what arrived, and how a
// local error becomes one every rank agrees on.
#pragma once

#include <a2av/sparse.hpp>

#include "core/comm_context.hpp"
#include "core/memory.hpp"
#include "core/spec.hpp"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace a2av {

// The sparse family's table: nbx, grid, dense, shared_memory, auto (driver.cpp).
std::span<const FamilyAlgorithm> sparse_algorithms();

// A message to send, checked: `destination` is a rank of the communicator.
struct Parcel {
  int destination;
  int origin;  // the rank the message started from (grid forwards others' messages)
  const std::byte* data;
  std::int64_t bytes;
};

// What auto chooses from: a rank's number of messages and their byte total; agreed, the
// largest of each over all ranks.
struct Statistics {
  std::int64_t messages = 0, bytes = 0;
};

// Where an exchange runs: the caller's communicator, its context (private communicator,
// rank, size) and the tracker its temporaries are charged to; this rank's statistics, and
// where an algorithm that agrees on them on its way (NBX's consensus, the dense counts
// all-to-all) puts the maxima, for the next call's auto.
struct SparseContext {
  MPI_Comm comm;
  const CommContext& ctx;
  MemoryTracker& memory;
  Statistics local;
  std::optional<Statistics>& agreed;
};

// An error as the ranks agree on it: the highest code, from the lowest rank that has it.
struct Fault {
  int code = 0;  // 0: none
  int rank = -1;
  std::string message;  // this rank's own, if it is the one at fault

  explicit operator bool() const { return code != 0; }
  // As one word that MAX orders as the ranks agree (code << 32 | P - 1 - rank; 0: none).
  std::uint64_t word(int size) const {
    return code ? std::uint64_t(code) << 32 | std::uint64_t(size - 1 - rank) : 0;
  }
  // The fault a word names; its message is `local`'s where that is this rank's.
  static Fault from_word(std::uint64_t word, int size, int my_rank, const Fault& local) {
    if (!word) return {};
    const int rank = size - 1 - static_cast<int>(word & 0xffffffff);
    return {static_cast<int>(word >> 32), rank, rank == my_rank ? local.message : ""};
  }
  // The error every rank throws: its own message on the faulty rank, a pointer to it elsewhere.
  [[noreturn]] void raise(int my_rank) const;
};

// What arrived: messages in arrival order, their bytes back to back in one buffer.
class Inbox {
 public:
  Inbox() = default;
  // Receives into the storage of the last result this thread freed (~SparseResult), if any.
  static Inbox with_kept_storage();

  // Room for a message of `bytes` from `source`, valid until the next call.
  std::byte* slot(int source, std::int64_t bytes);
  void add(int source, std::span<const std::byte> data) {
    std::copy(data.begin(), data.end(), slot(source, static_cast<std::int64_t>(data.size())));
  }
  // Calls f(source, data) for each message, in arrival order.
  template <class F>
  void each(F f) const {
    for (const Record& r : records_)
      f(r.source, std::span<const std::byte>(storage_.data() + r.offset, r.bytes));
  }
  std::int64_t bytes() const { return static_cast<std::int64_t>(storage_.size()); }
  // Receives the message `status` found by a probe of `tag` on `comm`.
  void receive(MPI_Status status, int tag, MPI_Comm comm);
  // A message the kernel would not copy from its sender's buffer (core/single_copy.hpp):
  // noted while the exchange goes on, raised on this rank once it is done.
  void note_unread(int source, const Error& why);
  void raise_unread() const {
    if (unread_) throw *unread_;
  }

 private:
  friend class SparseResultBuilder;
  struct Record {
    int source;
    std::int64_t offset, bytes;
  };
  ReceivedBytes storage_;
  std::vector<Record> records_;
  std::optional<Error> unread_;
};

class SparseResultBuilder {
 public:
  // Orders the messages by source (stable: one source's stay in arrival order).
  static SparseResult build(Inbox&& inbox, std::string algorithm, std::int64_t peak_temp_bytes,
                            int max_in_flight);
};

// The tag of the next sparse round on `ctx`: rounds alternate between the two tags of
// kSparseMessages (core/tags.hpp), so a rank that has finished a round and starts the next
// cannot have its messages taken by a rank still probing for the previous one (which cannot
// be two rounds behind: a round ends only once every rank has finished sending in it).
int next_sparse_tag(const CommContext& ctx);

// Nonblocking consensus (NBX): synchronous sends, probe and receive until a nonblocking
// allreduce, entered once this rank's sends are all matched, completes; the allreduce agrees
// on `local` at the same time. Received messages go to `inbox` with their sender as source.
// Source: Hoefler, Siebert, Lumsdaine, "Scalable Communication Protocols for Dynamic Sparse
// Data Exchange", PPoPP 2010, Algorithm 2 (NBX).
Fault nbx(const std::vector<Parcel>& parcels, const SparseContext& at, const Fault& local,
          Inbox& inbox);

// Two hops over a near-square grid of ranks (ceil(sqrt P) columns): each message goes first
// to the rank in its source's row and its destination's column, which forwards it along the
// column, so a rank sends at most about 2 sqrt(P) aggregated messages. Each hop is an NBX round.
Fault grid_exchange(const std::vector<Parcel>& parcels, const SparseContext& at, const Fault& local,
                    Inbox& inbox);

// For ranks that all share one node: messages through a shared segment, one barrier of the
// node, no census (sparse/shared_memory.cpp). Runs nbx where no segment could be made.
Fault sparse_shared_memory(const std::vector<Parcel>& parcels, const SparseContext& at,
                           const Fault& local, Inbox& inbox);
// Whether sparse_shared_memory has its segment here (collective on the first call; the same
// answer on every rank).
bool sparse_shared_memory_available(const CommContext& ctx);

// The dense fallback: an all-to-all of per-destination byte counts, then a2av's alltoallv of
// the messages packed by destination. O(P) arrays, but the best for dense patterns.
Fault dense_exchange(const std::vector<Parcel>& parcels, const SparseContext& at,
                     const Fault& local, Inbox& inbox);

// sparse_exchange, with an argument error the C API found before forming the messages
// (`rejected`, agreed like any other).
SparseResult run_sparse_exchange(std::span<const OutgoingMessage> messages, MPI_Comm comm,
                                 std::string_view algorithm, std::string_view rejected);

}  // namespace a2av
