// The symmetric MPI_IN_PLACE exchange with a bounded buffer: rank i's block for j and j's
// block for i occupy the same place, so each pair swaps its blocks chunk by chunk through a
// staging buffer of chunk_bytes in all. Pairs follow a round-robin tournament (circle
// method: every round pairs each rank with one other), up to `slots` rounds in flight, each
// advancing on its own as its chunks arrive, so all pairs progress at once rather than
// two peers per step. Rounds: P-1 (P odd: P, one rank idle per round); bytes: each block
// once each way; extra memory: chunk_bytes (default 1 MiB, A2AV_INPLACE_CHUNK).
// Source: Zhuang et al. [Zhuang09], Section 1 (MPI_IN_PLACE covers only the
// symmetric case); chunked swaps as MPI_Sendrecv_replace, with pairs in parallel.
#include "alltoallv/inplace_symmetric.hpp"

#include "core/check.hpp"
#include "core/environment.hpp"
#include "core/tags.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace a2av {
namespace {

constexpr int kMaxSlots = 8;
constexpr std::int64_t kMinSlotBytes = 64;

// Partner of `rank` in round r of a tournament among n (even) players; n-1 is the pivot.
int partner(int rank, int round, int n) {
  const int m = n - 1;
  if (rank == m) return static_cast<int>((static_cast<std::int64_t>(round) * (n / 2)) % m);
  const int other = ((round - rank) % m + m) % m;
  return other == rank ? m : other;
}

class SymmetricSwap {
 public:
  SymmetricSwap(const CommContext& ctx, const ByteBlocks& blocks, std::int64_t chunk_bytes,
                MemoryTracker& memory, Mismatch& mismatch)
      : ctx_(ctx), blocks_(blocks), mismatch_(mismatch), players_(ctx.size + ctx.size % 2) {
    const int rounds = players_ - 1;
    slots_ = static_cast<int>(std::clamp<std::int64_t>(chunk_bytes / kMinSlotBytes, 1,
                                                       std::min(kMaxSlots, std::max(1, rounds))));
    // No slot larger than the largest block: small exchanges stage little.
    const std::int64_t largest = *std::max_element(blocks.bytes.begin(), blocks.bytes.end());
    slot_bytes_ =
        std::clamp<std::int64_t>(chunk_bytes / slots_, 1, std::max<std::int64_t>(1, largest));
    staging_ = TempBuffer(memory, slot_bytes_ * slots_);
    active_.resize(slots_);
    requests_.assign(2 * slots_, MPI_REQUEST_NULL);
  }

  void run() {
    for (int s = 0; s < slots_; ++s) start_next_round(s);
    for (;;) {
      int index = MPI_UNDEFINED;
      MPI_Status status;
      check_mpi(MPI_Waitany(2 * slots_, requests_.data(), &index, &status), "MPI_Waitany");
      if (index == MPI_UNDEFINED) return;  // nothing left in flight
      const int s = index / 2;
      if (index % 2 == 0) check_received(s, status);
      if (requests_[2 * s] == MPI_REQUEST_NULL && requests_[2 * s + 1] == MPI_REQUEST_NULL)
        finish_chunk(s);
    }
  }

 private:
  struct Transfer {
    int round = -1;
    int peer = -1;
    std::int64_t done = 0;   // bytes of the block already swapped
    std::int64_t chunk = 0;  // bytes in flight
  };

  // Gives slot s the next round that has a partner and something to swap.
  void start_next_round(int s) {
    while (next_round_ < players_ - 1) {
      const int round = next_round_++;
      const int peer = partner(ctx_.rank, round, players_);
      if (peer >= ctx_.size || blocks_.bytes[peer] == 0) continue;
      active_[s] = {round, peer, 0, 0};
      return post_chunk(s);
    }
    active_[s] = {};
  }

  void post_chunk(int s) {
    Transfer& t = active_[s];
    t.chunk = std::min(slot_bytes_, blocks_.bytes[t.peer] - t.done);
    std::byte* mine = blocks_.at(t.peer) + t.done;
    const int tag = tags::kInplaceSwap.cycle(t.round);  // both partners meet in the same round
    check_mpi(MPI_Irecv(staging(s), static_cast<int>(t.chunk), MPI_BYTE, t.peer, tag, ctx_.comm,
                        &requests_[2 * s]),
              "MPI_Irecv");
    check_mpi(MPI_Isend(mine, static_cast<int>(t.chunk), MPI_BYTE, t.peer, tag, ctx_.comm,
                        &requests_[2 * s + 1]),
              "MPI_Isend");
  }

  void check_received(int s, const MPI_Status& status) {
    int got = 0;
    MPI_Get_count(&status, MPI_BYTE, &got);
    if (got != active_[s].chunk)
      mismatch_.note(fmt::format("rank {} swapped {} bytes where this rank's block has {}",
                                 active_[s].peer, got, active_[s].chunk));
  }

  // Both halves of a chunk are done: the received bytes replace the sent ones.
  void finish_chunk(int s) {
    Transfer& t = active_[s];
    std::memcpy(blocks_.at(t.peer) + t.done, staging(s), t.chunk);
    t.done += t.chunk;
    if (t.done < blocks_.bytes[t.peer]) return post_chunk(s);
    start_next_round(s);
  }

  std::byte* staging(int s) { return staging_.data() + s * slot_bytes_; }

  const CommContext& ctx_;
  const ByteBlocks& blocks_;
  Mismatch& mismatch_;
  int players_;  // P rounded up to even
  int slots_ = 1;
  std::int64_t slot_bytes_ = 1;
  TempBuffer staging_;
  std::vector<Transfer> active_;
  std::vector<MPI_Request> requests_;  // per slot: receive, send
  int next_round_ = 0;
};

}  // namespace

std::int64_t inplace_chunk_bytes() {
  static const std::int64_t bytes = *env_integer("A2AV_INPLACE_CHUNK");
  return bytes;
}

void swap_symmetric_in_place(const CommContext& ctx, const ByteBlocks& blocks,
                             std::int64_t chunk_bytes, MemoryTracker& memory, Mismatch& mismatch) {
  if (ctx.size == 1) return;
  SymmetricSwap(ctx, blocks, chunk_bytes, memory, mismatch).run();
}

}  // namespace a2av
