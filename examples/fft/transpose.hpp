// A transpose of the distributed array over a communicator of Q ranks: the axis split over
// the ranks becomes whole and the whole one becomes split. Each rank packs its block for
// every peer, in the order the peer stores it, then one all-to-all moves them; the blocks
// arrive in source order, which is already the new layout (no unpacking). Blocks are uneven
// when an extent does not divide by Q (TuNA paper, Section VI-A).
#pragma once

#include "exchange.hpp"
#include "layout.hpp"

#include <mpi.h>

#include <vector>

namespace fft {

class Transpose {
 public:
  Transpose(const Layout& before, int axis_in, int axis_out, MPI_Comm comm);

  const Layout& before() const { return before_; }
  const Layout& after() const { return after_; }

  // data holds the `before` layout; on return it holds the `after` one. Out of place it is
  // resized and `scratch` holds the packed blocks; in place, data.size() is the capacity.
  void run(std::vector<cplx>& data, std::vector<cplx>& scratch, Exchange& exchange) const;

 private:
  // Where the element at `offset` of `before` goes among the packed blocks.
  std::int64_t destination(std::int64_t offset) const;
  void pack(const cplx* in, cplx* out) const;
  void pack_inplace(cplx* data) const;

  Layout before_, after_;
  int axis_out_;
  int parts_;
  MPI_Comm comm_;
  std::vector<MPI_Count> sendcounts_, recvcounts_;
  std::vector<MPI_Aint> sdispls_, rdispls_;
  std::vector<Shape> block_strides_;  // per peer: the strides of its block, by axis
};

}  // namespace fft
