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

// Whether `values` holds the `size` values of `copy`.
template <class T, class U>
bool same(const T* values, int size, const std::vector<U>& copy) {
  return values && copy.size() == static_cast<std::size_t>(size) &&
         std::equal(copy.begin(), copy.end(), values);
}

}  // namespace

void CallCopy::assign(const Call& call, int size, const TypeInfo& send_type,
                      const TypeInfo& recv_type) {
  send_type_ = send_type;
  recv_type_ = recv_type;
  call_ = call;
  call_.sendcounts = copied(call.sendcounts, size, sendcounts_);
  call_.recvcounts = copied(call.recvcounts, size, recvcounts_);
  call_.sdispls = copied(call.sdispls, size, sdispls_);
  call_.rdispls = copied(call.rdispls, size, rdispls_);
}

bool CallCopy::repeats(const Call& call, int size) const {
  if (call.in_place() || call.rejected || call.sendbuf != call_.sendbuf ||
      call.recvbuf != call_.recvbuf || call.sendtype != call_.sendtype ||
      call.recvtype != call_.recvtype || call.comm != call_.comm ||
      !same(call.sendcounts, size, sendcounts_) || !same(call.sdispls, size, sdispls_) ||
      !same(call.recvcounts, size, recvcounts_) || !same(call.rdispls, size, rdispls_))
    return false;
  const TypeInfo recv_type = type_info(call.recvtype);
  const TypeInfo send_type = call.sendtype == call.recvtype ? recv_type : type_info(call.sendtype);
  return send_type == send_type_ && recv_type == recv_type_;
}

std::int64_t CallCopy::bytes() const {
  return static_cast<std::int64_t>((sendcounts_.capacity() + recvcounts_.capacity()) *
                                       sizeof(MPI_Count) +
                                   (sdispls_.capacity() + rdispls_.capacity()) * sizeof(MPI_Aint));
}

void NonblockingBlocks::assign(const Call& call, const CheckedCall& checked, int size) {
  copy_.assign(call, size, checked.send_type, checked.recv_type);
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
