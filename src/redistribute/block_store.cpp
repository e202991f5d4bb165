#include "redistribute/block_store.hpp"

#include "core/check.hpp"
#include "redistribute/transmutation.hpp"

#include <algorithm>
#include <cstring>

namespace a2av::redist {

BlockStore::BlockStore(std::byte* blocks, std::int64_t n, std::int64_t block_bytes,
                       MemoryTracker& memory)
    : rank(static_cast<std::size_t>(n), -1),
      index(static_cast<std::size_t>(n), -1),
      user_(blocks),
      n_(n),
      block_bytes_(block_bytes),
      memory_(memory),
      temporary_(memory, block_bytes) {
  memory_.allocate(n * static_cast<std::int64_t>(sizeof(int) + sizeof(std::int64_t)));
  check_mpi(MPI_Type_contiguous(static_cast<int>(block_bytes), MPI_BYTE, &block_type_),
            "MPI_Type_contiguous");
  check_mpi(MPI_Type_commit(&block_type_), "MPI_Type_commit");
}

BlockStore::~BlockStore() {
  memory_.release(n_ * static_cast<std::int64_t>(sizeof(int) + sizeof(std::int64_t)));
  if (block_type_ != MPI_DATATYPE_NULL) MPI_Type_free(&block_type_);
}

void BlockStore::add_extra_slots(std::int64_t count) {
  extra_ = TempBuffer(memory_, count * block_bytes_);
  rank.resize(static_cast<std::size_t>(n_ + count), -1);
  index.resize(static_cast<std::size_t>(n_ + count), -1);
}

std::int64_t BlockStore::free_count() const {
  std::int64_t free = 0;
  for (int r : rank) free += r < 0;
  return free;
}

std::vector<std::int64_t> BlockStore::free_slots(std::int64_t count) const {
  std::vector<std::int64_t> slots;
  for (std::int64_t i = 0; i < this->slots() && static_cast<std::int64_t>(slots.size()) < count;
       ++i)
    if (rank[i] < 0) slots.push_back(i);
  return slots;
}

std::int64_t BlockStore::apply(std::span<const std::int64_t> p) {
  // The local algorithm's inverse map and the new metadata arrays, while they live.
  const std::int64_t scratch =
      slots() * static_cast<std::int64_t>(2 * sizeof(std::int64_t) + sizeof(int));
  memory_.allocate(scratch);
  const std::int64_t copies = local_redistribute(p, [this](std::int64_t to, std::int64_t from) {
    std::byte* dst = to == kTemporary ? temporary_.data() : slot(to);
    const std::byte* src = from == kTemporary ? temporary_.data() : slot(from);
    std::memcpy(dst, src, static_cast<std::size_t>(block_bytes_));
  });
  std::vector<int> new_rank(rank.size(), -1);
  std::vector<std::int64_t> new_index(index.size(), -1);
  for (std::size_t i = 0; i < p.size(); ++i)
    if (p[i] >= 0) new_rank[p[i]] = rank[i], new_index[p[i]] = index[i];
  rank.swap(new_rank);
  index.swap(new_index);
  memory_.release(scratch);
  return copies;
}

std::int64_t BlockStore::sort_by_destination() {
  // Counting sort by rank: first[r] is where rank r's blocks begin.
  int top = -1;
  for (int r : rank) top = std::max(top, r);
  std::vector<std::int64_t> first(static_cast<std::size_t>(top + 2), 0);
  for (int r : rank)
    if (r >= 0) ++first[r + 1];
  for (std::size_t r = 1; r < first.size(); ++r) first[r] += first[r - 1];
  std::vector<std::int64_t> p(rank.size(), -1);
  for (std::size_t i = 0; i < rank.size(); ++i)
    if (rank[i] >= 0) p[i] = first[rank[i]]++;
  return apply(p);
}

std::int64_t BlockStore::place_by_index() {
  std::vector<std::int64_t> p(rank.size(), -1);
  for (std::size_t i = 0; i < rank.size(); ++i)
    if (rank[i] >= 0) p[i] = index[i];
  return apply(p);
}

MPI_Datatype BlockStore::slots_type(std::span<const std::int64_t> slots) {
  std::vector<int> lengths;
  std::vector<MPI_Aint> addresses;
  for (std::size_t k = 0; k < slots.size(); ++k) {
    if (k > 0 && slots[k] == slots[k - 1] + 1 && slots[k] != n_) {
      ++lengths.back();
      continue;
    }
    MPI_Aint address;
    check_mpi(MPI_Get_address(slot(slots[k]), &address), "MPI_Get_address");
    lengths.push_back(1);
    addresses.push_back(address);
  }
  MPI_Datatype type;
  check_mpi(MPI_Type_create_hindexed(static_cast<int>(lengths.size()), lengths.data(),
                                     addresses.data(), block_type_, &type),
            "MPI_Type_create_hindexed");
  check_mpi(MPI_Type_commit(&type), "MPI_Type_commit");
  return type;
}

}  // namespace a2av::redist
