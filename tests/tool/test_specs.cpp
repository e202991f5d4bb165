// Unit tests of `a2av bench`'s algorithm list: the comma rule, the radix and block-count
// sweeps, and rejection through a2av's own parser. No MPI communication.
#include "specs.hpp"

#include <a2av/error.hpp>

#include <gtest/gtest.h>

#include <stdexcept>

namespace a2av::bench {
namespace {

using Specs = std::vector<std::string>;

TEST(SplitSpecs, ItemsWithEqualsButNoColonContinueTheSpec) {
  EXPECT_EQ(split_specs("tuna:radix=2,batch=1,spread_out"),
            (Specs{"tuna:radix=2,batch=1", "spread_out"}));
  EXPECT_EQ(split_specs("vendor,,scattered:block_count=8"),
            (Specs{"vendor", "scattered:block_count=8"}));
  EXPECT_EQ(split_specs(""), Specs{});
}

TEST(RadixValue, NamesAndNumbers) {
  EXPECT_EQ(radix_value("P", 9), 9);
  EXPECT_EQ(radix_value("sqrtP", 9), 3);
  EXPECT_EQ(radix_value("sqrtP", 10), 4);
  EXPECT_EQ(radix_value("P", 1), 2);  // the library clamps it back to P
  EXPECT_EQ(radix_value("16", 4), 16);
  EXPECT_THROW(radix_value("1", 4), std::invalid_argument);
  EXPECT_THROW(radix_value("4x", 4), std::invalid_argument);
}

TEST(WithParam, SetsOrReplaces) {
  EXPECT_EQ(with_param("tuna", "radix", 4), "tuna:radix=4");
  EXPECT_EQ(with_param("tuna:batch=1", "radix", 4), "tuna:batch=1,radix=4");
  EXPECT_EQ(with_param("tuna:radix=2,batch=1", "radix", 4), "tuna:radix=4,batch=1");
}

TEST(ExpandSpecs, SweepsApplyToTheirFamilies) {
  EXPECT_EQ(expand_specs("tuna,vendor,tuna_coalesced:ranks_per_node=2", {2, 4}, {1, 8}, 8, 8),
            (Specs{"tuna:radix=2", "tuna:radix=4", "vendor",
                   "tuna_coalesced:ranks_per_node=2,radix=2,block_count=1",
                   "tuna_coalesced:ranks_per_node=2,radix=2,block_count=8",
                   "tuna_coalesced:ranks_per_node=2,radix=4,block_count=1",
                   "tuna_coalesced:ranks_per_node=2,radix=4,block_count=8"}));
  // A sweep with nothing to apply to adds its plain algorithm; duplicates run once.
  EXPECT_EQ(expand_specs("vendor,vendor", {2}, {4}, 4, 4),
            (Specs{"vendor", "tuna:radix=2", "scattered:block_count=4"}));
}

TEST(ExpandSpecs, AllIsEveryAlgorithm) {
  const Specs all = expand_specs("all", {}, {}, 4, 4);
  EXPECT_EQ(all.front(), "auto");
  EXPECT_NE(std::find(all.begin(), all.end(), "vendor"), all.end());
  EXPECT_NE(std::find(all.begin(), all.end(), "tuna_staggered"), all.end());
}

TEST(ExpandSpecs, RejectsWithTheLibrarysMessage) {
  try {
    expand_specs("vendor,nope", {}, {}, 4, 4);
    FAIL() << "accepted an unknown algorithm";
  } catch (const a2av::Error& e) {
    EXPECT_EQ(e.code(), A2AV_ERR_ALGORITHM);
    EXPECT_NE(std::string(e.what()).find("unknown algorithm 'nope'"), std::string::npos);
  }
  EXPECT_THROW(expand_specs("tuna:radix=1", {}, {}, 4, 4), a2av::Error);
  EXPECT_THROW(expand_specs(",", {}, {}, 4, 4), std::invalid_argument);
}

}  // namespace
}  // namespace a2av::bench
