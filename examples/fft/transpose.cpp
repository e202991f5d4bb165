// Pack-and-exchange transpose of the distributed 3-D array (TuNA paper, Section VI-A).
#include "transpose.hpp"

#include <cstdint>
#include <utility>

namespace fft {

namespace {
std::vector<MPI_Aint> prefix_sums(const std::vector<MPI_Count>& counts) {
  std::vector<MPI_Aint> displs(counts.size());
  MPI_Aint sum = 0;
  for (std::size_t j = 0; j < counts.size(); ++j) {
    displs[j] = sum;
    sum += static_cast<MPI_Aint>(counts[j]);
  }
  return displs;
}
}  // namespace

Transpose::Transpose(const Layout& before, int axis_in, int axis_out, MPI_Comm comm)
    : before_(before), axis_out_(axis_out), comm_(comm) {
  int index = 0;
  MPI_Comm_size(comm, &parts_);
  MPI_Comm_rank(comm, &index);
  after_ = transposed(before, axis_in, axis_out, parts_, index);
  for (int j = 0; j < parts_; ++j) {
    // The block for peer j is this rank's box cut to j's part of axis_out, stored as j
    // stores it; the block from peer j is j's part of axis_in within this rank's new box.
    Layout block = transposed(before, axis_in, axis_out, parts_, j);
    block.box[axis_in] = before.box[axis_in];
    sendcounts_.push_back(block.size());
    block_strides_.push_back(block.strides());
    Layout from = after_;
    from.box[axis_in] = block_range(before.n[axis_in], parts_, j);
    recvcounts_.push_back(from.size());
  }
  sdispls_ = prefix_sums(sendcounts_);
  rdispls_ = prefix_sums(recvcounts_);
}

std::int64_t Transpose::destination(std::int64_t offset) const {
  const Shape c = before_.coordinates(offset);
  const int j = block_owner(before_.n[axis_out_], parts_, c[axis_out_]);
  const Shape& stride = block_strides_[j];
  std::int64_t dest = sdispls_[j];
  for (int axis = 0; axis < 3; ++axis) {
    const std::int64_t start =
        axis == axis_out_ ? block_range(before_.n[axis], parts_, j).start : before_.box[axis].start;
    dest += (c[axis] - start) * stride[axis];
  }
  return dest;
}

void Transpose::pack(const cplx* in, cplx* out) const {
  const std::int64_t size = before_.size();
  for (std::int64_t i = 0; i < size; ++i) out[destination(i)] = in[i];
}

// Follows each cycle of the packing permutation, so the only extra memory is one bit per
// element: the point of the in-place mode is to run where a second array does not fit.
void Transpose::pack_inplace(cplx* data) const {
  const std::int64_t size = before_.size();
  std::vector<bool> moved(static_cast<std::size_t>(size));
  for (std::int64_t start = 0; start < size; ++start) {
    if (moved[start]) continue;
    cplx carried = data[start];
    std::int64_t at = start;
    do {
      at = destination(at);
      std::swap(carried, data[at]);
      moved[at] = true;
    } while (at != start);
  }
}

void Transpose::run(std::vector<cplx>& data, std::vector<cplx>& scratch, Exchange& exchange) const {
  if (exchange.inplace()) {
    pack_inplace(data.data());
    if (parts_ > 1)
      exchange.in_place(data.data(), static_cast<MPI_Count>(data.size()), sendcounts_.data(),
                        comm_);
    return;
  }
  scratch.resize(static_cast<std::size_t>(before_.size()));
  pack(data.data(), scratch.data());
  if (parts_ == 1) {  // a local reordering: the packed block is the new layout
    data.swap(scratch);
    return;
  }
  data.resize(static_cast<std::size_t>(after_.size()));
  exchange.out_of_place(scratch.data(), sendcounts_.data(), sdispls_.data(), data.data(),
                        recvcounts_.data(), rdispls_.data(), comm_);
}

}  // namespace fft
