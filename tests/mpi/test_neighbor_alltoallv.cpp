// A2AV_Neighbor_alltoallv on the three kinds of process topology, checked against what MPI-4.1
// Section 8.6 defines (every block from the right sender's right block, gaps and MPI_PROC_NULL
// blocks untouched) and, where the vendor's MPI_Neighbor_alltoallv follows the same rule,
// against the vendor byte for byte: Cartesian grids with periodic dimensions of one and two
// processes, graphs with duplicate edges and self edges, distributed graphs with zero in- or
// out-degree, a distributed graph made from a Cartesian communicator's lists; and the errors.
#include "harness.hpp"

#include <a2av/a2av.h>

#include <algorithm>
#include <functional>
#include <random>
#include <string>
#include <vector>

namespace a2av::test {
namespace {

// Which block of which sender a receive slot gets.
struct Pairing {
  int sender = MPI_PROC_NULL;
  int slot = 0;
};

int count_of(int sender, int slot) {
  return (sender * 7 + slot * 3) % 5;  // zeros included
}
int value_of(int sender, int slot, int i) {
  return sender * 100000 + slot * 1000 + i;
}
constexpr int kGap = -1;

// Blocks with a one-element gap after each; receive blocks from MPI_PROC_NULL get room for
// two elements that must stay untouched.
struct Exchange {
  std::vector<int> sc, sd, rc, rd, send, recv, want;

  Exchange(int me, std::size_t out_degree, const std::vector<Pairing>& pairs) {
    int total = 0;
    for (std::size_t s = 0; s < out_degree; ++s) {
      sc.push_back(count_of(me, static_cast<int>(s)));
      sd.push_back(total);
      total += sc.back() + 1;
    }
    send.assign(total + 1, kGap);
    for (std::size_t s = 0; s < out_degree; ++s)
      for (int i = 0; i < sc[s]; ++i) send[sd[s] + i] = value_of(me, static_cast<int>(s), i);
    total = 0;
    for (const Pairing& p : pairs) {
      rc.push_back(p.sender == MPI_PROC_NULL ? 2 : count_of(p.sender, p.slot));
      rd.push_back(total);
      total += rc.back() + 1;
    }
    recv.assign(total + 1, kGap);
    want = recv;
    for (std::size_t k = 0; k < pairs.size(); ++k)
      if (pairs[k].sender != MPI_PROC_NULL)
        for (int i = 0; i < rc[k]; ++i)
          want[rd[k] + i] = value_of(pairs[k].sender, pairs[k].slot, i);
  }

  int run_a2av(MPI_Comm comm) {
    return A2AV_Neighbor_alltoallv(send.data(), sc.data(), sd.data(), MPI_INT, recv.data(),
                                   rc.data(), rd.data(), MPI_INT, comm);
  }
  std::vector<int> run_vendor(MPI_Comm comm) {
    std::vector<int> got(want.size(), kGap);
    EXPECT_EQ(MPI_Neighbor_alltoallv(send.data(), sc.data(), sd.data(), MPI_INT, got.data(),
                                     rc.data(), rd.data(), MPI_INT, comm),
              MPI_SUCCESS);
    return got;
  }
};

// Graph rule: the j-th edge from a in this rank's sources carries the block of a's j-th edge
// to this rank. `destinations_of(a)` is rank a's destination list.
std::vector<Pairing> graph_pairing(int me, const std::vector<int>& sources,
                                   const std::function<std::vector<int>(int)>& destinations_of) {
  std::vector<Pairing> pairs;
  for (std::size_t k = 0; k < sources.size(); ++k) {
    const int a = sources[k];
    const auto seen_before = std::count(sources.begin(), sources.begin() + k, a);
    const std::vector<int> theirs = destinations_of(a);
    int slot = -1;  // the position of the (seen_before + 1)-th `me` in a's list
    for (long j = 0; j <= seen_before; ++j)
      slot =
          static_cast<int>(std::find(theirs.begin() + slot + 1, theirs.end(), me) - theirs.begin());
    pairs.push_back({a, slot});
  }
  return pairs;
}

// Checks a2av against the definition and, if `vendor_agrees`, against the vendor.
void check_exchange(MPI_Comm comm, int out_degree, const std::vector<Pairing>& pairs,
                    const char* what) {
  const int me = rank_of(comm);
  Exchange ex(me, out_degree, pairs);
  ASSERT_EQ(ex.run_a2av(comm), A2AV_SUCCESS) << A2AV_Last_error_message();
  EXPECT_EQ(ex.recv, ex.want) << what << " on rank " << me;
  EXPECT_STREQ(A2AV_Last_algorithm(), "neighbor:direct");
}

// A Cartesian grid: per dimension, the lower neighbour's block sent upwards (its slot 2d+1)
// arrives in slot 2d, and the other way round.
void check_cartesian(std::vector<int> dims, std::vector<int> periods, const char* what) {
  MPI_Comm cart;
  ASSERT_EQ(MPI_Cart_create(world(), static_cast<int>(dims.size()), dims.data(), periods.data(), 0,
                            &cart),
            MPI_SUCCESS);
  std::vector<Pairing> pairs;
  for (int d = 0; d < static_cast<int>(dims.size()); ++d) {
    int below, above;
    MPI_Cart_shift(cart, d, 1, &below, &above);
    pairs.push_back({below, 2 * d + 1});
    pairs.push_back({above, 2 * d});
  }
  check_exchange(cart, static_cast<int>(pairs.size()), pairs, what);
  MPI_Comm_free(&cart);
}

TEST(NeighborAlltoallv, CartesianGrids) {
  const int size = size_of(world());
  check_cartesian({size}, {1}, "periodic ring");
  check_cartesian({size}, {0}, "open chain (MPI_PROC_NULL at the ends)");
  std::vector<int> two(2, 0);
  MPI_Dims_create(size, 2, two.data());
  check_cartesian(two, {1, 1}, "periodic 2-D grid");
  check_cartesian({size, 1, 1}, {0, 1, 1}, "two periodic dimensions of one process");
  if (size % 2 == 0) check_cartesian({size / 2, 2}, {1, 1}, "a periodic dimension of two");
}

// The vendor's MPI_Neighbor_alltoallv, on the grids where the pairing rule cannot matter
// (no dimension of one or two processes): the same bytes as a2av.
TEST(NeighborAlltoallv, CartesianLikeVendor) {
  const int size = size_of(world()), me = rank_of(world());
  if (size < 3) GTEST_SKIP() << "every periodic dimension has one or two processes";
  int dims[] = {size}, periods[] = {1};
  MPI_Comm cart;
  MPI_Cart_create(world(), 1, dims, periods, 0, &cart);
  int below, above;
  MPI_Cart_shift(cart, 0, 1, &below, &above);
  Exchange ex(me, 2, {{below, 1}, {above, 0}});
  ASSERT_EQ(ex.run_a2av(cart), A2AV_SUCCESS) << A2AV_Last_error_message();
  EXPECT_EQ(ex.recv, ex.run_vendor(cart));
  MPI_Comm_free(&cart);
}

// MPI_Graph_create: a ring where every rank lists its successor twice and itself once.
TEST(NeighborAlltoallv, GraphWithDuplicateAndSelfEdges) {
  const int size = size_of(world()), me = rank_of(world());
  auto neighbours_of = [size](int r) {
    return std::vector<int>{(r + 1) % size, r, (r + size - 1) % size, (r + 1) % size,
                            (r + size - 1) % size};
  };
  std::vector<int> index, edges;
  for (int r = 0; r < size; ++r) {
    for (int n : neighbours_of(r)) edges.push_back(n);
    index.push_back(static_cast<int>(edges.size()));
  }
  MPI_Comm graph;
  ASSERT_EQ(MPI_Graph_create(world(), size, index.data(), edges.data(), 0, &graph), MPI_SUCCESS);
  const std::vector<int> mine = neighbours_of(me);
  const auto pairs = graph_pairing(me, mine, neighbours_of);
  check_exchange(graph, static_cast<int>(mine.size()), pairs, "graph ring");
  Exchange ex(me, mine.size(), pairs);
  ASSERT_EQ(ex.run_a2av(graph), A2AV_SUCCESS);
  EXPECT_EQ(ex.recv, ex.run_vendor(graph)) << "rank " << me;
  MPI_Comm_free(&graph);
}

// A distributed graph from seeded random edges: rank 0 sends nothing (out-degree 0), the last
// rank receives nothing (in-degree 0), duplicates and self edges occur, and each rank lists
// its sources in reversed sender order (the relative order of one sender's edges kept).
TEST(NeighborAlltoallv, DistributedGraphLikeVendor) {
  const int size = size_of(world()), me = rank_of(world());
  for (std::uint64_t seed = 1; seed <= 3; ++seed) {
    auto destinations_of = [size, seed](int r) {
      std::vector<int> out;
      if (r == 0) return out;
      std::mt19937_64 rng(seed * 1000 + r);
      const int degree = static_cast<int>(rng() % 5);
      for (int e = 0; e < degree; ++e)
        out.push_back(static_cast<int>(rng() % (size > 1 ? size - 1 : 1)));
      return out;
    };
    std::vector<int> sources;
    for (int a = size - 1; a >= 0; --a)
      for (int d : destinations_of(a))
        if (d == me) sources.push_back(a);
    const std::vector<int> destinations = destinations_of(me);
    MPI_Comm graph;
    ASSERT_EQ(MPI_Dist_graph_create_adjacent(
                  world(), static_cast<int>(sources.size()), sources.data(), MPI_UNWEIGHTED,
                  static_cast<int>(destinations.size()), destinations.data(), MPI_UNWEIGHTED,
                  MPI_INFO_NULL, 0, &graph),
              MPI_SUCCESS);
    const auto pairs = graph_pairing(me, sources, destinations_of);
    check_exchange(graph, static_cast<int>(destinations.size()), pairs, "distributed graph");
    Exchange ex(me, destinations.size(), pairs);
    ASSERT_EQ(ex.run_a2av(graph), A2AV_SUCCESS);
    EXPECT_EQ(ex.recv, ex.run_vendor(graph)) << "seed " << seed << " rank " << me;
    MPI_Comm_free(&graph);
  }
}

// A distributed graph given a periodic ring's Cartesian lists: the graph rule applies (k-th
// edge to k-th edge), not the Cartesian one, which differs when the ring has two processes.
TEST(NeighborAlltoallv, DistributedGraphFromCartesianLists) {
  const int size = size_of(world()), me = rank_of(world());
  auto lists_of = [size](int r) { return std::vector<int>{(r + size - 1) % size, (r + 1) % size}; };
  const std::vector<int> mine = lists_of(me);
  MPI_Comm graph;
  ASSERT_EQ(MPI_Dist_graph_create_adjacent(world(), 2, mine.data(), MPI_UNWEIGHTED, 2, mine.data(),
                                           MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &graph),
            MPI_SUCCESS);
  check_exchange(graph, 2, graph_pairing(me, mine, lists_of), "graph from Cartesian lists");
  MPI_Comm_free(&graph);
}

TEST(NeighborAlltoallv, Errors) {
  const int size = size_of(world()), me = rank_of(world());
  int dims[] = {size}, periods[] = {1};
  MPI_Comm cart;
  MPI_Cart_create(world(), 1, dims, periods, 0, &cart);
  int below, above;
  MPI_Cart_shift(cart, 0, 1, &below, &above);
  const std::vector<Pairing> pairs{{below, 1}, {above, 0}};
  {
    Exchange ex(me, 2, pairs);
    EXPECT_EQ(ex.run_a2av(world()), A2AV_ERR_ARG);
    EXPECT_NE(std::string(A2AV_Last_error_message()).find("no process topology"),
              std::string::npos);
  }
  {
    Exchange ex(me, 2, pairs);
    ex.sc[1] = -3;
    EXPECT_EQ(ex.run_a2av(cart), A2AV_ERR_ARG);
    EXPECT_NE(std::string(A2AV_Last_error_message()).find("negative"), std::string::npos);
  }
  {
    Exchange ex(me, 2, pairs);
    EXPECT_EQ(A2AV_Neighbor_alltoallv(MPI_IN_PLACE, ex.sc.data(), ex.sd.data(), MPI_INT,
                                      ex.recv.data(), ex.rc.data(), ex.rd.data(), MPI_INT, cart),
              A2AV_ERR_ARG);
  }
  {  // the send buffer as receive buffer, on every rank (the error is each rank's own; every
     // rank has a block of data to send, which lands on itself)
    Exchange ex(me, 2, pairs);
    std::vector<int> one = ex.send;
    EXPECT_EQ(A2AV_Neighbor_alltoallv(one.data(), ex.sc.data(), ex.sd.data(), MPI_INT, one.data(),
                                      ex.sc.data(), ex.sd.data(), MPI_INT, cart),
              A2AV_ERR_ARG);
    EXPECT_NE(std::string(A2AV_Last_error_message()).find("overlap"), std::string::npos);
    EXPECT_EQ(one, ex.send);
  }
  {  // every rank expects one element more than arrives: each gets the counts error
    Exchange ex(me, 2, pairs);
    ex.rc = {ex.rc[0] + 1, ex.rc[1] + 1};
    ex.rd = {0, ex.rc[0] + 1};
    ex.recv.assign(ex.rc[0] + ex.rc[1] + 2, kGap);
    EXPECT_EQ(ex.run_a2av(cart), A2AV_ERR_COUNTS);
  }
  {  // and one element fewer, where the sender sends any: MPI's truncation, as a counts error
     // (not from the rank itself: Open MPI 4.1 truncates a message to self without an error)
    Exchange ex(me, 2, pairs);
    const bool shorter = ex.rc[0] > 0 && below != me;
    if (shorter) --ex.rc[0];
    EXPECT_EQ(ex.run_a2av(cart), shorter ? A2AV_ERR_COUNTS : A2AV_SUCCESS);
    // Nothing arrives after the call (MPI_Waitall leaves the other requests pending when one
    // fails): the buffer stays as refilled while every rank makes progress.
    std::fill(ex.recv.begin(), ex.recv.end(), kGap);
    MPI_Barrier(world());
    MPI_Barrier(world());
    EXPECT_EQ(ex.recv, std::vector<int>(ex.recv.size(), kGap)) << "on rank " << me;
  }
  MPI_Comm_free(&cart);
}

}  // namespace
}  // namespace a2av::test
