// tuna: tunable-radix non-uniform all-to-all. A block travels its distance
// (dest - source mod P) one base-r digit at a time: K <= w(r-1) rounds for w = ceil(log_r P),
// at most r^(w-1) blocks per round; intermediate blocks wait in a store of at most
// P-(K+1) blocks. Source: fan-tuna-configurable-alltoallv.txt, Sections III-A..III-C,
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
//  - the rounds of one digit are independent, so up to `batch` of them are in flight;
//  - the store is one buffer per stored distance, sized by the blocks that actually pass
//    through it, never max-block * P.
#include "alltoallv/tuna.hpp"

#include "core/check.hpp"
#include "core/per_thread.hpp"

#include <algorithm>
#include <cstring>
#include <map>

namespace a2av {
namespace {

using Header = std::int64_t;

// Where the block a rank holds at `distance` lives before a round of digit `digit`.
struct Holder {
  bool from_send;  // still at its source (all lower digits zero)
  int peer;        // for from_send: its destination
};

// Rounds depend only on (P, radix): computed once per pair and thread.
const std::vector<TunaRound>& cached_rounds(int size, int radix) {
  A2AV_THREAD_LOCAL std::map<std::pair<int, int>, std::vector<TunaRound>> cache;
  auto [it, inserted] = cache.try_emplace({size, radix});
  if (inserted) it->second = tuna_rounds(size, radix);
  return it->second;
}

// The state of one rank's run: the store and the buffers of the rounds in flight.
class TunaRun {
 public:
  TunaRun(const CommContext& group, const ByteBlocks& send, const ByteBlocks& recv, int radix,
          MemoryTracker& memory, Mismatch& mismatch)
      : g_(group),
        send_(send),
        recv_(recv),
        radix_(radix),
        memory_(memory),
        mismatch_(mismatch),
        store_(group.size),
        stored_bytes_(group.size, 0) {}

  void run(int batch) {
    const auto& rounds = cached_rounds(g_.size, radix_);
    const int me = g_.rank;
    if (send_.bytes[me] > 0) std::memmove(recv_.at(me), send_.at(me), send_.bytes[me]);
    for (const auto& [first, last] : tuna_batches(rounds, batch)) run_batch(rounds, first, last);
  }

 private:
  int mod(int value) const { return ((value % g_.size) + g_.size) % g_.size; }

  // The block this rank holds at `distance` before a round on `digit`.
  // place = radix^digit of the round, its distance / value.
  Holder holder(int distance, int place) const {
    if (distance % place == 0) return {true, mod(g_.rank + distance)};
    return {false, -1};
  }

  std::int64_t held_bytes(int distance, int place) const {
    const Holder h = holder(distance, place);
    return h.from_send ? send_.bytes[h.peer] : stored_bytes_[distance];
  }
  const std::byte* held_data(int distance, int place) const {
    const Holder h = holder(distance, place);
    return h.from_send ? send_.at(h.peer) : store_[distance].data();
  }

  // The message: its total length, one size per forwarded block, then the blocks, in
  // distance order. The length lets a receiver finish messages split into pieces.
  void pack(const TunaRound& round, TempBuffer& out) {
    const std::size_t n = round.forwarded.size();
    std::int64_t total = static_cast<std::int64_t>((n + 1) * sizeof(Header));
    const int place = round.distance / round.value;
    for (int d : round.forwarded) total += held_bytes(d, place);
    out.grow(total);
    auto* header = reinterpret_cast<Header*>(out.data());
    header[0] = total;
    std::byte* at = out.data() + (n + 1) * sizeof(Header);
    for (std::size_t i = 0; i < n; ++i) {
      const int d = round.forwarded[i];
      header[i + 1] = held_bytes(d, place);
      if (header[i + 1] > 0) std::memcpy(at, held_data(d, place), header[i + 1]);
      at += header[i + 1];
    }
    packed_bytes_ = total;
  }

  // Puts each block of a received message where it belongs: the receive buffer if it has
  // arrived (no higher digits left), else the store.
  void unpack(const TunaRound& round, const std::byte* message, std::int64_t bytes) {
    const std::size_t n = round.forwarded.size();
    const auto* header = reinterpret_cast<const Header*>(message) + 1;
    const std::byte* at = message + (n + 1) * sizeof(Header);
    const std::int64_t span = std::int64_t{round.distance / round.value} * radix_;
    std::int64_t used = static_cast<std::int64_t>((n + 1) * sizeof(Header));
    if (bytes < used) fail(A2AV_ERR_MPI, "tuna: truncated round message ({} bytes)", bytes);
    for (std::size_t i = 0; i < n; ++i) {
      const int d = round.forwarded[i];
      const std::int64_t size = header[i];
      used += size;
      if (size < 0 || used > bytes) fail(A2AV_ERR_MPI, "tuna: corrupt round message");
      if (d < span) {
        const int source = mod(g_.rank - d);
        if (size != recv_.bytes[source])
          mismatch_.note(fmt::format("rank {} sent {} bytes where the receive count says {}",
                                     source, size, recv_.bytes[source]));
        else if (size > 0)
          std::memcpy(recv_.at(source), at, size);
      } else {
        if (store_[d].capacity() < size) {
          store_[d] = TempBuffer(memory_, size);
        }
        if (size > 0) std::memcpy(store_[d].data(), at, size);
        stored_bytes_[d] = size;
      }
      at += size;
    }
  }

  void run_batch(const std::vector<TunaRound>& rounds, std::size_t first, std::size_t last) {
    const std::size_t count = last - first;
    if (staging_.size() < count) staging_.resize(count);
    Requests requests;
    for (std::size_t i = 0; i < count; ++i) {
      const TunaRound& round = rounds[first + i];
      const int to = mod(g_.rank + round.distance), from = mod(g_.rank - round.distance);
      const int tag = static_cast<int>(2 * i);
      requests.irecv(recv_.at(from), recv_.bytes[from], from, tag, g_.comm);
      requests.isend(send_.at(to), send_.bytes[to], to, tag, g_.comm);
      if (round.forwarded.empty()) continue;
      if (!staging_[i].send.capacity()) staging_[i].send.attach(memory_);
      pack(round, staging_[i].send);
      requests.isend(staging_[i].send.data(), packed_bytes_, to, tag + 1, g_.comm);
    }
    for (std::size_t i = 0; i < count; ++i) {
      const TunaRound& round = rounds[first + i];
      if (round.forwarded.empty()) continue;
      receive_forwarded(round, static_cast<int>(2 * i + 1), staging_[i].recv);
    }
    requests.wait_all(mismatch_);
  }

  // The forwarded blocks' message has a size only the sender knew: probe, then receive.
  void receive_forwarded(const TunaRound& round, int tag, TempBuffer& buffer) {
    const int from = mod(g_.rank - round.distance);
    ProbedMessage message = ProbedMessage::wait(from, tag, g_.comm);
    const int first = message.bytes();
    if (!buffer.capacity()) buffer.attach(memory_);
    buffer.grow(std::max<std::int64_t>(first, sizeof(Header)));
    message.receive(buffer.data());
    Header total = 0;
    if (first >= static_cast<int>(sizeof(Header))) std::memcpy(&total, buffer.data(), sizeof total);
    if (total > first) {  // the rest of a message longer than one piece
      TempBuffer whole(memory_, total);
      std::memcpy(whole.data(), buffer.data(), first);
      Requests rest;
      rest.irecv(whole.data() + first, total - first, from, tag, g_.comm);
      rest.wait_all(mismatch_);
      buffer = std::move(whole);
    }
    unpack(round, buffer.data(), std::max<std::int64_t>(total, first));
  }

  struct Staging {
    TempBuffer send;
    TempBuffer recv;
  };

  const CommContext& g_;
  const ByteBlocks& send_;
  const ByteBlocks& recv_;
  int radix_;
  MemoryTracker& memory_;
  Mismatch& mismatch_;
  std::vector<TempBuffer> store_;           // indexed by distance
  std::vector<std::int64_t> stored_bytes_;  // bytes of the block held at each distance
  std::vector<Staging> staging_;            // one per round in flight
  std::int64_t packed_bytes_ = 0;
};

}  // namespace

std::vector<TunaRound> tuna_rounds(int size, int radix) {
  std::vector<TunaRound> rounds;
  for (std::int64_t place = 1, digit = 0; place < size; place *= radix, ++digit) {
    for (int value = 1; value < radix && value * place < size; ++value) {
      TunaRound round{static_cast<int>(digit), value, static_cast<int>(value * place), {}};
      // distance = high * radix * place + value * place + low, low < place
      for (std::int64_t high = 0; high * radix * place + value * place < size; ++high)
        for (std::int64_t low = 0; low < place; ++low) {
          const std::int64_t d = high * radix * place + value * place + low;
          if (d >= size) break;
          if (d != round.distance) round.forwarded.push_back(static_cast<int>(d));
        }
      rounds.push_back(std::move(round));
    }
  }
  return rounds;
}

std::vector<std::pair<std::size_t, std::size_t>> tuna_batches(const std::vector<TunaRound>& rounds,
                                                              int batch) {
  std::vector<std::pair<std::size_t, std::size_t>> batches;
  for (std::size_t first = 0; first < rounds.size();) {
    std::size_t last = first + 1;
    while (last < rounds.size() && last - first < static_cast<std::size_t>(batch) &&
           rounds[last].digit == rounds[first].digit)
      ++last;
    batches.emplace_back(first, last);
    first = last;
  }
  return batches;
}

int tuna_stored_blocks(int size, int radix) {
  int direct = 0;
  for (std::int64_t place = 1; place < size; place *= radix)
    for (int value = 1; value < radix && value * place < size; ++value) ++direct;
  return size - (direct + 1);
}

int tuna_radix(std::int64_t requested, int size) {
  if (requested == 0) {
    int root = 1;
    while (root * root < size) ++root;
    requested = root;
  }
  return static_cast<int>(std::clamp<std::int64_t>(requested, 2, std::max(2, size)));
}

int tuna_batch(std::int64_t requested, int radix) {
  return static_cast<int>(
      std::clamp<std::int64_t>(requested == 0 ? radix - 1 : requested, 1, radix - 1));
}

int hierarchical_node_size(std::int64_t requested, int size, int detected, bool uniform) {
  const int q =
      requested > 0 ? static_cast<int>(std::min<std::int64_t>(requested, size)) : detected;
  return size % q == 0 && (requested > 0 || uniform) ? q : 0;
}

void tuna_exchange(const CommContext& group, const ByteBlocks& send, const ByteBlocks& recv,
                   int radix, int batch, MemoryTracker& memory, Mismatch& mismatch) {
  TunaRun(group, send, recv, radix, memory, mismatch).run(batch);
}

std::int64_t tuna_memory_bound(int size, int radix, int batch, std::int64_t max_block) {
  std::size_t widest = 0;
  for (const auto& round : tuna_rounds(size, radix))
    widest = std::max(widest, round.forwarded.size());
  const std::int64_t message =
      static_cast<std::int64_t>(widest) * (max_block + sizeof(Header)) + sizeof(Header);
  // Per round in flight: the packed message sent, and the one received (twice while a
  // message longer than one piece is reassembled).
  return tuna_stored_blocks(size, radix) * max_block + 3 * batch * message;
}

void run_tuna(const Exchange& ex, const Params& params) {
  if (ex.ctx.size == 1) return copy_self_block(ex);
  const int radix = tuna_radix(params.at("radix"), ex.ctx.size);
  tuna_exchange(ex.ctx, ex.send, ex.recv, radix, tuna_batch(params.at("batch"), radix), ex.memory,
                ex.mismatch);
}

}  // namespace a2av
