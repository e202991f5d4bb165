// Byte-level entry points of the in-place stable merge (see merge.hpp; Zhuang et al.,
// Section 3.1).
#include "inplace/merge.hpp"

#include <cmath>

namespace a2av {

namespace detail {

std::size_t ceil_sqrt(std::size_t n) {
  auto r = static_cast<std::size_t>(std::sqrt(static_cast<double>(n)));
  while (r * r > n) --r;  // the double estimate can be off by one either way
  while (r * r < n) ++r;
  return r;
}

}  // namespace detail

std::size_t inplace_merge_scratch_elements(std::size_t n, std::size_t elem_size) {
  if (n == 0) return 0;
  const std::size_t b = detail::ceil_sqrt(n);
  const std::size_t tag_bytes = sizeof(std::uint32_t) * (n / b);
  return b + (tag_bytes + elem_size - 1) / elem_size;
}

void inplace_merge(std::byte* base, std::size_t left, std::size_t right, std::size_t elem_size,
                   std::byte* scratch, const MergeLess& less) {
  inplace_merge_bytes(base, left, right, elem_size, scratch, less);
}

}  // namespace a2av
