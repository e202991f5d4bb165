// The cost model counts phases, messages and bytes as the implementation sends them.
#include "core/check.hpp"
#include "tuning/cost_model.hpp"
#include "tuning/selector.hpp"

#include <gtest/gtest.h>

#include <chrono>

namespace a2av {
namespace {

Machine unit_latency() {
  Machine m;
  m.intra = m.inter = {1.0, 0.0};
  m.ranks_per_node = 64;
  return m;
}

Prediction run(const char* spec, int size, double block, const Machine& m = unit_latency()) {
  std::vector<std::vector<std::int64_t>> matrix(size, std::vector<std::int64_t>(size, block));
  return predict(parse_spec(spec), Workload{size, &matrix, 0}, m);
}

TEST(CostModel, AgreementBeforeOrInBand) {
  // Empty blocks at P = 8: vendor agrees on nothing (MPI's semantics) and sends nothing;
  // linear and TuNA agree in band, with 7 empty direct messages and no allreduce; only
  // hierarchical TuNA across nodes pays the allreduce (3 latencies).
  std::vector<std::vector<std::int64_t>> none(8, std::vector<std::int64_t>(8, 0));
  const Workload empty{8, &none, 0};
  EXPECT_DOUBLE_EQ(predict(parse_spec("vendor"), empty, unit_latency()).seconds, 0);
  EXPECT_EQ(predict(parse_spec("vendor"), empty, unit_latency()).messages, 0);
  EXPECT_DOUBLE_EQ(predict(parse_spec("linear"), empty, unit_latency()).seconds, 7);
  EXPECT_DOUBLE_EQ(predict(parse_spec("tuna:radix=8"), empty, unit_latency()).seconds, 7);
  EXPECT_EQ(predict(parse_spec("tuna:radix=2"), empty, unit_latency()).messages, 3 + 3)
      << "per round a direct message and a forwarded message of headers";
  Machine two_nodes = unit_latency();
  two_nodes.ranks_per_node = 4;
  const Prediction across = predict(parse_spec("tuna_coalesced"), empty, two_nodes);
  EXPECT_GE(across.seconds, 3) << "the allreduce before";
}

TEST(CostModel, LinearAlgorithms) {
  const Prediction spread = run("spread_out", 4, 10);
  EXPECT_EQ(spread.phases, 1);
  EXPECT_EQ(spread.messages, 3);
  EXPECT_DOUBLE_EQ(spread.seconds, 3);
  EXPECT_DOUBLE_EQ(spread.bytes, 30);
  const Prediction pairwise = run("pairwise", 4, 10);
  EXPECT_EQ(pairwise.phases, 3);
  EXPECT_DOUBLE_EQ(pairwise.seconds, 3);
  EXPECT_EQ(run("scattered:block_count=2", 5, 10).phases, 2);
  EXPECT_EQ(run("vendor", 4, 0).messages, 0) << "empty blocks are not sent";
  EXPECT_EQ(run("spread_out", 4, 0).messages, 3) << "but agree on errors in band";
}

TEST(CostModel, TunaRoundsAndHeaders) {
  // P = 4, radix 2: both rounds send their direct block and one forwarded message with
  // distance 3 (binary 11 moves in both), a header of 2 sizes before it.
  Machine bytes_only;
  bytes_only.intra = bytes_only.inter = {0.0, 1.0};
  bytes_only.ranks_per_node = 4;
  const Prediction p = run("tuna:radix=2", 4, 10, bytes_only);
  EXPECT_EQ(p.phases, 2);
  EXPECT_EQ(p.messages, 4);
  EXPECT_DOUBLE_EQ(p.bytes, 2 * (10 + (32 + 10))) << "header: length, code, rank, one size";
  EXPECT_DOUBLE_EQ(p.seconds, p.bytes);
  // radix = P: one phase of direct messages, like spread_out.
  EXPECT_EQ(run("tuna:radix=8", 8, 10).phases, 1);
  EXPECT_EQ(run("tuna:radix=8", 8, 10).messages, 7);
  // Blocks above direct_above leave directly in the first phase: distance 3's block is no
  // longer forwarded, its round messages carry headers only.
  const Prediction large = run("tuna:radix=2,direct_above=100", 4, 1000, bytes_only);
  EXPECT_EQ(large.messages, 5);
  EXPECT_DOUBLE_EQ(large.bytes, 3 * 1000 + 2 * 32);
}

TEST(CostModel, HierarchicalPhases) {
  Machine m = unit_latency();
  m.ranks_per_node = 2;
  // Phase 1: one TuNA round inside the node; phase 2: one message of the header and the
  // blocks (coalesced), or the header and one message per block (staggered).
  const Prediction coalesced = run("tuna_coalesced", 4, 10, m);
  EXPECT_EQ(coalesced.phases, 2);
  EXPECT_DOUBLE_EQ(coalesced.seconds, 2);
  const Prediction staggered = run("tuna_staggered", 4, 10, m);
  EXPECT_DOUBLE_EQ(staggered.seconds, 4);
  // Blocks above direct_above first leave directly (3 messages); phase 2 carries the
  // header's front, then its sizes with the large blocks' markers.
  const Prediction large = run("tuna_coalesced:direct_above=5", 4, 10, m);
  EXPECT_EQ(large.phases, 3);
  EXPECT_EQ(large.messages, 3 + 1 + 2);
  m.inter = {5.0, 0.0};  // the inter-node message costs more
  EXPECT_DOUBLE_EQ(run("tuna_coalesced", 4, 10, m).seconds, 1 + 5);
}

TEST(CostModel, NodeInjectionIsSharedByTheNodesRanks) {
  // P = 8 on two nodes of 4, spread_out, 100 B blocks, only the network interface costs:
  // each rank sends 4 blocks off its node, its node 16 blocks, 1600 B at 1 s/B.
  Machine m;
  m.ranks_per_node = 4;
  m.node_injection = 1.0;
  std::vector<std::vector<std::int64_t>> matrix(8, std::vector<std::int64_t>(8, 100));
  EXPECT_DOUBLE_EQ(predict(parse_spec("spread_out"), Workload{8, &matrix, 0}, m).seconds, 1600);
  EXPECT_DOUBLE_EQ(predict(parse_spec("spread_out"), Workload{8, nullptr, 100}, m).seconds, 1600)
      << "mean blocks: the followed rank stands for its node's four";
  m.node_injection.reset();
  EXPECT_DOUBLE_EQ(predict(parse_spec("spread_out"), Workload{8, &matrix, 0}, m).seconds, 0);
}

TEST(CostModel, SharedLinksAreSharedByTheUnitsNodes) {
  // P = 16, nodes of 2 ranks, 2 nodes per switch (4 switches of 4 ranks), spread_out, 100 B
  // blocks, only the links between switches cost: each pair of switches carries 4 x 4
  // blocks, 1600 B at 1 s/B.
  Machine m;
  m.ranks_per_node = 2;
  m.shared_links = {{2, 1.0}};
  std::vector<std::vector<std::int64_t>> matrix(16, std::vector<std::int64_t>(16, 100));
  EXPECT_DOUBLE_EQ(predict(parse_spec("spread_out"), Workload{16, &matrix, 0}, m).seconds, 1600);
  EXPECT_DOUBLE_EQ(predict(parse_spec("spread_out"), Workload{16, nullptr, 100}, m).seconds, 1600)
      << "mean blocks: the followed rank's shifts stand for every rank's";
  // TuNA radix 2: the round of distance 4 crosses to the next switch with all 4 ranks of a
  // switch, 8 blocks each (plus their 8-byte sizes), and the rounds of distances 1 and 2 with
  // 1 and 2 of them.
  const double exact = predict(parse_spec("tuna:radix=2"), Workload{16, &matrix, 0}, m).seconds;
  EXPECT_GT(exact, 0);
  EXPECT_DOUBLE_EQ(predict(parse_spec("tuna:radix=2"), Workload{16, nullptr, 100}, m).seconds,
                   exact);
  m.shared_links = {{8, 1.0}};  // one switch: no link between switches
  EXPECT_DOUBLE_EQ(predict(parse_spec("spread_out"), Workload{16, &matrix, 0}, m).seconds, 0);
}

TEST(CostModel, TheBusiestLevelOfSharedLinksBounds) {
  // P = 16 as above, switches of 2 nodes joined at 1 s/B, groups of 4 nodes (two groups)
  // joined by one link at 2 s/B. spread_out: a pair of switches carries 1600 B (1600 s); the
  // one pair of groups 8 x 8 blocks of 100 B at 2 s/B, 12800 s, the bound.
  Machine m;
  m.ranks_per_node = 2;
  m.shared_links = {{2, 1.0}, {4, 2.0}};
  std::vector<std::vector<std::int64_t>> matrix(16, std::vector<std::int64_t>(16, 100));
  EXPECT_DOUBLE_EQ(predict(parse_spec("spread_out"), Workload{16, &matrix, 0}, m).seconds, 12800);
  EXPECT_DOUBLE_EQ(predict(parse_spec("spread_out"), Workload{16, nullptr, 100}, m).seconds, 12800);
  const double exact = predict(parse_spec("tuna:radix=2"), Workload{16, &matrix, 0}, m).seconds;
  m.shared_links.pop_back();
  EXPECT_GT(exact, predict(parse_spec("tuna:radix=2"), Workload{16, &matrix, 0}, m).seconds)
      << "TuNA's round of distance 8 crosses between the groups";
}

TEST(CostModel, MeanBlocksMatchAConstantMatrix) {
  for (const char* spec : {"spread_out", "tuna:radix=3", "tuna_coalesced:ranks_per_node=4"}) {
    std::vector<std::vector<std::int64_t>> matrix(16, std::vector<std::int64_t>(16, 100));
    const Prediction exact = predict(parse_spec(spec), Workload{16, &matrix, 0}, unit_latency());
    const Prediction mean = predict(parse_spec(spec), Workload{16, nullptr, 100}, unit_latency());
    EXPECT_DOUBLE_EQ(exact.seconds, mean.seconds) << spec;
  }
}

TEST(CostModel, SharedMemoryCellsAndMessages) {
  Machine m = unit_latency();
  m.shared_memory = LinkCost{0.25, 0.0};
  const Prediction small = run("shared_memory", 4, 10, m);
  EXPECT_EQ(small.phases, 1);
  EXPECT_DOUBLE_EQ(small.seconds, 3 * 0.25) << "three blocks through cells";
  const double beyond = static_cast<double>(shared_memory_capacity(4) + 1);
  EXPECT_DOUBLE_EQ(run("shared_memory", 4, beyond, m).seconds, 3) << "beyond a cell: messages";
  EXPECT_THROW(run("shared_memory", 4, 10), Error) << "a machine without its figures";
  m.ranks_per_node = 2;
  EXPECT_THROW(run("shared_memory", 4, 10, m), Error) << "ranks on two nodes";
}

// The model follows the registry: every algorithm with a model shape is predicted, on one
// node of 16 ranks and on four nodes of 4.
TEST(CostModel, PredictsEveryRegisteredAlgorithm) {
  Machine m = unit_latency();
  m.shared_memory = LinkCost{0.25, 0.0};
  for (int ranks_per_node : {16, 4}) {
    m.ranks_per_node = ranks_per_node;
    for (const AlgorithmDescriptor* a : algorithm_table()) {
      if (a->model.shape == ModelShape::none || (a->one_node_only && ranks_per_node < 16)) continue;
      EXPECT_GT(predict(parse_spec(a->name), Workload{16, nullptr, 100}, m).seconds, 0)
          << a->name << ", " << ranks_per_node << " ranks per node";
    }
  }
}

TEST(CostModel, SixteenThousandRanksInSeconds) {
  const auto start = std::chrono::steady_clock::now();
  for (const char* spec : {"tuna:radix=2", "tuna:radix=128", "tuna:radix=16384", "spread_out"})
    EXPECT_GT(predict(parse_spec(spec), Workload{16384, nullptr, 8192}, unit_latency()).seconds, 0);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 10);
}

}  // namespace
}  // namespace a2av

namespace a2av {
namespace {

TEST(CostModelChoice, FollowsTheMachine) {
  Machine slow_phases;
  slow_phases.intra = slow_phases.inter = {1e-6, 1e-9};
  slow_phases.phase_overhead = 1;  // one phase wins
  slow_phases.ranks_per_node = 64;
  // 31 peers each way fit the default bound on requests in flight (64): one phase.
  EXPECT_EQ(model_choice(slow_phases, ExchangeStats{32, 32, 16, 8, 0}).spec, "spread_out");
  Machine slow_messages;
  slow_messages.intra = slow_messages.inter = {1, 0};  // fewest messages win
  slow_messages.ranks_per_node = 1024;
  EXPECT_EQ(model_choice(slow_messages, ExchangeStats{1024, 1024, 16, 8, 0}).spec, "tuna:radix=2");
  Machine cells = slow_phases;
  cells.shared_memory = LinkCost{1e-7, 1e-10};
  EXPECT_EQ(model_choice(cells, ExchangeStats{16, 16, 16, 8, 0}).spec, "shared_memory");
  EXPECT_NE(model_choice(cells, ExchangeStats{32, 8, 16, 8, 0}).spec, "shared_memory")
      << "ranks on four nodes";
}

TEST(HeuristicChoice, SharedMemoryOnOneNodeNodeAwareOnSeveral) {
  EXPECT_EQ(choose_algorithm(ExchangeStats{8, 8, 16, 8, 0}, false).spec, "shared_memory");
  EXPECT_EQ(choose_algorithm(ExchangeStats{8, 4, 16, 8, 0}, false).spec, "node_aware");
  EXPECT_EQ(choose_algorithm(ExchangeStats{1024, 32, 16, 8, 0}, false).spec, "node_aware");
  EXPECT_EQ(choose_algorithm(ExchangeStats{4096, 32, 1024, 8, 0}, false).spec, "tuna:radix=64")
      << "blocks above node_aware's staging cap (256 B at P = 4096)";
  EXPECT_EQ(choose_algorithm(ExchangeStats{1, 1, 16, 8, 0}, false).spec, "spread_out");
  EXPECT_EQ(choose_algorithm(ExchangeStats{16, 1, 16, 8, 0}, false).spec, "node_aware:radix=4")
      << "one rank per node: TuNA's rounds over the nodes";
  EXPECT_EQ(choose_algorithm(ExchangeStats{5, 0, 16, 8, 0}, false).spec, "node_aware")
      << "nodes of different sizes";
  EXPECT_EQ(choose_algorithm(ExchangeStats{256, 32, 1 << 20, 8, 0}, false).spec, "node_aware")
      << "large blocks go directly, as spread_out's would";
}

// Across nodes up to P = 1024 node_aware's staging cap covers every block TuNA would be
// given, so auto decides from P alone and the call needs no allreduce.
TEST(HeuristicChoice, FromPAloneAcrossNodesUpTo1024Ranks) {
  EXPECT_FALSE(choice_needs_statistics(16, 16));
  EXPECT_FALSE(choice_needs_statistics(16, 4));
  EXPECT_FALSE(choice_needs_statistics(256, 32));
  EXPECT_FALSE(choice_needs_statistics(1024, 0)) << "nodes of different sizes";
  EXPECT_TRUE(choice_needs_statistics(2048, 32)) << "staging cap 512 B: below TuNA's blocks";
  EXPECT_TRUE(choice_needs_statistics(64, 64)) << "one node: TuNA for small blocks from 64 ranks";
}

// Polaris-like, 16 B blocks: one message per pair of nodes beats P - 1 messages per rank
// and TuNA's log rounds, at the scales the TuNA paper reports.
TEST(CostModel, NodeAwareBeatsFlatAlgorithmsAcrossNodesForSmallBlocks) {
  const Machine m = Machine::load(std::string(A2AV_SOURCE_DIR) + "/data/machines/polaris.json");
  for (int size : {1024, 16384}) {
    const Workload w{size, nullptr, 16};
    const double node_aware = predict(parse_spec("node_aware"), w, m).seconds;
    for (const char* flat : {"spread_out", "tuna:radix=2", "tuna_coalesced"})
      EXPECT_LT(node_aware, predict(parse_spec(flat), w, m).seconds) << size << " " << flat;
  }
}

// Where messages alone cost (1 s each), 32 nodes of 2 ranks: the agents send ceil(31 / 2) =
// 16 messages each, TuNA's rounds over the nodes with radix 2 one in each of 5 rounds.
TEST(CostModel, NodeAwareRoundsCostTunaRoundsOverTheNodes) {
  Machine m;
  m.intra = {0, 0};
  m.inter = {1, 0};
  m.shared_memory = LinkCost{0, 0};
  m.ranks_per_node = 2;
  const Workload w{64, nullptr, 16};
  EXPECT_DOUBLE_EQ(predict(parse_spec("node_aware"), w, m).seconds, 16);
  EXPECT_DOUBLE_EQ(predict(parse_spec("node_aware:radix=2"), w, m).seconds, 5);
  EXPECT_DOUBLE_EQ(predict(parse_spec("node_aware:radix=32"), w, m).seconds, 31);
}

}  // namespace
}  // namespace a2av
