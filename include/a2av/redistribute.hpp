// Block redistribution with limited memory (C++ form of A2AV_Redist_*), after MADRE
// ([Siegel10]). A rank owns nblocks blocks of block_bytes each, in one array; a run
// moves the content of block i to block dest_index[i] of rank dest_rank[i] (dest_rank[i] < 0:
// block i is free), in place: the extra memory is O(P) counts, O(nblocks) addresses and one
// or two blocks, never a second copy of the data. Blocks that nothing moves into keep
// unspecified contents.
//
// Algorithms: "parking" (Pinar-Hendrickson phases with parking), "cyclic" (MADRE's cyclic
// scheduler; "cyclic:dictionary=1" streams edges in the paper's ascending order), "auto"
// (the default, also ""). Memory bounds and costs: docs/redistribute.md. Throws a2av::Error;
// a map that is not injective or addresses a block that does not exist is A2AV_ERR_ARG on
// every rank before anything moves.
#pragma once

#include <a2av/error.hpp>

#include <mpi.h>

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

namespace a2av {

struct RedistStats {
  std::string algorithm;             // what ran
  std::int64_t blocks_moved = 0;     // blocks this rank sent
  std::int64_t local_copies = 0;     // block copies within this rank
  std::int64_t steps = 0;            // parking: phases; cyclic: actions this rank executed
  std::int64_t peak_temp_bytes = 0;  // extra memory at peak, this rank
  // cyclic, on rank 0: blocks on the schedule's critical path (each cycle or shift waits
  // for its ranks' earlier ones, then moves its quantity); with every rank moving in
  // parallel it equals the largest per-rank volume
  std::int64_t schedule_depth = 0;
};

class Redistributor {
 public:
  // Collective over comm.
  Redistributor(void* blocks, MPI_Count nblocks, MPI_Count block_bytes, MPI_Comm comm,
                std::string_view algorithm = {});
  ~Redistributor();
  Redistributor(const Redistributor&) = delete;
  Redistributor& operator=(const Redistributor&) = delete;

  // Collective: performs one redistribution of the blocks' current contents.
  RedistStats run(std::span<const int> dest_rank, std::span<const MPI_Count> dest_index);

  struct State;

 private:
  std::unique_ptr<State> state_;
};

}  // namespace a2av
