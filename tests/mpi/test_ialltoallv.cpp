// A2AV_Ialltoallv against the vendor MPI_Alltoallv, byte for byte (gaps included) for every
// count-matrix generator, completed by MPI_Wait, by MPI_Test in a loop, and several at once by
// MPI_Waitall, and many in flight waited in reverse order; derived datatypes; in place;
// counts that disagree reported as truncation with nothing left behind; errors reported
// locally with the request left null; calls of changing shapes one after another (the
// exchanges kept between calls). Registered with each schedule: shared_memory (the
// default on one node), direct (A2AV_ALGORITHM=spread_out), tuna, and shared_memory with
// tiny cells and message pieces (large blocks by MPI, in pieces). Each pass sets its
// communicator up first (A2AV_Comm_prepare), as a program of the C API does: where a2av's setup
// would wait for the other ranks, a start on a communicator not set up runs the MPI library's
// exchange (tests/mpi/test_first_call.cpp).
#include "harness.hpp"

#include <a2av/a2av.h>

#include <algorithm>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

namespace a2av::test {
namespace {

// Before each pass's tests, on the communicator of the pass (main.cpp sets it first).
class PreparedCommunicator : public testing::Environment {
 public:
  void SetUp() override { ASSERT_EQ(A2AV_Comm_prepare(world()), A2AV_SUCCESS); }
};
const testing::Environment* const kPrepared =
    testing::AddGlobalTestEnvironment(new PreparedCommunicator);

struct Exchange {
  Layout l;
  std::vector<int> isc, isd, irc, ird;
  std::vector<unsigned char> send, got, want;

  Exchange(const Matrix& counts, int me, std::uint64_t seed) : l(layout_for(counts, me, seed)) {
    for (std::size_t p = 0; p < l.sendcounts.size(); ++p) {
      isc.push_back(static_cast<int>(l.sendcounts[p]));
      isd.push_back(static_cast<int>(l.sdispls[p]));
      irc.push_back(static_cast<int>(l.recvcounts[p]));
      ird.push_back(static_cast<int>(l.rdispls[p]));
    }
    send.assign(l.send_extent, kPoison);
    for (std::size_t p = 0; p < l.sendcounts.size(); ++p)
      for (std::int64_t b = 0; b < l.sendcounts[p]; ++b)
        send[l.sdispls[p] + b] = pattern(me, static_cast<int>(p), b);
    got.assign(l.recv_extent, kPoison);
    want = got;
    vendor_alltoallv(send.data(), l, MPI_BYTE, want.data(), world());
  }

  MPI_Request start(MPI_Comm comm = world()) {
    MPI_Request request = MPI_REQUEST_NULL;
    EXPECT_EQ(A2AV_Ialltoallv(send.data(), isc.data(), isd.data(), MPI_BYTE, got.data(), irc.data(),
                              ird.data(), MPI_BYTE, comm, &request),
              A2AV_SUCCESS)
        << A2AV_Last_error_message();
    return request;
  }
};

// The schedule A2AV_ALGORITHM asks for, on ranks that share one node.
std::string expected_schedule(int size) {
  const char* env = std::getenv("A2AV_ALGORITHM");
  const std::string spec = env ? env : "";
  if (spec == "tuna" || spec.starts_with("tuna:")) return "nonblocking:tuna";
  if (spec.empty() && size > 1 && one_node(size)) return "nonblocking:shared_memory";
  return "nonblocking:direct";
}

TEST(Ialltoallv, EveryGeneratorLikeVendor) {
  const int me = rank_of(world()), size = size_of(world());
  for (const Generator& g : generators()) {
    Exchange ex(g.make(size, 300, 7), me, 11);
    MPI_Request request = ex.start();
    EXPECT_EQ(MPI_Wait(&request, MPI_STATUS_IGNORE), MPI_SUCCESS);
    EXPECT_EQ(request, MPI_REQUEST_NULL);
    EXPECT_EQ(ex.got, ex.want) << g.name << " on rank " << me;
    EXPECT_EQ(A2AV_Last_algorithm(), expected_schedule(size));
  }
}

// Exchanges one after another on one communicator, each of another shape than the last (every
// generator, blocks from none to above the cells): an exchange kept from the last call for the
// next (NonblockingSetup::exchange) must carry nothing of it over.
TEST(Ialltoallv, EachCallLikeVendorWhenExchangesAreReused) {
  const int me = rank_of(world()), size = size_of(world());
  std::uint64_t seed = 20;
  for (int round = 0; round < 2; ++round)
    for (const Generator& g : generators())
      for (const std::int64_t scale : {0, 40, 90000}) {
        Exchange ex(g.make(size, scale, seed), me, seed);
        ++seed;
        MPI_Request request = ex.start();
        EXPECT_EQ(MPI_Wait(&request, MPI_STATUS_IGNORE), MPI_SUCCESS);
        EXPECT_EQ(ex.got, ex.want) << g.name << " up to " << scale << " on rank " << me;
      }
}

// A call repeating a kept exchange's arguments skips the checks and the layout
// (CallCopy::repeats): counts changed in the caller's own arrays, and a datatype freed and made
// again with another layout (MPI may hand out the same handle), must still be seen.
TEST(Ialltoallv, RepeatedCallsSeeChangedCountsAndTypes) {
  const int me = rank_of(world()), size = size_of(world());
  std::vector<int> counts(size), displs(size);
  std::vector<int> send(4 * size * 8), got(4 * size * 8), want(4 * size * 8);
  for (std::size_t k = 0; k < send.size(); ++k) send[k] = me * 100000 + static_cast<int>(k);
  for (int round = 0; round < 6; ++round) {
    const int ints = 1 + round % 3;  // the type's ints: its layout changes under one handle
    MPI_Datatype type = MPI_DATATYPE_NULL;
    MPI_Type_contiguous(ints, MPI_INT, &type);
    MPI_Type_commit(&type);
    // The same arrays throughout, new values in repeat 2 only: a round's first call repeats the
    // last round's but for the datatype.
    for (int repeat = 0; repeat < 4; ++repeat) {
      for (int j = 0; j < size; ++j)
        counts[j] = repeat != 2 ? 2 : (me + j + round) % 3, displs[j] = 2 * j;
      std::fill(got.begin(), got.end(), -1);
      std::fill(want.begin(), want.end(), -1);
      MPI_Alltoallv(send.data(), counts.data(), displs.data(), type, want.data(), counts.data(),
                    displs.data(), type, world());
      MPI_Request request = MPI_REQUEST_NULL;
      ASSERT_EQ(A2AV_Ialltoallv(send.data(), counts.data(), displs.data(), type, got.data(),
                                counts.data(), displs.data(), type, world(), &request),
                A2AV_SUCCESS)
          << A2AV_Last_error_message();
      EXPECT_EQ(MPI_Wait(&request, MPI_STATUS_IGNORE), MPI_SUCCESS);
      EXPECT_EQ(got, want) << "round " << round << ", repeat " << repeat << " on rank " << me;
    }
    MPI_Type_free(&type);
  }
}

TEST(Ialltoallv, CompletedByTestAndWaitall) {
  const int me = rank_of(world()), size = size_of(world());
  std::vector<Exchange> exchanges;
  for (std::uint64_t seed = 1; seed <= 3; ++seed)
    exchanges.emplace_back(power_law(size, 2000, seed), me, seed);
  std::vector<MPI_Request> requests;
  for (Exchange& ex : exchanges) requests.push_back(ex.start());
  for (int done = 0; !done;) ASSERT_EQ(MPI_Test(&requests[0], &done, MPI_STATUS_IGNORE), 0);
  EXPECT_EQ(MPI_Waitall(2, &requests[1], MPI_STATUSES_IGNORE), MPI_SUCCESS);
  for (const Exchange& ex : exchanges) EXPECT_EQ(ex.got, ex.want) << "on rank " << me;
}

TEST(Ialltoallv, ManyInFlightWaitedInReverse) {
  const int me = rank_of(world()), size = size_of(world());
  std::vector<Exchange> exchanges;
  for (std::uint64_t seed = 1; seed <= 6; ++seed)
    exchanges.emplace_back(uniform(size, 100 * seed, seed), me, seed);
  std::vector<MPI_Request> requests;
  for (Exchange& ex : exchanges) requests.push_back(ex.start());
  for (int i = 5; i >= 0; --i) EXPECT_EQ(MPI_Wait(&requests[i], MPI_STATUS_IGNORE), MPI_SUCCESS);
  for (const Exchange& ex : exchanges) EXPECT_EQ(ex.got, ex.want) << "on rank " << me;
}

// MPI_Comm_free with exchanges pending: they complete normally (the standard, MPI_COMM_FREE). The
// communicator's a2av state outlives the free until the last of them completes, whichever
// thread's call completes it. The last round starts on a communicator not set up (the MPI
// library's exchange where a2av's setup would wait; Open MPI 4.1's own hangs at one rank).
TEST(Ialltoallv, CommunicatorFreedBeforeTheWait) {
  const int me = rank_of(world()), size = size_of(world());
  for (int round = 0; round < 3; ++round) {
    MPI_Comm comm = MPI_COMM_NULL;
    MPI_Comm_dup(world(), &comm);
    if (round < 2) {
      ASSERT_EQ(A2AV_Comm_prepare(comm), A2AV_SUCCESS);
    }
    std::vector<Exchange> exchanges;
    for (std::uint64_t seed = 1; seed <= 3; ++seed)
      exchanges.emplace_back(power_law(size, 3000 * round, seed + round), me, seed);
    std::vector<MPI_Request> requests;
    for (Exchange& ex : exchanges) requests.push_back(ex.start(comm));
    MPI_Comm_free(&comm);
    if (round == 1) {  // another communicator's calls complete them
      Exchange other(uniform(size, 100, 5), me, 5);
      MPI_Request request = other.start();
      EXPECT_EQ(MPI_Wait(&request, MPI_STATUS_IGNORE), MPI_SUCCESS);
      EXPECT_EQ(other.got, other.want) << "on rank " << me;
    }
    EXPECT_EQ(MPI_Waitall(3, requests.data(), MPI_STATUSES_IGNORE), MPI_SUCCESS);
    for (const Exchange& ex : exchanges) EXPECT_EQ(ex.got, ex.want) << "on rank " << me;
  }
}

// A window of three exchanges in flight, each rank completing one of its own choosing
// (MPI_Waitany, or a seeded pick that differs by rank) and starting the next in its place, as
// MPICH's nonblocking3 does: a rank starts exchange k + 3 only once one of k..k+2 is done, so
// each sender must fill a reader's cells in the order its exchanges began (it hung before).
TEST(Ialltoallv, AWindowRefilledAsExchangesComplete) {
  const int me = rank_of(world()), size = size_of(world());
  constexpr int kWindow = 3, kExchanges = 200;
  std::vector<Exchange> exchanges;  // their expected results first: no collective in the loop
  for (int i = 0; i < kExchanges; ++i) exchanges.emplace_back(uniform(size, 64, i), me, i);
  std::vector<MPI_Request> requests;
  std::vector<int> in_slot;
  for (int i = 0; i < kWindow; ++i) requests.push_back(exchanges[i].start()), in_slot.push_back(i);
  std::mt19937 pick(static_cast<unsigned>(me) + 1);
  for (int started = kWindow, finished = 0; finished < kExchanges; ++finished) {
    int slot = MPI_UNDEFINED;
    if (finished % 2) {
      EXPECT_EQ(MPI_Waitany(kWindow, requests.data(), &slot, MPI_STATUS_IGNORE), MPI_SUCCESS);
    } else {
      do slot = static_cast<int>(pick() % kWindow);
      while (requests[slot] == MPI_REQUEST_NULL);
      EXPECT_EQ(MPI_Wait(&requests[slot], MPI_STATUS_IGNORE), MPI_SUCCESS);
    }
    ASSERT_NE(slot, MPI_UNDEFINED);
    const Exchange& done = exchanges[in_slot[slot]];
    EXPECT_EQ(done.got, done.want) << "exchange " << in_slot[slot] << " on rank " << me;
    if (started < kExchanges) {
      requests[slot] = exchanges[started].start();
      in_slot[slot] = started++;
    }
  }
}

// Ints sent from every other slot of the send buffer (a type whose extent is twice its
// size) into a contiguous receive buffer.
TEST(Ialltoallv, DerivedTypesLikeVendor) {
  const int me = rank_of(world()), size = size_of(world());
  MPI_Datatype strided = MPI_DATATYPE_NULL;
  MPI_Type_create_resized(MPI_INT, 0, 2 * sizeof(int), &strided);
  MPI_Type_commit(&strided);
  std::vector<int> sendcounts(size), sdispls(size), recvcounts(size), rdispls(size);
  int sent = 0, received = 0;
  for (int j = 0; j < size; ++j) {
    sendcounts[j] = (me * 7 + j * 3) % 5, sdispls[j] = sent, sent += sendcounts[j];
    recvcounts[j] = (j * 7 + me * 3) % 5, rdispls[j] = received, received += recvcounts[j];
  }
  std::vector<int> send(2 * sent + 1);
  for (std::size_t k = 0; k < send.size(); ++k) send[k] = me * 1000 + static_cast<int>(k);
  std::vector<int> got(received + 1, -1), want(received + 1, -1);
  MPI_Alltoallv(send.data(), sendcounts.data(), sdispls.data(), strided, want.data(),
                recvcounts.data(), rdispls.data(), MPI_INT, world());
  MPI_Request request = MPI_REQUEST_NULL;
  ASSERT_EQ(A2AV_Ialltoallv(send.data(), sendcounts.data(), sdispls.data(), strided, got.data(),
                            recvcounts.data(), rdispls.data(), MPI_INT, world(), &request),
            A2AV_SUCCESS);
  EXPECT_EQ(MPI_Wait(&request, MPI_STATUS_IGNORE), MPI_SUCCESS);
  EXPECT_EQ(got, want) << "on rank " << me;
  MPI_Type_free(&strided);
}

// Each rank expects `delta` more ints from the rank `offset` to its right (itself for 0) than
// it sends: every rank's MPI_Wait fails, and the next exchange is exact (no message was left
// behind).
void disagree(int sent, int delta, int offset = 1) {
  const int me = rank_of(world()), size = size_of(world());
  if (size == 1 && offset != 0) return;
  std::vector<int> counts(size, sent), displs(size), recvcounts(size, sent), rdispls(size);
  recvcounts[(me + offset) % size] = sent + delta;
  const int slot = sent + std::max(delta, 0);
  for (int j = 0; j < size; ++j) displs[j] = j * sent, rdispls[j] = j * slot;
  std::vector<int> send(size * sent, me), recv(size * slot);
  MPI_Request request = MPI_REQUEST_NULL;
  ASSERT_EQ(A2AV_Ialltoallv(send.data(), counts.data(), displs.data(), MPI_INT, recv.data(),
                            recvcounts.data(), rdispls.data(), MPI_INT, world(), &request),
            A2AV_SUCCESS);
  // Which communicator's error handler MPI_Wait calls for a generalized request differs
  // between MPIs (self, or world rather than the one the exchange ran on): all return here.
  for (MPI_Comm c : {MPI_COMM_SELF, MPI_COMM_WORLD, world()})
    MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
  EXPECT_NE(MPI_Wait(&request, MPI_STATUS_IGNORE), MPI_SUCCESS) << "on rank " << me;
  for (MPI_Comm c : {MPI_COMM_SELF, MPI_COMM_WORLD, world()})
    MPI_Comm_set_errhandler(c, MPI_ERRORS_ARE_FATAL);
  Exchange next(uniform(size, 500, 3), me, 3);
  MPI_Request again = next.start();
  EXPECT_EQ(MPI_Wait(&again, MPI_STATUS_IGNORE), MPI_SUCCESS);
  EXPECT_EQ(next.got, next.want) << "on rank " << me;
}

TEST(Ialltoallv, SmallBlocksThatDisagreeFail) {
  disagree(3, -1);
  disagree(3, 1);
}

// The own block (copied, not sent, by the direct schedule for contiguous types).
TEST(Ialltoallv, OwnBlocksThatDisagreeFail) {
  disagree(3, -1, 0);
  disagree(3, 1, 0);
}

TEST(Ialltoallv, LargeBlocksThatDisagreeFail) {
  disagree(20000, -1);  // above the default cells' 64 KiB
  disagree(20000, 1);
  disagree(20000, -19990);  // the sender's block by MPI, the receiver's expected in a cell
  disagree(10, 19990);      // the other way round
}

TEST(Ialltoallv, InPlace) {
  const int me = rank_of(world()), size = size_of(world());
  std::vector<int> counts(size), displs(size);
  int total = 0;
  for (int j = 0; j < size; ++j) counts[j] = (me + j) % 4, displs[j] = total, total += counts[j];
  std::vector<int> buf(total + 1, -1), want(total + 1, -1);
  for (int j = 0; j < size; ++j)
    for (int k = 0; k < counts[j]; ++k) {
      buf[displs[j] + k] = me * 10000 + j * 100 + k;
      want[displs[j] + k] = j * 10000 + me * 100 + k;
    }
  MPI_Request request = MPI_REQUEST_NULL;
  ASSERT_EQ(A2AV_Ialltoallv(MPI_IN_PLACE, nullptr, nullptr, MPI_DATATYPE_NULL, buf.data(),
                            counts.data(), displs.data(), MPI_INT, world(), &request),
            A2AV_SUCCESS);
  MPI_Wait(&request, MPI_STATUS_IGNORE);
  EXPECT_EQ(buf, want) << "on rank " << me;
  EXPECT_GT(A2AV_Last_peak_bytes(), 0);  // the packed send blocks
}

TEST(Ialltoallv, LocalErrorsLeaveTheRequestNull) {
  const int size = size_of(world());
  std::vector<int> counts(size, 1), displs(size), bad(size, 1);
  for (int j = 0; j < size; ++j) displs[j] = j;
  bad[0] = -1;
  std::vector<int> send(size), recv(size);
  MPI_Request request = MPI_REQUEST_NULL;
  EXPECT_EQ(A2AV_Ialltoallv(send.data(), bad.data(), displs.data(), MPI_INT, recv.data(),
                            counts.data(), displs.data(), MPI_INT, world(), &request),
            A2AV_ERR_ARG);
  EXPECT_EQ(request, MPI_REQUEST_NULL);
  EXPECT_EQ(A2AV_Ialltoallv(send.data(), counts.data(), displs.data(), MPI_INT, recv.data(),
                            counts.data(), displs.data(), MPI_INT, world(), nullptr),
            A2AV_ERR_ARG);
  EXPECT_EQ(A2AV_Ialltoallv(send.data(), counts.data(), displs.data(), MPI_DATATYPE_NULL,
                            recv.data(), counts.data(), displs.data(), MPI_INT, world(), &request),
            A2AV_ERR_DATATYPE);
  EXPECT_EQ(A2AV_Ialltoallv(recv.data(), counts.data(), displs.data(), MPI_INT, recv.data(),
                            counts.data(), displs.data(), MPI_INT, world(), &request),
            A2AV_ERR_ARG);  // send and receive buffers aliased
  EXPECT_EQ(request, MPI_REQUEST_NULL);
}

}  // namespace
}  // namespace a2av::test
