// parking: the Pinar-Hendrickson phase algorithm as MADRE implements it ([Siegel10],
// Section 3.1, Figure 3). Each phase: every rank asks each destination to take its blocks
// (MPI_Alltoall), destinations grant their free space first-fit in rank order, ranks that
// will still lack space after the phase park blocks on ranks with spare space (a root
// matches them, first-fit), and all granted and parked blocks move at once. A parked block
// keeps its address and moves on in a later phase. If no rank has a free slot, rank 0 adds
// one, so the algorithm always terminates.
//
// Beyond the paper: blocks are sorted by destination once, not after every phase (the
// re-sort is what made Figure 5(b) blow up); later phases address any slots through derived
// datatypes. Cost per phase: MPI_Allreduce, three MPI_Alltoall of P counts, MPI_Gather, the
// root's match (O(P)), and the moves. Extra memory: O(P) counts (O(P) more on the root), the
// addresses of the moving blocks (16 bytes each), one temporary block, maybe one extra slot.
#include "core/check.hpp"
#include "core/tags.hpp"
#include "redistribute/engine.hpp"

#include <numeric>

namespace a2av::redist {
namespace {

constexpr int kParkingRoot = 0;

std::vector<std::int64_t> alltoall(const Engine& e, const std::vector<std::int64_t>& v) {
  std::vector<std::int64_t> out(v.size());
  check_mpi(MPI_Alltoall(v.data(), 1, MPI_INT64_T, out.data(), 1, MPI_INT64_T, e.ctx.comm),
            "MPI_Alltoall");
  return out;
}

std::int64_t sum(const std::vector<std::int64_t>& v) {
  return std::accumulate(v.begin(), v.end(), std::int64_t{0});
}

// First fit: incoming requests granted in rank order while free space lasts.
std::vector<std::int64_t> grant(std::vector<std::int64_t> in, std::int64_t free) {
  for (std::int64_t& n : in) {
    n = std::min(n, free);
    free -= n;
  }
  return in;
}

// Root: parkers (delta > 0) take the hosts' spare space (delta < 0) first-fit. Sends each
// other parker its row; returns the root's own.
std::vector<std::int64_t> match_parking(const Engine& e, std::vector<std::int64_t> delta) {
  const int p = e.ctx.size;
  std::vector<std::int64_t> row(p), mine(p, 0);
  int host = 0;
  for (int parker = 0; parker < p; ++parker) {
    if (delta[parker] <= 0) continue;
    std::fill(row.begin(), row.end(), 0);
    for (std::int64_t need = delta[parker]; need > 0 && host < p;) {
      if (delta[host] >= 0) {
        ++host;
        continue;
      }
      const std::int64_t n = std::min(need, -delta[host]);
      row[host] += n;
      delta[host] += n;
      need -= n;
    }
    if (parker == kParkingRoot) {
      mine = row;
    } else {
      check_mpi(
          MPI_Send(row.data(), p, MPI_INT64_T, parker, tags::kRedistributePark.tag(), e.ctx.comm),
          "MPI_Send");
    }
  }
  return mine;
}

// How many blocks to park where this phase (zero unless this rank will lack space).
std::vector<std::int64_t> parking(const Engine& e, const std::vector<std::int64_t>& in,
                                  const std::vector<std::int64_t>& send, std::int64_t free,
                                  std::int64_t parkable) {
  const std::int64_t d = sum(in) - free, s = sum(send);
  std::int64_t delta = d < 0 ? d : (d > s ? std::min(d - s, parkable) : 0);
  std::vector<std::int64_t> all(e.ctx.rank == kParkingRoot ? e.ctx.size : 0);
  check_mpi(
      MPI_Gather(&delta, 1, MPI_INT64_T, all.data(), 1, MPI_INT64_T, kParkingRoot, e.ctx.comm),
      "MPI_Gather");
  if (e.ctx.rank == kParkingRoot) return match_parking(e, all);
  std::vector<std::int64_t> park(e.ctx.size, 0);
  if (delta > 0)
    check_mpi(MPI_Recv(park.data(), e.ctx.size, MPI_INT64_T, kParkingRoot,
                       tags::kRedistributePark.tag(), e.ctx.comm, MPI_STATUS_IGNORE),
              "MPI_Recv");
  return park;
}

// The slots of one phase: direct[i] blocks bound for i, then park[j] blocks bound
// elsewhere (taken from the highest slots) for host j; receives fill the first free slots.
void execute_phase(Engine& e, const std::vector<std::int64_t>& direct,
                   const std::vector<std::int64_t>& park, const std::vector<std::int64_t>& recv) {
  const int p = e.ctx.size, me = e.ctx.rank;
  BlockStore& store = e.store;
  std::vector<SlotTransfer> sends, receives;
  std::vector<std::int64_t> left = direct;
  std::vector<bool> taken(static_cast<std::size_t>(store.slots()), false);
  for (int i = 0; i < p; ++i) sends.push_back({i, {}});
  for (std::int64_t s = 0; s < store.slots(); ++s) {
    const int r = store.rank[s];
    if (r >= 0 && r != me && left[r] > 0) {
      sends[r].slots.push_back(s);
      --left[r];
      taken[s] = true;
    }
  }
  std::int64_t s = store.slots();
  for (int j = 0; j < p; ++j)
    for (std::int64_t n = park[j]; n > 0; --n) {
      do --s;
      while (taken[s] || store.rank[s] < 0 || store.rank[s] == me);
      sends[j].slots.push_back(s);
    }
  const std::vector<std::int64_t> free = store.free_slots(sum(recv));
  auto next = free.begin();
  for (int i = 0; i < p; ++i) {
    receives.push_back({i, {next, next + recv[i]}});
    next += recv[i];
  }
  transfer(e, sends, receives);
}

}  // namespace

void run_parking(Engine& e) {
  const int me = e.ctx.rank;
  e.stats.local_copies += e.store.sort_by_destination();
  std::int64_t total_free = e.store.free_count();
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, &total_free, 1, MPI_INT64_T, MPI_SUM, e.ctx.comm),
            "MPI_Allreduce");
  if (total_free == 0 && me == kParkingRoot) e.store.add_extra_slots(1);
  for (;;) {
    std::vector<std::int64_t> out = outgoing_counts(e);
    out[me] = 0;
    std::int64_t remaining = sum(out);
    check_mpi(MPI_Allreduce(MPI_IN_PLACE, &remaining, 1, MPI_INT64_T, MPI_SUM, e.ctx.comm),
              "MPI_Allreduce");
    if (remaining == 0) return;
    const std::vector<std::int64_t> in = alltoall(e, out);
    const std::int64_t free = e.store.free_count();
    const std::vector<std::int64_t> direct = alltoall(e, grant(in, free));
    const std::vector<std::int64_t> park = parking(e, in, direct, free, sum(out) - sum(direct));
    std::vector<std::int64_t> send(direct.size());
    for (std::size_t i = 0; i < send.size(); ++i) send[i] = direct[i] + park[i];
    execute_phase(e, direct, park, alltoall(e, send));
    ++e.stats.steps;
  }
}

}  // namespace a2av::redist
