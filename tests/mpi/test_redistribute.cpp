// Block redistribution (a2av::Redistributor, A2AV_Redist_*) at every rank count: random maps
// with 0%, one block, 10% and 50% free space, long cycles across ranks, identity maps, all
// blocks to one rank with room, the paper's five experiment maps at small size; every
// algorithm; block sizes 1, 13, 4096 and 1.5 MiB; every block's content checked against its
// origin; and bad maps rejected on every rank with the data unchanged.
#include "harness.hpp"

#include <a2av/redistribute.hpp>

#include <algorithm>
#include <numeric>
#include <random>

namespace a2av::test {
namespace {

const char* const kAlgorithms[] = {"parking", "cyclic", "cyclic:dictionary=1", "auto"};

struct Address {
  int rank = -1;
  std::int64_t index = -1;
};

// The whole map, the same on every rank: map[r][i] is where block i of rank r goes.
using Map = std::vector<std::vector<Address>>;

unsigned char content(int rank, std::int64_t block, std::int64_t byte) {
  return static_cast<unsigned char>(rank * 37 + block * 11 + byte * 5 + (byte >> 7) + 1);
}

// Runs the map with `algorithm` and checks every block that something moved into.
RedistStats expect_redistributes(const Map& map, const std::vector<std::int64_t>& sizes,
                                 std::int64_t block_bytes, const std::string& algorithm) {
  MPI_Comm comm = world();
  const int me = rank_of(comm), p = size_of(comm);
  const std::int64_t m = sizes[me];
  std::vector<unsigned char> blocks(static_cast<std::size_t>(m * block_bytes));
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t b = 0; b < block_bytes; ++b) blocks[i * block_bytes + b] = content(me, i, b);
  std::vector<int> dest_rank(static_cast<std::size_t>(m));
  std::vector<MPI_Count> dest_index(static_cast<std::size_t>(m));
  for (std::int64_t i = 0; i < m; ++i)
    dest_rank[i] = map[me][i].rank, dest_index[i] = map[me][i].index;
  Redistributor redistributor(blocks.data(), m, block_bytes, comm, algorithm);
  const RedistStats stats = redistributor.run(dest_rank, dest_index);
  int wrong = 0;
  for (int r = 0; r < p; ++r)
    for (std::int64_t i = 0; i < sizes[r]; ++i) {
      const Address a = map[r][i];
      if (a.rank != me) continue;
      for (std::int64_t b = 0; b < block_bytes; ++b)
        wrong += blocks[a.index * block_bytes + b] != content(r, i, b);
    }
  EXPECT_EQ(wrong, 0) << algorithm << ": bytes differ from their origin";
  return stats;
}

std::vector<std::int64_t> uneven_sizes(int p, std::int64_t base) {
  std::vector<std::int64_t> sizes(p);
  for (int r = 0; r < p; ++r) sizes[r] = base + (r * 7) % 5;
  return sizes;
}

// Data blocks (all but `free` per rank, chosen at random) to random distinct addresses.
Map random_map(const std::vector<std::int64_t>& sizes, double free_share, bool one_free,
               std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  const int p = static_cast<int>(sizes.size());
  std::vector<Address> all, sources;
  for (int r = 0; r < p; ++r)
    for (std::int64_t i = 0; i < sizes[r]; ++i) all.push_back({r, i});
  sources = all;
  std::shuffle(all.begin(), all.end(), rng);
  std::shuffle(sources.begin(), sources.end(), rng);
  auto free = static_cast<std::size_t>(free_share * static_cast<double>(all.size()));
  if (one_free) free = std::min<std::size_t>(1, all.size());
  Map map(p);
  for (int r = 0; r < p; ++r) map[r].resize(static_cast<std::size_t>(sizes[r]));
  for (std::size_t k = free; k < sources.size(); ++k)
    map[sources[k].rank][sources[k].index] = all[k];
  return map;
}

Map shifted(const std::vector<std::int64_t>& sizes, int by, std::int64_t moving) {
  const int p = static_cast<int>(sizes.size());
  Map map(p);
  for (int r = 0; r < p; ++r) {
    map[r].resize(static_cast<std::size_t>(sizes[r]));
    for (std::int64_t i = 0; i < moving; ++i) map[r][i] = {(r + by) % p, i};
  }
  return map;
}

TEST(Redistribute, RandomMapsWithFreeSpace) {
  const int p = size_of(world());
  const auto sizes = uneven_sizes(p, 30);
  struct Case {
    double share;
    bool one;
  };
  for (Case c : {Case{0, false}, Case{0, true}, Case{0.1, false}, Case{0.5, false}})
    for (const char* algorithm : kAlgorithms) {
      SCOPED_TRACE(std::string(algorithm) + " free " + std::to_string(c.share) +
                   (c.one ? " (one block)" : ""));
      expect_redistributes(random_map(sizes, c.share, c.one, 11), sizes, 24, algorithm);
    }
}

TEST(Redistribute, LongCyclesWithoutFreeSpace) {
  const int p = size_of(world());
  const std::vector<std::int64_t> sizes(p, 12);
  for (int by : {1, p / 2 + 1})
    for (const char* algorithm : kAlgorithms) {
      SCOPED_TRACE(std::string(algorithm) + " shift " + std::to_string(by));
      expect_redistributes(shifted(sizes, by, 12), sizes, 40, algorithm);
    }
}

TEST(Redistribute, IdentityMovesNothing) {
  const int p = size_of(world());
  const auto sizes = uneven_sizes(p, 9);
  const Map map = shifted(sizes, p, 9);  // every block stays where it is
  for (const char* algorithm : kAlgorithms) {
    const RedistStats stats = expect_redistributes(map, sizes, 16, algorithm);
    EXPECT_EQ(stats.algorithm, "local") << "nothing leaves a rank: no algorithm runs";
    EXPECT_EQ(stats.blocks_moved, 0);
    EXPECT_EQ(stats.steps, 0);
    EXPECT_EQ(stats.local_copies, 0);
  }
}

TEST(Redistribute, AllBlocksToOneRankWithRoom) {
  const int p = size_of(world());
  std::vector<std::int64_t> sizes(p, 5);
  sizes[0] = 5 * p;
  Map map(p);
  std::int64_t next = 0;
  for (int r = 0; r < p; ++r) {
    map[r].resize(static_cast<std::size_t>(sizes[r]));
    for (std::int64_t i = 0; i < (r == 0 ? 0 : 5); ++i) map[r][i] = {0, next++};
  }
  for (const char* algorithm : kAlgorithms) expect_redistributes(map, sizes, 8, algorithm);
}

TEST(Redistribute, BlockSizes) {
  const int p = size_of(world());
  for (std::int64_t bytes : {1, 13, 4096, 3 << 19}) {
    const std::int64_t m = bytes > 4096 ? 3 : 10;
    const std::vector<std::int64_t> sizes(p, m);
    for (const char* algorithm : kAlgorithms) {
      SCOPED_TRACE(std::string(algorithm) + " block bytes " + std::to_string(bytes));
      expect_redistributes(random_map(sizes, 0.2, false, 5 + bytes), sizes, bytes, algorithm);
    }
  }
}

// The paper's experiments (Section 4), small: m blocks per rank.
TEST(Redistribute, PaperExperimentMaps) {
  const int p = size_of(world());
  const std::int64_t m = 20, data = 16;
  const std::vector<std::int64_t> sizes(p, m);
  std::vector<Map> maps = {shifted(sizes, 1, m), shifted(sizes, 1, data), shifted(sizes, 1, 13)};
  Map one_free(p), transpose(p);  // all free space on rank 0; a global transpose
  std::int64_t g = 0;
  for (int r = 0; r < p; ++r) {
    one_free[r].resize(m), transpose[r].resize(m);
    for (std::int64_t j = 0; j < m && r > 0; ++j, ++g)
      one_free[r][j] = {static_cast<int>(g % p), g / p};
    for (std::int64_t j = 0; j < data; ++j)
      transpose[r][j] = {static_cast<int>((data * r + j) % p), (data * r + j) / p};
  }
  maps.push_back(one_free);
  maps.push_back(transpose);
  for (std::size_t k = 0; k < maps.size(); ++k)
    for (const char* algorithm : kAlgorithms) {
      SCOPED_TRACE(std::string(algorithm) + " experiment " + std::to_string(k + 1));
      expect_redistributes(maps[k], sizes, 100, algorithm);
    }
}

TEST(Redistribute, CApi) {
  const int me = rank_of(world()), p = size_of(world());
  std::vector<double> blocks(8);
  std::iota(blocks.begin(), blocks.end(), 100.0 * me);
  std::vector<int> dest_rank(8, (me + 1) % p);
  std::vector<MPI_Count> dest_index(8);
  std::iota(dest_index.begin(), dest_index.end(), 0);
  A2AV_Redist redist = nullptr;
  ASSERT_EQ(A2AV_Redist_create(blocks.data(), 8, sizeof(double), world(), nullptr, &redist),
            A2AV_SUCCESS);
  ASSERT_EQ(A2AV_Redist_run(redist, dest_rank.data(), dest_index.data()), A2AV_SUCCESS);
  EXPECT_EQ(A2AV_Redist_free(&redist), A2AV_SUCCESS);
  EXPECT_EQ(redist, nullptr);
  const int from = (me + p - 1) % p;
  for (int i = 0; i < 8; ++i) EXPECT_EQ(blocks[i], 100.0 * from + i);
}

// A bad map: every rank returns A2AV_ERR_ARG and every block keeps its content.
void expect_rejected(std::vector<int> dest_rank, std::vector<MPI_Count> dest_index,
                     const char* algorithm = "cyclic") {
  const int me = rank_of(world());
  std::vector<unsigned char> blocks(dest_rank.size() * 4);
  for (std::size_t b = 0; b < blocks.size(); ++b)
    blocks[b] = content(me, 0, static_cast<std::int64_t>(b));
  const auto before = blocks;
  A2AV_Redist redist = nullptr;
  ASSERT_EQ(A2AV_Redist_create(blocks.data(), static_cast<MPI_Count>(dest_rank.size()), 4, world(),
                               algorithm, &redist),
            A2AV_SUCCESS);
  EXPECT_EQ(A2AV_Redist_run(redist, dest_rank.data(), dest_index.data()), A2AV_ERR_ARG)
      << A2AV_Last_error_message();
  EXPECT_EQ(blocks, before);
  A2AV_Redist_free(&redist);
}

TEST(RedistributeErrors, NotInjectiveAcrossRanks) {
  const int me = rank_of(world()), p = size_of(world());
  if (p == 1) {
    expect_rejected({0, 0}, {1, 1});
    return;
  }
  // Ranks 0 and 1 both send their block 0 to block 0 of rank 0.
  std::vector<int> rank(3, -1);
  std::vector<MPI_Count> index(3, 0);
  if (me <= 1) rank[0] = 0;
  expect_rejected(rank, index);
}

TEST(RedistributeErrors, AddressesOutOfRange) {
  const int me = rank_of(world()), p = size_of(world());
  std::vector<int> rank(3, -1);
  std::vector<MPI_Count> index(3, 0);
  if (me == p - 1) rank[1] = 0, index[1] = 3;  // rank 0 has blocks 0..2
  expect_rejected(rank, index, "parking");
  if (me == 0) rank[2] = p, index[2] = 0;  // no such rank
  expect_rejected(rank, index, "auto");
}

TEST(RedistributeErrors, BadArguments) {
  double block = 0;
  A2AV_Redist redist = nullptr;
  EXPECT_EQ(A2AV_Redist_create(&block, 1, 8, world(), "scatter", &redist), A2AV_ERR_ALGORITHM);
  EXPECT_EQ(A2AV_Redist_create(&block, 1, 8, world(), "parking:dictionary=1", &redist),
            A2AV_ERR_ALGORITHM);
  EXPECT_EQ(A2AV_Redist_create(&block, 1, 0, world(), "cyclic", &redist), A2AV_ERR_ARG);
  EXPECT_EQ(A2AV_Redist_create(nullptr, 1, 8, world(), "cyclic", &redist), A2AV_ERR_ARG);
  EXPECT_EQ(redist, nullptr);
}

}  // namespace
}  // namespace a2av::test
