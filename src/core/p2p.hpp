// Nonblocking point-to-point on byte ranges of any 64-bit length: messages longer than
// max_piece() bytes are split into pieces, which MPI's non-overtaking rule keeps in order.
#pragma once

#include <mpi.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory_resource>
#include <string>
#include <vector>

namespace a2av {

// A count disagreement found while data moves. It is remembered rather than thrown so that
// the algorithm finishes its protocol and no peer is left waiting; the driver raises it.
class Mismatch {
 public:
  void note(std::string message) {
    if (message_.empty()) message_ = std::move(message);
  }
  void raise() const;  // throws A2AV_ERR_COUNTS if anything was noted

 private:
  std::string message_;
};

// In-band agreement on argument errors, for the algorithms that send each peer its block
// directly (docs/errors.md). Every rank sends every peer at least one message, an empty one
// for an empty block, and receives each peer's first piece with any tag. A rank that rejected
// its arguments sends each peer instead one empty message whose tag carries its error code,
// and drains what the peers send it. So every rank learns every other rank's error while the
// data moves, and no allreduce has to come before the exchange.
class PeerErrors {
 public:
  void note(int rank, int code);
  bool from(int rank) const;
  // An error that reached this rank second-hand (TuNA's forwarded headers): counted in
  // code() and rank(), but not as a message from `rank`.
  void learn(int rank, int code);
  int code() const { return code_; }  // the largest code seen; A2AV_SUCCESS if none
  int rank() const { return rank_; }  // the lowest rank with code(); -1 if none
  void raise() const;                 // throws that code, naming the lowest rank with it

 private:
  int code_ = 0;
  int rank_ = -1;
  std::vector<int> ranks_;
};

// For a rank whose arguments failed with `code` under in-band agreement: sends every peer the
// code's tag and drains every message each peer sends this rank, noting their errors.
void announce_error(MPI_Comm comm, int code, PeerErrors& peers);

// For a rank that failed under in-band agreement inside an algorithm with its own schedule
// (TuNA): receives and drops the one block `peer` sent it with in-band Requests (all its
// pieces, or its error tag, noted in `peers`).
void drain_block(int peer, MPI_Comm comm, PeerErrors& peers);

// Receives and drops what Requests::isend (without in-band agreement) sent of a block of
// `bytes` bytes: a block this rank does not take, so that no message is left behind.
void drop_pieces(std::int64_t bytes, int peer, int tag, MPI_Comm comm);
// Receives and drops one message of any length, empty or not.
void drop_message(int peer, int tag, MPI_Comm comm);

// A message found by a probe and then received: the one probed, even with other threads
// receiving on the communicator (MPI_Mprobe). SimGrid SMPI 3.32 has no MPI_Mprobe; its ranks
// are single-threaded actors, so there a probe and a receive of the same source and tag are
// as safe.
class ProbedMessage {
 public:
  // Blocks until a message from `source` with `tag` (MPI_ANY_TAG allowed) is there.
  static ProbedMessage wait(int source, int tag, MPI_Comm comm);
  // Whether one is there now; `found` is set to it if so.
  static bool test(int source, int tag, MPI_Comm comm, ProbedMessage& found);
  int bytes() const;
  int tag() const { return status_.MPI_TAG; }
  // Receives it into `data` (at least bytes() long), or drops it with data = nullptr.
  void receive(void* data);

 private:
  MPI_Status status_{};
#ifdef A2AV_SIMULATION
  MPI_Comm comm_ = MPI_COMM_NULL;
#else
  MPI_Message message_ = MPI_MESSAGE_NULL;
#endif
};

// MPICH raises errors of request completion (a truncated receive) on MPI_COMM_WORLD's
// handler, not the request's communicator, so a wait would abort by default there. While
// a2av waits, MPI_COMM_WORLD returns errors instead; its handler is restored afterwards.
class WorldErrorsReturn {
 public:
#if defined(MPICH_VERSION)
  WorldErrorsReturn() {
    MPI_Comm_get_errhandler(MPI_COMM_WORLD, &saved_);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  }
  ~WorldErrorsReturn() {
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, saved_);
    MPI_Errhandler_free(&saved_);
  }

 private:
  MPI_Errhandler saved_;
#endif
};

// Messages longer than this many bytes are split: 2^30 by default, or A2AV_MAX_MESSAGE.
std::int64_t max_piece();

class Requests {
 public:
  Requests() = default;
  // In-band agreement (see PeerErrors): an empty block is still one message, and a peer's
  // error tag is noted in `in_band` instead of data.
  explicit Requests(PeerErrors* in_band) : in_band_(in_band) {}
  void isend(const void* data, std::int64_t bytes, int peer, int tag, MPI_Comm comm);
  void irecv(void* data, std::int64_t bytes, int peer, int tag, MPI_Comm comm);
  // In-band agreement: sends `peer`, instead of a block, one empty message carrying `code`.
  void isend_error(int code, int peer, MPI_Comm comm);
  // Takes over a request posted elsewhere; expected_bytes < 0 for a send.
  void adopt(MPI_Request request, std::int64_t expected_bytes);
  // Waits for all. A receive that got fewer bytes than posted, or was truncated (the
  // sender's count disagreed), is noted in `mismatch`; other failures throw A2AV_ERR_MPI.
  void wait_all(Mismatch& mismatch);
  // Cancels every request and waits until each has ended: for receives from a peer that
  // announced an error instead of its data, so they can never match. Nothing is noted.
  void cancel_all();
  bool empty() const { return requests_.empty(); }
  void reserve(std::size_t messages) {
    requests_.reserve(messages);
    expected_.reserve(messages);
    statuses_.reserve(messages);
  }

 private:
  // The pieces after the first of an in-band receive: posted once the first piece showed
  // that the peer sends data rather than an error.
  struct Rest {
    std::byte* data;
    std::int64_t bytes;
    int peer;
    MPI_Comm comm;
  };
  void post_recv_pieces(std::byte* data, std::int64_t bytes, int peer, int tag, MPI_Comm comm);
  void wait_posted(Mismatch& mismatch);

  // The bookkeeping of up to about a hundred messages lives here, not on the heap: small
  // exchanges are dominated by per-call costs.
  std::array<std::byte, 4096> arena_;
  std::pmr::monotonic_buffer_resource resource_{arena_.data(), arena_.size()};
  std::pmr::vector<MPI_Request> requests_{&resource_};
  std::pmr::vector<std::int64_t> expected_{&resource_};  // bytes per request; -1 for sends
  std::pmr::vector<MPI_Status> statuses_{&resource_};
  PeerErrors* in_band_ = nullptr;
  std::vector<Rest> rest_;
};

// Blocking exchange of two byte ranges with (possibly different) peers.
void sendrecv(const void* send, std::int64_t send_bytes, int dest, void* recv,
              std::int64_t recv_bytes, int source, int tag, MPI_Comm comm, Mismatch& mismatch,
              PeerErrors* in_band = nullptr);

}  // namespace a2av
