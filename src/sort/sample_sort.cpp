// Sample sort by regular sampling (Shi and Schaeffer 1992), as in the lecture's "Sorting"
// part ([Lecture14] in docs/references.md, "Splitter selection: regular
// sampling" and "Performance"): the non-template half of a2av::sample_sort (include/a2av/sort.hpp).
// Cost beyond the local sort and merge: one MPI_Allgather of s samples per rank (P s samples,
// sorted on every rank, O(P s log(P s))), one MPI_Alltoall of counts, one alltoallv of the data.
#include <a2av/sort.hpp>

#include "core/check.hpp"

#include <algorithm>
#include <tuple>

namespace a2av {

namespace {

struct RankedSample {
  detail::Sample sample;
  int rank;
};

bool before(const RankedSample& a, const RankedSample& b) {
  return std::tie(a.sample.key, a.rank, a.sample.index) <
         std::tie(b.sample.key, b.rank, b.sample.index);
}

std::vector<detail::Sample> allgather_samples(std::span<const detail::Sample> mine, MPI_Comm comm,
                                              int size) {
  std::vector<detail::Sample> all(mine.size() * static_cast<std::size_t>(size));
  const MPI_Datatype type = mpi_type<detail::Sample>();
  check_mpi(MPI_Allgather(mine.data(), static_cast<int>(mine.size()), type, all.data(),
                          static_cast<int>(mine.size()), type, comm),
            "MPI_Allgather");
  return all;
}

// ceil(i n / p) without forming i n, which can overflow for large n.
std::int64_t target(std::int64_t i, std::int64_t n, std::int64_t p) {
  return i * (n / p) + (i * (n % p) + p - 1) / p;
}

// Rank sizes ceil(n/p) + sum over ranks of (largest chunk - 1): the sample that reaches a
// target can overshoot it by its own chunk, and every other rank can hold up to one chunk
// below the splitter that no sample counted. With m = n/p on every rank and s | m this is the
// lecture's n/p + n/s - p.
std::int64_t bound_for(std::span<const std::int64_t> rank_counts, int s) {
  std::int64_t n = 0, slack = 0;
  for (std::int64_t m : rank_counts) {
    n += m;
    slack += std::max<std::int64_t>((m + s - 1) / s - 1, 0);
  }
  const auto p = static_cast<std::int64_t>(rank_counts.size());
  return (n + p - 1) / p + slack;
}

}  // namespace

int detail::samples_per_rank(const SortOptions& options, MPI_Comm comm) {
  if (options.samples < 0) fail(A2AV_ERR_ARG, "sample_sort: samples {} < 0", options.samples);
  if (options.samples > 0) return options.samples;
  int size = 1;
  check_mpi(MPI_Comm_size(comm, &size), "MPI_Comm_size");
  return size;
}

detail::Splitters detail::select_splitters(std::span<const Sample> mine, MPI_Comm comm) {
  int size = 1;
  check_mpi(MPI_Comm_size(comm, &size), "MPI_Comm_size");
  const auto all = allgather_samples(mine, comm, size);
  const std::size_t s = mine.size();

  std::vector<RankedSample> ranked;
  std::vector<std::int64_t> rank_counts(static_cast<std::size_t>(size));
  for (std::size_t i = 0; i < all.size(); ++i) {
    const int r = static_cast<int>(i / s);
    rank_counts[r] += all[i].weight;
    if (all[i].weight > 0) ranked.push_back({all[i], r});
  }
  std::sort(ranked.begin(), ranked.end(), before);

  // Splitter i is the first sample whose cumulative weight reaches ceil(i n / P): the weights
  // count elements known to lie at or below it, so splits follow element counts even when
  // ranks start with different amounts.
  Splitters result{.at = std::vector<Splitter>(size - 1, Splitter{0, 0, -1}),
                   .bound = bound_for(rank_counts, static_cast<int>(s))};
  std::int64_t n = 0, covered = 0;
  for (std::int64_t m : rank_counts) n += m;
  std::size_t next = 0;
  for (int i = 1; i < size && n > 0; ++i) {
    const std::int64_t goal = target(i, n, size);
    while (covered < goal) covered += ranked[next++].sample.weight;
    const RankedSample& hit = ranked[next - 1];
    result.at[i - 1] = {hit.sample.key, hit.rank, hit.sample.index};
  }
  return result;
}

Balance balance(std::int64_t count, MPI_Comm comm) {
  Balance b;
  check_mpi(MPI_Allreduce(&count, &b.total, 1, MPI_INT64_T, MPI_SUM, comm), "MPI_Allreduce");
  check_mpi(MPI_Allreduce(&count, &b.max_count, 1, MPI_INT64_T, MPI_MAX, comm), "MPI_Allreduce");
  return b;
}

SortResult sample_sort(std::vector<std::uint64_t>& keys, MPI_Comm comm,
                       const SortOptions& options) {
  return sample_sort(keys, detail::PlainKey{}, comm, options);
}

SortResult sample_sort(std::vector<KeyValue>& records, MPI_Comm comm, const SortOptions& options) {
  return sample_sort(records, detail::RecordKey{}, comm, options);
}

}  // namespace a2av
