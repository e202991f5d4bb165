#include "driver/nonblocking_blocks.hpp"

#include <algorithm>
#include <cstring>

namespace a2av {

NonblockingBlocks::NonblockingBlocks(const Call& call, const CheckedCall& checked, int size)
    : sendcounts_(call.sendcounts, call.sendcounts + size),
      recvcounts_(call.recvcounts, call.recvcounts + size),
      sdispls_(call.sdispls, call.sdispls + size),
      rdispls_(call.rdispls, call.rdispls + size) {
  Call owned = call;
  owned.sendcounts = sendcounts_.data();
  owned.recvcounts = recvcounts_.data();
  owned.sdispls = sdispls_.data();
  owned.rdispls = rdispls_.data();
  view_.assign(owned, checked, memory_);
  view_.begin();
}

bool NonblockingBlocks::copy_own_block(int rank) const {
  const std::int64_t bytes = std::min(send().bytes[rank], recv().bytes[rank]);
  if (bytes > 0) std::memcpy(recv().at(rank), send().at(rank), bytes);
  return send().bytes[rank] == recv().bytes[rank];
}

std::int64_t NonblockingBlocks::temp_bytes() const {
  const auto arrays = static_cast<std::int64_t>(sendcounts_.size() *
                                                (2 * sizeof(MPI_Count) + 2 * sizeof(MPI_Aint)));
  return memory_.peak() + arrays;
}

}  // namespace a2av
