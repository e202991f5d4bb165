// What the distributed redistribution algorithms share: the rank's block store, the
// statistics, and one step that moves sets of slots to and from peers with their
// destination addresses ([Siegel10], Section 3).
#pragma once

#include <a2av/redistribute.hpp>

#include "core/comm_context.hpp"
#include "core/memory.hpp"
#include "redistribute/block_store.hpp"

#include "core/spec.hpp"

#include <span>
#include <vector>

namespace a2av {
// The redistribution family's table: parking, cyclic, auto (redistributor.cpp).
std::span<const FamilyAlgorithm> redistribution_algorithms();
}  // namespace a2av

namespace a2av::redist {

struct Engine {
  const CommContext& ctx;
  BlockStore& store;
  MemoryTracker& memory;
  RedistStats& stats;
};

// Slots to send to, or receive from, one peer.
struct SlotTransfer {
  int peer;
  std::vector<std::int64_t> slots;
};

// Posts every receive and send (data at the slots, and each block's destination address),
// waits for all, then marks sent slots free and received slots with their addresses.
void transfer(Engine& e, const std::vector<SlotTransfer>& sends,
              const std::vector<SlotTransfer>& receives);

// Blocks of this rank bound for each rank (its own entry counts the blocks at home).
std::vector<std::int64_t> outgoing_counts(const Engine& e);

// Algorithms (parking.cpp, cyclic.cpp); on return every block is on its destination rank.
void run_parking(Engine& e);
void run_cyclic(Engine& e, bool dictionary_order);

}  // namespace a2av::redist
