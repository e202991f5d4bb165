// The 0-1 analysis of the bitonic merger (include/a2av/route.hpp;
// Mundani and Rank [Mundani11], Sections II-B, II-C, III-A): the paper's counts of
// incorrect states, its N = 8 list and correction results, and the enumeration against
// brute force over all 2^N inputs.
#include <a2av/route.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <set>
#include <string>

namespace {

using a2av::Correction;

// The paper writes states top input first: "(0001 0001)" is inputs 3 and 7 set.
std::uint64_t state(std::string text) {
  std::erase(text, ' ');
  std::uint64_t s = 0;
  for (std::size_t i = 0; i < text.size(); ++i)
    if (text[i] == '1') s |= std::uint64_t{1} << i;
  return s;
}

bool sorted(std::uint64_t s, int size) {
  for (int i = 0; i + 1 < size; ++i)
    if ((s >> i & 1) > (s >> (i + 1) & 1)) return false;
  return true;
}

TEST(Fixpoints, PaperCounts) {
  const std::pair<int, std::uint64_t> counts[] = {{4, 1}, {8, 11}, {16, 151}, {32, 7548}};
  for (auto [size, incorrect] : counts) {
    EXPECT_EQ(a2av::incorrect_states(size).size(), incorrect) << "N = " << size;
    const a2av::FixpointCensus c = a2av::fixpoint_census(size);
    EXPECT_EQ(c.incorrect, incorrect);
    for (const auto* histogram : {&c.first_phase, &c.transposition}) {
      EXPECT_EQ(std::accumulate(histogram->begin(), histogram->end(), std::uint64_t{0}), incorrect);
      EXPECT_EQ(histogram->front(), 0u) << "an incorrect state needs at least one round";
    }
  }
}

// Section II-B lists the 11 states of N = 8 by their number of 1s.
TEST(Fixpoints, PaperListForEight) {
  std::vector<std::uint64_t> paper;
  for (const char* s :
       {"0001 0001", "0000 0101", "0001 0101", "0001 0011", "0101 0101", "0011 0011", "0001 0111",
        "0101 0111", "0011 0111", "0101 1111", "0111 0111"})
    paper.push_back(state(s));
  std::sort(paper.begin(), paper.end());
  EXPECT_EQ(a2av::incorrect_states(8), paper);
}

// Section III-A at N = 8: both phases solve 7 states and leave 4 for a second round, the
// first phase alone solves 9 and leaves 2, and a second round solves the rest.
TEST(Fixpoints, PaperCorrectionsForEight) {
  const a2av::FixpointCensus c = a2av::fixpoint_census(8);
  EXPECT_EQ(c.transposition, (std::vector<std::uint64_t>{0, 7, 4}));
  EXPECT_EQ(c.first_phase, (std::vector<std::uint64_t>{0, 9, 2}));
  // (0101 0101) becomes (0001 0111) after either correction and merge, and then sorts.
  const std::uint64_t s = state("0101 0101");
  EXPECT_EQ(a2av::correction_rounds_01(s, 8, Correction::first_phase), 2);
  EXPECT_EQ(a2av::correction_rounds_01(state("0001 0111"), 8, Correction::transposition), 1);
}

// The incorrect states are exactly the unsorted outputs of one merge pass over all 2^N
// inputs, and each is a fixpoint.
TEST(Fixpoints, EnumerationMatchesBruteForce) {
  for (int size : {2, 4, 8, 16}) {
    std::set<std::uint64_t> outputs;
    for (std::uint64_t x = 0; x < (std::uint64_t{1} << size); ++x) {
      const std::uint64_t y = a2av::bitonic_merge_01(x, size);
      if (!sorted(y, size)) outputs.insert(y);
    }
    const auto states = a2av::incorrect_states(size);
    EXPECT_EQ(std::vector<std::uint64_t>(outputs.begin(), outputs.end()), states) << size;
    for (std::uint64_t s : states) EXPECT_EQ(a2av::bitonic_merge_01(s, size), s);
  }
}

// The census's slowest states need as many rounds as its histogram says, for both methods.
TEST(Fixpoints, SlowestStates) {
  const a2av::FixpointCensus c = a2av::fixpoint_census(32);
  EXPECT_EQ(a2av::correction_rounds_01(c.slowest_first_phase, 32, Correction::first_phase),
            static_cast<int>(c.first_phase.size()) - 1);
  EXPECT_EQ(a2av::correction_rounds_01(c.slowest_transposition, 32, Correction::transposition),
            static_cast<int>(c.transposition.size()) - 1);
  EXPECT_GT(c.first_phase.size() - 1, 5u) << "Proof 3's bound log2 N = 5 holds after all";
}

TEST(Fixpoints, PredictedRounds) {
  EXPECT_EQ(a2av::predicted_rounds(std::vector<int>{0, 1, 2, 3}, Correction::first_phase), 0);
  // A descending (bitonic) input sorts in one pass; 0 2 1 3 at threshold 2 is the fixpoint
  // (0101), which the correction then sorts.
  EXPECT_EQ(a2av::predicted_rounds(std::vector<int>{3, 2, 1, 0}, Correction::transposition), 0);
  EXPECT_EQ(a2av::predicted_rounds(std::vector<int>{0, 2, 1, 3}, Correction::first_phase), 1);
  // Three ranks: the virtual fourth holds +infinity.
  EXPECT_EQ(a2av::predicted_rounds(std::vector<int>{1, 2, 0}, Correction::first_phase),
            a2av::predicted_rounds(std::vector<int>{1, 2, 0, 3}, Correction::first_phase));
}

TEST(Fixpoints, SizesOutsideTheRangeThrow) {
  for (int size : {0, 12, 128}) {
    try {
      a2av::bitonic_merge_01(0, size);
      ADD_FAILURE() << "N = " << size << " accepted";
    } catch (const a2av::Error& e) {
      EXPECT_EQ(e.code(), A2AV_ERR_ARG);
    }
  }
  EXPECT_THROW(a2av::incorrect_states(64), a2av::Error);
}

}  // namespace
