// The built-in heuristic, from measurements on the development machine (2 cores, shared
// memory, docs/algorithms.md) and the TuNA paper's Section V findings for large P: with few
// ranks, one round of direct messages wins at every size; logarithmic rounds pay off only
// when P is large and blocks are small, where radix ~sqrt(P) balances rounds against bytes.
#include "alltoallv/select.hpp"

#include <fmt/format.h>

namespace a2av {

std::string choose_algorithm(int size, std::int64_t max_block) {
  if (size >= 64 && max_block <= 1024) {
    int root = 2;
    while (root * root < size) ++root;
    return fmt::format("tuna:radix={}", root);
  }
  return "spread_out";
}

}  // namespace a2av
