// Parallel sorting over the a2av exchange, after the lecture's "Sorting" part
// ([Lecture14] in docs/references.md, "Bucket sort" to "Determining the send
// and receive lists").
//
//  - a2av::sample_sort: sample sort by regular sampling (Shi and Schaeffer 1992): local sort,
//    s evenly spaced samples per rank, P-1 splitters, the count exchange (MPI_Alltoall), the
//    data exchange (a2av::alltoallv, any algorithm spec), and a P-way merge of the sorted
//    runs that arrive. Ties are broken by (key, rank, index in the rank's sorted input), a
//    strict total order, so duplicate keys cannot unbalance the result: no rank ends with
//    more than SortResult::bound elements, which is the lecture's n/p + n/s - p when every
//    rank starts with n/p elements and s divides n/p (docs/sort.md derives the general form).
//  - a2av::bucket_sort: the lecture's bucket sort for uniform keys: rank j owns the j-th of P
//    equal subranges of [min_key, max_key]; keys are routed to their owner and sorted there.
//    No balance guarantee: skewed keys pile onto a few ranks.
//
// Both are collective over `comm`, take the same options on every rank, replace `data` with
// this rank's slice of the global order (rank 0 the smallest keys) and throw a2av::Error.
// After an error `data` holds the same elements as before, possibly reordered.
#pragma once

#include <a2av/alltoallv.hpp>
#include <a2av/error.hpp>
#include <a2av/mpi_type.hpp>

#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace a2av {

struct SortOptions {
  std::string_view algorithm{};  // exchange spec: "" or "auto": a2av's selection (A2AV_ALGORITHM
                                 // first when ""), "vendor": the MPI library's MPI_Alltoallv
  int samples = 0;               // sample sort: s, samples per rank; 0: P (regular sampling)
  std::uint64_t min_key = 0;     // bucket sort: the key range split into P equal subranges;
  std::uint64_t max_key = std::numeric_limits<std::uint64_t>::max();  // keys outside it go to
                                                                      // the first or last rank
};

// Seconds this rank spent in each phase. Sample sort: local sort, splitters (sampling, the
// sample allgather, splitter selection, partition and count exchange), exchange (the data
// alltoallv alone), merge. Bucket sort: splitters is bucket assignment and count exchange,
// local_sort the sort of what arrived, merge 0.
struct SortTimes {
  double local_sort = 0, splitters = 0, exchange = 0, merge = 0;
  double total() const { return local_sort + splitters + exchange + merge; }
};

struct SortResult {
  SortTimes seconds;
  std::string algorithm;    // the exchange spec that ran ("vendor", "spread_out", ...)
  std::int64_t count = 0;   // elements this rank holds now
  std::int64_t bound = -1;  // sample sort: no rank holds more (same on every rank); bucket: -1
};

// A key-value record; any trivially copyable type with a key projection works too.
struct KeyValue {
  std::uint64_t key;
  std::uint64_t value;
};

SortResult sample_sort(std::vector<std::uint64_t>& keys, MPI_Comm comm,
                       const SortOptions& options = {});
SortResult sample_sort(std::vector<KeyValue>& records, MPI_Comm comm,
                       const SortOptions& options = {});
SortResult bucket_sort(std::vector<std::uint64_t>& keys, MPI_Comm comm,
                       const SortOptions& options = {});
SortResult bucket_sort(std::vector<KeyValue>& records, MPI_Comm comm,
                       const SortOptions& options = {});

// The lecture's bound on the largest rank after sample sort, n/p + n/s - p (rounded down).
inline std::int64_t lecture_bound(std::int64_t n, int p, int s) {
  return n / p + n / s - p;
}

// Sum of the counts and the largest count over the ranks of comm (two MPI_Allreduce).
struct Balance {
  std::int64_t total = 0, max_count = 0;
};
Balance balance(std::int64_t count, MPI_Comm comm);

namespace detail {

// One regular sample: the last element of a chunk of a rank's sorted input. weight is the
// chunk's length (0: no element; a placeholder so every rank sends s samples).
struct Sample {
  std::uint64_t key;
  std::int64_t index;
  std::int64_t weight;
};

// A splitter in the (key, rank, index) order; elements at or below it go left of it.
struct Splitter {
  std::uint64_t key;
  int rank;
  std::int64_t index;
};

// The key projections of the non-template overloads.
struct PlainKey {
  std::uint64_t operator()(std::uint64_t key) const { return key; }
};
struct RecordKey {
  std::uint64_t operator()(const KeyValue& record) const { return record.key; }
};

struct Splitters {
  std::vector<Splitter> at;  // P-1, ascending; {0, 0, -1} is below every element
  std::int64_t bound = 0;    // largest possible rank size after the split
};

int samples_per_rank(const SortOptions& options, MPI_Comm comm);
// Allgathers every rank's s samples and picks the P-1 splitters (identical on every rank).
Splitters select_splitters(std::span<const Sample> mine, MPI_Comm comm);
// Bucket of a key: its subrange of [min_key, max_key] among `parts` equal ones, clamped.
int bucket_of(std::uint64_t key, const SortOptions& options, int parts);
void check_bucket_options(const SortOptions& options);

// Elements of rank `rank`'s sorted keys at or below splitter sp in the (key, rank, index) order.
template <class T, class KeyOf>
std::int64_t count_at_or_below(std::span<const T> sorted, KeyOf key_of, int rank,
                               const Splitter& sp) {
  const auto less_key = [&](const T& x, std::uint64_t k) { return key_of(x) < k; };
  const auto key_less = [&](std::uint64_t k, const T& x) { return k < key_of(x); };
  if (rank == sp.rank) return sp.index + 1;
  const auto it = rank < sp.rank ? std::upper_bound(sorted.begin(), sorted.end(), sp.key, key_less)
                                 : std::lower_bound(sorted.begin(), sorted.end(), sp.key, less_key);
  return it - sorted.begin();
}

// Samples at the chunk ends floor((k+1) m / s) - 1, k = 0..s-1, of sorted data of length m.
template <class T, class KeyOf>
std::vector<Sample> regular_samples(std::span<const T> sorted, KeyOf key_of, int s) {
  std::vector<Sample> samples(static_cast<std::size_t>(s));
  const auto m = static_cast<std::int64_t>(sorted.size());
  std::int64_t begin = 0;
  for (int k = 0; k < s; ++k) {
    const std::int64_t end = (k + 1) * (m / s) + (k + 1) * (m % s) / s;
    samples[k] = {end > begin ? key_of(sorted[end - 1]) : 0, end - 1, end - begin};
    begin = end;
  }
  return samples;
}

// Merges the sorted runs in `runs` (counts[j] elements each, back to back) pairwise, keeping
// equal keys in run order so the (key, rank, index) order survives.
template <class T, class KeyOf>
std::vector<T> merge_runs(std::vector<T> runs, std::span<const MPI_Count> counts, KeyOf key_of) {
  std::vector<std::size_t> bounds{0};
  for (MPI_Count c : counts) bounds.push_back(bounds.back() + static_cast<std::size_t>(c));
  std::vector<T> other(runs.size());
  const auto by_key = [&](const T& a, const T& b) { return key_of(a) < key_of(b); };
  while (bounds.size() > 2) {
    std::vector<std::size_t> merged{0};
    for (std::size_t r = 0; r + 1 < bounds.size(); r += 2) {
      const std::size_t end = bounds[std::min(r + 2, bounds.size() - 1)];
      std::merge(runs.begin() + bounds[r], runs.begin() + bounds[r + 1],
                 runs.begin() + bounds[r + 1], runs.begin() + end, other.begin() + bounds[r],
                 by_key);
      merged.push_back(end);
    }
    runs.swap(other);
    bounds = std::move(merged);
  }
  return runs;
}

}  // namespace detail

// Sample sort of any trivially copyable T by the std::uint64_t key_of(element).
template <class T, class KeyOf>
SortResult sample_sort(std::vector<T>& data, KeyOf key_of, MPI_Comm comm,
                       const SortOptions& options = {}) {
  SortResult result;
  const int s = detail::samples_per_rank(options, comm);
  int rank = 0;
  MPI_Comm_rank(comm, &rank);

  double t = MPI_Wtime();
  std::sort(data.begin(), data.end(),
            [&](const T& a, const T& b) { return key_of(a) < key_of(b); });
  result.seconds.local_sort = MPI_Wtime() - t;

  t = MPI_Wtime();
  const std::span<const T> sorted(data);
  const auto splitters = detail::select_splitters(detail::regular_samples(sorted, key_of, s), comm);
  std::vector<MPI_Count> sendcounts;
  std::int64_t below = 0;
  for (const auto& sp : splitters.at) {
    const std::int64_t upto = detail::count_at_or_below(sorted, key_of, rank, sp);
    sendcounts.push_back(upto - below);
    below = upto;
  }
  sendcounts.push_back(static_cast<std::int64_t>(data.size()) - below);
  const auto recvcounts = exchange_counts(sendcounts, comm);
  result.seconds.splitters = MPI_Wtime() - t;

  t = MPI_Wtime();
  CallInfo info;
  auto received = exchange<T>(sorted, sendcounts, comm,
                              {.algorithm = options.algorithm, .info = &info}, recvcounts);
  result.seconds.exchange = MPI_Wtime() - t;

  t = MPI_Wtime();
  data = detail::merge_runs(std::move(received), recvcounts, key_of);
  result.seconds.merge = MPI_Wtime() - t;

  result.algorithm = info.algorithm;
  result.count = static_cast<std::int64_t>(data.size());
  result.bound = splitters.bound;
  return result;
}

// Bucket sort of any trivially copyable T by the std::uint64_t key_of(element).
template <class T, class KeyOf>
SortResult bucket_sort(std::vector<T>& data, KeyOf key_of, MPI_Comm comm,
                       const SortOptions& options = {}) {
  detail::check_bucket_options(options);
  SortResult result;
  int size = 1;
  MPI_Comm_size(comm, &size);

  double t = MPI_Wtime();
  std::vector<int> bucket(data.size());
  std::vector<MPI_Count> sendcounts(static_cast<std::size_t>(size));
  for (std::size_t i = 0; i < data.size(); ++i) {
    bucket[i] = detail::bucket_of(key_of(data[i]), options, size);
    ++sendcounts[bucket[i]];
  }
  auto next = packed_displacements(sendcounts);  // where each bucket's next element goes
  std::vector<T> send(data.size());
  for (std::size_t i = 0; i < data.size(); ++i) send[next[bucket[i]]++] = data[i];
  const auto recvcounts = exchange_counts(sendcounts, comm);
  result.seconds.splitters = MPI_Wtime() - t;

  t = MPI_Wtime();
  CallInfo info;
  auto received = exchange<T>(std::span<const T>(send), sendcounts, comm,
                              {.algorithm = options.algorithm, .info = &info}, recvcounts);
  result.seconds.exchange = MPI_Wtime() - t;

  t = MPI_Wtime();
  std::sort(received.begin(), received.end(),
            [&](const T& a, const T& b) { return key_of(a) < key_of(b); });
  data = std::move(received);
  result.seconds.local_sort = MPI_Wtime() - t;

  result.algorithm = info.algorithm;
  result.count = static_cast<std::int64_t>(data.size());
  return result;
}

}  // namespace a2av
