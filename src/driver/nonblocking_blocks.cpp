#include "driver/nonblocking_blocks.hpp"

#include <algorithm>
#include <cstring>

namespace a2av {
namespace {

template <class T>
std::vector<T> copied(const T* values, int size) {
  return values ? std::vector<T>(values, values + size) : std::vector<T>();
}

template <class T>
const T* data_or_null(const std::vector<T>& values) {
  return values.empty() ? nullptr : values.data();
}

}  // namespace

CallCopy::CallCopy(const Call& call, int size)
    : sendcounts_(copied(call.sendcounts, size)),
      recvcounts_(copied(call.recvcounts, size)),
      sdispls_(copied(call.sdispls, size)),
      rdispls_(copied(call.rdispls, size)),
      call_(call) {
  call_.sendcounts = data_or_null(sendcounts_);
  call_.recvcounts = data_or_null(recvcounts_);
  call_.sdispls = data_or_null(sdispls_);
  call_.rdispls = data_or_null(rdispls_);
}

std::int64_t CallCopy::bytes() const {
  return static_cast<std::int64_t>((sendcounts_.capacity() + recvcounts_.capacity()) *
                                       sizeof(MPI_Count) +
                                   (sdispls_.capacity() + rdispls_.capacity()) * sizeof(MPI_Aint));
}

NonblockingBlocks::NonblockingBlocks(const Call& call, const CheckedCall& checked, int size)
    : copy_(call, size) {
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
