// The shared_memory algorithm (src/alltoallv/shared_memory.cpp): blocks that fit a cell and
// blocks sent as messages in one exchange, many exchanges in a row, also with nothing
// between them (the cells alternate), communicators split, freed and made again (each has its
// own segment), count disagreements on either path followed by a clean call, a rank's error
// while large blocks travel to it, a send buffer shorter than its counts say where the
// receiver reads it, and a message the user posted before the call that a peer waits for
// while this rank waits on the cells. Each result is compared with the vendor MPI_Alltoallv.
#include "harness.hpp"

#include <a2av/alltoallv.hpp>

#include <sys/mman.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <random>
#include <string>

namespace a2av::test {
namespace {

constexpr const char* kSpec = "shared_memory";

// Blocks from empty to 300 KB: around any cell capacity a rank count gives, on both sides.
Matrix mixed_sizes(int size, std::uint64_t seed) {
  const std::int64_t sizes[] = {0, 1, 63, 64, 65, 1000, 4096, 5000, 40000, 300000};
  std::mt19937_64 rng(seed);
  Matrix m(size, std::vector<std::int64_t>(size));
  for (auto& row : m)
    for (auto& c : row) c = sizes[rng() % std::size(sizes)];
  return m;
}

int run(const std::vector<int>& send, const std::vector<MPI_Count>& sc, std::vector<int>& recv,
        const std::vector<MPI_Count>& rc, MPI_Comm comm) {
  std::vector<MPI_Aint> sd(sc.size()), rd(rc.size());
  for (std::size_t p = 1; p < sc.size(); ++p) {
    sd[p] = sd[p - 1] + static_cast<MPI_Aint>(sc[p - 1]);
    rd[p] = rd[p - 1] + static_cast<MPI_Aint>(rc[p - 1]);
  }
  return A2AV_Alltoallv_with(kSpec, send.data(), sc.data(), sd.data(), MPI_INT, recv.data(),
                             rc.data(), rd.data(), MPI_INT, comm);
}

// n ints to every peer, each int the sender's rank; returns the code and checks the data.
int exchange_ints(std::int64_t n, MPI_Comm comm) {
  const int size = size_of(comm), me = rank_of(comm);
  std::vector<int> send(n * size, me), recv(n * size, -1);
  const std::vector<MPI_Count> counts(size, n);
  const int code = run(send, counts, recv, counts, comm);
  for (int p = 0; code == A2AV_SUCCESS && p < size; ++p)
    EXPECT_EQ(recv[n * p + n - 1], p) << "block from rank " << p;
  return code;
}

TEST(SharedMemory, CellAndMessageBlocksInOneExchange) {
  for (std::uint64_t seed = 1; seed <= 4; ++seed)
    expect_same_as_vendor(kSpec, mixed_sizes(size_of(world()), seed), world(), seed);
}

TEST(SharedMemory, ManyExchangesInARow) {
  const int size = size_of(world());
  for (int i = 0; i < 40; ++i)
    expect_same_as_vendor(kSpec, i % 3 ? uniform(size, 100, i) : mixed_sizes(size, i), world(), i);
}

TEST(SharedMemory, BackToBackExchangesWithNothingBetween) {
  // No vendor call or barrier between exchanges, so a fast rank runs ahead of a slow one as
  // far as the protocol lets it: the cells of one exchange must not be overwritten by the
  // next while a peer still reads them. Each value names its sender and the exchange.
  const int size = size_of(world()), me = rank_of(world());
  constexpr int kExchanges = 2000, kInts = 3;
  const std::vector<MPI_Count> counts(size, kInts);
  std::vector<int> send(kInts * size), recv(kInts * size);
  int wrong = 0;
  for (int round = 0; round < kExchanges; ++round) {
    std::fill(send.begin(), send.end(), round * size + me);
    ASSERT_EQ(run(send, counts, recv, counts, world()), A2AV_SUCCESS) << A2AV_Last_error_message();
    for (int p = 0; p < size; ++p)
      for (int k = 0; k < kInts; ++k) wrong += recv[kInts * p + k] != round * size + p;
  }
  EXPECT_EQ(wrong, 0) << "values from another exchange or sender";
}

TEST(SharedMemory, SplitFreedAndDuplicatedCommunicators) {
  MPI_Comm halves;
  MPI_Comm_split(world(), rank_of(world()) % 2, 0, &halves);
  for (std::uint64_t seed = 1; seed <= 3; ++seed) {
    expect_same_as_vendor(kSpec, mixed_sizes(size_of(halves), seed), halves, seed);
    expect_same_as_vendor(kSpec, uniform(size_of(world()), 50, seed), world(), seed);
  }
  MPI_Comm_free(&halves);
  for (int round = 0; round < 3; ++round) {
    MPI_Comm dup;
    MPI_Comm_dup(world(), &dup);
    expect_same_as_vendor(kSpec, mixed_sizes(size_of(dup), round), dup, round);
    MPI_Comm_free(&dup);
  }
}

TEST(SharedMemory, CountDisagreementOnEitherPathThenACleanCall) {
  const int size = size_of(world()), me = rank_of(world());
  if (size < 2) GTEST_SKIP() << "needs a peer";
  const char* cells = std::getenv("A2AV_SHM_BYTES");
  if (cells && std::string(cells) == "0")
    GTEST_SKIP() << "without cells this is spread_out, whose count errors test_errors covers "
                    "(a large block sent beyond the receive count overflows Open MPI 4.1's "
                    "single-copy receive: docs/errors.md)";
  // Small blocks travel in cells, 100000 ints as messages at any cell capacity.
  for (const std::int64_t n : {std::int64_t{2}, std::int64_t{100000}}) {
    for (const std::int64_t said : {n / 2, n * 2}) {
      std::vector<MPI_Count> sc(size, n), rc(size, n);
      if (me == size - 1) sc[0] = said;  // the last rank sends rank 0 more or less than expected
      std::vector<int> send(n * 2 * size, me), recv(n * size, -1);
      const int code = run(send, sc, recv, rc, world());
      EXPECT_EQ(code, me == 0 ? A2AV_ERR_COUNTS : A2AV_SUCCESS)
          << n << " ints, said " << said << ": " << A2AV_Last_error_message();
      if (me == 0) {
        EXPECT_EQ(recv[n * (size - 1)], -1) << "a disagreed block was written";
      }
      EXPECT_EQ(exchange_ints(n, world()), A2AV_SUCCESS) << A2AV_Last_error_message();
    }
  }
}

TEST(SharedMemory, ErrorOnOneRankWhileLargeBlocksTravelToIt) {
  const int size = size_of(world()), me = rank_of(world());
  if (size < 2) GTEST_SKIP() << "needs a peer";
  const std::int64_t n = 100000;
  std::vector<MPI_Count> sc(size, n), rc(size, n);
  if (me == 0) sc[size - 1] = -1;
  std::vector<int> send(n * size, me), recv(n * size, -1);
  EXPECT_EQ(run(send, sc, recv, rc, world()), A2AV_ERR_ARG);
  for (int k : {0, static_cast<int>(n - 1)}) EXPECT_EQ(recv[k], -1) << "data from the failed rank";
  EXPECT_EQ(exchange_ints(n, world()), A2AV_SUCCESS) << A2AV_Last_error_message();
  EXPECT_EQ(exchange_ints(3, world()), A2AV_SUCCESS) << A2AV_Last_error_message();
}

// A send buffer that ends a page before its block for rank 1 does, the page after it not
// mapped, where the receiver reads the block from the sender's buffer (the registration with
// A2AV_SINGLE_COPY=1, where rank 0 says large blocks go that way; by MPI the read past the
// buffer would be undefined, hence only there). The kernel refuses the read: rank 1 returns
// A2AV_ERR_ARG, its sender is not left waiting for it, every other block arrives, and the next
// exchange is right. Blocking and nonblocking.
class ShortSendBuffer {
 public:
  static constexpr std::int64_t kBlock = 300000;  // read from the sender at every setting

  ShortSendBuffer() : pages_(round_up(size_ * kBlock) + page_) {
    void* at = mmap(nullptr, pages_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    EXPECT_NE(at, MAP_FAILED);
    buffer_ = static_cast<unsigned char*>(at);
    for (std::int64_t i = 0; i < pages_ - page_; ++i) buffer_[i] = byte_of(me_, i);
    mprotect(buffer_ + pages_ - page_, page_, PROT_NONE);
    for (int p = 0; p < size_; ++p) sd_[p] = rd_[p] = p * kBlock;
  }
  ~ShortSendBuffer() { munmap(buffer_, pages_); }

  // Rank 0's block for rank 1 runs `overrun` bytes past the mapped pages.
  void overrun_by(std::int64_t overrun) {
    if (me_ == 0) sd_[1] = pages_ - page_ - kBlock + overrun;
  }
  int exchange(const char* spec) {
    std::fill(recv_.begin(), recv_.end(), 0xee);
    return A2AV_Alltoallv_with(spec, buffer_, counts_.data(), sd_.data(), MPI_BYTE, recv_.data(),
                               counts_.data(), rd_.data(), MPI_BYTE, world());
  }
  // The nonblocking exchange's shared-memory schedule (one node, A2AV_ALGORITHM unset).
  int exchange_nonblocking() {
    std::fill(recv_.begin(), recv_.end(), 0xee);
    MPI_Request request = MPI_REQUEST_NULL;
    int code = A2AV_Ialltoallv_c(buffer_, counts_.data(), sd_.data(), MPI_BYTE, recv_.data(),
                                 counts_.data(), rd_.data(), MPI_BYTE, world(), &request);
    // Which communicator's error handler MPI_Wait calls for a generalized request differs
    // between MPIs: all return here.
    for (MPI_Comm c : {MPI_COMM_SELF, MPI_COMM_WORLD, world()})
      MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
    if (code == MPI_SUCCESS) code = MPI_Wait(&request, MPI_STATUS_IGNORE);
    for (MPI_Comm c : {MPI_COMM_SELF, MPI_COMM_WORLD, world()})
      MPI_Comm_set_errhandler(c, MPI_ERRORS_ARE_FATAL);
    return code;
  }
  // Whether the block from `from` is the bytes it sent; `from`'s displacement for this rank
  // as every rank but 0 gives it.
  bool block_arrived(int from) const {
    for (std::int64_t i = 0; i < kBlock; ++i)
      if (recv_[from * kBlock + i] != byte_of(from, me_ * kBlock + i)) return false;
    return true;
  }

 private:
  static unsigned char byte_of(int rank, std::int64_t offset) {
    return static_cast<unsigned char>(rank * 31 + offset % 251);
  }
  std::int64_t round_up(std::int64_t bytes) const { return (bytes + page_ - 1) / page_ * page_; }

  int me_ = rank_of(world()), size_ = size_of(world());
  std::int64_t page_ = sysconf(_SC_PAGESIZE), pages_;
  unsigned char* buffer_ = nullptr;
  std::vector<MPI_Count> counts_ = std::vector<MPI_Count>(size_, kBlock);
  std::vector<MPI_Aint> sd_ = std::vector<MPI_Aint>(size_), rd_ = sd_;
  std::vector<unsigned char> recv_ = std::vector<unsigned char>(size_ * kBlock);
};

// On emulated nodes (A2AV_EMULATE_NODES, the _nodes registration) the same through
// node_aware, whose blocks within a node are read likewise; its nonblocking schedule sends
// messages there, which would read past the buffer: not run.
TEST(SharedMemory, SendBufferShorterThanItsCountsWhereReadBySingleCopy) {
  const char* single_copy = std::getenv("A2AV_SINGLE_COPY");
  if (!single_copy || std::string(single_copy) != "1")
    GTEST_SKIP() << "only where large blocks are read from the sender (A2AV_SINGLE_COPY=1)";
  const int size = size_of(world()), me = rank_of(world());
  if (size < 2) GTEST_SKIP() << "needs a peer";
  const bool nodes = std::getenv("A2AV_EMULATE_NODES") != nullptr;  // ranks 0 and 1 share one
  const char* spec = nodes ? "node_aware" : kSpec;
  ShortSendBuffer buffer;
  buffer.overrun_by(2048);
  EXPECT_EQ(buffer.exchange(spec), me == 1 ? A2AV_ERR_ARG : A2AV_SUCCESS)
      << A2AV_Last_error_message();
  if (me == 1) {
    EXPECT_NE(std::string(A2AV_Last_error_message()).find("rank 0"), std::string::npos);
  }
  for (int from = 0; from < size; ++from) {
    if (me != 1 || from != 0) {
      EXPECT_TRUE(buffer.block_arrived(from)) << "from rank " << from;
    }
  }
  if (!nodes) {
    EXPECT_EQ(buffer.exchange_nonblocking() == MPI_SUCCESS, me != 1);
    for (int from = 0; from < size; ++from) {
      if (me != 1 || from != 0) {
        EXPECT_TRUE(buffer.block_arrived(from)) << "from rank " << from;
      }
    }
  }
  buffer.overrun_by(0);
  EXPECT_EQ(buffer.exchange(spec), A2AV_SUCCESS) << A2AV_Last_error_message();
  for (int from = 1; from < size; ++from)
    EXPECT_TRUE(buffer.block_arrived(from)) << "from rank " << from;
}

TEST(SharedMemory, UserMessageProgressesWhileWaitingOnCells) {
  // Rank 0 posts a large receive and then exchanges; rank 1 sends the message before the
  // exchange. Rank 1's send can finish only if MPI progresses on rank 0, which is waiting
  // for rank 1's cells meanwhile: the wait must let MPI progress.
  const int size = size_of(world()), me = rank_of(world());
  if (size < 2) GTEST_SKIP() << "needs a peer";
  ASSERT_EQ(exchange_ints(1, world()), A2AV_SUCCESS) << "made the cells: no collective now";
  std::vector<char> message(8 << 20, 'm'), got(message.size());
  MPI_Request request = MPI_REQUEST_NULL;
  if (me == 0)
    MPI_Irecv(got.data(), static_cast<int>(got.size()), MPI_CHAR, 1, 5, world(), &request);
  if (me == 1) MPI_Send(message.data(), static_cast<int>(message.size()), MPI_CHAR, 0, 5, world());
  EXPECT_EQ(exchange_ints(16, world()), A2AV_SUCCESS) << A2AV_Last_error_message();
  MPI_Wait(&request, MPI_STATUS_IGNORE);
  if (me == 0) {
    EXPECT_EQ(got, message);
  }
}

}  // namespace
}  // namespace a2av::test
