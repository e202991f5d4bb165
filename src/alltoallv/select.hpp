// The built-in choice behind "auto": a function of values every rank agrees on.
#pragma once

#include <cstdint>
#include <string>

namespace a2av {

// A spec for P ranks whose largest block (over all ranks) is max_block bytes.
std::string choose_algorithm(int size, std::int64_t max_block);

}  // namespace a2av
