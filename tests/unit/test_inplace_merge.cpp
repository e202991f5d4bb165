// Unit tests of the in-place stable merge (src/inplace/merge.hpp; Zhuang et al., Section
// 3.1): results equal std::stable_sort of the concatenation, records carry their original
// index so that stability shows, and the work grows linearly.
#include "inplace/merge.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <random>
#include <span>
#include <vector>

namespace a2av {
namespace {

using Keys = std::vector<std::uint32_t>;

// Records of elem_size bytes: a key, then (room permitting) the original index and a
// filler derived from it, so that any reordering of equal keys changes the bytes.
class Records {
 public:
  explicit Records(std::size_t elem_size)
      : size_(elem_size),
        key_bytes_(elem_size == 1   ? 1
                   : elem_size == 4 ? 2
                                    : 4) {}

  std::vector<std::byte> make(const Keys& keys) const {
    std::vector<std::byte> out(keys.size() * size_);
    for (std::size_t i = 0; i < keys.size(); ++i) write(&out[i * size_], keys[i], i);
    return out;
  }

  std::uint32_t key(const std::byte* rec) const {
    std::uint32_t k = 0;
    std::memcpy(&k, rec, key_bytes_);
    return k;
  }

  std::uint32_t max_key() const {
    return key_bytes_ == 4 ? 0xffffffffu : (1u << (8 * key_bytes_)) - 1;
  }

 private:
  void write(std::byte* rec, std::uint32_t key, std::size_t index) const {
    std::memcpy(rec, &key, key_bytes_);
    const auto tag = static_cast<std::uint32_t>(index);
    std::memcpy(rec + key_bytes_, &tag, std::min(size_ - key_bytes_, key_bytes_));
    for (std::size_t j = 2 * key_bytes_; j < size_; ++j) {
      rec[j] = static_cast<std::byte>(index * 31 + j);
    }
  }

  std::size_t size_;
  std::size_t key_bytes_;
};

// Merges sorted `a` and `b` with the byte API and compares with std::stable_sort.
void check_merge(std::size_t elem_size, Keys a, Keys b) {
  const Records rec(elem_size);
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  Keys all = a;
  all.insert(all.end(), b.begin(), b.end());
  std::vector<std::byte> data = rec.make(all);

  std::vector<std::size_t> order(all.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](auto x, auto y) { return all[x] < all[y]; });
  std::vector<std::byte> expected(data.size());
  for (std::size_t i = 0; i < order.size(); ++i) {
    std::memcpy(&expected[i * elem_size], &data[order[i] * elem_size], elem_size);
  }

  std::vector<std::byte> scratch(inplace_merge_scratch_elements(all.size(), elem_size) * elem_size);
  inplace_merge(data.data(), a.size(), b.size(), elem_size, scratch.data(),
                [&](const std::byte* x, const std::byte* y) { return rec.key(x) < rec.key(y); });
  ASSERT_EQ(data, expected) << "elem_size " << elem_size << " left " << a.size() << " right "
                            << b.size();
}

Keys random_keys(std::size_t n, std::uint32_t range, std::mt19937& rng) {
  std::uniform_int_distribution<std::uint32_t> dist(0, range - 1);
  Keys k(n);
  for (auto& x : k) x = dist(rng);
  return k;
}

constexpr std::size_t kElemSizes[] = {1, 4, 16, 48};

TEST(InplaceMerge, RandomWithManyDuplicates) {
  std::mt19937 rng(1);
  for (std::size_t es : kElemSizes) {
    const std::uint32_t range = std::min<std::uint32_t>(Records(es).max_key(), 50);
    for (int trial = 0; trial < 40; ++trial) {
      const std::size_t l = rng() % 5000;
      const std::size_t r = rng() % 5000;
      check_merge(es, random_keys(l, range, rng), random_keys(r, range, rng));
    }
  }
}

TEST(InplaceMerge, AllEqualKeys) {
  for (std::size_t es : kElemSizes) {
    for (std::size_t l : {1, 7, 100, 3000}) {
      for (std::size_t r : {1, 9, 100, 4000}) check_merge(es, Keys(l, 5), Keys(r, 5));
    }
  }
}

TEST(InplaceMerge, OneRunEmpty) {
  std::mt19937 rng(2);
  for (std::size_t es : kElemSizes) {
    check_merge(es, {}, {});
    check_merge(es, random_keys(1000, 200, rng), {});
    check_merge(es, {}, random_keys(1000, 200, rng));
  }
}

TEST(InplaceMerge, VeryDifferentLengths) {
  std::mt19937 rng(3);
  for (std::size_t small : {1, 3, 317, 400, 1000}) {
    check_merge(16, random_keys(small, 1000, rng), random_keys(100000, 1000, rng));
    check_merge(16, random_keys(100000, 1000, rng), random_keys(small, 1000, rng));
  }
}

TEST(InplaceMerge, AlreadyOrderedAndReversed) {
  for (std::size_t es : {4, 48}) {
    for (std::size_t l : {1, 50, 2500}) {
      for (std::size_t r : {1, 60, 3000}) {
        Keys lo(l), hi(r);
        std::iota(lo.begin(), lo.end(), 0);
        std::iota(hi.begin(), hi.end(), 10000);
        check_merge(es, lo, hi);
        check_merge(es, hi, lo);
        Keys touching(r, static_cast<std::uint32_t>(l - 1));  // equal at the seam
        check_merge(es, lo, touching);
        check_merge(es, touching, lo);
      }
    }
  }
}

TEST(InplaceMerge, SmallSizesExhaustive) {
  std::mt19937 rng(4);
  for (std::size_t n = 0; n <= 120; ++n) {
    for (std::size_t l = 0; l <= n; ++l) {
      check_merge(4, random_keys(l, 8, rng), random_keys(n - l, 8, rng));
    }
  }
  for (std::size_t n = 121; n <= 2000; n += 7) {
    for (int s = 0; s < 4; ++s) {
      const std::size_t l = rng() % (n + 1);
      const auto range = static_cast<std::uint32_t>(1 + rng() % n);
      check_merge(s % 2 ? 16 : 4, random_keys(l, range, rng), random_keys(n - l, range, rng));
    }
  }
}

struct Pair {
  std::uint64_t key;
  std::uint64_t index;
};

TEST(InplaceMerge, TypedSpan) {
  std::mt19937 rng(5);
  Keys a = random_keys(30000, 100, rng);
  Keys b = random_keys(20000, 100, rng);
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  std::vector<Pair> data;
  for (auto k : a) data.push_back({k, data.size()});
  for (auto k : b) data.push_back({k, data.size()});
  auto by_key = [](const Pair& x, const Pair& y) { return x.key < y.key; };
  std::vector<Pair> expected = data;
  std::stable_sort(expected.begin(), expected.end(), by_key);
  inplace_merge(std::span<Pair>(data), a.size(), by_key);
  for (std::size_t i = 0; i < data.size(); ++i) {
    ASSERT_EQ(data[i].index, expected[i].index) << i;
  }
}

TEST(InplaceMerge, ScratchIsOrderSqrtN) {
  EXPECT_EQ(inplace_merge_scratch_elements(0), 0u);
  for (std::size_t n : {std::size_t{1} << 10, std::size_t{1} << 20, std::size_t{1} << 30}) {
    const std::size_t b = std::size_t{1} << (std::countr_zero(n) / 2);
    EXPECT_LE(inplace_merge_scratch_elements(n), 5 * b);
    EXPECT_LE(inplace_merge_scratch_elements(n, 8), 2 * b);
  }
}

// Comparisons for a merge of n random 8-byte keys split at n / 3.
std::size_t comparisons(std::size_t n) {
  std::mt19937 rng(6);
  std::vector<std::uint64_t> data(n);
  for (auto& x : data) x = rng() % (n / 4);
  const std::size_t left = n / 3;
  std::sort(data.begin(), data.begin() + static_cast<std::ptrdiff_t>(left));
  std::sort(data.begin() + static_cast<std::ptrdiff_t>(left), data.end());
  std::size_t count = 0;
  inplace_merge(std::span<std::uint64_t>(data), left, [&count](auto x, auto y) {
    ++count;
    return x < y;
  });
  EXPECT_TRUE(std::is_sorted(data.begin(), data.end()));
  return count;
}

TEST(InplaceMerge, LinearWork) {
  const std::size_t small = comparisons(std::size_t{1} << 16);
  const std::size_t large = comparisons(std::size_t{1} << 20);
  RecordProperty("comparisons_2_16", static_cast<int>(small));
  RecordProperty("comparisons_2_20", static_cast<int>(large));
  EXPECT_LT(static_cast<double>(large) / static_cast<double>(small), 20.0);
  EXPECT_LT(large, std::size_t{4} << 20);  // a few comparisons per element, not log n
}

}  // namespace
}  // namespace a2av
