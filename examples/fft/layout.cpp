// Block distribution and layouts of the distributed 3-D array (TuNA paper, Section VI-A).
#include "layout.hpp"

#include <algorithm>

namespace fft {

namespace {
std::int64_t block_size(std::int64_t n, int parts) {
  return (n + parts - 1) / parts;
}
}  // namespace

Range block_range(std::int64_t n, int parts, int index) {
  const std::int64_t b = block_size(n, parts);
  const std::int64_t start = std::min(n, b * index);
  return {start, std::min(n, start + b) - start};
}

int block_owner(std::int64_t n, int parts, std::int64_t i) {
  return static_cast<int>(i / block_size(n, parts));
}

Shape Layout::strides() const {
  Shape s{};
  std::int64_t stride = 1;
  for (int k = 2; k >= 0; --k) {
    s[order[k]] = stride;
    stride *= box[order[k]].count;
  }
  return s;
}

Shape Layout::coordinates(std::int64_t offset) const {
  Shape c{};
  for (int k = 2; k >= 0; --k) {
    const int axis = order[k];
    c[axis] = box[axis].start + offset % box[axis].count;
    offset /= box[axis].count;
  }
  return c;
}

std::int64_t Layout::global_index(std::int64_t offset) const {
  const Shape c = coordinates(offset);
  return (c[0] * n[1] + c[1]) * n[2] + c[2];
}

Layout transposed(const Layout& before, int axis_in, int axis_out, int parts, int index) {
  Layout after = before;
  after.box[axis_in] = {0, before.n[axis_in]};
  after.box[axis_out] = block_range(before.n[axis_out], parts, index);
  int k = 0;
  after.order[k++] = axis_in;
  for (int axis : before.order)
    if (axis != axis_in) after.order[k++] = axis;
  return after;
}

}  // namespace fft
