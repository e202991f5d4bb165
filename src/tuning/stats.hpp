// What auto selection may look at: values every rank agrees on after the one allreduce
// each call makes, so every rank chooses the same algorithm.
#pragma once

#include <cstdint>

namespace a2av {

struct ExchangeStats {
  int size = 1;  // P
  // Ranks per node (MPI_COMM_TYPE_SHARED, or emulated); 0 where nodes differ in size or are
  // not numbered contiguously, so that every rank sees the same value.
  int ranks_per_node = 1;
  std::int64_t max_block = 0;  // largest block of any rank, bytes
  double mean_block = 0;       // mean over all P*P blocks, bytes
  double sparsity = 0;         // fraction of the P*P blocks that are empty
};

}  // namespace a2av
