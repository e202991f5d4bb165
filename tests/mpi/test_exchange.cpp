// Every algorithm against the vendor MPI_Alltoallv, byte for byte, on seeded count
// matrices, with arbitrary displacements and gaps; and each call's peak temporary memory
// against the algorithm's documented bound. Registered at many rank counts (CMake).
#include "harness.hpp"

#include <a2av/alltoallv.hpp>

#include <algorithm>
#include <cmath>

namespace a2av::test {
namespace {

// Ranks per node as a2av sees it: A2AV_EMULATE_NODES if set (when it does not divide P, the
// nodes are uneven and hierarchical TuNA runs flat, as the bound then says).
int node_size() {
  MPI_Comm node;
  MPI_Comm_split_type(world(), MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  const int n = size_of(node);
  MPI_Comm_free(&node);
  const int q = emulated_node_size();
  return q > 0 ? std::min(q, n) : n;
}

std::int64_t largest(const Matrix& m) {
  std::int64_t best = 0;
  for (const auto& row : m) best = std::max(best, *std::max_element(row.begin(), row.end()));
  return best;
}

void check_all_algorithms(const Matrix& counts, std::uint64_t seed, int elem_bytes = 1) {
  const int me = rank_of(world()), size = size_of(world());
  std::int64_t send_total = 0;
  for (std::int64_t c : counts[me]) send_total += c * elem_bytes;
  for (const auto& spec : specs_for(size)) {
    const std::int64_t peak = expect_same_as_vendor(spec, counts, world(), seed, elem_bytes);
    if (spec == "auto") continue;
    const std::int64_t bound =
        temp_memory_bound(spec, size, node_size(), largest(counts) * elem_bytes, send_total);
    EXPECT_LE(peak, bound) << spec << ": peak temporary bytes above the documented bound";
  }
}

// node_aware keeps the bound on requests in flight: its agents take a quarter of it at least
// for the node pairs' messages, the rest is for large blocks; its rounds over the nodes
// (radix) take the agents' share. Under the least bound (test_exchange_nodes_in_flight*) and
// emulated nodes of 1 and 2 ranks, each agent has several node pairs and a window of one.
// radix = the node count puts every round in one digit, beside blocks that alternate between
// large (2000 bytes, above direct_above) and small, which leave the rounds the least share.
TEST(NodeAware, KeepsTheBoundOnRequestsInFlight) {
  const int size = size_of(world());
  for (const std::string spec : {"node_aware", "node_aware:agents=1", "node_aware:direct_above=0"})
    for (const std::int64_t scale : {16, 3000}) {
      expect_same_as_vendor(spec, uniform(size, scale, 5 + scale), world(), 9, 1);
      EXPECT_LE(A2AV_Last_in_flight(), in_flight_bound(spec))
          << spec << " (ran " << A2AV_Last_algorithm() << ") at " << scale << " bytes";
    }
  const int q = emulated_node_size();
  if (q == 0 || size % q != 0 || size / q < 2) return;
  const std::string rounds = "node_aware:radix=" + std::to_string(size / q) + ",direct_above=1500";
  Matrix alternating(size, std::vector<std::int64_t>(size));
  for (int i = 0; i < size; ++i)
    for (int j = 0; j < size; ++j) alternating[i][j] = (i + j) % 2 ? 2000 : 16;
  expect_same_as_vendor(rounds, alternating, world(), 9, 1);
  EXPECT_LE(A2AV_Last_in_flight(), in_flight_bound(rounds))
      << rounds << " (ran " << A2AV_Last_algorithm() << ")";
}

// Hierarchical TuNA keeps the bound too: under the least one (in_flight=8), at every node size
// that divides the launch, with blocks alternating between large (2000 bytes, above
// direct_above) and small, ranks defer their large blocks until after phase 2, and a staggered
// pair's 2(Q + 1) messages slide through the blocks' window (before: 12-16 at 8 and 9 ranks).
TEST(TunaHierarchical, KeepsTheBoundOnRequestsInFlight) {
  const int size = size_of(world());
  Matrix alternating(size, std::vector<std::int64_t>(size));
  for (int i = 0; i < size; ++i)
    for (int j = 0; j < size; ++j) alternating[i][j] = (i + j) % 2 ? 2000 : 16;
  for (int q = 1; q < size; ++q) {
    if (size % q) continue;
    for (const std::string kind : {"tuna_coalesced", "tuna_staggered"}) {
      const std::string spec =
          kind + ":ranks_per_node=" + std::to_string(q) + ",direct_above=1500,in_flight=8";
      expect_same_as_vendor(spec, alternating, world(), 13, 1);
      EXPECT_EQ(std::string(A2AV_Last_algorithm()).rfind(kind, 0), 0u) << spec;
      EXPECT_LE(A2AV_Last_in_flight(), 8) << spec << " on rank " << rank_of(world());
    }
  }
}

class UniformSizes : public testing::TestWithParam<std::int64_t> {};

TEST_P(UniformSizes, AllAlgorithmsMatchVendor) {
  const int size = size_of(world());
  check_all_algorithms(uniform(size, GetParam(), 11 + GetParam()), 3);
}

INSTANTIATE_TEST_SUITE_P(Bytes, UniformSizes, testing::Values(0, 1, 16, 1000, 65536));

// Every block of every rank of one size (MPI_Alltoall's exchange): bruck runs its own rounds
// rather than falling back to tuna.
Matrix equal_blocks(int size, std::int64_t count) {
  return Matrix(size, std::vector<std::int64_t>(size, count));
}

TEST(EqualBlocks, AllAlgorithmsMatchVendor) {
  const int size = size_of(world());
  check_all_algorithms(equal_blocks(size, 24), 13);
  check_all_algorithms(equal_blocks(size, 24), 17, 12);  // 12-byte elements
}

TEST(Bruck, EveryRadixMatchesVendor) {
  const int size = size_of(world());
  const int root = static_cast<int>(std::ceil(std::sqrt(static_cast<double>(size))));
  for (int radix : {2, 3, std::max(2, root), std::max(2, size - 1), std::max(2, size), size + 5})
    for (std::int64_t count : {1, 1000}) {
      const std::string spec = "bruck:radix=" + std::to_string(radix);
      const std::int64_t peak =
          expect_same_as_vendor(spec, equal_blocks(size, count), world(), 23, 1);
      EXPECT_LE(peak, temp_memory_bound(spec, size, 1, count, count * size)) << spec;
    }
}

TEST(Bruck, RunsItsRoundsOnEqualBlocksAndTunaOtherwise) {
  const int size = size_of(world());
  std::vector<MPI_Count> counts(size, 8);
  std::vector<MPI_Aint> displs(size);
  for (int i = 0; i < size; ++i) displs[i] = 8 * i;
  std::vector<char> send(8 * size, 'x'), recv(8 * size);
  CallInfo info;
  alltoallv(send.data(), counts, displs, MPI_CHAR, recv.data(), counts, displs, MPI_CHAR, world(),
            {.algorithm = "bruck:radix=2", .info = &info});
  EXPECT_EQ(info.algorithm, "bruck:radix=2");
  if (size == 1) return;
  // Rank 0 sends the last rank one byte less: no longer uniform.
  const int me = rank_of(world());
  if (me == 0) counts[size - 1] = 7;
  std::vector<MPI_Count> recvcounts(size, 8);
  if (me == size - 1) recvcounts[0] = 7;
  alltoallv(send.data(), counts, displs, MPI_CHAR, recv.data(), recvcounts, displs, MPI_CHAR,
            world(), {.algorithm = "bruck:radix=2", .info = &info});
  EXPECT_EQ(info.algorithm.rfind("tuna:radix=2", 0), 0u) << info.algorithm;
}

class Distributions : public testing::TestWithParam<int> {};

TEST_P(Distributions, AllAlgorithmsMatchVendor) {
  const Generator& g = generators()[GetParam()];
  SCOPED_TRACE(g.name);
  check_all_algorithms(g.make(size_of(world()), 1000, 5 + GetParam()), 9);
}

INSTANTIATE_TEST_SUITE_P(Generators, Distributions,
                         testing::Range(0, static_cast<int>(generators().size())));

// Buffers passed at their ends, every displacement negative: MPI allows it, and every
// algorithm must read and write the same bytes as the vendor.
TEST(NegativeDisplacements, AllAlgorithmsMatchVendor) {
  const int size = size_of(world());
  const Matrix counts = uniform(size, 300, 41);
  for (const auto& spec : specs_for(size))
    expect_same_as_vendor(spec, counts, world(), 41, 4, Bases::at_ends);
}

TEST(Elements, WiderElementsMatchVendor) {
  for (int elem : {4, 16, 48}) {
    SCOPED_TRACE(elem);
    check_all_algorithms(uniform(size_of(world()), 40, 17 + elem), 21, elem);
  }
}

TEST(TunaLargeBlocks, MemoryDoesNotGrowWithTheBlocks) {
  // Blocks above direct_above (8 KiB by default) travel directly, so TuNA's temporary memory
  // is that of 8 KiB blocks however large the blocks are: the same peak at 64 KiB and 256 KiB,
  // within the bound for 8 KiB blocks; hierarchical TuNA across (emulated) nodes too.
  // (64 KiB and 256 KiB: both well above the threshold, cheap at 16 ranks on two cores.)
  const int size = size_of(world());
  std::vector<std::string> specs = {"tuna:radix=2", "tuna:radix=3,batch=1", "node_aware",
                                    "tuna_coalesced", "tuna_staggered"};
  if (size % 2 == 0) specs.push_back("tuna_coalesced:ranks_per_node=2");
  if (size % 3 == 0) specs.push_back("tuna_staggered:ranks_per_node=3,block_count=1");
  for (const std::string& spec : specs) {
    std::int64_t peaks[2] = {0, 0};
    for (int i = 0; i < 2; ++i) {
      const std::int64_t block = std::int64_t{64} << (10 + 2 * i);
      const Matrix constant(size, std::vector<std::int64_t>(size, block));
      peaks[i] = expect_same_as_vendor(spec, constant, world(), 5 + i, 1);
    }
    EXPECT_EQ(peaks[0], peaks[1]) << spec;
    EXPECT_LE(peaks[1], temp_memory_bound(spec, size, node_size(), 8192, 0)) << spec;
  }
}

}  // namespace
}  // namespace a2av::test
