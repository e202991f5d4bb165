// Permutation routing over a bitonic merge network, and the fixpoint analysis behind it
// (Mundani and Rank [Mundani11], docs/references.md; docs/route.md).
//
//  - a2av::route / a2av::route_packets (Sections II-A, III, III-C): every rank holds M packets
//    (lanes), and lane m's packets are addressed to a permutation of the ranks. One pass of the
//    bitonic merge (Fig. 1: log2 P pairwise exchange steps, each rank holding at most one packet
//    per lane at any time) delivers most of them; a comparator that strands a packet in a half
//    it can no longer leave is a clash, both ranks of the pair flag the lane, and all ranks
//    agree on the flags. Flagged lanes get a correction (Section III-A, Fig. 2: one or both
//    odd-even transposition phases) and another merge pass, until every packet has arrived.
//    P not a power of two: the network of the next power of two P', whose virtual ranks
//    P..P'-1 hold +infinity and are never touched (every comparator reaching one is skipped).
//  - The 0-1 analysis (Sections II-B, II-C, III-A, III-B), no MPI: the merger on 0-1 words,
//    its incorrect states (the unsorted fixpoints: 1, 11, 151, 7548 for N = 4, 8, 16, 32) and
//    how many correction rounds each needs under either method.
#pragma once

#include <a2av/error.hpp>

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <type_traits>
#include <vector>

namespace a2av {

// What is done to a lane before each further merge pass (Section III-A, Fig. 2), 0-based
// ranks. The paper's "first phase" compares its even 1-based pairs, our (1,2), (3,4), ...:
// the pairs (0,1), (2,3), ... are the merge's own last step, so on a fixpoint they do nothing.
enum class Correction {
  first_phase,    // odd pairs (1,2), (3,4), ...: one exchange step
  transposition,  // odd pairs, then even pairs (0,1), (2,3), ...: two exchange steps
};

struct RouteOptions {
  Correction correction = Correction::first_phase;  // fewer rounds (docs/route.md)
};

// Steps taken, the same on every rank except `clashes`. Network steps count every step of
// the network, also those in which this rank's partner is virtual.
struct RouteResult {
  int merge_passes = 0;          // 1 + correction_rounds
  int correction_rounds = 0;     // correction + merge rounds after the first pass
  int exchange_steps = 0;        // log2 P' per merge pass + 1 or 2 per correction
  int agreements = 0;            // global flag agreements (MPI_Allreduce), one per merge pass
  std::int64_t clashes = 0;      // comparators on this rank that stranded a packet, all lanes
  std::vector<int> lane_rounds;  // per lane: correction rounds it needed (0: the first pass)
  std::vector<int> sources;      // per lane: the rank the packet held now started on
};

// Routes M = dest.size() packets of packet_bytes bytes each: packets holds them back to back,
// and on return lane m holds the lane-m packet whose dest was this rank. Collective; M and
// packet_bytes must be the same on every rank. Every rank throws the same A2AV_ERR_ARG when
// a rank's arguments are malformed (a destination outside 0..P-1, packets.size() not
// M * packet_bytes, M or packet_bytes differing across ranks) or a lane's destinations are
// not a permutation; packets are unchanged then. Cost: one MPI_Allreduce and one
// MPI_Reduce_scatter_block (M P ints) to check, then per merge pass log2 P' MPI_Sendrecv of
// the lanes still in flight and one MPI_Allreduce of M flags.
RouteResult route_packets(std::span<std::byte> packets, std::size_t packet_bytes,
                          std::span<const int> dest, MPI_Comm comm,
                          const RouteOptions& options = {});

template <class T>
requires std::is_trivially_copyable_v<T> RouteResult route(std::span<T> packets,
                                                           std::span<const int> dest, MPI_Comm comm,
                                                           const RouteOptions& options = {}) {
  return route_packets(std::as_writable_bytes(packets), sizeof(T), dest, comm, options);
}

// ---- 0-1 analysis. A state of N inputs (N a power of two, 1..64) is a word whose bit i is
// input i (i = 0 the top wire of Fig. 1); sorted means all 0s before all 1s. Sizes outside
// that range throw A2AV_ERR_ARG.

// One pass of the bitonic merger of Fig. 1 (minimum to the lower index).
std::uint64_t bitonic_merge_01(std::uint64_t state, int size);

// Rounds of correction + merge until `state` is sorted (0 if it already is). Always ends:
// a round moves some 1 to a higher position unless the state is a fixpoint, and an unsorted
// fixpoint has a 1 just above a 0 at an odd pair (the even pairs are the merge's last step), which
// the correction swaps, so the sum of the 1s' positions grows every round. Not bounded by log2 N as
// Proof 3 claims (docs/route.md).
int correction_rounds_01(std::uint64_t state, int size, Correction method);

// The incorrect states of the merger: the unsorted fixpoints, in increasing order (N <= 32).
std::vector<std::uint64_t> incorrect_states(int size);

// Section III-B's table for one N (up to 64): the incorrect states, and for each method how
// many of them are sorted after exactly r rounds (index r; index 0 stays 0).
struct FixpointCensus {
  int size = 0;
  std::uint64_t incorrect = 0;
  std::vector<std::uint64_t> first_phase;
  std::vector<std::uint64_t> transposition;
  std::uint64_t slowest_first_phase = 0;  // an incorrect state needing the most rounds
  std::uint64_t slowest_transposition = 0;
};
FixpointCensus fixpoint_census(int size);

// The correction rounds route() needs for one lane at P = dest.size() ranks (P <= 64), from
// the 0-1 principle: the most any threshold word needs after the first merge pass.
int predicted_rounds(std::span<const int> dest, Correction method);

}  // namespace a2av
