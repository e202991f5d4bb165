// More than 2^31 bytes per rank: a block of 2^31 + 8 bytes to the other rank, counted in
// MPI_BYTE through the large-count API, so counts, displacements and message sizes all
// pass the 32-bit limit. Checked against the pattern (the vendor call takes int counts).
// Also one sparse-exchange message of that size through NBX (a derived datatype of 1 GiB
// chunks on both sides).
#include "harness.hpp"

#include <a2av/sparse.hpp>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <memory>

namespace a2av::test {
namespace {

// pattern(src, dst, b) over gigabytes at memcpy and memcmp speed: byte i of the 256-byte run
// r is (src * 131 + dst * 31 + r + 7 * i) mod 256, so the 256 distinct runs are precomputed
// (a per-byte loop took 45 s of the test's 95).
class PatternRuns {
 public:
  PatternRuns(int src, int dst) {
    for (int r = 0; r < 256; ++r)
      for (int i = 0; i < 256; ++i) runs_[r][i] = pattern(src, dst, std::int64_t{r} * 256 + i);
  }
  void fill(unsigned char* out, std::int64_t n) const {
    for (std::int64_t at = 0; at < n; at += 256) std::memcpy(out + at, run(at), length(at, n));
  }
  // Bytes of in[0, n) that differ from the pattern.
  std::int64_t mismatches(const unsigned char* in, std::int64_t n) const {
    std::int64_t wrong = 0;
    for (std::int64_t at = 0; at < n; at += 256) {
      const std::size_t len = length(at, n);
      if (std::memcmp(in + at, run(at), len) == 0) continue;
      for (std::size_t i = 0; i < len; ++i) wrong += in[at + i] != run(at)[i];
    }
    return wrong;
  }

 private:
  const unsigned char* run(std::int64_t at) const { return runs_[(at / 256) % 256].data(); }
  static std::size_t length(std::int64_t at, std::int64_t n) {
    return static_cast<std::size_t>(std::min<std::int64_t>(256, n - at));
  }
  std::array<std::array<unsigned char, 256>, 256> runs_{};
};

constexpr std::int64_t kBig = (std::int64_t{1} << 31) + 8;
constexpr std::int64_t kSmall = 16;

// Own block first, then the big one: the big block starts past no limit, ends past 2^31. The
// send buffer is filled once and serves both tests: first touches of memory cost seconds per
// GiB on some virtual machines.
class LargeCounts : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    me = rank_of(world());
    other = 1 - me;
    counts[me] = kSmall;
    counts[other] = kBig;
    displs[me] = 0;
    displs[other] = kSmall;
    send = std::make_unique_for_overwrite<unsigned char[]>(kSmall + kBig);
    for (int peer : {me, other}) PatternRuns(me, peer).fill(&send[displs[peer]], counts[peer]);
  }
  static void TearDownTestSuite() { send.reset(); }

  static inline int me = 0, other = 1;
  static inline std::vector<MPI_Count> counts = std::vector<MPI_Count>(2);
  static inline std::vector<MPI_Aint> displs = std::vector<MPI_Aint>(2);
  static inline std::unique_ptr<unsigned char[]> send;
};

TEST_F(LargeCounts, BlocksBeyondTwoGiB) {
  ASSERT_EQ(size_of(world()), 2) << "registered at 2 ranks only";
  const std::int64_t total = kSmall + kBig;
  auto recv = std::make_unique_for_overwrite<unsigned char[]>(total);
  for (const char* spec : {"spread_out", "tuna:radix=2", "pairwise"}) {
    std::fill_n(recv.get(), total, kPoison);
    EXPECT_EQ(A2AV_Alltoallv_with(spec, send.get(), counts.data(), displs.data(), MPI_BYTE,
                                  recv.get(), counts.data(), displs.data(), MPI_BYTE, world()),
              A2AV_SUCCESS)
        << spec << ": " << A2AV_Last_error_message();
    std::int64_t wrong = 0;
    for (int peer : {me, other})
      wrong += PatternRuns(peer, me).mismatches(&recv[displs[peer]], counts[peer]);
    EXPECT_EQ(wrong, 0) << spec;
  }
}

TEST_F(LargeCounts, SparseMessageBeyondTwoGiB) {
  const OutgoingMessage big{
      other, {reinterpret_cast<const std::byte*>(&send[displs[other]]), std::size_t{kBig}}};
  const SparseResult in = sparse_exchange({&big, 1}, world(), {.algorithm = "nbx"});
  ASSERT_EQ(in.messages().size(), 1u);
  const IncomingMessage& m = in.messages()[0];
  EXPECT_EQ(m.source, other);
  ASSERT_EQ(static_cast<std::int64_t>(m.data.size()), kBig);
  EXPECT_EQ(PatternRuns(other, me).mismatches(reinterpret_cast<const unsigned char*>(m.data.data()),
                                              kBig),
            0);
}

}  // namespace
}  // namespace a2av::test
