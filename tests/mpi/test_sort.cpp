// a2av::sample_sort and a2av::bucket_sort (include/a2av/sort.hpp), the lecture's "Sorting"
// part ([Lecture14] in docs/references.md): the output is sorted across
// ranks, holds the same multiset as the input (order-independent hash), and sample sort
// keeps every rank within the balance bound, on uniform, skewed, duplicate-heavy and
// all-equal keys, with empty and uneven ranks, for 64-bit keys and key-value records.
#include "harness.hpp"

#include <a2av/sort.hpp>

#include <algorithm>
#include <cmath>
#include <random>

namespace a2av::test {
namespace {

// 5040 = lcm(1..9, 16): s = P divides n/p at every registered rank count, so the library's
// bound must equal the lecture's n/p + n/s - p exactly.
constexpr std::int64_t kPerRank = 5040;

enum class Keys { uniform, skewed, duplicates, all_equal };

std::uint64_t mix(std::uint64_t x) {  // splitmix64's finalizer
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

std::vector<std::uint64_t> make_keys(Keys kind, std::int64_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed * 1000003 + static_cast<std::uint64_t>(rank_of(world())));
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  // 16 values, the extremes of the key range among them.
  const std::uint64_t few[4] = {0, ~std::uint64_t{0}, 42, std::uint64_t{1} << 63};
  std::vector<std::uint64_t> keys(static_cast<std::size_t>(n));
  for (auto& k : keys) {
    switch (kind) {
      case Keys::uniform:
        k = rng();
        break;
      case Keys::skewed:  // most keys crowd the bottom of the range
        k = static_cast<std::uint64_t>(std::ldexp(std::pow(unit(rng), 8), 63)) << 1 | (rng() & 1);
        break;
      case Keys::duplicates:
        k = rng() % 4 ? few[rng() % 4] : mix(rng() % 12);
        break;
      case Keys::all_equal:
        k = 7;
        break;
    }
  }
  return keys;
}

// Order-independent hash of a multiset, summed over ranks: two independent 64-bit sums.
std::pair<std::uint64_t, std::uint64_t> digest(std::span<const std::uint64_t> hashes) {
  std::uint64_t local[2] = {0, 0}, global[2] = {0, 0};
  for (std::uint64_t h : hashes) {
    local[0] += mix(h);
    local[1] += mix(h ^ 0x9e3779b97f4a7c15ULL);
  }
  MPI_Allreduce(local, global, 2, MPI_UINT64_T, MPI_SUM, world());
  return {global[0], global[1]};
}

std::vector<std::uint64_t> hashes_of(const std::vector<KeyValue>& records) {
  std::vector<std::uint64_t> h;
  for (const auto& r : records) h.push_back(mix(r.key) ^ r.value);
  return h;
}

// Sorted on every rank, and every rank's keys at or above those of the non-empty ranks before.
void expect_globally_sorted(std::span<const std::uint64_t> keys) {
  EXPECT_TRUE(std::is_sorted(keys.begin(), keys.end()));
  const int size = size_of(world());
  const std::uint64_t mine[3] = {keys.empty() ? 0u : 1u, keys.empty() ? 0 : keys.front(),
                                 keys.empty() ? 0 : keys.back()};
  std::vector<std::uint64_t> all(3 * static_cast<std::size_t>(size));
  MPI_Allgather(mine, 3, MPI_UINT64_T, all.data(), 3, MPI_UINT64_T, world());
  bool seen = false;
  std::uint64_t last = 0;
  for (int r = 0; r < size; ++r) {
    if (!all[3 * r]) continue;
    if (seen) {
      EXPECT_LE(last, all[3 * r + 1]) << "rank " << r << " starts below its predecessor";
    }
    seen = true;
    last = all[3 * r + 2];
  }
}

// ceil(n/p) + sum over ranks of max(ceil(m_r/s) - 1, 0), computed here independently.
std::int64_t expected_bound(std::int64_t mine, int s) {
  const int p = size_of(world());
  std::vector<std::int64_t> m(static_cast<std::size_t>(p));
  MPI_Allgather(&mine, 1, MPI_INT64_T, m.data(), 1, MPI_INT64_T, world());
  std::int64_t n = 0, slack = 0;
  for (std::int64_t x : m) {
    n += x;
    slack += std::max<std::int64_t>((x + s - 1) / s - 1, 0);
  }
  return (n + p - 1) / p + slack;
}

// Sorts `keys` with sample sort and checks order, content and the balance bound.
SortResult sample_sort_checked(std::vector<std::uint64_t> keys, const SortOptions& options = {}) {
  const auto before = digest(keys);
  const int s = options.samples ? options.samples : size_of(world());
  const std::int64_t bound = expected_bound(static_cast<std::int64_t>(keys.size()), s);
  const SortResult result = sample_sort(keys, world(), options);
  expect_globally_sorted(keys);
  EXPECT_EQ(digest(keys), before) << "output is not a permutation of the input";
  EXPECT_EQ(result.count, static_cast<std::int64_t>(keys.size()));
  EXPECT_EQ(result.bound, bound);
  EXPECT_LE(balance(result.count, world()).max_count, result.bound);
  return result;
}

class SampleSortKeys : public testing::TestWithParam<Keys> {};

TEST_P(SampleSortKeys, SortedPermutationWithinLectureBound) {
  const int p = size_of(world());
  const SortResult result = sample_sort_checked(make_keys(GetParam(), kPerRank, 1));
  EXPECT_EQ(result.bound, lecture_bound(kPerRank * p, p, p));
  EXPECT_EQ(balance(result.count, world()).total, kPerRank * p);
}

std::string name_of(const testing::TestParamInfo<Keys>& info) {
  const char* names[] = {"uniform", "skewed", "duplicates", "all_equal"};
  return names[static_cast<int>(info.param)];
}

INSTANTIATE_TEST_SUITE_P(Keys, SampleSortKeys,
                         testing::Values(Keys::uniform, Keys::skewed, Keys::duplicates,
                                         Keys::all_equal),
                         name_of);

TEST(SampleSort, AllEqualKeysSplitEvenly) {
  // The (key, rank, index) order turns equal keys into distinct ones: exact shares.
  std::vector<std::uint64_t> keys(kPerRank, 7);
  const SortResult result = sample_sort(keys, world());
  EXPECT_EQ(balance(result.count, world()).max_count, kPerRank);
}

TEST(SampleSort, VendorAndExplicitExchange) {
  for (const char* spec : {"vendor", "pairwise", "auto"}) {
    const SortResult result =
        sample_sort_checked(make_keys(Keys::skewed, 999, 2), {.algorithm = spec});
    if (std::string_view(spec) != "auto") {
      EXPECT_EQ(result.algorithm, spec);
    }
    EXPECT_FALSE(result.algorithm.empty());
  }
}

TEST(SampleSort, OversamplingTightensTheBound) {
  const int p = size_of(world());
  const SortResult coarse = sample_sort_checked(make_keys(Keys::uniform, kPerRank, 3));
  const SortResult fine =
      sample_sort_checked(make_keys(Keys::uniform, kPerRank, 3), {.samples = 8 * p});
  EXPECT_LT(fine.bound, coarse.bound);
}

TEST(SampleSort, EmptyAndUnevenRanks) {
  const int rank = rank_of(world());
  // Odd ranks hold nothing; even ranks hold amounts growing with the rank.
  const std::int64_t mine = rank % 2 ? 0 : 300 * (rank + 1) + 17;
  sample_sort_checked(make_keys(Keys::uniform, mine, 4));
  sample_sort_checked(make_keys(Keys::duplicates, mine, 5));
  sample_sort_checked(make_keys(Keys::uniform, rank == 0 ? 5 : 0, 6));  // fewer keys than P
}

TEST(SampleSort, NothingAnywhere) {
  const SortResult result = sample_sort_checked({});
  EXPECT_EQ(result.count, 0);
  EXPECT_EQ(result.bound, 0);
}

TEST(SampleSort, KeyValueRecordsKeepTheirValues) {
  const int rank = rank_of(world());
  const auto keys = make_keys(Keys::duplicates, kPerRank, 7);
  std::vector<KeyValue> records;
  for (std::size_t i = 0; i < keys.size(); ++i)
    records.push_back({keys[i], (static_cast<std::uint64_t>(rank) << 32) | i});
  const auto before = digest(hashes_of(records));
  const SortResult result = sample_sort(records, world());
  std::vector<std::uint64_t> sorted_keys;
  for (const auto& r : records) sorted_keys.push_back(r.key);
  expect_globally_sorted(sorted_keys);
  EXPECT_EQ(digest(hashes_of(records)), before) << "a value lost its key";
  EXPECT_LE(balance(result.count, world()).max_count, result.bound);
}

TEST(BucketSort, UniformKeysSortedAndBalanced) {
  auto keys = make_keys(Keys::uniform, kPerRank, 8);
  const auto before = digest(keys);
  const SortResult result = bucket_sort(keys, world(), {.algorithm = "vendor"});
  expect_globally_sorted(keys);
  EXPECT_EQ(digest(keys), before);
  EXPECT_EQ(result.algorithm, "vendor");
  EXPECT_EQ(result.bound, -1);
  // Buckets of uniform keys are binomial, standard deviation ~sqrt(5040) = 71.
  EXPECT_LE(balance(result.count, world()).max_count, kPerRank * 5 / 4);
}

TEST(BucketSort, KeyRangeWithOutliersAndRecords) {
  const int rank = rank_of(world());
  std::mt19937_64 rng(9 + rank);
  std::vector<KeyValue> records;
  for (std::uint64_t i = 0; i < 1000; ++i) {
    // Mostly inside [1000, 2000]; a few below and above it, which must still come out sorted.
    const std::uint64_t key =
        i % 50 == 0 ? (i % 100 == 0 ? 3 : ~std::uint64_t{0} - i) : 1000 + rng() % 1001;
    records.push_back({key, (static_cast<std::uint64_t>(rank) << 32) | i});
  }
  const auto before = digest(hashes_of(records));
  bucket_sort(records, world(), {.min_key = 1000, .max_key = 2000});
  std::vector<std::uint64_t> keys;
  for (const auto& r : records) keys.push_back(r.key);
  expect_globally_sorted(keys);
  EXPECT_EQ(digest(hashes_of(records)), before);
}

TEST(SortErrors, BadOptionsThrowOnEveryRankAndKeepTheData) {
  auto keys = make_keys(Keys::uniform, 100, 10);
  const auto before = digest(keys);
  const auto code_of = [&](auto&& call) {
    try {
      call();
    } catch (const Error& e) {
      return e.code();
    }
    return static_cast<int>(A2AV_SUCCESS);
  };
  EXPECT_EQ(code_of([&] { sample_sort(keys, world(), {.samples = -1}); }), A2AV_ERR_ARG);
  EXPECT_EQ(code_of([&] { bucket_sort(keys, world(), {.min_key = 2, .max_key = 1}); }),
            A2AV_ERR_ARG);
  EXPECT_EQ(code_of([&] { sample_sort(keys, world(), {.algorithm = "nope"}); }),
            A2AV_ERR_ALGORITHM);
  EXPECT_EQ(digest(keys), before);
}

}  // namespace
}  // namespace a2av::test
