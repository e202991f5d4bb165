// node_aware's layout of the nodes and the geometry of each node's shared segment (made
// once per communicator and parameters), for the exchange protocol in node_aware.cpp.
#pragma once

#include "alltoallv/node_aware.hpp"
#include "core/comm_context.hpp"
#include "core/node_segment.hpp"
#include "core/single_copy.hpp"
#include "core/tags.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace a2av {

// Where every rank lives, and the geometry of this node's segment (same on all its ranks).
struct NodeAwareCells {
  std::vector<std::vector<int>> ranks;     // by node: its ranks, ascending
  std::vector<int> node_of;                // by rank: its node
  int node = 0, local = 0;                 // this rank's
  int agents = 0;                          // agents per node (0: all ranks)
  int radix = 0;                           // >= 2: TuNA over the nodes, no agents
  std::vector<int> column;                 // by node: its rank with this rank's local index
  std::int64_t threshold = 0;              // blocks up to this size are aggregated
  std::vector<std::size_t> section_at;     // offset of each destination node's section
  std::size_t staging_bytes = 0;           // one parity's sections
  std::vector<std::vector<int>> assigned;  // by local rank: its remote nodes
  std::vector<std::size_t> slot_at;        // by remote node: its slot in its agent's part
  std::vector<std::size_t> slots_bytes;    // by local rank: one parity's slots
  std::unique_ptr<NodeSegment> segment;
  // Whether this node's ranks may read each other's memory (over the node's communicator,
  // ranks by local index): large blocks inside the node are then read from the sender.
  SingleCopy single_copy;
  bool usable = false;  // on every node
};

// Tags (core/tags.hpp). Direct blocks alternate between the two of kNodeAwareDirect by the
// exchange's parity: an early receive that its header withdraws must not match the sender's
// block of the next exchange. A sender is at most one exchange ahead (it needs this rank's
// part of the next one to get further).
// A node's message for node M has tag kNodeAwareAggregates.at(2 * (its node) + parity):
// whichever of its ranks sends it, M's agent receives it from any source by that tag; the
// parity keeps it apart from the next exchange's, which another rank may send. So up to
// kMostNodes nodes.
constexpr int kMostNodes = tags::kNodeAwareAggregates.count / 2;

inline std::size_t round_up(std::size_t bytes) {
  return (bytes + kLine - 1) / kLine * kLine;
}

// Part of a rank's segment part after its staging and slots: the addresses of its large
// blocks for its node's ranks (by local index), for each parity.
inline std::size_t addresses_bytes(int ranks) {
  return round_up(2 * 8 * static_cast<std::size_t>(ranks));
}

inline int node_count(const NodeAwareCells& c) {
  return static_cast<int>(c.ranks.size());
}

inline int node_size(const NodeAwareCells& c, int node) {
  return static_cast<int>(c.ranks[node].size());
}

inline int agent_of(const NodeAwareCells& c, int node, int remote) {
  return node_aware_agent(node, remote, node_count(c), node_size(c, node), c.agents);
}

// Bytes of the header of a section for `node`: the code, then one size per rank there.
inline std::size_t header_bytes(int ranks) {
  return 8 * (1 + static_cast<std::size_t>(ranks));
}

// The largest message from `from` to `to`: every rank's section for `to`, full.
inline std::size_t slot_capacity(const NodeAwareCells& c, int from, int to) {
  const std::size_t q_from = node_size(c, from), q_to = node_size(c, to);
  return q_from * (header_bytes(q_to) + q_to * static_cast<std::size_t>(c.threshold));
}

// The cells for these parameters, made on the first call with them (collective over the
// communicator); `usable` false (on every rank alike) where node_aware runs spread_out.
NodeAwareCells& cells_of(const CommContext& ctx, const ParamValues& params);

}  // namespace a2av
