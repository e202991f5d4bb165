// Every MPI tag a2av uses, allocated in one place. A protocol names its tags here and nowhere
// else; the checks at the end fail the build when two ranges on one communicator overlap or a
// tag exceeds 32767, the smallest MPI_TAG_UB the standard allows (MPI-4.1, Section 9.1.2).
//
// Tag spaces. Tags are matched per communicator, so each range belongs to a space:
//  - context: CommContext::comm, the private duplicate of the user's communicator, and the
//    communicators split from it (a node's, node_comm(); node_aware's columns run on comm
//    itself). Every
//    blocking exchange, the neighbourhood collectives, the sparse exchange, redistribution,
//    routing and the collectives talk here, one call after another; a rank may already send
//    the next call's messages while a peer still receives the last call's.
//  - nonblocking: CommContext::nonblocking, the nonblocking exchanges alone. Their large
//    ranges overlap context's (node_aware's aggregates, hierarchical TuNA's blocks): there is
//    no room for all of them below 32767, and those never travel on this communicator.
//  - persistent_done: the preload library's done_comm(), a duplicate of MPI_COMM_SELF that
//    carries nothing else.
// Ranges in one space never overlap; the small ones are also kept apart across spaces.
//
// Computed tags go through a range: at(i) for an index the protocol bounds (asserted in debug
// builds), cycle(i) for a sequence number or an index that may exceed the range, which wraps.
// Where a protocol uses cycle() the comment says why a repeated tag cannot be mismatched.
// Peers of the same library version use the same plan, so tags may be renumbered freely.
#pragma once

#include <array>
#include <cassert>
#include <cstdint>

namespace a2av::tags {

enum class Space { context, nonblocking, persistent_done };

struct TagRange {
  Space space;
  int first;
  int count;

  constexpr int end() const { return first + count; }  // one past the last tag
  constexpr bool contains(int tag) const { return tag >= first && tag < end(); }
  // The index-th tag of the range: 0 <= index < count.
  constexpr int at(std::int64_t index) const {
    assert(index >= 0 && index < count);
    return first + static_cast<int>(index);
  }
  // The tag for `sequence`, wrapping around the range.
  constexpr int cycle(std::uint64_t sequence) const {
    return first + static_cast<int>(sequence % static_cast<std::uint64_t>(count));
  }
  // Where `tag` lies in the range (tag in the range).
  constexpr int index_of(int tag) const {
    assert(contains(tag));
    return tag - first;
  }
  // The tag of a one-tag range; a compile error for a longer one.
  consteval int tag() const {
    if (count != 1) throw "tag() of a range of several tags: use at() or cycle()";
    return first;
  }
};

// The smallest MPI_TAG_UB an MPI library may have.
inline constexpr int kTagUpperBound = 32767;

// --- context: CommContext::comm and the communicators split from it --------------------------

// The last (or only) piece of a block sent directly, by Requests (core/p2p.hpp): linear,
// pairwise, scattered, spread_out, shared_memory's blocks too large for a cell, tuna's direct
// blocks (also on a node's communicator in tuna_coalesced/tuna_staggered's phase 1).
// Under in-band agreement a rank that failed drains each peer's pieces with MPI_ANY_TAG up
// to the first that is not kMorePieces.
inline constexpr TagRange kDirectBlock{Space::context, 0, 1};
// core/p2p.cpp: a piece with more to follow, under in-band agreement (Requests(PeerErrors*)).
inline constexpr TagRange kMorePieces{Space::context, 1, 1};
// alltoallv/tuna.cpp: a round's packed message of forwarded blocks (on the exchange's group:
// comm, or a node's communicator in hierarchical TuNA's phase 1).
inline constexpr TagRange kTunaForwarded{Space::context, 2, 1};
// alltoallv/tuna.cpp: a block above direct_above, in a message of its own.
inline constexpr TagRange kTunaLarge{Space::context, 3, 1};
// inplace/sequence.cpp: a rank's runs (what it holds where), sent to its partner.
inline constexpr TagRange kInplaceRuns{Space::context, 4, 1};
// inplace/sequence.cpp: the pieces a pair swaps.
inline constexpr TagRange kInplaceData{Space::context, 5, 1};
// inplace/auto.cpp: the pair's clocks and counts by which inplace_auto decides.
inline constexpr TagRange kInplaceClock{Space::context, 6, 1};
// alltoallv/bruck.cpp: a round's packed blocks (one message per peer and digit place, in
// order).
inline constexpr TagRange kBruck{Space::context, 8, 1};
// redistribute/transfer.cpp: a transfer's data, and the addresses that describe it.
inline constexpr TagRange kRedistributeData{Space::context, 10, 1};
inline constexpr TagRange kRedistributeAddress{Space::context, 11, 1};
// redistribute/parking.cpp: a rank's row of the parking plan, to and from the root.
inline constexpr TagRange kRedistributePark{Space::context, 12, 1};
// redistribute/cyclic.cpp: cycle edges and assignments, to and from the root.
inline constexpr TagRange kRedistributeControl{Space::context, 13, 1};
// route/bitonic_route.cpp: the records a compare-exchange pair swaps.
inline constexpr TagRange kRoute{Space::context, 14, 1};
// core/p2p.cpp: in-band agreement, an empty message whose tag is at(code): the error code of
// a rank that rejected its arguments (A2AV_ERR_*, below count).
inline constexpr TagRange kPeerErrors{Space::context, 16, 8};
// alltoallv/node_aware.cpp: direct blocks, at(parity of the exchange): an early receive that
// its header withdraws must not match the sender's block of the next exchange.
inline constexpr TagRange kNodeAwareDirect{Space::context, 30, 2};
// alltoallv/node_aware_rounds.cpp: a round's message between members of a column (node_aware
// with radix); one per sender and exchange, kept in order by MPI.
inline constexpr TagRange kNodeAwareColumn{Space::context, 33, 1};
// alltoallv/node_aware.cpp: large blocks deferred until after the aggregated exchange, apart
// from kNodeAwareDirect so that no early receive matches one. A rank leaves that phase only
// once its sends are matched, so the next exchange's cannot meet this one's receives.
inline constexpr TagRange kNodeAwareDeferred{Space::context, 34, 1};
// driver/neighbor_alltoallv.cpp: graph and distributed graph topologies' blocks, matched in
// list order.
inline constexpr TagRange kNeighborGraph{Space::context, 41, 1};
// sparse/driver.cpp (next_sparse_tag): a sparse round's messages, cycle(round): rounds
// alternate, so a rank that starts the next round cannot have its messages taken by a rank
// still probing for the previous one (with MPI_ANY_SOURCE).
inline constexpr TagRange kSparseMessages{Space::context, 50, 2};
// sparse/nbx.cpp: NBX's consensus of a round, at(kSparseMessages.index_of(its tag)).
inline constexpr TagRange kSparseConsensus{Space::context, 52, 2};
// alltoallv/tuna_hierarchical.cpp, phase 2 (between the nodes): a staggered pair's header, a
// large block's own message, and the entries that follow a coalesced pair's front.
inline constexpr TagRange kHierarchicalHeader{Space::context, 56, 1};
inline constexpr TagRange kHierarchicalLarge{Space::context, 57, 1};
inline constexpr TagRange kHierarchicalEntries{Space::context, 58, 1};
// driver/neighbor_alltoallv.cpp: Cartesian topologies, cycle(index of the receiving block):
// each direction its own tag, so that a neighbour met twice (periodic dimensions of one or
// two ranks) needs no message order. Beyond 32 dimensions tags repeat; block k + count is
// sent after block k and received after it, so MPI's order still matches them (count even).
inline constexpr TagRange kNeighborCartesian{Space::context, 64, 64};
// alltoallv/inplace_symmetric.cpp: a pair's chunks, cycle(round of the tournament). A pair
// meets in one round of an exchange, the same round in every exchange, so a repeated tag
// is never between different pairs' messages of one sender.
inline constexpr TagRange kInplaceSwap{Space::context, 256, 256};
// alltoallv/tuna_hierarchical.cpp, phase 2: block s of a node pair on its own, cycle(s);
// the coalesced front (header and maybe the blocks) has block 0's tag. One sender sends
// one receiver its blocks in order of s, which it receives in that order, so beyond count
// ranks per node a repeated tag still matches the right block.
inline constexpr TagRange kHierarchicalBlocks{Space::context, 512, 512};
// alltoallv/node_aware.cpp: a node's aggregated message for node M, received by M's agent
// from any source: at(2 * sending node + parity). At most count / 2 nodes (beyond, node_aware
// runs spread_out).
inline constexpr TagRange kNodeAwareAggregates{Space::context, 1024, 30976};
// collectives/common.cpp: collective k (a2av::coll::Collective), at(k).
inline constexpr TagRange kCollectives{Space::context, 32000, 16};

// --- nonblocking: CommContext::nonblocking ---------------------------------------------------

// driver/ialltoallv.cpp: operation n's blocks in the direct schedule, cycle(n): operations
// started in the same order on every rank keep apart while up to count are in flight.
inline constexpr TagRange kNonblockingDirect{Space::nonblocking, 16384, 4096};
// driver/ialltoallv_tuna.cpp: operation n's direct blocks at(2 * (n % (count / 2))), its
// forwarded messages at the next tag: operations started in the same order on every rank
// keep apart while up to count / 2 are in flight.
inline constexpr TagRange kNonblockingTuna{Space::nonblocking, 1000, 8192};
// driver/ialltoallv_shared_memory.cpp: operation n's blocks too large for a cell, cycle(n).
inline constexpr TagRange kNonblockingSharedMemory{Space::nonblocking, 10000, 4096};

// --- persistent_done: the preload's done_comm() ------------------------------------------

// preload/persistent.cpp: the message that completes a persistent request, at(its index among
// the live requests): each its own, since their exchanges may complete in another order than
// they started.
inline constexpr TagRange kPersistentDone{Space::persistent_done, 0, kTagUpperBound + 1};

// Every range above: a new range must be added here to be checked.
inline constexpr std::array kPlan{
    kDirectBlock,
    kMorePieces,
    kTunaForwarded,
    kTunaLarge,
    kInplaceRuns,
    kInplaceData,
    kInplaceClock,
    kPersistentDone,
    kBruck,
    kRedistributeData,
    kRedistributeAddress,
    kRedistributePark,
    kRedistributeControl,
    kRoute,
    kPeerErrors,
    kNodeAwareDirect,
    kNodeAwareColumn,
    kNodeAwareDeferred,
    kNeighborGraph,
    kSparseMessages,
    kSparseConsensus,
    kHierarchicalHeader,
    kHierarchicalLarge,
    kHierarchicalEntries,
    kNeighborCartesian,
    kInplaceSwap,
    kHierarchicalBlocks,
    kNodeAwareAggregates,
    kCollectives,
    kNonblockingDirect,
    kNonblockingTuna,
    kNonblockingSharedMemory,
};

// The first pair of ranges of `plan` in one space that overlap, as 1000 * i + j (i < j,
// their indices in the plan); -1 if none.
template <std::size_t N>
constexpr int first_overlap(const std::array<TagRange, N>& plan) {
  for (std::size_t i = 0; i < N; ++i)
    for (std::size_t j = i + 1; j < N; ++j)
      if (plan[i].space == plan[j].space && plan[i].first < plan[j].end() &&
          plan[j].first < plan[i].end())
        return static_cast<int>(1000 * i + j);
  return -1;
}

// The index in `plan` of the first range that is empty or has a tag outside 0..32767; -1 if
// none.
template <std::size_t N>
constexpr int first_out_of_bounds(const std::array<TagRange, N>& plan) {
  for (std::size_t i = 0; i < N; ++i)
    if (plan[i].count < 1 || plan[i].first < 0 || plan[i].end() - 1 > kTagUpperBound)
      return static_cast<int>(i);
  return -1;
}

// On failure the compiler's note shows the value: the indices of the ranges in kPlan.
static_assert(first_overlap(kPlan) == -1, "two tag ranges of one space overlap (1000 * i + j)");
static_assert(first_out_of_bounds(kPlan) == -1, "a tag range is empty or exceeds 32767");
// Both members of the pairs that ialltoallv_tuna and node_aware number by 2 * n + 1.
static_assert(kNonblockingTuna.count % 2 == 0 && kNodeAwareAggregates.count % 2 == 0);
static_assert(kNeighborCartesian.count % 2 == 0);
static_assert(kSparseConsensus.count == kSparseMessages.count);

}  // namespace a2av::tags
