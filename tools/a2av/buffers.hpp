// One rank's send and receive buffers for one sweep point, filled so that every byte names
// its source, destination and position, and the two ways to exchange them: the MPI library's
// MPI_Alltoallv (the baseline and reference) and an a2av algorithm.
#pragma once

#include "datatype.hpp"
#include "patterns.hpp"

#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

namespace a2av::bench {

class Buffers {
 public:
  // `bytes` is the whole P x P matrix in bytes; blocks hold bytes / type.bytes elements.
  Buffers(const CountMatrix& bytes, int rank, const Datatype& type);

  int run_baseline();                // MPI_Alltoallv; returns its error code
  int run(const std::string& spec);  // A2AV_Alltoallv_with; returns its error code
  // Copies a buffer of the receive volume into the receive blocks, one memcpy, no exchange.
  void run_copy_bound();

  // Fills the receive buffer, gaps and guard bytes included, with a poison value.
  void poison();
  // The first receive byte that differs from the encoding, or -1. Checks the baseline.
  std::int64_t first_wrong_byte() const;
  // Keeps the current receive buffer as the reference that `first_difference` compares to.
  void keep_as_reference() { reference_ = recv_; }
  // The first receive byte, gaps and guard included, that differs from the reference, or -1.
  std::int64_t first_difference() const;

  std::int64_t max_block_bytes() const { return max_block_bytes_; }  // over all ranks
  std::int64_t send_total_bytes() const { return static_cast<std::int64_t>(send_.size()); }

 private:
  int rank_;
  Datatype type_;
  std::int64_t max_block_bytes_ = 0;
  std::vector<MPI_Count> sendcounts_, recvcounts_;  // elements
  std::vector<MPI_Aint> sdispls_, rdispls_;         // elements
  std::vector<int> sendcounts_int_, recvcounts_int_, sdispls_int_, rdispls_int_;
  std::vector<unsigned char> send_, recv_, reference_;
  std::vector<unsigned char> copy_source_;  // run_copy_bound's source, made at its first call
};

}  // namespace a2av::bench
