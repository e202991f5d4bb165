// What every alltoallv algorithm sees: the normalised exchange (one byte range per peer on
// each side) and its resolved parameters. One file per algorithm implements `run_<name>`.
#pragma once

#include "core/call.hpp"
#include "core/comm_context.hpp"
#include "core/memory.hpp"
#include "core/p2p.hpp"
#include "core/spec.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace a2av {

struct AlgorithmCall {
  const CommContext& ctx;
  const ByteBlocks& send;        // send.bytes[j]: bytes for rank j
  const ByteBlocks& recv;        // recv.bytes[j]: bytes expected from rank j
  std::int64_t max_block_bytes;  // agreed: the largest block of any rank
  MemoryTracker& memory;         // charge every temporary buffer here
  Mismatch& mismatch;            // count disagreements seen while data moved
  const Call& call;              // the user's arguments (for the vendor call)
  PeerErrors* in_band =
      nullptr;  // set when errors are agreed in band (AlgorithmDescriptor::announce)
  bool uniform_blocks = false;  // agreed: every block of every rank has max_block_bytes
};

using AlgorithmFn = void (*)(const AlgorithmCall&, const ParamValues&);

// One step of a direct schedule: the block received from `from` and the one sent to `to`.
struct DirectStep {
  int from;
  int to;
};
using DirectOrder = DirectStep (*)(int rank, int size, int step);
// spread_out's order: step i receives from rank-i and sends to rank+i.
DirectStep round_robin_step(int rank, int size, int step);
// Posts the direct schedule's steps [first, last) on `requests`. Where all their requests fit
// under the bound on requests in flight, every receive goes before any send (a receive
// posted before its data comes costs MPI least); beyond it, step by step, which lets the
// bound slide without deadlock when every rank follows the same order (core/p2p.hpp).
void post_direct_steps(const AlgorithmCall& ex, Requests& requests, int first, int last,
                       DirectOrder order);

// In-band error agreement (core/p2p.hpp, PeerErrors) for a rank that rejected its arguments
// while its peers run the algorithm. The message-based ones share announce_error.
using AnnounceFn = void (*)(const CommContext&, const ParamValues&, int code, PeerErrors&);
// announce_error for the direct algorithms, whose peers wait on one message each.
void announce_by_messages(const CommContext& ctx, const ParamValues&, int code, PeerErrors& peers);

// What a memory bound depends on, all agreed across ranks except send_total.
struct BoundInput {
  int size;
  int node_size;
  std::int64_t max_block;   // largest block of any rank, bytes
  std::int64_t send_total;  // this rank's send bytes
};
using MemoryBoundFn = std::int64_t (*)(const BoundInput&, const ParamValues&);
std::int64_t no_memory(const BoundInput&, const ParamValues&);

// The ranks and nodes a spec meets, for resolving its run-time defaults.
struct Topology {
  int size;
  int node_size;
  bool uniform_nodes;
  bool uniform_blocks = false;  // agreed: every block of every rank of one size
};

struct AlgorithmDescriptor;

// A parsed spec: the algorithm and its parameter values, defaults filled in.
struct Spec {
  const AlgorithmDescriptor* algorithm = nullptr;
  ParamValues params;
  bool validate = false;  // the common key validate=0|1
  int in_flight = 0;      // the common key in_flight=N; 0: A2AV_MAX_IN_FLIGHT
};

// How the cost model (tuning/cost_model.cpp) builds an algorithm's phases: the shape of its
// schedule, so that the model matches on the shape, never on a name.
enum class ModelShape {
  none,            // not predicted (auto)
  direct,          // one message per peer, peers in batches (CostModel::batch)
  shared_memory,   // one node: cells or messages
  node_aware,      // shared memory inside nodes, aggregated between them
  tuna,            // radix rounds over all ranks
  tuna_coalesced,  // TuNA inside nodes, one message per remote node
  tuna_staggered,  // TuNA inside nodes, one message per remote block
  bruck,           // TuNA's rounds with every block forwarded, a digit's rounds together
};
struct CostModel {
  ModelShape shape = ModelShape::none;
  const Param* batch = nullptr;  // direct: peers per phase from this parameter; null: all
  bool one_at_a_time = false;    // direct: one peer per phase
};

// Where the cost model looks for candidates (tuning/selector.cpp).
struct CandidateScope {
  int size;
  int ranks_per_node;
  bool machine_has_shared_memory;
};

// The schedule A2AV_Ialltoallv runs for an algorithm (driver/ialltoallv.cpp): its blocks
// directly, through a shared-memory segment (all ranks on one node; else directly), or in
// TuNA's rounds.
enum class NonblockingSchedule { direct, shared_memory, tuna };

// Which launches a test spec needs: any, one node, several (real or emulated) nodes.
enum class Nodes { any, one, several };
struct TestSpec {
  std::string spec;
  Nodes nodes = Nodes::any;
};

// Everything the library knows about one alltoallv algorithm, declared once, in the
// algorithm's own file (as MPICH's coll_algorithms.txt does): the registry, describe(), the
// cost model, the selector's candidates, `a2av algorithms`, the README's table and the tests'
// spec lists follow from it.
struct AlgorithmDescriptor {
  std::string_view name{};
  std::string_view summary{};
  std::vector<const Param*> params{};
  std::string_view restrictions{};  // where it runs as described; "" everywhere
  std::string_view fallback{};      // what runs where it does not
  std::string_view source{};        // what it implements (docs/references.md)
  AlgorithmFn run = nullptr;        // null for auto, which is resolved before running
  MemoryBoundFn memory_bound = no_memory;
  // How a rank that rejected its arguments takes part while its peers run, so that errors
  // are agreed in band (docs/errors.md); null: agreed before (vendor: not at all, as MPI).
  AnnounceFn announce = nullptr;
  CostModel model{};
  // The spec as it runs on `topology`: run-time defaults (radix=0, ...) resolved, and the
  // algorithm replaced by its fallback where it falls back. Null: nothing to resolve.
  void (*resolve)(Spec& spec, const Topology& topology) = nullptr;
  NonblockingSchedule nonblocking = NonblockingSchedule::direct;
  // Specs of it that the cost model compares; null: not a candidate.
  void (*candidates)(const CandidateScope&, std::vector<std::string>& out) = nullptr;
  std::vector<TestSpec> test_specs{};  // representative specs the tests run on every launch
  // Specs `a2av tune` (and `bench --algorithms all`) time beside the default: a parameter
  // whose best value is the machine's, so that the tuning table records it, not a guess.
  std::vector<std::string> tuning_variants{};
  bool intercommunicators = false;  // also on intercommunicators
  bool one_node_only = false;       // meant for ranks of one node (elsewhere: the fallback)
  // Needs the agreed block statistics (AlgorithmCall::max_block_bytes, uniform_blocks) even
  // where errors need no agreement (A2AV_AGREE_ERRORS=0).
  bool needs_agreed_blocks = false;
  // Keeps at most InFlight::limit() point-to-point requests in flight per rank
  // (A2AV_MAX_IN_FLIGHT, in_flight=N; core/p2p.hpp); false: as many as its schedule posts.
  bool bounds_in_flight = false;

  bool agrees_in_band() const { return announce != nullptr; }
};

// The largest block shared_memory passes through a cell at P = size (A2AV_SHM_BYTES on this
// rank); -1 where it has no cells.
std::int64_t shared_memory_capacity(int size);
// The blocks shared_memory reads straight from the sender's buffer where the kernel allows:
// those above `params`' single_copy_above (a shared_memory spec's), else above its default.
std::int64_t shared_memory_single_copy_above(const ParamValues* params);

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

// A large block's marker where its sender may defer it (tuna, node_aware): the receiver
// learns from it how long the block is and when it comes, during the algorithm's main phase
// or after it (deferred, when the sender's large blocks exceed their share of the bound on
// requests in flight), and follows the sender's choice even when their counts disagree, so
// that no rank waits for a block its sender sends only later.
struct LargeBlock {
  std::int64_t bytes;
  bool deferred;
};
constexpr std::int64_t deferrable_marker(LargeBlock block) {
  return large_marker(2 * block.bytes + (block.deferred ? 1 : 0));
}
constexpr LargeBlock unmark(std::int64_t marker) {
  const std::int64_t word = marked_bytes(marker);
  return {word / 2, word % 2 != 0};
}
static_assert(unmark(deferrable_marker({12345, true})).bytes == 12345);
static_assert(unmark(deferrable_marker({12345, true})).deferred);

// Copies this rank's own block from the send to the receive side.
void copy_self_block(const AlgorithmCall& ex);

}  // namespace a2av
