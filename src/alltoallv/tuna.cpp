// tuna: tunable-radix non-uniform all-to-all. A block travels its distance
// (dest - source mod P) one base-r digit at a time: K <= w(r-1) rounds for w = ceil(log_r P),
// at most r^(w-1) blocks per round; intermediate blocks wait in a store of at most
// P-(K+1) blocks. Source: Fan et al. [Fan24], Sections III-A..III-C,
// Algorithm 1, Figures 2-3.
//
// Lean rounds (what differs from the paper's two-phase scheme):
//  - the direct block of a round (distance exactly z*r^x) goes in its own message straight
//    from the send buffer into the receive buffer: the receiver knows its size from its
//    receive counts, so it needs no metadata and no copy; rounds that carry only the direct
//    block (all rounds when r = P) are plain point-to-point;
//  - the other blocks of a round travel in one message that begins with their sizes, which
//    the receiver learns with MPI_Mprobe, so there is no separate metadata message and no
//    extra latency per round;
//  - the rounds of one digit are independent, so up to `batch` of them are in flight, a
//    window that slides: a round is posted as soon as the oldest before it is done;
//  - the store is one buffer per stored distance, sized by the blocks that actually pass
//    through it, never max-block * P;
//  - blocks above direct_above bytes (default 8 KiB, where the paper finds r = P best:
//    Section V-B, Figure 7) travel directly, so store and messages stay bounded;
//  - errors are agreed in band: headers carry what the sender knows of failed ranks, and a
//    failed rank runs the rounds with empty blocks (docs/errors.md).
#include "alltoallv/tuna.hpp"

#include "alltoallv/registry.hpp"

#include "core/check.hpp"
#include "core/tags.hpp"

#include <algorithm>
#include <cstring>
#include <deque>
#include <limits>
#include <map>

namespace a2av {
namespace {

using HeaderWord = std::int64_t;

// Tags (core/tags.hpp). The direct block's last piece carries kDirectBlock (earlier pieces
// and error codes use the in-band tags of core/p2p.cpp, kMorePieces and kPeerErrors); a
// round's forwarded blocks kTunaForwarded, a large block kTunaLarge. One peer sends this rank
// at most one round's messages, so tags need not tell rounds apart.

// Header words before the block sizes (tuna_header_words): the message's total length and
// what the sender knows of failed ranks (code, rank).
enum : std::size_t { kTotal, kKnownCode, kKnownRank, kFixedWords };
static_assert(tuna_header_words(0) == kFixedWords);

// A block of more than `direct_above` bytes does not enter forwarded messages: it travels
// from the send buffer to the receive buffer in a message of its own, and forwarded
// messages carry in its place a marker (deferrable_marker, algorithm.hpp): whether it comes
// during the rounds or after them.

// Where the block a rank holds at `distance` lives before a round of digit `digit`.
struct Holder {
  bool from_send;  // still at its source (all lower digits zero)
  int peer;        // for from_send: its destination
};

// The state of one rank's run: the store, the buffers of the rounds in flight, the large
// blocks' messages, and what this rank knows of failed ranks.
class TunaRun {
 public:
  TunaRun(const CommContext& group, const TunaBlocks& blocks, const TunaOptions& options,
          MemoryTracker& memory, Mismatch& mismatch)
      : group_(group),
        send_(blocks.send),
        recv_(blocks.recv),
        options_(options),
        memory_(memory),
        mismatch_(mismatch),
        large_(nullptr, large_budget()),
        store_(group.size),
        stored_bytes_(group.size, 0) {
    if (options_.failed_code) options_.peers->note(group_.rank, options_.failed_code);
  }

  void run(int batch) {
    const auto& rounds = cached_tuna_rounds(group_.size, options_.radix);
    const int me = group_.rank;
    if (!options_.failed_code && send_.bytes[me] > 0)
      std::memmove(recv_.at(me), send_.at(me), send_.bytes[me]);
    const int window = rounds_in_flight(batch);
    defer_large_ = large_requests() > large_budget();
    if (!defer_large_) send_large_blocks(rounds);
    while (slots_.size() < static_cast<std::size_t>(window))
      slots_.emplace_back(options_.peers, rounds_budget());
    for (const auto& [first, last] : tuna_batches(rounds, kWholeDigit))
      run_digit(rounds, first, last, window);
    if (defer_large_ || !deferred_.empty()) exchange_deferred_large(rounds);
    large_.wait_all(mismatch_);
  }

 private:
  // A round in flight: its forwarded messages, sent and received, and its requests (the
  // direct block both ways, the forwarded message's first piece sent).
  struct Slot {
    Slot(PeerErrors* in_band, int limit) : requests(in_band, limit) {}
    TempBuffer send;
    TempBuffer recv;
    std::int64_t sent = 0;      // the forwarded message's bytes, this rank's
    std::int64_t received = 0;  // and the one received
    Requests requests;
    int taken = 0;  // what the round holds of the rounds' budget while in flight
  };
  static constexpr int kWholeDigit = std::numeric_limits<int>::max();

  // The bound on requests in flight shared out (tuna_schedule.hpp).
  static int large_budget() { return tuna_large_budget(InFlight::limit()); }
  static int rounds_budget() { return InFlight::limit() - large_budget(); }
  static int rounds_in_flight(int batch) { return tuna_rounds_in_flight(batch, InFlight::limit()); }

  // Requests the large blocks take, sent and received, if all are posted when known.
  std::int64_t large_requests() const {
    std::int64_t n = 0;
    for (int peer = 0; peer < group_.size; ++peer) {
      if (peer == group_.rank) continue;
      if (large(recv_.bytes[peer])) n += large_.requests_for(recv_.bytes[peer]);
      if (!options_.failed_code && large(send_.bytes[peer]))
        n += large_.requests_for(send_.bytes[peer]);
    }
    return n;
  }

  // The deferred large blocks after the rounds, step d receiving from rank-d and sending to
  // rank+d: the order in which a bound slides without deadlock (core/p2p.hpp). Every rank
  // that sends or receives a deferred block takes part; a block this rank does not take is
  // dropped at its step, after this step's send is posted.
  void exchange_deferred_large(const std::vector<TunaRound>& rounds) {
    for (int d = 1; d < group_.size; ++d) {
      const int to = mod(group_.rank + d), from = mod(group_.rank - d);
      const bool sends = defer_large_ && !options_.failed_code && large(send_.bytes[to]) &&
                         !is_round_distance(rounds, d);
      const auto incoming = deferred_.find(from);
      const bool comes = incoming != deferred_.end();
      const bool takes = comes && expected(from, incoming->second);
      large_.exchange(recv_.at(from), takes ? recv_.bytes[from] : 0, from, send_.at(to),
                      sends ? send_.bytes[to] : 0, to, tags::kTunaLarge.tag(), group_.comm);
      if (comes && !takes) drop_pieces(incoming->second, from, tags::kTunaLarge.tag(), group_.comm);
    }
  }

  // Whether this rank takes a block of `bytes` from `source`: its count agrees, and it runs.
  bool expected(int source, std::int64_t bytes) const {
    return !options_.failed_code && bytes == recv_.bytes[source];
  }
  int mod(int value) const { return ((value % group_.size) + group_.size) % group_.size; }
  // A round's peers: this rank sends to rank + distance and receives from rank - distance.
  int sends_to(const TunaRound& round) const { return mod(group_.rank + round.distance); }
  int receives_from(const TunaRound& round) const { return mod(group_.rank - round.distance); }
  bool large(std::int64_t bytes) const { return bytes > options_.direct_above; }

  // The block this rank holds at `distance` before a round on `digit`.
  // place = radix^digit of the round, its distance / value.
  Holder holder(int distance, int place) const {
    if (distance % place == 0) return {true, mod(group_.rank + distance)};
    return {false, -1};
  }

  // Bytes of the block held at `distance`, or its large-block marker.
  std::int64_t held_bytes(int distance, int place) const {
    const Holder h = holder(distance, place);
    if (!h.from_send) return stored_bytes_[distance];
    const std::int64_t bytes = options_.failed_code ? 0 : send_.bytes[h.peer];
    return large(bytes) ? deferrable_marker({bytes, defer_large_}) : bytes;
  }
  const std::byte* held_data(int distance, int place) const {
    const Holder h = holder(distance, place);
    return h.from_send ? send_.at(h.peer) : store_[distance].data();
  }

  // Large blocks leave at once, before the rounds, each in a message of its own; the direct
  // block of each round (a distance with one nonzero digit) goes in its round as before.
  void send_large_blocks(const std::vector<TunaRound>& rounds) {
    if (options_.failed_code) return;
    for (int d = 1; d < group_.size; ++d) {
      const int to = mod(group_.rank + d);
      if (large(send_.bytes[to]) && !is_round_distance(rounds, d))
        large_.isend(send_.at(to), send_.bytes[to], to, tags::kTunaLarge.tag(), group_.comm);
    }
  }
  static bool is_round_distance(const std::vector<TunaRound>& rounds, int d) {
    for (const TunaRound& r : rounds)
      if (r.distance == d) return true;
    return false;
  }

  // The message: header words, one size (or large-block marker) per forwarded block, then
  // the blocks, in distance order. The length lets a receiver finish messages split into
  // pieces.
  void pack(const TunaRound& round, TempBuffer& out) {
    const std::size_t n = round.forwarded.size();
    std::int64_t total = static_cast<std::int64_t>((kFixedWords + n) * sizeof(HeaderWord));
    const int place = round.distance / round.value;
    for (int d : round.forwarded) total += std::max<std::int64_t>(0, held_bytes(d, place));
    out.grow(total);
    auto* header = reinterpret_cast<HeaderWord*>(out.data());
    header[kTotal] = total;
    header[kKnownCode] = options_.peers ? options_.peers->code() : 0;
    header[kKnownRank] = options_.peers ? options_.peers->rank() : -1;
    std::byte* at = out.data() + (kFixedWords + n) * sizeof(HeaderWord);
    for (std::size_t i = 0; i < n; ++i) {
      const int d = round.forwarded[i];
      const std::int64_t bytes = held_bytes(d, place);
      header[kFixedWords + i] = bytes;
      if (bytes > 0) std::memcpy(at, held_data(d, place), bytes);
      at += std::max<std::int64_t>(0, bytes);
    }
    packed_bytes_ = total;
  }

  // A block that has arrived (no higher digits left), `size` bytes or a large-block marker.
  void deliver(int source, std::int64_t size, const std::byte* data) {
    const bool marked = size < 0;
    const LargeBlock block = marked ? unmark(size) : LargeBlock{size, false};
    const std::int64_t bytes = block.bytes;
    const bool expected = this->expected(source, bytes);
    if (!options_.failed_code && !expected)
      mismatch_.note(fmt::format("rank {} sent {} bytes where the receive count says {}", source,
                                 bytes, recv_.bytes[source]));
    if (marked && block.deferred) {
      deferred_[source] = bytes;
    } else if (marked && expected) {
      large_.irecv(recv_.at(source), bytes, source, tags::kTunaLarge.tag(), group_.comm);
    } else if (marked) {
      drop_pieces(bytes, source, tags::kTunaLarge.tag(), group_.comm);
    }
    if (!marked && expected && bytes > 0) std::memcpy(recv_.at(source), data, bytes);
  }

  // Puts each block of a received message where it belongs: the receive buffer if it has
  // arrived, else the store; and learns what the sender knew of failed ranks.
  void unpack(const TunaRound& round, const std::byte* message, std::int64_t bytes) {
    const std::size_t n = round.forwarded.size();
    std::int64_t used = static_cast<std::int64_t>((kFixedWords + n) * sizeof(HeaderWord));
    if (bytes < used) fail(A2AV_ERR_MPI, "tuna: truncated round message ({} bytes)", bytes);
    const auto* header = reinterpret_cast<const HeaderWord*>(message);
    if (header[kKnownCode] > 0 && options_.peers)
      options_.peers->learn(static_cast<int>(header[kKnownRank]),
                            static_cast<int>(header[kKnownCode]));
    const std::byte* at = message + used;
    const std::int64_t span = std::int64_t{round.distance / round.value} * options_.radix;
    for (std::size_t i = 0; i < n; ++i) {
      const int d = round.forwarded[i];
      const std::int64_t size = header[kFixedWords + i];
      const std::int64_t inline_bytes = std::max<std::int64_t>(0, size);
      used += inline_bytes;
      if (used > bytes || (size < 0 && !large(unmark(size).bytes)))
        fail(A2AV_ERR_MPI, "tuna: corrupt round message");
      if (d < span) {
        deliver(mod(group_.rank - d), size, at);
      } else {
        if (store_[d].capacity() < inline_bytes) store_[d] = TempBuffer(memory_, inline_bytes);
        if (inline_bytes > 0) std::memcpy(store_[d].data(), at, inline_bytes);
        stored_bytes_[d] = size;
      }
      at += inline_bytes;
    }
  }

  // A digit's rounds, independent of one another, through a window: at most `window` rounds
  // and the rounds' budget of requests in flight. Every rank posts them in one order and
  // completes the oldest first, posting the next as soon as there is room, so the earliest
  // round not done anywhere is posted on every rank and completes: the window slides without
  // deadlock, as spread_out's steps do (docs/design.md, "Messages in flight"), and no round
  // waits for a batch's slowest.
  void run_digit(const std::vector<TunaRound>& rounds, std::size_t first, std::size_t last,
                 int window) {
    if (std::all_of(rounds.begin() + first, rounds.begin() + last,
                    [](const TunaRound& round) { return round.forwarded.empty(); }))
      return run_direct_digit(rounds, first, last, window);
    std::size_t oldest = first;
    int taken = 0;
    for (std::size_t r = first; r < last; ++r) {
      const int needs = round_requests(rounds[r]);
      while (oldest < r &&
             (r - oldest == static_cast<std::size_t>(window) || taken + needs > rounds_budget()))
        taken -= complete_round(rounds[oldest], slot(oldest)), ++oldest;
      post_round(rounds[r], slot(r), needs);
      taken += needs;
    }
    for (; oldest < last; ++oldest) complete_round(rounds[oldest], slot(oldest));
  }
  Slot& slot(std::size_t round) { return slots_[round % slots_.size()]; }

  // A digit whose rounds carry only their direct blocks (every round when radix = P) is
  // spread_out's steps: posted in order, two requests a round in the window, then waited for
  // together, which spares a rank on a shared core a wait (and a yield) per round.
  void run_direct_digit(const std::vector<TunaRound>& rounds, std::size_t first, std::size_t last,
                        int window) {
    Requests requests(options_.peers, 2 * window);
    for (std::size_t r = first; r < last; ++r) post_direct(rounds[r], requests);
    for (std::size_t r = first; r < last && options_.failed_code; ++r)
      drain_block(receives_from(rounds[r]), group_.comm, *options_.peers);
    requests.wait_all(mismatch_);
  }

  // What a round takes of the budget: its direct block both ways (or the error it sends
  // instead) and its forwarded message's first piece; at least two, the room its later
  // pieces take once the rest of the round is done (complete_round). A round whose direct
  // block alone needs more pieces than the budget slides them, alone in the window.
  int round_requests(const TunaRound& round) const {
    const Requests& requests = slots_.front().requests;
    const int to = sends_to(round), from = receives_from(round);
    const std::int64_t direct = options_.failed_code ? 1
                                                     : requests.requests_for(recv_.bytes[from]) +
                                                           requests.requests_for(send_.bytes[to]);
    const std::int64_t needs = direct + (round.forwarded.empty() ? 0 : 1);
    return static_cast<int>(std::clamp<std::int64_t>(needs, 2, rounds_budget()));
  }

  // The round's direct block, from the send buffer straight into the receive buffer (a
  // failed rank sends its error code instead, and drains what comes: complete_round).
  void post_direct(const TunaRound& round, Requests& requests) {
    const int to = sends_to(round), from = receives_from(round);
    if (options_.failed_code) return requests.isend_error(options_.failed_code, to, group_.comm);
    requests.exchange(recv_.at(from), recv_.bytes[from], from, send_.at(to), send_.bytes[to], to,
                      tags::kDirectBlock.tag(), group_.comm);
  }

  // The round's direct block, then the first piece of its forwarded message.
  void post_round(const TunaRound& round, Slot& slot, int needs) {
    const int to = sends_to(round);
    slot.taken = needs;
    post_direct(round, slot.requests);
    if (round.forwarded.empty()) return;
    if (!slot.send.capacity()) slot.send.attach(memory_);
    pack(round, slot.send);
    slot.sent = packed_bytes_;
    slot.requests.isend(slot.send.data(), std::min(packed_bytes_, max_piece()), to,
                        tags::kTunaForwarded.tag(), group_.comm);
  }

  // The round's forwarded message received (its first piece probed: only the sender knows
  // its length), its requests completed, then the pieces past the first (messages longer than
  // A2AV_MAX_MESSAGE), which a receiver can post only once it knows the length, and the
  // blocks put where they belong. Returns what the round held of the budget.
  int complete_round(const TunaRound& round, Slot& slot) {
    const int to = sends_to(round), from = receives_from(round);
    if (options_.failed_code) drain_block(from, group_.comm, *options_.peers);
    if (!round.forwarded.empty()) receive_first_piece(from, slot);
    slot.requests.wait_all(mismatch_);
    if (round.forwarded.empty()) return slot.taken;
    const std::int64_t piece = max_piece();
    if (slot.sent > piece || slot.received > piece) {
      // The receive from rank - distance and the send to rank + distance, their pieces
      // alternating, in the room the round held.
      Requests later(nullptr, slot.taken);
      later.exchange(slot.recv.data() + piece, std::max<std::int64_t>(0, slot.received - piece),
                     from, slot.send.data() + piece, std::max<std::int64_t>(0, slot.sent - piece),
                     to, tags::kTunaForwarded.tag(), group_.comm);
      later.wait_all(mismatch_);
    }
    unpack(round, slot.recv.data(), slot.received);
    return slot.taken;
  }

  // The first piece of a round's forwarded message, probed: it carries the message's length
  // (kTotal), for which the staging buffer is sized, and the later pieces follow it there.
  void receive_first_piece(int from, Slot& staging) {
    ProbedMessage message = ProbedMessage::wait(from, tags::kTunaForwarded.tag(), group_.comm);
    const int first = message.bytes();
    TempBuffer& buffer = staging.recv;
    if (!buffer.capacity()) buffer.attach(memory_);
    buffer.grow(std::max<std::int64_t>(first, sizeof(HeaderWord)));
    message.receive(buffer.data());
    HeaderWord total = 0;
    if (first >= static_cast<int>(sizeof(HeaderWord)))
      std::memcpy(&total, buffer.data(), sizeof total);
    staging.received = std::max<std::int64_t>(total, first);
    if (staging.received == first) return;
    if (first != max_piece())
      fail(A2AV_ERR_MPI, "tuna: a forwarded message's first piece has {} bytes", first);
    TempBuffer whole(memory_, staging.received);
    std::memcpy(whole.data(), buffer.data(), first);
    buffer = std::move(whole);
  }

  const CommContext& group_;
  const ByteBlocks& send_;
  const ByteBlocks& recv_;
  TunaOptions options_;
  MemoryTracker& memory_;
  Mismatch& mismatch_;
  Requests large_;                          // large blocks, sent and received
  std::vector<TempBuffer> store_;           // indexed by distance
  std::vector<std::int64_t> stored_bytes_;  // bytes (or marker) of the block at each distance
  std::deque<Slot> slots_;                  // one per round in flight (Requests do not move)
  std::int64_t packed_bytes_ = 0;
  // Large blocks past the bound: marked in the rounds, exchanged after them.
  bool defer_large_ = false;              // this rank's
  std::map<int, std::int64_t> deferred_;  // bytes of the senders' deferred blocks, by source
};

}  // namespace

void tuna_exchange(const CommContext& group, const TunaBlocks& blocks, const TunaOptions& options,
                   MemoryTracker& memory, Mismatch& mismatch) {
  TunaRun(group, blocks, options, memory, mismatch).run(options.batch);
}

void run_tuna(const AlgorithmCall& ex, const ParamValues& params) {
  if (ex.ctx.size == 1) return copy_self_block(ex);
  TunaOptions options{tuna_shape(params, ex.ctx.size)};
  options.peers = ex.in_band;
  tuna_exchange(ex.ctx, {ex.send, ex.recv}, options, ex.memory, ex.mismatch);
}

void announce_error_tuna(const CommContext& ctx, const ParamValues& params, int code,
                         PeerErrors& peers) {
  ByteBlocks none;
  none.bytes.assign(ctx.size, 0);
  none.offset.assign(ctx.size, 0);
  TunaOptions options{tuna_shape(params, ctx.size)};
  options.peers = &peers;
  options.failed_code = code;
  MemoryTracker memory;
  Mismatch ignored;  // a failed rank reports its own error, not its peers' counts
  tuna_exchange(ctx, {none, none}, options, memory, ignored);
}

void resolve_tuna_shape(Spec& spec, int group) {
  const TunaShape shape = tuna_shape(spec.params, group);
  spec.params.set(kRadix, shape.radix);
  spec.params.set(kBatch, shape.batch);
}

std::int64_t tuna_bound(const BoundInput& in, const ParamValues& p) {
  if (in.size == 1) return 0;
  return tuna_memory_bound(in.size, tuna_shape(p, in.size), in.max_block);
}

const AlgorithmDescriptor& tuna_algorithm() {
  static const AlgorithmDescriptor d{
      .name = "tuna",
      .summary =
          "TuNA: blocks travel in base-radix digit rounds; blocks above direct_above "
          "bytes go directly",
      .params = {&kRadix, &kBatch, &kDirectAbove},
      .source = "[Fan24] Sections III-A..III-C, Algorithm 1",
      .run = run_tuna,
      .memory_bound = tuna_bound,
      .announce = announce_error_tuna,
      .model = {ModelShape::tuna},
      .resolve = [](Spec& spec, const Topology& t) { resolve_tuna_shape(spec, t.size); },
      .nonblocking = NonblockingSchedule::tuna,
      .candidates =
          [](const CandidateScope& s, std::vector<std::string>& out) {
            for (int radix : {2, 4, 8, 16, tuna_radix(0, s.size), s.size})
              if (radix >= 2 && radix <= s.size) out.push_back(fmt::format("tuna:radix={}", radix));
          },
      .test_specs = {{"tuna"},
                     {"tuna:radix=2,batch=1"},
                     // blocks of the generators' 0..1000 bytes on both sides of the
                     // threshold: some direct, some through rounds
                     {"tuna:radix=2,direct_above=500"},
                     {"tuna:radix=3,batch=1,direct_above=0"},
                     {"tuna:radix={radix}"}},
      .bounds_in_flight = true,
  };
  return d;
}

}  // namespace a2av
