#include "buffers.hpp"

#include <a2av/a2av.h>
#include <a2av/alltoallv.hpp>

#include <algorithm>
#include <cstring>

namespace a2av::bench {
namespace {

constexpr unsigned char kPoison = 0xA5;
constexpr std::size_t kGuard = 64;  // poisoned bytes past the receive blocks catch overruns

unsigned char encoded(int src, int dst, std::int64_t index) {
  return static_cast<unsigned char>((src * 131 + dst * 31 + index * 7) & 0xff);
}

std::vector<int> as_int(const auto& values) {
  return {values.begin(), values.end()};
}

}  // namespace

Buffers::Buffers(const CountMatrix& bytes, int rank, const Datatype& type)
    : rank_(rank), type_(type) {
  for (std::size_t peer = 0; peer < bytes.size(); ++peer) {
    sendcounts_.push_back(bytes[rank][peer] / type.bytes);
    recvcounts_.push_back(bytes[peer][rank] / type.bytes);
    for (const auto& row : bytes)
      max_block_bytes_ = std::max(max_block_bytes_, row[peer] / type.bytes * type.bytes);
  }
  sdispls_ = a2av::packed_displacements(sendcounts_);
  rdispls_ = a2av::packed_displacements(recvcounts_);
  sendcounts_int_ = as_int(sendcounts_);
  recvcounts_int_ = as_int(recvcounts_);
  sdispls_int_ = as_int(sdispls_);
  rdispls_int_ = as_int(rdispls_);
  send_.resize((sdispls_.back() + sendcounts_.back()) * type.bytes);
  for (std::size_t peer = 0; peer < sendcounts_.size(); ++peer)
    for (std::int64_t k = 0; k < sendcounts_[peer] * type.bytes; ++k)
      send_[sdispls_[peer] * type.bytes + k] = encoded(rank, static_cast<int>(peer), k);
  recv_.resize((rdispls_.back() + recvcounts_.back()) * type.bytes + kGuard);
}

int Buffers::run_baseline() {
  return MPI_Alltoallv(send_.data(), sendcounts_int_.data(), sdispls_int_.data(), type_.type,
                       recv_.data(), recvcounts_int_.data(), rdispls_int_.data(), type_.type,
                       MPI_COMM_WORLD);
}

int Buffers::run(const std::string& spec) {
  return A2AV_Alltoallv_with(spec.c_str(), send_.data(), sendcounts_.data(), sdispls_.data(),
                             type_.type, recv_.data(), recvcounts_.data(), rdispls_.data(),
                             type_.type, MPI_COMM_WORLD);
}

void Buffers::run_copy_bound() {
  const std::size_t bytes = recv_.size() - kGuard;  // the blocks are packed: one region
  if (copy_source_.size() != bytes) copy_source_.assign(bytes, 1);
  std::memcpy(recv_.data(), copy_source_.data(), bytes);
}

void Buffers::poison() {
  std::fill(recv_.begin(), recv_.end(), kPoison);
}

std::int64_t Buffers::first_wrong_byte() const {
  for (std::size_t src = 0; src < recvcounts_.size(); ++src)
    for (std::int64_t k = 0; k < recvcounts_[src] * type_.bytes; ++k) {
      const std::int64_t at = rdispls_[src] * type_.bytes + k;
      if (recv_[at] != encoded(static_cast<int>(src), rank_, k)) return at;
    }
  const auto guard = recv_.end() - kGuard;
  const auto touched = std::find_if(guard, recv_.end(), [](auto c) { return c != kPoison; });
  return touched == recv_.end() ? -1 : touched - recv_.begin();
}

std::int64_t Buffers::first_difference() const {
  const auto at = std::mismatch(recv_.begin(), recv_.end(), reference_.begin()).first;
  return at == recv_.end() ? -1 : at - recv_.begin();
}

}  // namespace a2av::bench
