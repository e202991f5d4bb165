// The C++ API of the variable-size all-to-all exchange.
//
// Two forms:
//  - a2av::alltoallv(...) mirrors MPI_Alltoallv with 64-bit counts and displacements;
//  - a2av::exchange(...) takes a typed send span and per-destination counts and returns the
//    received elements; when the caller does not pass receive counts it computes them with
//    one extra MPI_Alltoall of the counts (one more latency-bound collective per call).
// Everything throws a2av::Error on failure; the send data is never modified.
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

// What a call did, for callers that ask.
struct CallInfo {
  std::string algorithm;  // the spec that ran, parameters resolved ("tuna:radix=4,batch=3")
  std::int64_t peak_temp_bytes{};  // peak temporary memory the call allocated, in bytes
  int max_in_flight{};             // most point-to-point requests in flight at once (core/p2p.hpp)
};

struct Options {
  std::string_view algorithm{};  // spec ("tuna:radix=4"); empty: A2AV_ALGORITHM, then auto
  bool validate = false;         // check counts agree across ranks first (also A2AV_VALIDATE=1)
  CallInfo* info = nullptr;      // filled on success when not null
};

// MPI_Alltoallv with 64-bit counts; sendbuf may be MPI_IN_PLACE.
void alltoallv(const void* sendbuf, std::span<const MPI_Count> sendcounts,
               std::span<const MPI_Aint> sdispls, MPI_Datatype sendtype, void* recvbuf,
               std::span<const MPI_Count> recvcounts, std::span<const MPI_Aint> rdispls,
               MPI_Datatype recvtype, MPI_Comm comm, const Options& options = {});

// One integer parameter of an algorithm (`key=value` in a spec).
struct ParameterDescription {
  std::string name;
  std::int64_t min{};
  std::int64_t max{};
  std::int64_t default_value{};
  std::string default_meaning;  // what the default stands for where resolved at run time
  std::string doc;
};

// One algorithm as the library describes it (`a2av algorithms` prints them all).
struct AlgorithmDescription {
  std::string family;  // "alltoallv", "in-place", "redistribution" or "sparse"
  std::string name;
  std::string summary;
  std::vector<ParameterDescription> parameters;
  std::string restrictions;    // where it runs as described; empty: everywhere
  std::string fallback;        // what runs where it does not
  std::string source;          // what it implements (docs/references.md)
  bool one_node_only = false;  // meant for the ranks of one node
  // Keeps at most A2AV_MAX_IN_FLIGHT (or in_flight=N) requests in flight per rank.
  bool bounds_in_flight = false;
  // Specs worth timing beside the default where tuning (a parameter whose best value
  // depends on the machine); `a2av tune --algorithms all` times them.
  std::vector<std::string> tuning_variants{};
};
// Every algorithm of every family, alltoallv first, in the order of the library's tables.
std::vector<AlgorithmDescription> algorithms();

// The documented bound on the temporary bytes `spec` allocates on one rank, for P ranks,
// Q ranks per node, the largest block of any rank and this rank's total send bytes, for
// contiguous datatypes and out-of-place calls (MPI_IN_PLACE with a contiguous type needs at
// most A2AV_INPLACE_CHUNK bytes instead; non-contiguous datatypes add a packed copy of their
// side). "auto" has no bound of its own.
std::int64_t temp_memory_bound(std::string_view spec, int comm_size, int ranks_per_node,
                               std::int64_t max_block_bytes, std::int64_t send_total_bytes);

// Receive counts for the given send counts (one MPI_Alltoall of the counts).
std::vector<MPI_Count> exchange_counts(std::span<const MPI_Count> sendcounts, MPI_Comm comm);

// Exclusive prefix sum: the displacements of blocks stored back to back.
std::vector<MPI_Aint> packed_displacements(std::span<const MPI_Count> counts);

// Sends sendcounts[j] consecutive elements of `send` to rank j; returns what arrives, in
// source order. recvcounts, when given, must be what every peer sends; otherwise it is
// computed (one extra MPI_Alltoall) and, if recvcounts_out is not null, stored there.
template <class T>
std::vector<T> exchange(std::span<const T> send, std::span<const MPI_Count> sendcounts,
                        MPI_Comm comm, const Options& options = {},
                        std::span<const MPI_Count> recvcounts = {},
                        std::vector<MPI_Count>* recvcounts_out = nullptr) {
  std::vector<MPI_Count> computed;
  if (recvcounts.empty()) {
    computed = exchange_counts(sendcounts, comm);
    recvcounts = computed;
  }
  std::int64_t total = 0;
  for (MPI_Count c : recvcounts) total += c;
  std::vector<T> recv(static_cast<std::size_t>(total < 0 ? 0 : total));
  const auto sdispls = packed_displacements(sendcounts);
  const auto rdispls = packed_displacements(recvcounts);
  alltoallv(send.data(), sendcounts, sdispls, mpi_type<T>(), recv.data(), recvcounts, rdispls,
            mpi_type<T>(), comm, options);
  if (recvcounts_out) recvcounts_out->assign(recvcounts.begin(), recvcounts.end());
  return recv;
}

}  // namespace a2av
