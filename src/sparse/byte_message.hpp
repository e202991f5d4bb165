// A message of any number of bytes as (datatype, count) with an int count: MPI_BYTE up to
// INT_MAX bytes, beyond that a struct of 1 GiB chunks and the rest (matching any sequence of
// as many MPI_BYTEs on the other side).
#pragma once

#include "core/check.hpp"

#include <mpi.h>

#include <climits>
#include <cstdint>

namespace a2av {

class ByteMessage {
 public:
  explicit ByteMessage(std::int64_t bytes) {
    if (bytes <= INT_MAX) {
      count_ = static_cast<int>(bytes);
      return;
    }
    constexpr std::int64_t kChunk = std::int64_t{1} << 30;
    MPI_Datatype chunk, chunks, rest;
    check_mpi(MPI_Type_contiguous(static_cast<int>(kChunk), MPI_BYTE, &chunk),
              "MPI_Type_contiguous");
    check_mpi(MPI_Type_contiguous(static_cast<int>(bytes / kChunk), chunk, &chunks),
              "MPI_Type_contiguous");
    check_mpi(MPI_Type_contiguous(static_cast<int>(bytes % kChunk), MPI_BYTE, &rest),
              "MPI_Type_contiguous");
    int lengths[] = {1, 1};
    MPI_Aint displacements[] = {0, static_cast<MPI_Aint>(bytes / kChunk * kChunk)};
    MPI_Datatype types[] = {chunks, rest};
    check_mpi(MPI_Type_create_struct(2, lengths, displacements, types, &type_),
              "MPI_Type_create_struct");
    check_mpi(MPI_Type_commit(&type_), "MPI_Type_commit");
    MPI_Type_free(&chunk), MPI_Type_free(&chunks), MPI_Type_free(&rest);
    count_ = 1;
    owned_ = true;
  }
  ByteMessage(const ByteMessage&) = delete;
  ByteMessage& operator=(const ByteMessage&) = delete;
  ~ByteMessage() {
    if (owned_) MPI_Type_free(&type_);
  }

  MPI_Datatype type() const { return type_; }
  int count() const { return count_; }

 private:
  MPI_Datatype type_ = MPI_BYTE;
  int count_ = 0;
  bool owned_ = false;
};

// The bytes of a probed message: MPI_Get_count where it fits an int (SimGrid's SMPI has no
// MPI_Get_elements_x).
inline std::int64_t message_bytes(MPI_Status status) {  // a copy: SMPI takes no const
  int bytes = 0;
  check_mpi(MPI_Get_count(&status, MPI_BYTE, &bytes), "MPI_Get_count");
  if (bytes != MPI_UNDEFINED) return bytes;
  MPI_Count large = 0;
  check_mpi(MPI_Get_elements_x(&status, MPI_BYTE, &large), "MPI_Get_elements_x");
  return large;
}

}  // namespace a2av
