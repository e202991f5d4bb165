#include "driver/nonblocking_blocks.hpp"

#include <algorithm>
#include <cstring>

namespace a2av {
namespace {

// `size` values, or none where the array is not given.
template <class T>
const T* copied(const T* values, int size, std::vector<T>& copy) {
  if (!values) {
    copy.clear();
    return nullptr;
  }
  copy.assign(values, values + size);
  return copy.data();
}

}  // namespace

void CallCopy::assign(const Call& call, int size) {
  call_ = call;
  call_.sendcounts = copied(call.sendcounts, size, sendcounts_);
  call_.recvcounts = copied(call.recvcounts, size, recvcounts_);
  call_.sdispls = copied(call.sdispls, size, sdispls_);
  call_.rdispls = copied(call.rdispls, size, rdispls_);
}

std::int64_t CallCopy::bytes() const {
  return static_cast<std::int64_t>((sendcounts_.capacity() + recvcounts_.capacity()) *
                                       sizeof(MPI_Count) +
                                   (sdispls_.capacity() + rdispls_.capacity()) * sizeof(MPI_Aint));
}

void NonblockingBlocks::assign(const Call& call, const CheckedCall& checked, int size) {
  copy_.assign(call, size);
  view_.assign(copy_.call(), checked, memory_);
  view_.begin();
}

bool NonblockingBlocks::copy_own_block(int rank) const {
  const std::int64_t bytes = std::min(send().bytes[rank], recv().bytes[rank]);
  if (bytes > 0) std::memcpy(recv().at(rank), send().at(rank), bytes);
  return send().bytes[rank] == recv().bytes[rank];
}

std::int64_t NonblockingBlocks::temp_bytes() const {
  return memory_.peak() + copy_.bytes();
}

}  // namespace a2av
