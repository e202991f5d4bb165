// The memory-bounded in-place exchange (C++ form of A2AV_Exchange_inplace).
//
// On entry buf holds this rank's blocks for ranks 0..P-1 back to back (sendcounts[j]
// elements for rank j); on return it holds what every rank sent this rank, in source order,
// and the function returns how many elements came from each rank. No second buffer: the
// extra memory is one chunk buffer (chunk_bytes, default 1 MiB) and O(P) metadata. The
// buffer must hold C = max over ranks of max(send total, receive total) elements on every
// rank; otherwise every rank throws A2AV_ERR_CAPACITY and the buffer is unchanged.
//
// Algorithms (docs/memory.md): "inplace_bitonic", "inplace_pairwise", "inplace_auto" (the
// default, also for "" and "auto"); each takes chunk_bytes=N ("inplace_bitonic:chunk_bytes=65536").
// The type must be contiguous (no gaps between or inside elements). Throws a2av::Error.
#pragma once

#include <a2av/error.hpp>
#include <a2av/mpi_type.hpp>

#include <mpi.h>

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace a2av {

struct InplaceInfo {
  std::string algorithm;             // what ran, chunk_bytes resolved
  std::int64_t peak_temp_bytes = 0;  // chunk buffer + metadata, at peak
  std::int64_t length = 0;           // C, elements every rank held during the exchange
  std::int64_t peak_runs = 0;        // longest run list this rank held or received
  // inplace_auto only: the replayed critical paths {bitonic, pairwise}, in bytes
  std::vector<double> auto_estimates;
};

std::vector<MPI_Count> exchange_inplace(void* buf, MPI_Count capacity,
                                        std::span<const MPI_Count> sendcounts, MPI_Datatype type,
                                        MPI_Comm comm, std::string_view algorithm = {},
                                        InplaceInfo* info = nullptr);

// Typed form: the whole span is the capacity.
template <class T>
std::vector<MPI_Count> exchange_inplace(std::span<T> buf, std::span<const MPI_Count> sendcounts,
                                        MPI_Comm comm, std::string_view algorithm = {},
                                        InplaceInfo* info = nullptr) {
  return exchange_inplace(buf.data(), static_cast<MPI_Count>(buf.size()), sendcounts, mpi_type<T>(),
                          comm, algorithm, info);
}

}  // namespace a2av
