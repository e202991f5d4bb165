// The bounded-buffer path for MPI_IN_PLACE (symmetric counts, contiguous type).
#pragma once

#include "core/call.hpp"
#include "core/comm_context.hpp"
#include "core/memory.hpp"
#include "core/p2p.hpp"

#include <cstdint>

namespace a2av {

// Staging bytes for one in-place call: 1 MiB, or A2AV_INPLACE_CHUNK (read once).
std::int64_t inplace_chunk_bytes();

// Swaps every block with the matching block of its peer, where blocks.at(j) holds this
// rank's data for j on entry and j's data for this rank on exit; chunk_bytes of staging.
void swap_symmetric_in_place(const CommContext& ctx, const ByteBlocks& blocks,
                             std::int64_t chunk_bytes, MemoryTracker& memory, Mismatch& mismatch);

}  // namespace a2av
