// The domain decomposition: the box is a 2^L x 2^L grid of cells ordered along a Hilbert
// curve, and rank r owns one stretch of that curve. Rebalancing cuts the curve anew into P
// stretches of (nearly) equal particle count; the curve keeps each stretch compact. Memory
// is O(cells) per rank, independent of the number of particles.
#pragma once

#include "particles.hpp"

#include <mpi.h>

#include <cstdint>
#include <span>
#include <vector>

namespace particles {

class Decomposition {
 public:
  // The initial decomposition: equal numbers of cells, which for uniformly placed particles
  // is equal load.
  Decomposition(int level, int ranks);

  int owner(const Particle& p) const { return owner_[cell(p)]; }

  // Collective: counts the particles per cell over all ranks (one MPI_Allreduce of the
  // grid) and cuts the curve where the running count crosses each multiple of N/P.
  void rebalance(std::span<const Particle> parts, MPI_Comm comm);

  // A point drawn uniformly from rank's part of the box; u1, u2, u3 uniform in [0, 1).
  void sample(int rank, double u1, double u2, double u3, double* x, double* y) const;

  // Bytes of the tables kept between rebalances, and of the histogram a rebalance adds.
  std::int64_t table_bytes() const;
  std::int64_t histogram_bytes() const;

 private:
  int cell(const Particle& p) const {
    return static_cast<int>(p.y * grid_) * grid_ + static_cast<int>(p.x * grid_);
  }
  // Gives each curve position (counts[pos] particles) to the rank whose share of the total
  // contains the position's midpoint; counts becomes the owner by position.
  void cut(std::vector<std::uint64_t>& counts);

  int grid_;
  int ranks_;
  std::vector<std::uint32_t> curve_;  // cell (row-major) -> position on the Hilbert curve
  std::vector<int> owner_;            // cell -> owning rank
  std::vector<std::int64_t> first_;   // rank r owns curve positions first_[r] .. first_[r+1]-1
};

}  // namespace particles
