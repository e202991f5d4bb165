// node_aware's inter-node schedule for radix >= 2 (node_aware:radix=R): TuNA over the nodes.
// The ranks with one local index c, one per node, form a column. Rank (n, c) originates, for
// each remote node m, the column block for rank (m, c): what every rank of node n has for
// (m, c), read from the node's staging sections (node_aware.cpp). So a column block already
// carries a whole node's traffic to one remote rank, and the column runs TuNA's rounds
// (tuna_schedule.hpp) over its N members: in the round of distance z*r^x a member sends node
// n + z*r^x every column block whose distance in nodes has digit x equal to z; blocks that
// have arrived are delivered, the others wait in a store for a later digit.
//
// Unlike tuna.cpp, every block of a round, the direct one included, travels in the round's
// one message, whose header gives its length and its blocks' lengths and which the receiver
// finds with a probe: no receive size is needed, so an argument error or a count
// disagreement (carried inside the column blocks) cannot upset the schedule.
//
// Rounds per rank: K <= w(r-1), w = ceil(log_r N), against ceil((N-1)/Q) messages per rank
// for radix 0. Bytes between nodes: each column block crosses up to w links.
// Temporary memory (column_rounds_memory_bound): a store of at most N-(K+1) column blocks and,
// per round in flight, the message sent and the one received.
// Source: Fan et al. [Fan24], Sections III-A..III-C and Algorithm 1 (the
// rounds), Section IV and Figure 4 (aggregation inside a node before the inter-node phase).
#pragma once

#include "core/memory.hpp"

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace a2av {

// What the rounds move; node_aware's exchange provides it.
class ColumnBlocks {
 public:
  virtual ~ColumnBlocks() = default;
  // The column block this rank originates for the member on `node`: its length, its bytes.
  virtual std::int64_t bytes_for(int node) const = 0;
  virtual void write_for(int node, std::byte* out) const = 0;
  // The column block from the member on `node` has arrived.
  virtual void arrived(int node, const std::byte* block, std::int64_t bytes) = 0;
  // A round's message has not come yet, `idle` times in a row: other work, or a pause.
  virtual void waiting(int idle) = 0;
};

// This rank's column: by node, the communicator rank of its member there.
struct Column {
  MPI_Comm comm;
  const std::vector<int>& members;
  int node;  // this rank's
};

// Runs the rounds with `radix` (clamped to 2..N): the rounds of a digit in flight together,
// at most `in_flight` of them (one send each; receives are probed and blocking).
void run_column_rounds(const Column& column, int radix, int in_flight, ColumnBlocks& blocks,
                       MemoryTracker& memory);

// Bound on the temporary bytes of run_column_rounds on nodes of q ranks, for column blocks
// of q ranks' blocks of at most `block` bytes each (node_aware's aggregation threshold).
std::int64_t column_rounds_memory_bound(int nodes, int q, int radix, std::int64_t block);

// Bytes of a column block's header: one word (size, or error code) per rank of the source
// node.
constexpr std::int64_t column_header_bytes(int q) {
  return 8 * static_cast<std::int64_t>(q);
}

}  // namespace a2av
