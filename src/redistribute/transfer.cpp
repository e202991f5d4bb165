#include "core/check.hpp"
#include "core/tags.hpp"
#include "redistribute/engine.hpp"

namespace a2av::redist {

std::vector<std::int64_t> outgoing_counts(const Engine& e) {
  std::vector<std::int64_t> counts(e.ctx.size, 0);
  for (int r : e.store.rank)
    if (r >= 0) ++counts[r];
  return counts;
}

void transfer(Engine& e, const std::vector<SlotTransfer>& sends,
              const std::vector<SlotTransfer>& receives) {
  BlockStore& store = e.store;
  std::vector<std::vector<std::int64_t>> addresses(sends.size() + receives.size());
  std::vector<MPI_Datatype> types;
  std::vector<MPI_Request> requests;
  std::int64_t bytes = 0;
  auto post = [&](const SlotTransfer& t, std::vector<std::int64_t>& address, bool send) {
    if (t.slots.empty()) return;
    MPI_Datatype type = store.slots_type(t.slots);
    types.push_back(type);
    const int count = static_cast<int>(2 * t.slots.size());
    bytes += count * static_cast<std::int64_t>(sizeof(std::int64_t));
    MPI_Request r[2];
    if (send) {
      for (std::int64_t s : t.slots) address.insert(address.end(), {store.rank[s], store.index[s]});
      check_mpi(MPI_Isend(address.data(), count, MPI_INT64_T, t.peer,
                          tags::kRedistributeAddress.tag(), e.ctx.comm, &r[0]),
                "MPI_Isend");
      check_mpi(
          MPI_Isend(MPI_BOTTOM, 1, type, t.peer, tags::kRedistributeData.tag(), e.ctx.comm, &r[1]),
          "MPI_Isend");
    } else {
      address.resize(static_cast<std::size_t>(count));
      check_mpi(MPI_Irecv(address.data(), count, MPI_INT64_T, t.peer,
                          tags::kRedistributeAddress.tag(), e.ctx.comm, &r[0]),
                "MPI_Irecv");
      check_mpi(
          MPI_Irecv(MPI_BOTTOM, 1, type, t.peer, tags::kRedistributeData.tag(), e.ctx.comm, &r[1]),
          "MPI_Irecv");
    }
    requests.insert(requests.end(), {r[0], r[1]});
  };
  for (std::size_t k = 0; k < receives.size(); ++k) post(receives[k], addresses[k], false);
  for (std::size_t k = 0; k < sends.size(); ++k)
    post(sends[k], addresses[receives.size() + k], true);
  e.memory.allocate(bytes);
  check_mpi(MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE),
            "MPI_Waitall");
  e.memory.release(bytes);
  for (MPI_Datatype& t : types) MPI_Type_free(&t);
  for (const SlotTransfer& t : sends) {
    for (std::int64_t s : t.slots) store.rank[s] = -1;
    e.stats.blocks_moved += static_cast<std::int64_t>(t.slots.size());
  }
  for (std::size_t k = 0; k < receives.size(); ++k) {
    const auto& slots = receives[k].slots;
    for (std::size_t b = 0; b < slots.size(); ++b) {
      store.rank[slots[b]] = static_cast<int>(addresses[k][2 * b]);
      store.index[slots[b]] = addresses[k][2 * b + 1];
    }
  }
}

}  // namespace a2av::redist
