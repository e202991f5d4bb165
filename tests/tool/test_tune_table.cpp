// Unit tests of the table `a2av tune` writes: the fastest spec per size, the rules' ranges,
// merging into an existing table, and the written text as the library reads it. No MPI.
#include "tune_table.hpp"
#include "tuning/table.hpp"

#include <gtest/gtest.h>

namespace a2av::tune {
namespace {

bench::Row row(std::int64_t size, const std::string& requested, const std::string& ran,
               double median_s) {
  bench::Row r;
  r.size = size;
  r.requested = requested;
  r.algorithm = ran;
  r.median_s = median_s;
  return r;
}

std::vector<Winner> winners(const std::vector<std::pair<std::int64_t, std::string>>& points) {
  std::vector<Winner> out;
  for (const auto& [size, algorithm] : points) out.push_back({size, algorithm, 1e-6, 1e-6});
  return out;
}

TEST(FastestPerSize, IgnoresBaselineAndAutoAndKeepsTheFirstOnATie) {
  const auto result = fastest_per_size({
      row(16, "MPI_Alltoallv", "MPI_Alltoallv", 1.0),
      row(16, "auto", "spread_out", 0.5),
      row(16, "tuna:radix=2", "tuna:radix=2,batch=1", 3.0),
      row(16, "pairwise", "pairwise", 2.0),
      row(16, "linear", "linear", 2.0),
      row(32, "MPI_Alltoallv", "MPI_Alltoallv", 4.0),
      row(32, "tuna:radix=2", "tuna:radix=2,batch=1", 3.0),
      row(32, "pairwise", "pairwise", 5.0),
  });
  ASSERT_EQ(result.size(), 2u);
  EXPECT_EQ(result[0].algorithm, "pairwise");
  EXPECT_EQ(result[0].baseline_s, 1.0);
  EXPECT_EQ(result[1].algorithm, "tuna:radix=2,batch=1");  // the spec that ran
  EXPECT_EQ(result[1].median_s, 3.0);
}

TEST(RulesFor, SizesCoverTheRangeAboveThePreviousAndEqualNeighboursMerge) {
  const Json rules = rules_for(
      4, winners({{16, "vendor"}, {32, "pairwise"}, {64, "pairwise"}, {128, "spread_out"}}));
  const Json expected = Json::parse(R"([
    {"comm_size": [4, 4], "max_block_bytes": [0, 16], "algorithm": "vendor"},
    {"comm_size": [4, 4], "max_block_bytes": [17, 64], "algorithm": "pairwise"},
    {"comm_size": [4, 4], "max_block_bytes": [65, 9223372036854775807], "algorithm": "spread_out"}
  ])");
  EXPECT_EQ(rules, expected);
  EXPECT_EQ(rules_for(2, winners({{16, "linear"}, {32, "linear"}})).size(), 1u);
}

TEST(MergeTable, ReplacesThisSizeKeepsOthersAndEndsWithOneFallback) {
  const Json existing = Json::parse(R"({
    "comment": "P=2: old\nP=4: before\nhand-written",
    "rules": [
      {"comm_size": [2, 2], "algorithm": "linear"},
      {"comm_size": [4, 4], "max_block_bytes": [0, 8], "algorithm": "vendor"},
      {"comm_size": [8, 8], "algorithm": "pairwise"},
      {"sparsity": [0.9, 1], "algorithm": "scattered:block_count=4"},
      {"algorithm": "linear"}
    ]})");
  const Json own = rules_for(4, winners({{16, "tuna:radix=2"}}));
  const Json table = merge_table(existing, 4, own, "P=4: now");
  const Json expected = Json::parse(R"([
    {"comm_size": [2, 2], "algorithm": "linear"},
    {"comm_size": [4, 4], "max_block_bytes": [0, 9223372036854775807], "algorithm": "tuna:radix=2"},
    {"comm_size": [8, 8], "algorithm": "pairwise"},
    {"sparsity": [0.9, 1], "algorithm": "scattered:block_count=4"},
    {"algorithm": "spread_out"}
  ])");
  EXPECT_EQ(table.at("rules"), expected);
  EXPECT_EQ(table.at("comment"), "P=2: old\nhand-written\nP=4: now");
  EXPECT_EQ(table.at("version"), 1);
}

TEST(MergeTable, RulesThatCouldMatchThisSizeStayBehindIt) {
  const Json existing = Json::parse(R"({"rules": [
      {"comm_size": [1, 16], "algorithm": "linear"}]})");
  const Json table = merge_table(existing, 4, rules_for(4, winners({{16, "vendor"}})), "P=4: x");
  EXPECT_EQ(table.at("rules").at(0).at("algorithm"), "vendor");
  EXPECT_EQ(table.at("rules").at(1).at("algorithm"), "linear");
}

TEST(FormatTable, TheLibraryReadsOneRulePerLine) {
  const Json rules = rules_for(3, winners({{16, "vendor"}, {1024, "tuna:radix=3,batch=2"}}));
  const std::string text = format_table(merge_table(Json(), 3, rules, "P=3: \"quoted\""));
  const TuningTable table = TuningTable::parse(text, "test");
  ExchangeStats stats;
  stats.size = 3;
  stats.max_block = 17;
  const TuningRule* rule = table.match(stats);
  ASSERT_NE(rule, nullptr);
  EXPECT_EQ(rule->algorithm, "tuna:radix=3,batch=2");
  EXPECT_EQ(rule->line, 6);  // {, version, comment, "rules": [, the first rule, this one
  stats.size = 5;
  EXPECT_EQ(table.match(stats)->algorithm, "spread_out");
}

}  // namespace
}  // namespace a2av::tune
