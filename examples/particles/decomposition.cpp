// Hilbert-curve decomposition of the unit box (decomposition.hpp).
#include "decomposition.hpp"

#include <utility>

namespace particles {

namespace {

// Position of cell (x, y) on the Hilbert curve through an n x n grid, n a power of two, and
// its inverse (the classic iterative formulation: rotate the quadrant, descend one level).
std::int64_t hilbert_index(std::int64_t n, std::int64_t x, std::int64_t y) {
  std::int64_t d = 0;
  for (std::int64_t s = n / 2; s > 0; s /= 2) {
    const std::int64_t rx = (x & s) > 0, ry = (y & s) > 0;
    d += s * s * ((3 * rx) ^ ry);
    if (ry == 0) {
      if (rx == 1) {
        x = n - 1 - x;
        y = n - 1 - y;
      }
      std::swap(x, y);
    }
  }
  return d;
}

void hilbert_cell(std::int64_t n, std::int64_t d, std::int64_t* x, std::int64_t* y) {
  *x = *y = 0;
  for (std::int64_t s = 1; s < n; s *= 2) {
    const std::int64_t rx = 1 & (d / 2), ry = 1 & (d ^ rx);
    if (ry == 0) {
      if (rx == 1) {
        *x = s - 1 - *x;
        *y = s - 1 - *y;
      }
      std::swap(*x, *y);
    }
    *x += s * rx;
    *y += s * ry;
    d /= 4;
  }
}

}  // namespace

Decomposition::Decomposition(int level, int ranks)
    : grid_(1 << level),
      ranks_(ranks),
      curve_(static_cast<std::size_t>(grid_) * grid_),
      owner_(curve_.size()),
      first_(static_cast<std::size_t>(ranks) + 1) {
  for (int y = 0; y < grid_; ++y)
    for (int x = 0; x < grid_; ++x)
      curve_[static_cast<std::size_t>(y) * grid_ + x] =
          static_cast<std::uint32_t>(hilbert_index(grid_, x, y));
  std::vector<std::uint64_t> uniform(curve_.size(), 1);
  cut(uniform);
}

void Decomposition::rebalance(std::span<const Particle> parts, MPI_Comm comm) {
  std::vector<std::uint64_t> counts(curve_.size(), 0);
  for (const Particle& p : parts) ++counts[curve_[cell(p)]];
  MPI_Allreduce(MPI_IN_PLACE, counts.data(), static_cast<int>(counts.size()), MPI_UINT64_T, MPI_SUM,
                comm);
  cut(counts);
}

void Decomposition::cut(std::vector<std::uint64_t>& counts) {
  std::uint64_t total = 0;
  for (std::uint64_t c : counts) total += c;
  const auto ranks = static_cast<std::uint64_t>(ranks_);
  std::uint64_t before = 0;
  int rank = 0;
  first_.assign(first_.size(), 0);
  for (std::size_t pos = 0; pos < counts.size(); ++pos) {
    const std::uint64_t c = counts[pos];
    // Empty positions follow the previous one, so that a rank's stretch stays contiguous.
    if (total > 0 && c > 0) {
      const auto target = static_cast<int>((2 * before + c) * ranks / (2 * total));
      rank = std::max(rank, std::min(target, ranks_ - 1));
    }
    before += c;
    counts[pos] = static_cast<std::uint64_t>(rank);
    first_[static_cast<std::size_t>(rank) + 1] = static_cast<std::int64_t>(pos) + 1;
  }
  // Ranks that received no position start where the previous one ends.
  for (std::size_t r = 1; r < first_.size(); ++r) first_[r] = std::max(first_[r], first_[r - 1]);
  for (std::size_t c = 0; c < curve_.size(); ++c) owner_[c] = static_cast<int>(counts[curve_[c]]);
}

void Decomposition::sample(int rank, double u1, double u2, double u3, double* x, double* y) const {
  const std::int64_t first = first_[static_cast<std::size_t>(rank)];
  const std::int64_t span = first_[static_cast<std::size_t>(rank) + 1] - first;
  std::int64_t cx = 0, cy = 0;
  hilbert_cell(grid_, first + static_cast<std::int64_t>(u1 * static_cast<double>(span)), &cx, &cy);
  *x = (static_cast<double>(cx) + u2) / grid_;
  *y = (static_cast<double>(cy) + u3) / grid_;
}

std::int64_t Decomposition::table_bytes() const {
  return static_cast<std::int64_t>(curve_.size() * (sizeof(std::uint32_t) + sizeof(int)) +
                                   first_.size() * sizeof(std::int64_t));
}

std::int64_t Decomposition::histogram_bytes() const {
  return static_cast<std::int64_t>(curve_.size() * sizeof(std::uint64_t));
}

}  // namespace particles
