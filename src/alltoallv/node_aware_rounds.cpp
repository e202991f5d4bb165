#include "alltoallv/node_aware_rounds.hpp"

#include "alltoallv/tuna_schedule.hpp"
#include "core/check.hpp"
#include "core/p2p.hpp"
#include "core/tags.hpp"

#include <algorithm>
#include <climits>
#include <cstring>

namespace a2av {
namespace {

// One member sends another at most one message per exchange (one round's distance joins
// them), and MPI keeps a sender's messages in order, so one tag (core/tags.hpp,
// kNodeAwareColumn) serves every round.

// A round's message: its total length, then the length of each block (the round's direct
// block, then its forwarded ones in distance order), then the blocks back to back.
std::int64_t header_bytes(const TunaRound& round) {
  return 8 * (2 + static_cast<std::int64_t>(round.forwarded.size()));
}

class ColumnRun {
 public:
  ColumnRun(const Column& column, int radix, int in_flight, ColumnBlocks& blocks,
            MemoryTracker& memory)
      : column_(column),
        nodes_(static_cast<int>(column.members.size())),
        radix_(tuna_radix(radix, nodes_)),
        batch_(std::clamp(in_flight, 1, radix_ - 1)),
        blocks_(blocks),
        memory_(memory),
        store_(nodes_),
        stored_bytes_(nodes_, 0) {}

  void run() {
    const auto& rounds = cached_tuna_rounds(nodes_, radix_);
    // Every member takes the rounds in one order, so batches smaller than a digit's rounds
    // cannot deadlock: the earliest round not done is posted by its sender.
    for (const auto& [first, last] : tuna_batches(rounds, batch_)) {
      const std::size_t count = last - first;
      if (sent_.size() < count) sent_.resize(count), received_.resize(count);
      std::vector<MPI_Request> sends(count);
      for (std::size_t i = 0; i < count; ++i) send(rounds[first + i], attached(sent_[i]), sends[i]);
      InFlight::posted(static_cast<int>(count));
      for (std::size_t i = 0; i < count; ++i) receive(rounds[first + i], attached(received_[i]));
      check_mpi(MPI_Waitall(static_cast<int>(count), sends.data(), MPI_STATUSES_IGNORE),
                "MPI_Waitall");
      InFlight::ended(static_cast<int>(count));
    }
  }

 private:
  int node_at(int distance) const { return ((column_.node + distance) % nodes_ + nodes_) % nodes_; }
  TempBuffer& attached(TempBuffer& buffer) {
    if (!buffer.capacity()) buffer.attach(memory_);
    return buffer;
  }

  // The blocks of a round: its direct one, then the forwarded ones.
  static int block_distance(const TunaRound& round, std::size_t i) {
    return i == 0 ? round.distance : round.forwarded[i - 1];
  }
  static std::size_t block_count(const TunaRound& round) { return 1 + round.forwarded.size(); }

  // A block still at its origin (its lower digits zero) is read from the node's sections;
  // one that has moved, from the store.
  bool original(int distance, int place) const { return distance % place == 0; }

  void send(const TunaRound& round, TempBuffer& buffer, MPI_Request& request) {
    const int place = round.distance / round.value;
    const std::size_t n = block_count(round);
    std::int64_t total = header_bytes(round);
    for (std::size_t i = 0; i < n; ++i) {
      const int d = block_distance(round, i);
      total += original(d, place) ? blocks_.bytes_for(node_at(d)) : stored_bytes_[d];
    }
    if (total > INT_MAX) fail(A2AV_ERR_MPI, "node_aware: a round's message exceeds 2 GiB");
    buffer.grow(total);
    auto* header = reinterpret_cast<std::int64_t*>(buffer.data());
    header[0] = total;
    std::byte* at = buffer.data() + header_bytes(round);
    for (std::size_t i = 0; i < n; ++i) {
      const int d = block_distance(round, i);
      if (original(d, place)) {
        header[1 + i] = blocks_.bytes_for(node_at(d));
        blocks_.write_for(node_at(d), at);
      } else {
        header[1 + i] = stored_bytes_[d];
        if (stored_bytes_[d] > 0) std::memcpy(at, store_[d].data(), stored_bytes_[d]);
      }
      at += header[1 + i];
    }
    check_mpi(MPI_Isend(buffer.data(), static_cast<int>(total), MPI_BYTE,
                        column_.members[node_at(round.distance)], tags::kNodeAwareColumn.tag(),
                        column_.comm, &request),
              "MPI_Isend");
  }

  // Delivers the blocks that have arrived (distance below radix^(digit+1)); stores the rest.
  void receive(const TunaRound& round, TempBuffer& buffer) {
    ProbedMessage message;
    for (int idle = 1; !ProbedMessage::test(column_.members[node_at(-round.distance)],
                                            tags::kNodeAwareColumn.tag(), column_.comm, message);
         ++idle)
      blocks_.waiting(idle);
    const std::int64_t bytes = message.bytes();
    buffer.grow(std::max<std::int64_t>(bytes, 8));
    message.receive(buffer.data());
    const auto* header = reinterpret_cast<const std::int64_t*>(buffer.data());
    const std::size_t n = block_count(round);
    if (bytes < header_bytes(round) || header[0] != bytes)
      fail(A2AV_ERR_MPI, "node_aware: a round's message has {} bytes where its header says {}",
           bytes, bytes >= 8 ? header[0] : -1);
    const std::int64_t span = std::int64_t{round.distance / round.value} * radix_;
    const std::byte* at = buffer.data() + header_bytes(round);
    for (std::size_t i = 0; i < n; ++i) {
      const int d = block_distance(round, i);
      const std::int64_t length = header[1 + i];
      if (length < 0 || at + length > buffer.data() + bytes)
        fail(A2AV_ERR_MPI, "node_aware: a corrupt round message");
      if (d < span) {
        blocks_.arrived(node_at(-d), at, length);
      } else {
        attached(store_[d]).grow(length);
        if (length > 0) std::memcpy(store_[d].data(), at, length);
        stored_bytes_[d] = length;
      }
      at += length;
    }
  }

  const Column& column_;
  int nodes_;
  int radix_;
  int batch_;  // rounds in flight
  ColumnBlocks& blocks_;
  MemoryTracker& memory_;
  std::vector<TempBuffer> store_;            // by distance in nodes
  std::vector<std::int64_t> stored_bytes_;   // length of the block stored at each distance
  std::vector<TempBuffer> sent_, received_;  // one each per round in flight
};

}  // namespace

void run_column_rounds(const Column& column, int radix, int in_flight, ColumnBlocks& blocks,
                       MemoryTracker& memory) {
  if (column.members.size() > 1) ColumnRun(column, radix, in_flight, blocks, memory).run();
}

std::int64_t column_rounds_memory_bound(int nodes, int q, int radix, std::int64_t block) {
  if (nodes <= 1) return 0;
  radix = tuna_radix(radix, nodes);
  const std::int64_t column_block = column_header_bytes(q) + q * block;
  std::size_t widest = 0;
  for (const TunaRound& round : cached_tuna_rounds(nodes, radix))
    widest = std::max(widest, 1 + round.forwarded.size());
  const std::int64_t message = 8 * (1 + static_cast<std::int64_t>(widest)) +
                               static_cast<std::int64_t>(widest) * column_block;
  return tuna_stored_blocks(nodes, radix) * column_block + 2 * (radix - 1) * message;
}

}  // namespace a2av
