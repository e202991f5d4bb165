// Tuning tables: parsing, validation errors that name the file and line, first-match rules.
#include "tuning/table.hpp"

#include <gtest/gtest.h>
#include <a2av/error.hpp>

namespace a2av {
namespace {

std::string error_of(const std::string& text) {
  try {
    TuningTable::parse(text, "t.json");
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), A2AV_ERR_ALGORITHM);
    return e.what();
  }
  return "";
}

TEST(TuningTable, FirstMatchingRuleWins) {
  const TuningTable table = TuningTable::parse(R"({
  "version": 1,
  "rules": [
    {"comm_size": [1, 2], "algorithm": "pairwise"},
    {"max_block_bytes": [0, 256], "sparsity": [0, 0.5], "algorithm": "tuna:radix=2"},
    {"mean_block_bytes": [0, 100000], "ranks_per_node": [2, 8], "algorithm": "scattered:block_count=4"},
    {"algorithm": "spread_out"}
  ]
})",
                                               "t.json");
  ExchangeStats s{2, 1, 5000, 10, 0};
  EXPECT_EQ(table.match(s)->algorithm, "pairwise");
  EXPECT_EQ(table.match(s)->line, 4);
  s.size = 16;
  s.max_block = 200;
  EXPECT_EQ(table.match(s)->algorithm, "tuna:radix=2");
  s.sparsity = 0.9;
  s.ranks_per_node = 4;
  EXPECT_EQ(table.match(s)->algorithm, "scattered:block_count=4");
  s.ranks_per_node = 1;
  EXPECT_EQ(table.match(s)->algorithm, "spread_out");
}

TEST(TuningTable, NoRuleMatches) {
  const TuningTable table =
      TuningTable::parse(R"({"rules": [{"comm_size": [4, 8], "algorithm": "linear"}]})", "t");
  EXPECT_EQ(table.match(ExchangeStats{16, 1, 0, 0, 0}), nullptr);
}

TEST(TuningTable, ErrorsNameFileAndLine) {
  EXPECT_NE(error_of("{\n\"rules\": [\n{\"algorithm\": \"linear\",}\n]}").find("t.json, line 3"),
            std::string::npos);
  const std::string unknown_algorithm =
      error_of("{\"rules\": [\n  {\"algorithm\": \"linear\"},\n  {\"algorithm\": \"fastest\"}\n]}");
  EXPECT_NE(unknown_algorithm.find("line 3 (rule 2)"), std::string::npos) << unknown_algorithm;
  EXPECT_NE(unknown_algorithm.find("unknown algorithm 'fastest'"), std::string::npos);
  EXPECT_NE(error_of(R"({"rules": [{"algorithm": "tuna:radix=1"}]})").find("out of range"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"rules": [{"algorithm": "auto"}]})").find("cannot choose 'auto'"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"rules": [{"colour": [1, 2], "algorithm": "linear"}]})")
                .find("unknown key 'colour'"),
            std::string::npos);
  EXPECT_NE(
      error_of(R"({"rules": [{"comm_size": [8, 2], "algorithm": "linear"}]})").find("low <= high"),
      std::string::npos);
  EXPECT_NE(error_of(R"({"rules": [{"comm_size": [2, 8]}]})").find("names no algorithm"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"rule": []})").find("expected"), std::string::npos);
  EXPECT_NE(error_of(R"([1, 2])").find("expected"), std::string::npos);
}

TEST(TuningTable, MissingFile) {
  try {
    TuningTable::load("/nonexistent/a2av.json");
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/a2av.json"), std::string::npos);
  }
}

}  // namespace
}  // namespace a2av
