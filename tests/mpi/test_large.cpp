// More than 2^31 bytes per rank: a block of 2^31 + 8 bytes to the other rank, counted in
// MPI_BYTE through the large-count API, so counts, displacements and message sizes all
// pass the 32-bit limit. Checked against the pattern (the vendor call takes int counts).
// Also one sparse-exchange message of that size through NBX (a derived datatype of 1 GiB
// chunks on both sides).
#include "harness.hpp"

#include <a2av/sparse.hpp>

#include <cstdint>
#include <memory>

namespace a2av::test {
namespace {

constexpr std::int64_t kBig = (std::int64_t{1} << 31) + 8;
constexpr std::int64_t kSmall = 16;

TEST(LargeCounts, BlocksBeyondTwoGiB) {
  const int me = rank_of(world()), size = size_of(world());
  ASSERT_EQ(size, 2) << "registered at 2 ranks only";
  const int other = 1 - me;
  std::vector<MPI_Count> counts(2);
  counts[me] = kSmall;
  counts[other] = kBig;
  // Own block first, then the big one: the big block starts past no limit, ends past 2^31.
  std::vector<MPI_Aint> displs(2);
  displs[me] = 0;
  displs[other] = kSmall;
  const std::int64_t total = kSmall + kBig;
  auto send = std::make_unique_for_overwrite<unsigned char[]>(total);
  auto recv = std::make_unique_for_overwrite<unsigned char[]>(total);
  for (int peer : {me, other})
    for (std::int64_t b = 0; b < counts[peer]; ++b) send[displs[peer] + b] = pattern(me, peer, b);
  for (const char* spec : {"spread_out", "tuna:radix=2", "pairwise"}) {
    std::fill_n(recv.get(), total, kPoison);
    EXPECT_EQ(A2AV_Alltoallv_with(spec, send.get(), counts.data(), displs.data(), MPI_BYTE,
                                  recv.get(), counts.data(), displs.data(), MPI_BYTE, world()),
              A2AV_SUCCESS)
        << spec << ": " << A2AV_Last_error_message();
    std::int64_t wrong = 0;
    for (int peer : {me, other})
      for (std::int64_t b = 0; b < counts[peer]; ++b)
        wrong += recv[displs[peer] + b] != pattern(peer, me, b);
    EXPECT_EQ(wrong, 0) << spec;
  }
}

TEST(LargeCounts, SparseMessageBeyondTwoGiB) {
  const int me = rank_of(world()), other = 1 - me;
  auto data = std::make_unique_for_overwrite<std::byte[]>(kBig);
  for (std::int64_t b = 0; b < kBig; ++b) data[b] = static_cast<std::byte>(pattern(me, other, b));
  const OutgoingMessage big{other, {data.get(), static_cast<std::size_t>(kBig)}};
  const SparseResult in = sparse_exchange({&big, 1}, world(), {.algorithm = "nbx"});
  ASSERT_EQ(in.messages().size(), 1u);
  const IncomingMessage& m = in.messages()[0];
  EXPECT_EQ(m.source, other);
  ASSERT_EQ(static_cast<std::int64_t>(m.data.size()), kBig);
  std::int64_t wrong = 0;
  for (std::int64_t b = 0; b < kBig; ++b)
    wrong += m.data[b] != static_cast<std::byte>(pattern(other, me, b));
  EXPECT_EQ(wrong, 0);
}

}  // namespace
}  // namespace a2av::test
