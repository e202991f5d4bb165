// The nonblocking exchange's shared-memory schedule (ialltoallv_shared_memory.cpp), for
// ialltoallv.cpp.
#pragma once

#include "core/call.hpp"
#include "driver/nonblocking_setup.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>

namespace a2av {

// The bytes of cells each rank holds at P = size (0: none, A2AV_SHM_BYTES=0).
std::size_t nonblocking_cell_bytes(int size);

// For a checked call, not in place, on a communicator whose ranks may share one node, after
// `setup.want_cells(nonblocking_cell_bytes(P))`; `sequence` numbers the nonblocking exchanges
// started on it (the same on every rank). It begins on the cells once they are made, or as the
// direct schedule where they turn out impossible (the ranks do not share a node, no memory), on
// every rank alike.
// Checks `call` unless it repeats a kept exchange's (driver/ialltoallv.hpp).
std::unique_ptr<StagedOperation> make_shared_memory_exchange(const Call& call,
                                                             NonblockingSetup& setup,
                                                             std::uint64_t sequence,
                                                             std::int64_t single_copy_above);

}  // namespace a2av
