// The nonblocking exchange's TuNA schedule (ialltoallv_tuna.cpp), for ialltoallv.cpp.
#pragma once

#include "alltoallv/tuna_schedule.hpp"
#include "core/call.hpp"
#include "core/progress_request.hpp"

#include <cstdint>
#include <memory>

namespace a2av {

// For a checked call, not in place; `sequence` numbers the nonblocking exchanges started on
// the communicator (the same on every rank). `temp_bytes`: what the operation holds when it
// starts (packed copies, its first batch's messages); the store grows as blocks pass
// through, up to P - (K+1) blocks.
std::unique_ptr<Operation> make_tuna_exchange(const Call& call, const CheckedCall& checked,
                                              const CommContext& ctx, const TunaShape& shape,
                                              std::uint64_t sequence, std::int64_t& temp_bytes);

}  // namespace a2av
