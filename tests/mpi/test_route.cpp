// a2av::route (include/a2av/route.hpp; Mundani and Rank [Mundani11], Sections II-III):
// every permutation of P <= 8 ranks (40320 at P = 8, routed as lanes of one M-packet call,
// Section III-C) and seeded random ones above, each packet checked for its source and payload,
// each lane's correction rounds against the 0-1 prediction, the step counts against the
// network's shape; single packets; bad arguments thrown alike on every rank.
#include "harness.hpp"

#include <a2av/route.hpp>

#include <algorithm>
#include <bit>
#include <cstdio>
#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <vector>

namespace {

using a2av::Correction;
using a2av::test::rank_of;
using a2av::test::size_of;
using a2av::test::world;

constexpr Correction kMethods[] = {Correction::first_phase, Correction::transposition};

int log2_width(int size) {
  return std::bit_width(std::bit_ceil(static_cast<unsigned>(size))) - 1;
}

// Every permutation of 0..P-1 for P <= 8, else `count` seeded random ones.
std::vector<std::vector<int>> permutations(int size, int count, std::uint64_t seed) {
  std::vector<std::vector<int>> all;
  std::vector<int> p(size);
  std::iota(p.begin(), p.end(), 0);
  if (size <= 8) {
    do all.push_back(p);
    while (std::next_permutation(p.begin(), p.end()));
    return all;
  }
  std::mt19937_64 rng(seed);
  for (int i = 0; i < count; ++i) {
    std::shuffle(p.begin(), p.end(), rng);
    all.push_back(p);
  }
  return all;
}

// The payload of lane m's packet from `source`.
struct Packet {
  std::int64_t lane;
  std::int32_t source;
  std::int32_t check;
};
Packet packet_of(std::int64_t lane, int source) {
  return {lane, source, static_cast<std::int32_t>(lane * 7919 + source * 31)};
}

// Routes every permutation as one lane; checks delivery, rounds and steps; `histogram`
// counts the lanes by correction rounds.
void route_all(const std::vector<std::vector<int>>& perms, Correction method, MPI_Comm comm,
               std::vector<long>& histogram) {
  const int rank = rank_of(comm), size = size_of(comm);
  std::vector<Packet> packets;
  std::vector<int> dest;
  for (std::size_t m = 0; m < perms.size(); ++m) {
    packets.push_back(packet_of(static_cast<std::int64_t>(m), rank));
    dest.push_back(perms[m][rank]);
  }
  const a2av::RouteResult r = a2av::route<Packet>(packets, dest, comm, {.correction = method});
  histogram.assign(r.correction_rounds + 1, 0);
  for (std::size_t m = 0; m < perms.size(); ++m) {
    const int source = r.sources[m];
    ASSERT_EQ(perms[m][source], rank) << "lane " << m << " delivered the wrong packet";
    const Packet want = packet_of(static_cast<std::int64_t>(m), source);
    ASSERT_EQ(std::memcmp(&packets[m], &want, sizeof want), 0) << "lane " << m << " payload";
    ASSERT_EQ(r.lane_rounds[m], a2av::predicted_rounds(perms[m], method)) << "lane " << m;
    ++histogram[r.lane_rounds[m]];
  }
  const int rounds = r.correction_rounds,
            steps_per_correction = method == Correction::first_phase ? 1 : 2;
  EXPECT_EQ(r.merge_passes, rounds + 1);
  EXPECT_EQ(r.agreements, rounds + 1);
  EXPECT_EQ(r.exchange_steps, (rounds + 1) * log2_width(size) + rounds * steps_per_correction);
  EXPECT_GT(histogram.back(), 0) << "the last round retired no lane";
}

TEST(Route, EveryPermutationAsLanes) {
  const MPI_Comm comm = world();
  const int size = size_of(comm);
  const auto perms = permutations(size, 2000, 42);
  for (Correction method : kMethods) {
    std::vector<long> histogram;
    route_all(perms, method, comm, histogram);
    if (rank_of(comm) != 0) continue;
    std::string line;
    for (std::size_t r = 0; r < histogram.size(); ++r)
      line.append(" ").append(std::to_string(r)).append(":").append(std::to_string(histogram[r]));
    std::printf("P=%d %s, %zu permutations, lanes by correction rounds:%s\n", size,
                method == Correction::first_phase ? "first_phase" : "transposition", perms.size(),
                line.c_str());
  }
}

// The single-packet problem: one lane, packets of 5 bytes (no alignment), reversal and a
// rotation; the identity needs exactly one merge pass.
TEST(Route, SinglePackets) {
  const MPI_Comm comm = world();
  const int rank = rank_of(comm), size = size_of(comm);
  std::vector<std::vector<int>> cases(3, std::vector<int>(size));
  for (int i = 0; i < size; ++i) {
    cases[0][i] = i;
    cases[1][i] = size - 1 - i;
    cases[2][i] = (i + 1) % size;
  }
  for (const auto& perm : cases) {
    std::byte payload[5];
    for (int b = 0; b < 5; ++b) payload[b] = std::byte(a2av::test::pattern(rank, perm[rank], b));
    const int dest = perm[rank];
    const a2av::RouteResult r = a2av::route_packets(payload, 5, {&dest, 1}, comm);
    const int source = static_cast<int>(std::find(perm.begin(), perm.end(), rank) - perm.begin());
    EXPECT_EQ(r.sources[0], source);
    for (int b = 0; b < 5; ++b)
      EXPECT_EQ(payload[b], std::byte(a2av::test::pattern(source, rank, b)));
    EXPECT_EQ(r.correction_rounds, a2av::predicted_rounds(perm, Correction::first_phase));
  }
  int identity = rank;
  const a2av::RouteResult r = a2av::route<int>({&identity, 1}, {&identity, 1}, comm);
  EXPECT_EQ(r.merge_passes, 1);
  EXPECT_EQ(r.exchange_steps, log2_width(size));
  EXPECT_EQ(r.clashes, 0);
}

// Each bad argument: every rank throws A2AV_ERR_ARG with the same kind of message, packets
// unchanged.
void expect_route_error(std::vector<int> dest, std::size_t packet_bytes, const char* message,
                        MPI_Comm comm) {
  std::vector<std::byte> packets(dest.size() * packet_bytes, std::byte{0x5A});
  const auto before = packets;
  try {
    a2av::route_packets(packets, packet_bytes, dest, comm);
    ADD_FAILURE() << "no error; expected: " << message;
  } catch (const a2av::Error& e) {
    EXPECT_EQ(e.code(), A2AV_ERR_ARG);
    EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
  }
  EXPECT_EQ(packets, before);
}

TEST(Route, BadArgumentsFailOnEveryRank) {
  const MPI_Comm comm = world();
  const int rank = rank_of(comm), size = size_of(comm);
  // Everyone sends lane 1 to rank 0: a permutation only at P = 1.
  if (size > 1) expect_route_error({rank, 0}, 4, "lane 1 is not a permutation", comm);
  expect_route_error({rank == 0 ? size : rank}, 4, rank == 0 ? "not a rank of 0.." : "route", comm);
  if (size > 1)
    expect_route_error(std::vector<int>(rank == 0 ? 2 : 1, rank), 4, "ranks disagree", comm);
  if (size > 1) expect_route_error({rank}, rank == 0 ? 8 : 4, "ranks disagree", comm);
}

}  // namespace
