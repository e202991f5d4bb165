// The census and the three exchanges plus the block redistribution of exchange.hpp.
#include "exchange.hpp"

#include <a2av/alltoallv.hpp>
#include <a2av/inplace.hpp>
#include <a2av/mpi_type.hpp>

#include <algorithm>
#include <numeric>
#include <utility>

namespace particles {

namespace {

// Orders parts by owner rank (counts[d] of them go to rank d), in place: an American flag
// sort, O(P) extra memory, each swap putting one particle into its final bucket.
void sort_by_owner(std::span<Particle> parts, std::span<const MPI_Count> counts,
                   const Decomposition& decomposition) {
  std::vector<MPI_Count> next(counts.size()), end(counts.size());
  MPI_Count at = 0;
  for (std::size_t d = 0; d < counts.size(); ++d) {
    next[d] = at;
    at += counts[d];
    end[d] = at;
  }
  for (std::size_t d = 0; d < counts.size(); ++d) {
    while (next[d] < end[d]) {
      Particle& p = parts[static_cast<std::size_t>(next[d])];
      const auto owner = static_cast<std::size_t>(decomposition.owner(p));
      if (owner == d)
        ++next[d];
      else
        std::swap(p, parts[static_cast<std::size_t>(next[owner]++)]);
    }
  }
}

// Moves the particles that stay on `rank` to the front; returns how many there are.
std::int64_t keep_stayers_in_front(std::span<Particle> parts, const Decomposition& decomposition,
                                   int rank) {
  const auto split = std::partition(parts.begin(), parts.end(), [&](const Particle& p) {
    return decomposition.owner(p) == rank;
  });
  return split - parts.begin();
}

}  // namespace

std::int64_t Census::max_total() const {
  return totals.empty() ? 0 : *std::max_element(totals.begin(), totals.end());
}

std::int64_t Census::leavers() const {
  std::int64_t moved = 0;
  for (std::size_t r = 0; r < counts.size(); ++r) moved += counts[r] - stays[r];
  return moved;
}

Census take_census(std::span<const Particle> parts, const Decomposition& decomposition,
                   std::uint64_t local_state_sum, MPI_Comm comm) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const auto p = static_cast<std::size_t>(size), r = static_cast<std::size_t>(rank);
  // One reduction carries everything: the destination counts summed over ranks, and every
  // rank's own stay and particle counts in its slot of two more P-vectors (a sum of vectors
  // that are zero elsewhere is an allgather).
  std::vector<std::uint64_t> all(3 * p + 1, 0);
  for (const Particle& q : parts) ++all[static_cast<std::size_t>(decomposition.owner(q))];
  Census census;
  census.to.assign(all.begin(), all.begin() + size);
  all[p + r] = all[r];
  all[2 * p + r] = parts.size();
  all[3 * p] = local_state_sum;
  MPI_Allreduce(MPI_IN_PLACE, all.data(), static_cast<int>(all.size()), MPI_UINT64_T, MPI_SUM,
                comm);
  census.totals.assign(all.begin(), all.begin() + size);
  census.stays.assign(all.begin() + size, all.begin() + 2 * size);
  census.counts.assign(all.begin() + 2 * size, all.begin() + 3 * size);
  census.state_sum = all[3 * p];
  return census;
}

Router::Router(Exchange exchange, std::string inplace_spec, const std::string& redistribute_spec,
               std::span<Particle> slots, MPI_Comm comm)
    : exchange_(exchange), inplace_spec_(std::move(inplace_spec)), slots_(slots), comm_(comm) {
  MPI_Comm_rank(comm, &rank_);
  MPI_Comm_size(comm, &size_);
  if (!redistribute_spec.empty())
    redistributor_ =
        std::make_unique<a2av::Redistributor>(slots.data(), static_cast<MPI_Count>(slots.size()),
                                              MPI_Count{sizeof(Particle)}, comm, redistribute_spec);
}

Router::~Router() = default;

std::int64_t Router::route(std::int64_t n, const Decomposition& decomposition, const Census& census,
                           bool rebalance) {
  if (rebalance && redistributor_) return redistribute(n, decomposition, census);
  if (exchange_ == Exchange::inplace) return in_place(n, decomposition, census);
  return out_of_place(n, decomposition, census);
}

void Router::note_extra(std::int64_t buffer_bytes, std::int64_t library_bytes) {
  stats_.peak_extra_bytes = std::max(stats_.peak_extra_bytes, buffer_bytes + library_bytes);
  stats_.peak_library_bytes = std::max(stats_.peak_library_bytes, library_bytes);
}

// The leavers are sent straight from the array (sorted by destination behind the particles
// that stay); what arrives needs a receive buffer, because an out-of-place exchange may not
// write where it still reads.
std::int64_t Router::out_of_place(std::int64_t n, const Decomposition& decomposition,
                                  const Census& census) {
  double t0 = MPI_Wtime();
  const auto all = slots_.first(static_cast<std::size_t>(n));
  const std::int64_t stay = keep_stayers_in_front(all, decomposition, rank_);
  std::vector<MPI_Count> sendcounts(census.to.begin(), census.to.end());
  sendcounts[static_cast<std::size_t>(rank_)] = 0;
  sort_by_owner(all.subspan(static_cast<std::size_t>(stay)), sendcounts, decomposition);
  const double t1 = MPI_Wtime();
  stats_.sort_seconds += t1 - t0;

  std::vector<MPI_Count> recvcounts(sendcounts.size());
  MPI_Alltoall(sendcounts.data(), 1, MPI_COUNT, recvcounts.data(), 1, MPI_COUNT, comm_);
  const auto sdispls = a2av::packed_displacements(sendcounts);
  const auto rdispls = a2av::packed_displacements(recvcounts);
  const std::int64_t arrivals = std::accumulate(recvcounts.begin(), recvcounts.end(), MPI_Count{0});
  std::vector<Particle> received(static_cast<std::size_t>(arrivals));
  const MPI_Datatype type = a2av::mpi_type<Particle>();
  const Particle* send = slots_.data() + stay;
  std::int64_t library_bytes = 0;
  if (exchange_ == Exchange::vendor) {
    // Counts fit in int: the capacity is checked against INT_MAX at startup.
    const auto narrow = [](const auto& v) { return std::vector<int>(v.begin(), v.end()); };
    const auto sc = narrow(sendcounts), sd = narrow(sdispls), rc = narrow(recvcounts),
               rd = narrow(rdispls);
    MPI_Alltoallv(send, sc.data(), sd.data(), type, received.data(), rc.data(), rd.data(), type,
                  comm_);
    ++stats_.algorithms["MPI_Alltoallv"];
  } else {
    a2av::CallInfo info;
    a2av::alltoallv(send, sendcounts, sdispls, type, received.data(), recvcounts, rdispls, type,
                    comm_, {.algorithm = "auto", .info = &info});
    library_bytes = info.peak_temp_bytes;
    ++stats_.algorithms[info.algorithm];
  }
  std::copy(received.begin(), received.end(), slots_.begin() + stay);
  stats_.exchange_seconds += MPI_Wtime() - t1;
  note_extra(arrivals * static_cast<std::int64_t>(sizeof(Particle)), library_bytes);
  return stay + arrivals;
}

// Exchanges only the leavers, in the free part of the array behind the particles that stay,
// when that part holds what the in-place exchange needs on every rank (C = the largest
// number of leavers or arrivals of any rank); otherwise (a rebalance that moves most
// particles) the whole array, own block included, for which the capacity always suffices.
std::int64_t Router::in_place(std::int64_t n, const Decomposition& decomposition,
                              const Census& census) {
  double t0 = MPI_Wtime();
  std::int64_t need = 0, room = static_cast<std::int64_t>(slots_.size());
  for (std::size_t r = 0; r < census.totals.size(); ++r) {
    need = std::max({need, census.counts[r] - census.stays[r], census.totals[r] - census.stays[r]});
    room = std::min(room, static_cast<std::int64_t>(slots_.size()) - census.stays[r]);
  }
  const bool leavers_only = need <= room;
  const auto all = slots_.first(static_cast<std::size_t>(n));
  std::int64_t stay = 0;
  std::vector<MPI_Count> sendcounts(census.to.begin(), census.to.end());
  if (leavers_only) {
    stay = keep_stayers_in_front(all, decomposition, rank_);
    sendcounts[static_cast<std::size_t>(rank_)] = 0;
  }
  sort_by_owner(all.subspan(static_cast<std::size_t>(stay)), sendcounts, decomposition);
  const double t1 = MPI_Wtime();
  stats_.sort_seconds += t1 - t0;

  a2av::InplaceInfo info;
  const auto received =
      a2av::exchange_inplace(slots_.data() + stay, static_cast<MPI_Count>(slots_.size()) - stay,
                             sendcounts, a2av::mpi_type<Particle>(), comm_, inplace_spec_, &info);
  stats_.exchange_seconds += MPI_Wtime() - t1;
  note_extra(0, info.peak_temp_bytes);
  ++stats_.algorithms[info.algorithm + (leavers_only ? " (leavers)" : " (whole array)")];
  return stay + std::accumulate(received.begin(), received.end(), MPI_Count{0});
}

// Every slot is a block: particle i goes to slot offset[d] + (its place among this rank's
// particles for d) of its owner d, where offset[d] counts the particles lower ranks send to
// d; free slots move nowhere. The block map is the price of this engine: 12 bytes per slot.
std::int64_t Router::redistribute(std::int64_t n, const Decomposition& decomposition,
                                  const Census& census) {
  double t0 = MPI_Wtime();
  std::vector<std::int64_t> offset(census.to.size(), 0);
  MPI_Exscan(census.to.data(), offset.data(), size_, MPI_INT64_T, MPI_SUM, comm_);
  if (rank_ == 0) std::fill(offset.begin(), offset.end(), 0);  // Exscan leaves rank 0's undefined
  const double t1 = MPI_Wtime();
  std::vector<int> dest_rank(slots_.size(), -1);
  std::vector<MPI_Count> dest_index(slots_.size(), 0);
  for (std::size_t i = 0; i < static_cast<std::size_t>(n); ++i) {
    const int owner = decomposition.owner(slots_[i]);
    dest_rank[i] = owner;
    dest_index[i] = offset[static_cast<std::size_t>(owner)]++;
  }
  const double t2 = MPI_Wtime();
  stats_.sort_seconds += t2 - t1;
  const a2av::RedistStats run = redistributor_->run(dest_rank, dest_index);
  stats_.exchange_seconds += (t1 - t0) + (MPI_Wtime() - t2);
  note_extra(static_cast<std::int64_t>(slots_.size() * (sizeof(int) + sizeof(MPI_Count))),
             run.peak_temp_bytes);
  ++stats_.algorithms["redistribute " + run.algorithm];
  return census.totals[static_cast<std::size_t>(rank_)];
}

}  // namespace particles
