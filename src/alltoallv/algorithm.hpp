// What every alltoallv algorithm sees: the normalised exchange (one byte range per peer on
// each side) and its resolved parameters. One file per algorithm implements `run_<name>`.
#pragma once

#include "core/call.hpp"
#include "core/comm_context.hpp"
#include "core/memory.hpp"
#include "core/p2p.hpp"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace a2av {

struct Exchange {
  const CommContext& ctx;
  const ByteBlocks& send;         // send.bytes[j]: bytes for rank j
  const ByteBlocks& recv;         // recv.bytes[j]: bytes expected from rank j
  std::int64_t max_block_bytes;   // agreed: the largest block of any rank
  MemoryTracker& memory;          // charge every temporary buffer here
  Mismatch& mismatch;             // count disagreements seen while data moved
  const Call& call;               // the user's arguments (for the vendor call)
  PeerErrors* in_band = nullptr;  // set when errors are agreed in band (AlgorithmInfo::announce)
};

// Resolved parameters of one algorithm, by key.
using Params = std::map<std::string, std::int64_t, std::less<>>;

using AlgorithmFn = void (*)(const Exchange&, const Params&);

void run_vendor(const Exchange&, const Params&);
void run_linear(const Exchange&, const Params&);
void run_spread_out(const Exchange&, const Params&);
void run_scattered(const Exchange&, const Params&);
void run_pairwise(const Exchange&, const Params&);
void run_shared_memory(const Exchange&, const Params&);
void run_node_aware(const Exchange&, const Params&);
void run_tuna(const Exchange&, const Params&);
void run_tuna_coalesced(const Exchange&, const Params&);
void run_tuna_staggered(const Exchange&, const Params&);

// In-band error agreement (core/p2p.hpp, PeerErrors) for a rank that rejected its arguments
// while its peers run the algorithm. The message-based ones share announce_error.
using AnnounceFn = void (*)(const CommContext&, const Params&, int code, PeerErrors&);
void announce_error_shared_memory(const CommContext& ctx, const Params&, int code,
                                  PeerErrors& peers);
void announce_error_node_aware(const CommContext& ctx, const Params& params, int code,
                               PeerErrors& peers);

// The largest block shared_memory passes through a cell at P = size (A2AV_SHM_BYTES on this
// rank); -1 where it has no cells.
std::int64_t shared_memory_capacity(int size);

// node_aware's default direct_above: blocks up to 8 KiB aggregated (docs/algorithms.md).
inline constexpr std::int64_t kNodeAwareDirectAbove = 8192;
// The largest block node_aware aggregates at P = size: direct_above, at most 1 MiB / P (its
// staging budget per rank).
std::int64_t node_aware_threshold(std::int64_t direct_above, int size);
// The local rank of `node` (of `ranks` ranks) that exchanges with node `remote` of `nodes`:
// remote nodes dealt round-robin, starting after `node`, over its first `agents` ranks (0: all).
int node_aware_agent(int node, int remote, int nodes, int ranks, std::int64_t agents);

// The vendor MPI_Alltoallv; the preload library points it at PMPI_Alltoallv.
using VendorAlltoallv = int (*)(const void*, const int*, const int*, MPI_Datatype, void*,
                                const int*, const int*, MPI_Datatype, MPI_Comm);
void set_vendor_alltoallv(VendorAlltoallv fn);
// The call's counts and displacements as the int arrays of MPI_Alltoallv (sendcounts,
// sdispls, recvcounts, rdispls, `size` each, in `out`); false where one exceeds int.
bool vendor_int_arrays(const Call& call, int size, std::vector<int>& out);
// The vendor MPI_Alltoallv on the arrays vendor_int_arrays made.
void run_vendor_on(const Call& call, const std::vector<int>& ints, MPI_Comm comm);

// A block that travels in a message of its own is announced, where its size would stand, by
// the marker -(bytes + 1) (tuna, its hierarchical variants, node_aware).
constexpr std::int64_t large_marker(std::int64_t bytes) {
  return -(bytes + 1);
}
constexpr std::int64_t marked_bytes(std::int64_t marker) {
  return -marker - 1;
}

// Copies this rank's own block from the send to the receive side.
void copy_self_block(const Exchange& ex);

}  // namespace a2av
