#include "alltoallv/select.hpp"

namespace a2av {

std::string choose_algorithm(int size, std::int64_t max_block) {
  if (size <= 2) return "spread_out";
  if (max_block <= 512) return "tuna:radix=2";
  return "spread_out";
}

}  // namespace a2av
