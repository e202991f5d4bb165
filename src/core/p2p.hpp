// Nonblocking point-to-point on byte ranges of any 64-bit length: messages longer than
// max_piece() bytes are split into pieces, which MPI's non-overtaking rule keeps in order.
#pragma once

#include <a2av/a2av.h>
#include <mpi.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory_resource>
#include <string>
#include <vector>

namespace a2av {

// An error found while data moves: a count disagreement (A2AV_ERR_COUNTS), or a block the
// kernel would not copy from its sender's buffer. It is remembered rather than thrown so that
// the algorithm finishes its protocol and no peer is left waiting; the driver raises it.
class Mismatch {
 public:
  void note(std::string message, int code = A2AV_ERR_COUNTS) {
    if (message_.empty()) message_ = std::move(message), code_ = code;
  }
  void raise() const;  // throws the first error noted, if any
  void absorb(const Mismatch& other) {
    if (!other.message_.empty()) note(other.message_, other.code_);
  }

 private:
  std::string message_;
  int code_ = A2AV_ERR_COUNTS;
};

// In-band agreement on argument errors, for the algorithms that send each peer its block
// directly (docs/errors.md). Every rank sends every peer at least one message, an empty one
// for an empty block, and receives each peer's pieces one after another with any tag. A rank
// that rejected its arguments sends each peer instead one empty message whose tag carries its
// error code, and drains what the peers send it. So every rank learns every other rank's error
// while the data moves, and no allreduce has to come before the exchange. A piece's tag says
// whether more follow, so a receiver whose count disagrees with its sender's takes exactly the
// pieces sent, neither waiting for more nor leaving any behind.
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

// MPI_Waitall that leaves nothing in flight: where it reports MPI_ERR_IN_STATUS, the requests it
// left pending (another one failed; Open MPI returns at once then) are waited for too, so that
// no receive writes into the caller's buffer after the call. `statuses` (resized) get each
// request's outcome in MPI_ERROR. Returns MPI_Waitall's code.
int wait_all_settled(std::vector<MPI_Request>& requests, std::vector<MPI_Status>& statuses);

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
// The messages a block of `bytes` goes in: its pieces (none for an empty block).
std::int64_t pieces_of(std::int64_t bytes);
// Whether a block of `requests` fits beside `in_flight` under `limit`; one that needs more
// than the limit goes alone, once nothing else is in flight.
constexpr bool fits_in_flight(std::int64_t in_flight, std::int64_t requests, std::int64_t limit) {
  return in_flight == 0 || in_flight + requests <= limit;
}

// The bound on point-to-point requests in flight per rank (docs/design.md, "Messages in
// flight"): every Requests object posts at most limit() at once, waiting for some to complete
// before it posts more. The limit is A2AV_MAX_IN_FLIGHT unless a call's spec says otherwise
// (InFlightScope); the calling thread's high-water mark is what the call reports.
class InFlight {
 public:
  static int default_limit();  // A2AV_MAX_IN_FLIGHT
  static int limit();          // the calling thread's, for the call it is in
  static int high_water();     // most requests this thread had in flight since the scope began
  static void posted(int count);
  static void ended(int count);
  // The high-water mark of the last call (InFlightScope) to end on this thread, failed or
  // not, then 0 until the next one ends.
  static int take_last_call();
};

// For the duration of one call: its limit (0: the default) and its own high-water mark; the
// enclosing call's mark includes this one's when it ends.
class InFlightScope {
 public:
  explicit InFlightScope(int limit);
  ~InFlightScope();
  InFlightScope(const InFlightScope&) = delete;
  InFlightScope& operator=(const InFlightScope&) = delete;

 private:
  int saved_limit_, saved_high_;
};

// Nonblocking sends and receives completed together, at most `limit` in flight: a post
// beyond it first completes earlier requests. That cannot deadlock when every rank posts
// its pairs in one agreed order (the k-th step's receive and the matching send of its peer
// at the same step, as spread_out's rank+i / rank-i), since the earliest pending pair of
// all ranks is then posted on both sides (docs/design.md, "Messages in flight").
class Requests {
 public:
  Requests() : Requests(nullptr) {}
  // In-band agreement (see PeerErrors): an empty block is still one message, and a peer's
  // error tag is noted in `in_band` instead of data. At most one in-band receive per peer
  // may be in flight: its pieces take any tag, each posted when the one before has come.
  // `limit`: at most this many in flight (InFlight::limit() where the schedule posts in an
  // order that lets the bound slide); by default as many as are posted.
  explicit Requests(PeerErrors* in_band, int limit = kUnbounded)
      : in_band_(in_band), limit_(std::max(2, limit)) {}
  static constexpr int kUnbounded = std::numeric_limits<int>::max();
  ~Requests() { InFlight::ended(active_); }
  Requests(const Requests&) = delete;
  Requests& operator=(const Requests&) = delete;
  void isend(const void* data, std::int64_t bytes, int peer, int tag, MPI_Comm comm);
  void irecv(void* data, std::int64_t bytes, int peer, int tag, MPI_Comm comm);
  // In-band agreement: sends `peer`, instead of a block, one empty message carrying `code`.
  void isend_error(int code, int peer, MPI_Comm comm);
  // One step of a schedule under the bound: the receive from `from` and the send to `to`,
  // their pieces alternating, so that a step too long for the bound still moves.
  void exchange(void* recv, std::int64_t recv_bytes, int from, const void* send,
                std::int64_t send_bytes, int to, int tag, MPI_Comm comm);
  // Requests a block of `bytes` takes: its pieces, and one for an empty block in band.
  std::int64_t requests_for(std::int64_t bytes) const;
  // Takes over a request posted elsewhere; expected_bytes < 0 for a send.
  void adopt(MPI_Request request, std::int64_t expected_bytes);
  // Waits for all. A receive that got fewer bytes than posted, or was truncated (the
  // sender's count disagreed), is noted in `mismatch`; other failures throw A2AV_ERR_MPI.
  void wait_all(Mismatch& mismatch);
  // Completes, without waiting, what has completed (noted as wait_all notes); returns how
  // many requests are still in flight.
  int test_some();
  // Cancels every request and waits until each has ended: for receives from a peer that
  // announced an error instead of its data, so they can never match. Nothing is noted.
  void cancel_all();
  bool empty() const { return requests_.empty(); }
  int limit() const { return limit_; }
  void reserve(std::size_t messages) {
    messages = std::min(messages, static_cast<std::size_t>(limit_));
    requests_.reserve(messages);
    expected_.reserve(messages);
    statuses_.reserve(messages);
  }

 private:
  // An in-band receive: its pieces are posted one at a time, as the sender's tags say more come.
  struct InBandReceive {
    std::byte* data;
    std::int64_t bytes;
    std::int64_t next;  // where the next piece goes
    int peer;
    MPI_Comm comm;
  };

  // Before a post: completes requests until one more fits under the limit.
  void make_room();
  // `receive`: the in-band receive a piece is of, or -1.
  void push(MPI_Request request, std::int64_t expected, int receive);
  // Piece `at` of a receive without in-band agreement.
  void post_recv_piece(std::byte* data, std::int64_t at, std::int64_t bytes, int peer, int tag,
                       MPI_Comm comm);
  // The first piece of an in-band receive, under the limit.
  void start_in_band_receive(void* data, std::int64_t bytes, int peer, MPI_Comm comm);
  // The next piece of in-band receive `receive`, any tag: the rest of its block, or of a
  // sender's longer block to drop (zero bytes, truncated). It takes the place of the piece
  // that just came, so it needs no room.
  void post_in_band_piece(int receive);
  void post_send_piece(const std::byte* data, std::int64_t at, std::int64_t bytes, int peer,
                       int tag, MPI_Comm comm);
  // MPI_Waitsome (or MPI_Testsome, not waiting), and what completed settled.
  void complete_some(bool wait = true);
  void settle(std::size_t i, MPI_Status& status, bool in_status);
  void settle_in_band(std::size_t i, const MPI_Status& status, bool truncated);
  void compact();  // drops completed requests
  // Waits for every request posted so far and settles them (one by one where an in-band
  // receive's settling may post its next piece).
  void wait_posted();

  // The bookkeeping of up to about a hundred messages lives here, not on the heap: small
  // exchanges are dominated by per-call costs.
  std::array<std::byte, 4096> arena_;
  std::pmr::monotonic_buffer_resource resource_{arena_.data(), arena_.size()};
  std::pmr::vector<MPI_Request> requests_{&resource_};
  std::pmr::vector<std::int64_t> expected_{&resource_};  // bytes per request; -1 for sends
  std::pmr::vector<int> receive_of_{&resource_};  // in band: the receive a piece is of; else -1
  std::pmr::vector<MPI_Status> statuses_{&resource_};
  std::pmr::vector<int> indices_{&resource_};
  std::pmr::vector<InBandReceive> in_band_receives_{&resource_};
  PeerErrors* in_band_ = nullptr;
  int limit_;
  int active_ = 0;  // posted, not yet completed
  Mismatch noted_;  // what completions before wait_all noted
};

// Blocking exchange of two byte ranges with (possibly different) peers.
void sendrecv(const void* send, std::int64_t send_bytes, int dest, void* recv,
              std::int64_t recv_bytes, int source, int tag, MPI_Comm comm, Mismatch& mismatch,
              PeerErrors* in_band = nullptr);

}  // namespace a2av
