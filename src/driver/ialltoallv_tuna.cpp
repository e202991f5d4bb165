// The nonblocking exchange's TuNA schedule: TuNA's rounds (Fan et al. [Fan24],
// Sections III-A..III-C, Algorithm 1; alltoallv/tuna_schedule.hpp) as a state machine the
// caller's MPI_Test/MPI_Wait advance. Each round of a batch posts its direct block (send buffer
// to receive buffer, the size known to both sides) and a message of its forwarded blocks
// (their sizes first); the forwarded message, whose size only its sender knows, is found with
// MPI_Iprobe when it has come. Once every message of the batch is in, the forwarded blocks go
// to the receive buffer (arrived) or the store (more digits to travel), and the next batch
// starts. What the blocking engine (alltoallv/tuna.cpp) adds is left out: no error agreement
// in band (MPI_Ialltoallv checks locally), no large-block bypass (every block travels the
// rounds, so the store holds up to P - (K+1) blocks of any size). Data in non-contiguous
// datatypes is packed and unpacked (driver/nonblocking_blocks.hpp).
// Each operation has tags of its own, numbered in the order the ranks start them, so several
// can be outstanding on one communicator. A round takes up to four requests (its direct block
// both ways, its forwarded message both ways), so a batch holds at most a quarter of the bound
// on requests in flight in rounds (docs/design.md, "Messages in flight").
#include "driver/ialltoallv_tuna.hpp"

#include "alltoallv/tuna_schedule.hpp"
#include "core/check.hpp"
#include "core/tags.hpp"
#include "driver/ialltoallv.hpp"
#include "driver/nonblocking_blocks.hpp"
#include "driver/nonblocking_operation.hpp"

#include <algorithm>
#include <cstring>
#include <vector>

namespace a2av {
namespace {

// Operation n's direct blocks have tag kNonblockingTuna.at(2 * (n % kTagPairs)), its
// forwarded messages the next (core/tags.hpp; on CommContext::nonblocking).
constexpr std::uint64_t kTagPairs = tags::kNonblockingTuna.count / 2;

// Rounds per batch: as the spec asks, within a quarter of the bound.
int bounded_batch(int batch) {
  return std::max(1, std::min(batch, nonblocking_in_flight() / 4));
}

class TunaExchange : public StagedOperation {
 public:
  TunaExchange(const Call& call, const CheckedCall& checked, NonblockingSetup& setup,
               const TunaShape& shape, std::uint64_t sequence)
      : StagedOperation(setup, false),
        ctx_(setup.context()),
        radix_(shape.radix),
        rounds_(cached_tuna_rounds(ctx_.size, shape.radix)),
        batches_(tuna_batches(rounds_, bounded_batch(shape.batch))),
        direct_tag_(tags::kNonblockingTuna.at(2 * static_cast<int>(sequence % kTagPairs))),
        forwarded_tag_(tags::kNonblockingTuna.at(2 * static_cast<int>(sequence % kTagPairs) + 1)),
        send_(blocks_.send()),
        recv_(blocks_.recv()),
        store_(ctx_.size),
        staging_(static_cast<std::size_t>(bounded_batch(shape.batch))) {
    blocks_.assign(call, checked, ctx_.size);
    if (!blocks_.copy_own_block(ctx_.rank)) note(MPI_ERR_TRUNCATE);
    if (!batches_.empty()) pack_batch();
  }

  void begin() override {
    if (!batches_.empty()) post_batch();
  }

  bool advance() override {
    while (batch_ < batches_.size()) {
      if (!batch_arrived()) return false;
      finish_batch();
      if (++batch_ == batches_.size()) break;
      pack_batch();
      post_batch();
    }
    if (!finished_) blocks_.finish();
    finished_ = true;
    return true;
  }

  std::int64_t temp_bytes() const override {
    std::int64_t bytes = blocks_.temp_bytes();
    for (const auto& s : store_) bytes += static_cast<std::int64_t>(s.capacity());
    for (const Staging& s : staging_)
      bytes += static_cast<std::int64_t>(s.send.capacity() + s.recv.capacity());
    return bytes;
  }

 private:
  struct Staging {
    std::vector<std::byte> send, recv;
    bool received = false;  // the forwarded message has been found and its receive posted
  };

  int mod(int value) const { return ((value % ctx_.size) + ctx_.size) % ctx_.size; }

  // The block this rank holds at `distance` before a round of place `place`: still in the
  // send buffer while every lower digit is zero, else in the store.
  std::span<const std::byte> held(int distance, int place) const {
    if (distance % place == 0) {
      const int to = mod(ctx_.rank + distance);
      return {send_.at(to), static_cast<std::size_t>(send_.bytes[to])};
    }
    return store_[distance];
  }

  // The batch's forwarded messages, from what this rank holds before its rounds.
  void pack_batch() {
    const auto [first, last] = batches_[batch_];
    for (std::size_t r = first; r < last; ++r) {
      Staging& s = staging_[r - first];
      s.received = rounds_[r].forwarded.empty();
      if (!s.received) pack(rounds_[r], s.send);
    }
  }

  void post_batch() {
    const auto [first, last] = batches_[batch_];
    for (std::size_t r = first; r < last; ++r) {
      const TunaRound& round = rounds_[r];
      const int to = mod(ctx_.rank + round.distance), from = mod(ctx_.rank - round.distance);
      const int expected = static_cast<int>(recv_.bytes[from]);
      posted(MPI_Irecv(recv_.at(from), expected, MPI_BYTE, from, direct_tag_, ctx_.nonblocking,
                       &add(expected)),
             "MPI_Irecv");
      posted(MPI_Isend(send_.at(to), static_cast<int>(send_.bytes[to]), MPI_BYTE, to, direct_tag_,
                       ctx_.nonblocking, &add()),
             "MPI_Isend");
      if (round.forwarded.empty()) continue;
      const Staging& s = staging_[r - first];
      posted(MPI_Isend(s.send.data(), static_cast<int>(s.send.size()), MPI_BYTE, to, forwarded_tag_,
                       ctx_.nonblocking, &add()),
             "MPI_Isend");
    }
  }

  // Sizes of the forwarded blocks, then the blocks, in the round's order.
  void pack(const TunaRound& round, std::vector<std::byte>& out) const {
    const int place = round.distance / round.value;
    std::size_t total = round.forwarded.size() * sizeof(std::int64_t);
    for (int d : round.forwarded) total += held(d, place).size();
    out.resize(total);
    std::byte* at = out.data() + round.forwarded.size() * sizeof(std::int64_t);
    for (std::size_t i = 0; i < round.forwarded.size(); ++i) {
      const auto block = held(round.forwarded[i], place);
      const auto bytes = static_cast<std::int64_t>(block.size());
      std::memcpy(out.data() + i * sizeof bytes, &bytes, sizeof bytes);
      if (!block.empty()) std::memcpy(at, block.data(), block.size());
      at += block.size();
    }
  }

  // Finds the forwarded messages that have come, then tests every request of the batch.
  bool batch_arrived() {
    const auto [first, last] = batches_[batch_];
    for (std::size_t r = first; r < last; ++r) {
      Staging& s = staging_[r - first];
      if (s.received) continue;
      const int from = mod(ctx_.rank - rounds_[r].distance);
      int found = 0;
      MPI_Status status;
      posted(MPI_Iprobe(from, forwarded_tag_, ctx_.nonblocking, &found, &status), "MPI_Iprobe");
      if (!found) continue;
      int bytes = 0;
      MPI_Get_count(&status, MPI_BYTE, &bytes);
      s.recv.resize(static_cast<std::size_t>(bytes));
      posted(
          MPI_Irecv(s.recv.data(), bytes, MPI_BYTE, from, forwarded_tag_, ctx_.nonblocking, &add()),
          "MPI_Irecv");
      s.received = true;
    }
    for (std::size_t r = first; r < last; ++r)
      if (!staging_[r - first].received) return false;
    // A direct block shorter than the receive count is the sender's disagreement (a longer
    // one MPI reports itself).
    return all_tested(MPI_BYTE);
  }

  // Each forwarded block to the receive buffer (no digit left above this round's) or to the
  // store.
  void finish_batch() {
    const auto [first, last] = batches_[batch_];
    for (std::size_t r = first; r < last; ++r) {
      const TunaRound& round = rounds_[r];
      const std::vector<std::byte>& message = staging_[r - first].recv;
      const std::int64_t span = std::int64_t{round.distance / round.value} * radix_;
      std::size_t at = round.forwarded.size() * sizeof(std::int64_t);
      for (std::size_t i = 0; i < round.forwarded.size(); ++i) {
        const int d = round.forwarded[i];
        std::int64_t bytes = 0;
        std::memcpy(&bytes, message.data() + i * sizeof bytes, sizeof bytes);
        if (bytes < 0 || at + bytes > message.size()) {
          note(MPI_ERR_TRUNCATE);  // not a message of this schedule: nothing more to take
          break;
        }
        if (d < span) {
          const int source = mod(ctx_.rank - d);
          if (bytes != recv_.bytes[source])
            note(MPI_ERR_TRUNCATE);
          else if (bytes > 0)
            std::memcpy(recv_.at(source), message.data() + at, bytes);
        } else {
          store_[d].assign(message.begin() + at, message.begin() + at + bytes);
        }
        at += static_cast<std::size_t>(bytes);
      }
    }
    clear_requests();
  }

  const CommContext& ctx_;
  int radix_;
  std::vector<TunaRound> rounds_;
  std::vector<std::pair<std::size_t, std::size_t>> batches_;
  int direct_tag_;
  int forwarded_tag_;
  NonblockingBlocks blocks_;
  const ByteBlocks &send_, &recv_;
  std::vector<std::vector<std::byte>> store_;  // by distance
  std::vector<Staging> staging_;               // one per round of the batch in flight
  std::size_t batch_ = 0;
  bool finished_ = false;
};

}  // namespace

std::unique_ptr<StagedOperation> make_tuna_exchange(const Call& call, const CheckedCall& checked,
                                                    NonblockingSetup& setup, const TunaShape& shape,
                                                    std::uint64_t sequence) {
  return std::make_unique<TunaExchange>(call, checked, setup, shape, sequence);
}

}  // namespace a2av
