// Where each rank's part of the global n0 x n1 x n2 complex array lies, and in what order it
// is stored. Axes are split with FFTW's block distribution (blocks of ceil(n/parts), the last
// ones short or empty), which is what makes the transposes non-uniform when n is not a
// multiple of the rank count (TuNA paper, Section VI-A).
#pragma once

#include <array>
#include <complex>
#include <cstdint>

namespace fft {

using cplx = std::complex<double>;
using Shape = std::array<std::int64_t, 3>;

struct Range {
  std::int64_t start = 0;
  std::int64_t count = 0;
};

// Block `index` of `parts` of [0, n): ceil(n/parts) elements, fewer or none at the end.
Range block_range(std::int64_t n, int parts, int index);
// The block that holds element i of [0, n).
int block_owner(std::int64_t n, int parts, std::int64_t i);

// A box of the global array, stored row-major with axes in `order` (outermost first).
struct Layout {
  Shape n{};
  std::array<Range, 3> box{};
  std::array<int, 3> order{0, 1, 2};

  std::int64_t size() const { return box[0].count * box[1].count * box[2].count; }
  // The distance between neighbours along each axis (indexed by axis, not by order).
  Shape strides() const;
  // The global coordinates of the element at `offset`.
  Shape coordinates(std::int64_t offset) const;
  // The element's index in the global array stored row-major (x, y, z).
  std::int64_t global_index(std::int64_t offset) const;
};

// The layout after a transpose over `parts` ranks: `axis_in`, split before, becomes whole and
// outermost (so blocks received in source order need no unpacking); `axis_out`, whole before,
// is split and this rank keeps block `index`.
Layout transposed(const Layout& before, int axis_in, int axis_out, int parts, int index);

}  // namespace fft
