// Unit tests without MPI communication: spec parsing and TuNA's round arithmetic.
#include "alltoallv/registry.hpp"
#include "alltoallv/tuna.hpp"

#include <gtest/gtest.h>
#include <a2av/error.hpp>

#include <map>
#include <set>

namespace a2av {
namespace {

int parse_error(std::string_view text) {
  try {
    parse_spec(text);
  } catch (const Error& e) {
    return e.code();
  }
  return A2AV_SUCCESS;
}

TEST(Spec, DefaultsAndValues) {
  const Spec s = parse_spec("tuna_coalesced:radix=4,block_count=3,validate=1");
  EXPECT_EQ(s.algorithm->name, "tuna_coalesced");
  EXPECT_EQ(s.params[kRadix], 4);
  EXPECT_EQ(s.params[kNodesPerBatch], 3);
  EXPECT_EQ(s.params[kRanksPerNode], 0);
  EXPECT_TRUE(s.validate);
  EXPECT_EQ(s.in_flight, 0) << "not given: A2AV_MAX_IN_FLIGHT";
  EXPECT_EQ(parse_spec("spread_out:in_flight=8").in_flight, 8);
  EXPECT_EQ(describe(parse_spec("tuna"), {16, 1, true}), "tuna:radix=4,batch=3,direct_above=8192");
  EXPECT_EQ(describe(parse_spec("tuna:radix=99"), {16, 1, true}),
            "tuna:radix=16,batch=15,direct_above=8192");
  EXPECT_EQ(describe(parse_spec("tuna_staggered:ranks_per_node=4,radix=3"), {16, 1, true}),
            "tuna_staggered:radix=3,batch=2,direct_above=8192,block_count=8,ranks_per_node=4");
  // 2 does not divide 9: the flat tuna that runs is shown, radix clamped to P.
  EXPECT_EQ(describe(parse_spec("tuna_coalesced:ranks_per_node=2,radix=3"), {9, 1, true}),
            "tuna:radix=3,batch=2,direct_above=8192");
  // Detected nodes that are not contiguous: fall back as well.
  EXPECT_EQ(describe(parse_spec("tuna_coalesced:radix=2"), {8, 4, false}),
            "tuna:radix=2,batch=1,direct_above=8192");
}

TEST(Spec, RejectsWhatItDoesNotKnow) {
  for (const char* bad :
       {"", "Tuna", "tuna:", "tuna:radix=1", "tuna:radix=2x", "tuna:radix=", "tuna:depth=2",
        "linear:radix=2", "scattered:block_count=-1", "tuna:radix=2,,batch=1", "tuna:validate=3",
        "spread_out:in_flight=7", "spread_out:in_flight=2147483648", "spread_out:in_flight=x"})
    EXPECT_EQ(parse_error(bad), A2AV_ERR_ALGORITHM) << bad;
  EXPECT_EQ(parse_error("tuna:radix=2,batch=1,direct_above=8192"), A2AV_SUCCESS);
}

// Each distance moves once per nonzero digit, so digits sum back to the distance.
TEST(TunaRounds, EveryDistanceTravelsItsDigits) {
  for (int size = 1; size <= 70; ++size)
    for (int radix = 2; radix <= size + 1; ++radix) {
      std::map<int, int> travelled;
      int rounds = 0;
      for (const auto& round : tuna_rounds(size, radix)) {
        ++rounds;
        travelled[round.distance] += round.distance;
        for (int d : round.forwarded) {
          EXPECT_NE(d, round.distance);
          travelled[d] += round.distance;
        }
      }
      for (int d = 1; d < size; ++d) EXPECT_EQ(travelled[d], d) << size << " " << radix;
      EXPECT_EQ(tuna_stored_blocks(size, radix), size - rounds - 1);
    }
}

TEST(TunaRounds, PaperExampleSizes) {
  // Figure 3: P = 8 stores 4, 3 and 3 blocks at radices 2, 3 and 4.
  EXPECT_EQ(tuna_stored_blocks(8, 2), 4);
  EXPECT_EQ(tuna_stored_blocks(8, 3), 3);
  EXPECT_EQ(tuna_stored_blocks(8, 4), 3);
  EXPECT_EQ(tuna_rounds(8, 2).size(), 3u);
  EXPECT_EQ(tuna_stored_blocks(16, 16), 0);
}

// Under the bound a digit's rounds go a window at a time; consecutive rounds must spread
// over the digit's values, so that a window's distances do not all cross one link.
TEST(TunaRounds, ConsecutiveRoundsSpreadOverTheDigit) {
  const auto rounds = tuna_rounds(4096, 64);
  ASSERT_EQ(rounds.size(), 126u);
  for (int digit = 0; digit < 2; ++digit) {
    std::set<int> values;
    for (int i = 0; i < 63; ++i) values.insert(rounds[digit * 63 + i].value);
    EXPECT_EQ(values.size(), 63u);
    EXPECT_EQ(*values.begin(), 1);
    EXPECT_EQ(*values.rbegin(), 63);
    // Any 16 consecutive rounds (a window of the default bound) touch every quarter of the
    // digit's values 1..63.
    for (int first = 0; first + 16 <= 63; ++first) {
      std::set<int> quarters;
      for (int i = first; i < first + 16; ++i)
        quarters.insert((rounds[digit * 63 + i].value - 1) / 16);
      EXPECT_EQ(quarters.size(), 4u) << "window from round " << first;
    }
  }
  // A digit with fewer values than the radix (P = 10, radix 4: the second digit has 1, 2).
  const auto short_digit = tuna_rounds(10, 4);
  ASSERT_EQ(short_digit.size(), 5u);
  EXPECT_EQ(short_digit[3].digit, 1);
  EXPECT_EQ(short_digit[3].value + short_digit[4].value, 3);
}

TEST(TunaRounds, RadixAndBatchClamping) {
  EXPECT_EQ(tuna_radix(0, 16), 4);
  EXPECT_EQ(tuna_radix(0, 17), 5);
  EXPECT_EQ(tuna_radix(100, 9), 9);
  EXPECT_EQ(tuna_radix(5, 1), 2);
  EXPECT_EQ(tuna_batch(0, 4), 3);
  EXPECT_EQ(tuna_batch(10, 4), 3);
  EXPECT_EQ(tuna_batch(1, 4), 1);
}

}  // namespace
}  // namespace a2av
