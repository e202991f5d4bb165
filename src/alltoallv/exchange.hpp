// The driver every entry point calls: checks arguments, agrees on errors (and, with
// validation, on counts) across ranks before any data moves, resolves the algorithm,
// normalises the buffers and runs it.
#pragma once

#include <a2av/alltoallv.hpp>

#include "core/call.hpp"

#include <string_view>

namespace a2av {

// Throws a2av::Error; on success returns what ran and its peak temporary memory.
CallInfo run_alltoallv(const Call& call, std::string_view spec, bool validate);

}  // namespace a2av
