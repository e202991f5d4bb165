// A rank's blocks and where each block's content must go ([Siegel10], Section 3:
// "a module for the management of blocks on a single process"). Slots 0..n-1 are the
// caller's blocks; slots n.. are extra blocks the algorithm reserved (one for the cyclic
// scheduler, one when no rank has any free space), tracked memory.
#pragma once

#include "core/memory.hpp"

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace a2av::redist {

class BlockStore {
 public:
  BlockStore(std::byte* blocks, std::int64_t n, std::int64_t block_bytes, MemoryTracker& memory);

  // Where each slot's content goes: rank < 0 for a free slot.
  std::vector<int> rank;
  std::vector<std::int64_t> index;

  std::int64_t slots() const { return static_cast<std::int64_t>(rank.size()); }
  std::int64_t user_slots() const { return n_; }
  std::int64_t block_bytes() const { return block_bytes_; }
  std::byte* slot(std::int64_t i) {
    return i < n_ ? user_ + i * block_bytes_ : extra_.data() + (i - n_) * block_bytes_;
  }
  ~BlockStore();
  BlockStore(const BlockStore&) = delete;
  BlockStore& operator=(const BlockStore&) = delete;

  void add_extra_slots(std::int64_t count);  // free slots; only before data moves
  std::int64_t free_count() const;
  std::vector<std::int64_t> free_slots(std::int64_t count) const;  // the first `count`

  // Sorts the slots by destination rank, free slots last, with the local algorithm
  // (minimal copies, one temporary block). Returns the copies made.
  std::int64_t sort_by_destination();
  // Moves every block to slot `index` (all must be destined here). Returns the copies.
  std::int64_t place_by_index();

  // A datatype addressing the given slots (absolute addresses: send or receive at
  // MPI_BOTTOM); consecutive slots merge into one piece. Free it with MPI_Type_free.
  MPI_Datatype slots_type(std::span<const std::int64_t> slots);

 private:
  std::int64_t apply(std::span<const std::int64_t> p);  // local redistribution of slots

  std::byte* user_;
  std::int64_t n_;
  std::int64_t block_bytes_;
  MemoryTracker& memory_;
  TempBuffer extra_;
  TempBuffer temporary_;  // the local algorithm's one block
  MPI_Datatype block_type_ = MPI_DATATYPE_NULL;
};

}  // namespace a2av::redist
