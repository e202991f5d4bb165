// Transmutations and the local algorithm ([Siegel10], Section 2): Example 2.8's
// factorisation, random transmutations whose copies equal ncpy and whose data land where
// the map says, and invalid maps rejected before anything moves.
#include "redistribute/transmutation.hpp"

#include <a2av/error.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>

namespace a2av::redist {
namespace {

TEST(Transmutation, Example2_8) {
  // X = {1..5}, f(1) = 2, f(2) = 1, f(3) = 4; zero-based: 0 <-> 1, 2 -> 3, 4 free.
  const std::vector<std::int64_t> p = {1, 0, 3, -1, -1};
  const auto factors = factorize(p);
  ASSERT_EQ(factors.size(), 3u);
  EXPECT_TRUE(factors[0].cycle);
  EXPECT_EQ(factors[0].points, (std::vector<std::int64_t>{0, 1}));
  EXPECT_FALSE(factors[1].cycle);
  EXPECT_EQ(factors[1].points, (std::vector<std::int64_t>{2, 3}));
  EXPECT_FALSE(factors[2].cycle);
  EXPECT_EQ(factors[2].points, (std::vector<std::int64_t>{4}));
  EXPECT_EQ(minimal_copies(p), 3 + 1 + 0);
}

// A random transmutation of n points with `defined` points in its domain.
std::vector<std::int64_t> random_transmutation(std::int64_t n, std::int64_t defined,
                                               std::mt19937_64& rng) {
  std::vector<std::int64_t> targets(static_cast<std::size_t>(n)), domain(targets.size());
  std::iota(targets.begin(), targets.end(), 0);
  std::iota(domain.begin(), domain.end(), 0);
  std::shuffle(targets.begin(), targets.end(), rng);
  std::shuffle(domain.begin(), domain.end(), rng);
  std::vector<std::int64_t> p(targets.size(), -1);
  for (std::int64_t k = 0; k < defined; ++k) p[domain[k]] = targets[k];
  return p;
}

TEST(Transmutation, RandomMapsMoveDataWithMinimalCopies) {
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 400; ++trial) {
    const std::int64_t n = 1 + static_cast<std::int64_t>(rng() % 60);
    const std::int64_t defined = static_cast<std::int64_t>(rng() % (n + 1));
    const auto p = random_transmutation(n, defined, rng);
    std::vector<int> data(static_cast<std::size_t>(n)), before;
    std::iota(data.begin(), data.end(), 100);
    before = data;
    int temporary = -1;
    const std::int64_t copies = local_redistribute(p, [&](std::int64_t to, std::int64_t from) {
      const int value = from == kTemporary ? temporary : data[from];
      (to == kTemporary ? temporary : data[to]) = value;
    });
    EXPECT_EQ(copies, minimal_copies(p)) << "trial " << trial;
    for (std::int64_t i = 0; i < n; ++i)
      if (p[i] >= 0) {
        EXPECT_EQ(data[p[i]], before[i]) << "trial " << trial << " block " << i;
      }
    std::int64_t in_factors = 0;
    for (const auto& f : factorize(p)) in_factors += static_cast<std::int64_t>(f.points.size());
    std::int64_t support = 0;
    for (std::int64_t i = 0; i < n; ++i) support += p[i] != i;
    EXPECT_EQ(in_factors, support) << "the factors cover exactly the support";
  }
}

TEST(Transmutation, FullPermutationsAreCyclesOnly) {
  std::mt19937_64 rng(3);
  const auto p = random_transmutation(50, 50, rng);
  for (const auto& f : factorize(p)) EXPECT_TRUE(f.cycle);
}

TEST(Transmutation, InvalidMapsAreRejected) {
  const std::vector<std::vector<std::int64_t>> bad = {{1, 1, -1}, {0, 3, -1}, {2, -1, 2}};
  for (const auto& p : bad) {
    try {
      check_transmutation(p);
      ADD_FAILURE() << "accepted an invalid map";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), A2AV_ERR_ARG);
      EXPECT_NE(std::string(e.what()).find("block"), std::string::npos);
    }
  }
  EXPECT_NO_THROW(check_transmutation(std::vector<std::int64_t>{1, 2, -1}));
}

}  // namespace
}  // namespace a2av::redist
