// a2av::sparse_exchange and its C form against the vendor: the same messages sent by packing
// them per destination and running MPI_Alltoall of the counts and MPI_Alltoallv, every
// algorithm (nbx, grid, dense, shared_memory on one node, auto), seeded patterns with empty ranks,
// zero-byte messages, self messages, several messages for one rank and a hub everyone sends to;
// agreed errors that lose nothing; temporary memory of NBX bounded by the message count, whatever
// P; requests in flight within the bound.
#include "harness.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <a2av/a2av.h>
#include <a2av/sparse.hpp>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <random>
#include <string>
#include <vector>

namespace a2av::test {
namespace {

// Every algorithm that runs on this layout: shared_memory only where all ranks share a node.
std::vector<std::string> algorithms() {
  std::vector<std::string> all = {"nbx", "grid", "dense", "shared_memory", "auto"};
  if (!one_node(size_of(world()))) std::erase(all, "shared_memory");
  return all;
}

struct Received {
  int source;
  std::vector<std::byte> data;
  bool operator==(const Received&) const = default;
};

// This rank's messages for a pattern: destinations, and contents derived from them.
struct Outgoing {
  std::vector<int> destinations;
  std::vector<std::vector<std::byte>> payloads;

  std::vector<OutgoingMessage> messages() const {
    std::vector<OutgoingMessage> out;
    for (std::size_t i = 0; i < destinations.size(); ++i)
      out.push_back({destinations[i], payloads[i]});
    return out;
  }
};

// k random destinations (repeats and self included), sizes 0..max_bytes; rank 0 sends nothing
// and every rank also sends one message to rank size-1 (a hub).
Outgoing random_pattern(int me, int size, int k, int max_bytes, std::uint64_t seed) {
  Outgoing out;
  if (me == 0) return out;
  std::mt19937_64 rng(seed * 7919 + me);
  for (int i = 0; i < k; ++i) out.destinations.push_back(static_cast<int>(rng() % size));
  out.destinations.push_back(size - 1);
  for (std::size_t i = 0; i < out.destinations.size(); ++i) {
    std::vector<std::byte> payload(rng() % (max_bytes + 1));
    for (std::size_t b = 0; b < payload.size(); ++b)
      payload[b] = static_cast<std::byte>(me * 31 + i * 7 + b);
    out.payloads.push_back(std::move(payload));
  }
  return out;
}

// The vendor's answer: messages packed per destination behind 8-byte lengths, MPI_Alltoall of
// the byte counts, MPI_Alltoallv, unpacked in source order.
std::vector<Received> vendor_exchange(const Outgoing& out, MPI_Comm comm) {
  const int size = size_of(comm);
  std::vector<int> sendcounts(size, 0), recvcounts(size), sdispls(size), rdispls(size);
  for (std::size_t i = 0; i < out.destinations.size(); ++i)
    sendcounts[out.destinations[i]] += 8 + static_cast<int>(out.payloads[i].size());
  MPI_Alltoall(sendcounts.data(), 1, MPI_INT, recvcounts.data(), 1, MPI_INT, comm);
  int stotal = 0, rtotal = 0;
  for (int r = 0; r < size; ++r) {
    sdispls[r] = stotal, stotal += sendcounts[r];
    rdispls[r] = rtotal, rtotal += recvcounts[r];
  }
  std::vector<std::byte> send(stotal + 1), recv(rtotal + 1);
  std::vector<int> cursor = sdispls;
  for (std::size_t i = 0; i < out.destinations.size(); ++i) {
    const std::int64_t bytes = static_cast<std::int64_t>(out.payloads[i].size());
    std::byte* at = send.data() + cursor[out.destinations[i]];
    std::memcpy(at, &bytes, 8);
    if (bytes > 0) std::memcpy(at + 8, out.payloads[i].data(), bytes);  // data() may be null
    cursor[out.destinations[i]] += 8 + static_cast<int>(bytes);
  }
  MPI_Alltoallv(send.data(), sendcounts.data(), sdispls.data(), MPI_BYTE, recv.data(),
                recvcounts.data(), rdispls.data(), MPI_BYTE, comm);
  std::vector<Received> got;
  for (int r = 0; r < size; ++r)
    for (int at = rdispls[r]; at < rdispls[r] + recvcounts[r];) {
      std::int64_t bytes = 0;
      std::memcpy(&bytes, recv.data() + at, 8);
      got.push_back({r, {recv.data() + at + 8, recv.data() + at + 8 + bytes}});
      at += 8 + static_cast<int>(bytes);
    }
  return got;
}

std::vector<Received> copied(const SparseResult& result) {
  std::vector<Received> got;
  for (const IncomingMessage& m : result.messages())
    got.push_back({m.source, {m.data.begin(), m.data.end()}});
  return got;
}

TEST(Sparse, EveryAlgorithmLikeVendor) {
  const int me = rank_of(world()), size = size_of(world());
  for (int k : {0, 1, 3, 2 * size + 1})
    for (int max_bytes : {0, 40, 3000}) {
      const Outgoing out = random_pattern(me, size, k, max_bytes, k * 100 + max_bytes);
      const std::vector<Received> want = vendor_exchange(out, world());
      for (const std::string& algorithm : algorithms()) {
        const SparseResult result =
            sparse_exchange(out.messages(), world(), {.algorithm = algorithm});
        EXPECT_EQ(copied(result), want)
            << algorithm << " k=" << k << " bytes<=" << max_bytes << " on rank " << me;
        if (algorithm != "auto") {
          EXPECT_EQ(result.algorithm(), algorithm);
        }
        if (algorithm != "dense" && algorithm != "auto") {  // those run alltoallv's choice
          EXPECT_LE(result.max_in_flight(), in_flight_bound(""))
              << algorithm << ": more requests in flight than the bound on rank " << me;
        }
      }
    }
}

// A freed result's storage serves the thread's next exchange (~SparseResult): results alive at
// once keep their own bytes, whatever was freed between them, larger or smaller.
TEST(Sparse, ResultsAliveTogetherKeepTheirBytes) {
  const int me = rank_of(world()), size = size_of(world());
  for (const std::string& algorithm : algorithms()) {
    std::deque<SparseResult> alive;  // pop_front destroys the oldest in place
    std::deque<std::vector<Received>> wanted;
    for (int round = 0; round < 6; ++round) {
      const int max_bytes = round % 2 ? 40 : 5000 * (round + 1);
      const Outgoing out = random_pattern(me, size, 3, max_bytes, 50 + round);
      wanted.push_back(vendor_exchange(out, world()));
      alive.push_back(sparse_exchange(out.messages(), world(), {.algorithm = algorithm}));
      if (round % 3 == 1) {  // the oldest freed: its storage goes to the next exchange
        alive.pop_front();
        wanted.pop_front();
      }
      for (std::size_t i = 0; i < alive.size(); ++i)
        EXPECT_EQ(copied(alive[i]), wanted[i])
            << algorithm << " round " << round << ", result " << i << " on rank " << me;
    }
  }
}

// Each rank sends many messages to one rank and to itself, interleaved: order per source kept.
TEST(Sparse, ManyMessagesForOneRankArriveInOrder) {
  const int me = rank_of(world()), size = size_of(world());
  Outgoing out;
  for (int i = 0; i < 60; ++i) {
    out.destinations.push_back(i % 2 ? me : (me + 1) % size);
    out.payloads.push_back(std::vector<std::byte>(i % 5, static_cast<std::byte>(i)));
  }
  const std::vector<Received> want = vendor_exchange(out, world());
  for (const std::string& algorithm : algorithms())
    EXPECT_EQ(copied(sparse_exchange(out.messages(), world(), {.algorithm = algorithm})), want)
        << algorithm;
}

// A message above sparse shared_memory's 256 KiB segment limit between small ones to the same
// rank (read from the sender's buffer, or, with A2AV_SINGLE_COPY=0, sent by MPI, the pair's
// later messages following it so), then more messages for one rank than its list holds.
TEST(Sparse, LongListsAndLargeMessagesKeepOrder) {
  const int me = rank_of(world()), size = size_of(world());
  Outgoing out;
  for (int i = 0; i < 155; ++i) {
    const int to = i < 5 ? (me + 1) % size : size - 1;
    const std::size_t bytes = i == 1 ? std::size_t{300} << 10 : static_cast<std::size_t>(i % 7);
    out.destinations.push_back(to);
    out.payloads.push_back(std::vector<std::byte>(bytes, static_cast<std::byte>(i + me)));
  }
  const std::vector<Received> want = vendor_exchange(out, world());
  for (const std::string& algorithm : algorithms())
    EXPECT_EQ(copied(sparse_exchange(out.messages(), world(), {.algorithm = algorithm})), want)
        << algorithm;
}

// Messages up to 600 KB, many above shared_memory's 256 KiB segment limit: like the vendor
// whether they are read from the sender's buffer or, with A2AV_SINGLE_COPY=0, sent by MPI
// (a read without cross-memory attach fails the call, so passing then shows the fallback).
// Where the test is told single copy is on (A2AV_SINGLE_COPY=1), large messages post no MPI
// request at all, and a sender returns only once its messages have been read.
TEST(Sparse, LargeMessagesLikeVendor) {
  const int me = rank_of(world()), size = size_of(world());
  for (int k : {1, 3}) {
    const Outgoing out = random_pattern(me, size, k, 600000, 70 + k);
    const std::vector<Received> want = vendor_exchange(out, world());
    for (const std::string& algorithm : algorithms())
      EXPECT_EQ(copied(sparse_exchange(out.messages(), world(), {.algorithm = algorithm})), want)
          << algorithm << " k=" << k;
  }
  // Two to the next ranks; each sender overwrites its messages as soon as it returns, which
  // a destination still to read them would receive.
  if (!one_node(size) || size == 1) return;
  Outgoing out;
  for (int i = 0; i < 2; ++i) {
    out.destinations.push_back((me + 1 + i) % size);
    out.payloads.push_back(std::vector<std::byte>((300 << 10) + i, static_cast<std::byte>(me)));
  }
  const std::vector<Received> want = vendor_exchange(out, world());
  const SparseResult result =
      sparse_exchange(out.messages(), world(), {.algorithm = "shared_memory"});
  for (std::vector<std::byte>& payload : out.payloads)
    std::fill(payload.begin(), payload.end(), std::byte{0xee});
  EXPECT_EQ(copied(result), want);
  const char* single_copy = std::getenv("A2AV_SINGLE_COPY");
  if (single_copy && std::string(single_copy) == "1") {
    EXPECT_EQ(result.max_in_flight(), 0) << "large messages went by MPI on rank " << me;
  }
}

// A message whose buffer ends before the message does, the page after it not mapped, where
// the destination reads it from the sender (A2AV_SINGLE_COPY=1; by MPI the read past the
// buffer would be undefined): the kernel refuses the read, rank 1 gets A2AV_ERR_ARG naming
// rank 0, rank 0 is not left waiting for it, every other message arrives, and the next
// exchange is right.
TEST(Sparse, LargeMessageLongerThanItsBuffer) {
  const char* single_copy = std::getenv("A2AV_SINGLE_COPY");
  const int me = rank_of(world()), size = size_of(world());
  if (!single_copy || std::string(single_copy) != "1" || size < 2 || !one_node(size))
    GTEST_SKIP() << "only where large messages are read from the sender (A2AV_SINGLE_COPY=1)";
  const std::size_t page = sysconf(_SC_PAGESIZE), bytes = 300 << 10;
  const std::size_t mapped = (bytes + page - 1) / page * page;
  void* at =
      mmap(nullptr, mapped + page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(at, MAP_FAILED);
  auto* buffer = static_cast<std::byte*>(at);
  std::fill(buffer, buffer + mapped, static_cast<std::byte>(me));
  mprotect(buffer + mapped, page, PROT_NONE);
  const int to = (me + 1) % size;
  const std::vector<Received> want = {
      {(me + size - 1) % size, std::vector<std::byte>(bytes, std::byte((me + size - 1) % size))}};
  for (std::size_t overrun : {std::size_t{2048}, std::size_t{0}}) {
    const std::size_t start = me == 0 ? mapped - bytes + overrun : 0;
    const std::vector<OutgoingMessage> out = {{to, {buffer + start, bytes}}};
    const bool refused = me == 1 && overrun > 0;
    try {
      const SparseResult result = sparse_exchange(out, world(), {.algorithm = "shared_memory"});
      EXPECT_FALSE(refused) << "no error for a message read past its buffer";
      EXPECT_EQ(copied(result), want) << "overrun " << overrun;
    } catch (const Error& error) {
      EXPECT_TRUE(refused) << error.what();
      EXPECT_EQ(error.code(), A2AV_ERR_ARG);
      EXPECT_NE(std::string(error.what()).find("rank 0"), std::string::npos) << error.what();
    }
  }
  munmap(at, mapped + page);
}

// Sub-communicators in reversed rank order: ranks are the communicator's.
TEST(Sparse, ReversedSubcommunicator) {
  const int me = rank_of(world()), size = size_of(world());
  MPI_Comm reversed;
  MPI_Comm_split(world(), 0, size - me, &reversed);
  const Outgoing out = random_pattern(rank_of(reversed), size, 3, 100, 5);
  const std::vector<Received> want = vendor_exchange(out, reversed);
  for (const std::string& algorithm : algorithms())
    EXPECT_EQ(copied(sparse_exchange(out.messages(), reversed, {.algorithm = algorithm})), want)
        << algorithm;
  MPI_Comm_free(&reversed);
}

// NBX and grid hold no array of P entries: with k messages of B bytes to the next k ranks,
// NBX's temporaries are its requests and parcels (O(k)), the grid's its aggregated messages
// (O(k (B + 16))), the same bounds at every P.
TEST(Sparse, MemoryBoundedByMessagesNotRanks) {
  const int me = rank_of(world()), size = size_of(world());
  constexpr int k = 4, bytes = 64;
  Outgoing out;
  for (int i = 1; i <= k; ++i) {
    out.destinations.push_back((me + i) % size);
    out.payloads.push_back(std::vector<std::byte>(bytes, std::byte{1}));
  }
  const std::int64_t per_message = 64;  // an MPI_Request and a parcel, with room to spare
  const SparseResult nbx = sparse_exchange(out.messages(), world(), {.algorithm = "nbx"});
  EXPECT_LE(nbx.peak_temp_bytes(), k * per_message);
  const SparseResult grid = sparse_exchange(out.messages(), world(), {.algorithm = "grid"});
  // Each rank receives k messages; an intermediate rank forwards at most 2k (the ranks of its
  // row whose next k ranks include one in its column).
  EXPECT_LE(grid.peak_temp_bytes(), 8 * k * (bytes + 16) + 4 * k * per_message);
  EXPECT_EQ(grid.received_bytes(), k * bytes);
  if (!one_node(size)) return;
  // Through shared memory the messages need no request: only the parcels are temporary.
  const SparseResult cells =
      sparse_exchange(out.messages(), world(), {.algorithm = "shared_memory"});
  EXPECT_LE(cells.peak_temp_bytes(), k * per_message);
  EXPECT_EQ(cells.received_bytes(), k * bytes);
}

// Asked for where ranks span nodes, shared_memory is an error on every rank, and loses nothing.
TEST(Sparse, SharedMemoryAcrossNodesIsAnError) {
  const int me = rank_of(world()), size = size_of(world());
  if (one_node(size)) GTEST_SKIP() << "all ranks share one node";
  const Outgoing out = random_pattern(me, size, 2, 30, 4);
  try {
    sparse_exchange(out.messages(), world(), {.algorithm = "shared_memory"});
    ADD_FAILURE() << "no error on rank " << me;
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), A2AV_ERR_ALGORITHM);
    EXPECT_NE(std::string(e.what()).find("one node"), std::string::npos) << e.what();
  }
  EXPECT_EQ(copied(sparse_exchange(out.messages(), world(), {.algorithm = "nbx"})),
            vendor_exchange(out, world()));
}

// Above 16 ranks across nodes, auto chooses from the statistics the previous exchange on the
// communicator agreed on: after a dense pattern it runs dense once more for a sparse one, then
// NBX; back on the dense pattern, NBX once more, then dense.
TEST(Sparse, AutoChoosesFromThePreviousExchange) {
  const int me = rank_of(world()), size = size_of(world());
  if (size <= 16 || one_node(size)) GTEST_SKIP() << "auto chooses without statistics here";
  MPI_Comm comm;  // a fresh communicator: no history
  MPI_Comm_dup(world(), &comm);
  Outgoing dense, sparse;
  for (int i = 1; i < size; ++i) {
    dense.destinations.push_back((me + i) % size);
    dense.payloads.push_back(std::vector<std::byte>(8, static_cast<std::byte>(i)));
  }
  sparse.destinations = {(me + 1) % size};
  sparse.payloads = {std::vector<std::byte>(8, std::byte{7})};
  auto ran = [&](const Outgoing& out) {
    const SparseResult result = sparse_exchange(out.messages(), comm, {.algorithm = "auto"});
    EXPECT_EQ(copied(result), vendor_exchange(out, comm));
    return result.algorithm();
  };
  EXPECT_EQ(ran(dense), "dense");  // the first: an allreduce of the statistics
  EXPECT_EQ(ran(dense), "dense");
  EXPECT_EQ(ran(sparse), "dense");  // chosen from the dense exchange before it
  EXPECT_EQ(ran(sparse), "nbx");
  EXPECT_EQ(ran(dense), "nbx");
  EXPECT_EQ(ran(dense), "dense");
  MPI_Comm_free(&comm);
}

TEST(Sparse, ErrorsAreAgreedAndLoseNothing) {
  const int me = rank_of(world()), size = size_of(world());
  const int faulty = size - 1;
  const Outgoing good = random_pattern(me, size, 2, 50, 9);
  const std::vector<Received> want = vendor_exchange(good, world());
  for (const std::string& algorithm : algorithms()) {
    Outgoing bad = good;
    if (me == faulty) {
      bad.destinations.push_back(size);  // one past the last rank
      bad.payloads.push_back(std::vector<std::byte>(3));
    }
    try {
      sparse_exchange(bad.messages(), world(), {.algorithm = algorithm});
      ADD_FAILURE() << algorithm << ": no error on rank " << me;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), A2AV_ERR_ARG) << algorithm;
      const std::string text = e.what();
      if (me == faulty)
        EXPECT_NE(text.find("outside the communicator"), std::string::npos) << text;
      else
        EXPECT_NE(text.find("rank " + std::to_string(faulty)), std::string::npos) << text;
    }
    // Nothing of the failed exchange is left in flight to be taken by the next one.
    EXPECT_EQ(copied(sparse_exchange(good.messages(), world(), {.algorithm = algorithm})), want)
        << algorithm << " after an error";
  }
  EXPECT_THROW(sparse_exchange({}, world(), {.algorithm = "nbx:radix=2"}), Error);
}

TEST(Sparse, CApi) {
  const int me = rank_of(world()), size = size_of(world());
  const Outgoing out = random_pattern(me, size, 3, 200, 21);
  const std::vector<Received> want = vendor_exchange(out, world());
  std::vector<const void*> buffers;
  std::vector<MPI_Count> bytes;
  for (const auto& p : out.payloads) buffers.push_back(p.data()), bytes.push_back(p.size());
  A2AV_Sparse received = nullptr;
  ASSERT_EQ(A2AV_Sparse_exchange(static_cast<int>(buffers.size()), out.destinations.data(),
                                 buffers.data(), bytes.data(), world(), nullptr, &received),
            A2AV_SUCCESS)
      << A2AV_Last_error_message();
  EXPECT_EQ(std::string(A2AV_Last_algorithm()).rfind("sparse:", 0), 0u);
  int count = -1;
  ASSERT_EQ(A2AV_Sparse_count(received, &count), A2AV_SUCCESS);
  std::vector<Received> got;
  for (int i = 0; i < count; ++i) {
    int source;
    const void* data;
    MPI_Count n;
    ASSERT_EQ(A2AV_Sparse_message(received, i, &source, &data, &n), A2AV_SUCCESS);
    const auto* first = static_cast<const std::byte*>(data);
    got.push_back({source, {first, first + n}});
  }
  EXPECT_EQ(got, want);
  EXPECT_EQ(A2AV_Sparse_message(received, count, nullptr, nullptr, nullptr), A2AV_ERR_ARG);
  EXPECT_EQ(A2AV_Sparse_free(&received), A2AV_SUCCESS);
  EXPECT_EQ(received, nullptr);

  // A negative size on one rank: every rank gets the error, none gets a result.
  const MPI_Count negative = me == 0 ? -1 : 0;
  const int to_self = me;
  const void* nothing = nullptr;
  EXPECT_EQ(A2AV_Sparse_exchange(1, &to_self, &nothing, &negative, world(), "nbx", &received),
            A2AV_ERR_ARG);
  EXPECT_EQ(received, nullptr);
  EXPECT_EQ(A2AV_Sparse_exchange(0, nullptr, nullptr, nullptr, world(), "bogus", &received),
            A2AV_ERR_ALGORITHM);
}

}  // namespace
}  // namespace a2av::test
