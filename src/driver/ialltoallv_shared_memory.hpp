// The nonblocking exchange's shared-memory schedule (ialltoallv_shared_memory.cpp), for
// ialltoallv.cpp.
#pragma once

#include "core/call.hpp"
#include "core/progress_request.hpp"

#include <cstdint>
#include <memory>

namespace a2av {

// For a checked call, not in place, on a communicator whose ranks share one node;
// `sequence` numbers the nonblocking exchanges started on it (the same on every rank).
// Makes the communicator's cells on first use (collective). Null, on every rank alike, if
// they cannot be made. `temp_bytes`: packed copies and arrays held until the request is
// freed.
std::unique_ptr<Operation> make_shared_memory_exchange(const Call& call, const CheckedCall& checked,
                                                       const CommContext& ctx,
                                                       std::uint64_t sequence,
                                                       std::int64_t& temp_bytes);

}  // namespace a2av
