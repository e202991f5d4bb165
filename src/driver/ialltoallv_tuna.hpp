// The nonblocking exchange's TuNA schedule (ialltoallv_tuna.cpp), for ialltoallv.cpp.
#pragma once

#include "alltoallv/tuna_schedule.hpp"
#include "core/call.hpp"
#include "driver/nonblocking_setup.hpp"

#include <cstdint>
#include <memory>

namespace a2av {

// For a checked call, not in place; `sequence` numbers the nonblocking exchanges started on
// the communicator (the same on every rank). Its temp_bytes(): what it holds when it starts
// (packed copies, its first batch's messages); the store grows as blocks pass through, up to
// P - (K+1) blocks.
std::unique_ptr<StagedOperation> make_tuna_exchange(const Call& call, const CheckedCall& checked,
                                                    NonblockingSetup& setup, const TunaShape& shape,
                                                    std::uint64_t sequence);

}  // namespace a2av
