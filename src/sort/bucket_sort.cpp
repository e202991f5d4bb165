// Bucket sort for uniform keys, as in the lecture's "Sorting" part
// ([Lecture14] in docs/references.md, "Bucket sort" and "Worst case
// behavior"): the non-template half of a2av::bucket_sort (include/a2av/sort.hpp). Rank j owns
// the j-th of P equal subranges of the key range; one MPI_Alltoall of counts and one alltoallv
// of the data, O(n/p) bucket assignment, then a local sort of what arrives.
#include <a2av/sort.hpp>

#include "core/check.hpp"

namespace a2av {

void detail::check_bucket_options(const SortOptions& options) {
  if (options.min_key > options.max_key)
    fail(A2AV_ERR_ARG, "bucket_sort: min_key {} > max_key {}", options.min_key, options.max_key);
}

// floor(parts (key - min) / (max - min + 1)) in 128 bits: the range can be all 2^64 keys.
int detail::bucket_of(std::uint64_t key, const SortOptions& options, int parts) {
  if (key <= options.min_key) return 0;
  if (key >= options.max_key) return parts - 1;
  const unsigned __int128 range =
      static_cast<unsigned __int128>(options.max_key - options.min_key) + 1;
  return static_cast<int>(static_cast<unsigned __int128>(key - options.min_key) *
                          static_cast<unsigned>(parts) / range);
}

SortResult bucket_sort(std::vector<std::uint64_t>& keys, MPI_Comm comm,
                       const SortOptions& options) {
  return bucket_sort(keys, detail::PlainKey{}, comm, options);
}

SortResult bucket_sort(std::vector<KeyValue>& records, MPI_Comm comm, const SortOptions& options) {
  return bucket_sort(records, detail::RecordKey{}, comm, options);
}

}  // namespace a2av
