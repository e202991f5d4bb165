// No first-call deadlock (docs/design.md): a nonblocking start must not wait for the other ranks,
// not even the first on a communicator, whose setup a2av makes then. Each case starts in a
// chain: rank r > 0 first receives a token from rank r - 1 (synchronously sent), and only then
// starts; every rank passes the token on after its start. MPI allows this: a start that
// waited for its peers (a collective setup, shared cells made on the spot) would leave rank 0
// waiting for rank 1 inside it, and rank 1 waiting for rank 0's token. Every case runs on a
// fresh duplicate of the communicator and checks every byte: A2AV_Ialltoallv as the first call,
// in place, several started before any completes (waited in reverse), as the first nonblocking
// call after a blocking one (the nonblocking schedule's cells are made then), on a communicator
// set up when made (A2AV_Comm_prepare), and A2AV_Ineighbor_alltoallv on a fresh ring. Where
// a2av's setup would wait (A2AV_COMM_IDUP=0), the MPI library's exchange runs until a blocking
// call has set the communicator up.
#include "harness.hpp"

#include "core/environment.hpp"

#include <a2av/a2av.h>

#include <chrono>
#include <cstdlib>
#include <functional>
#include <string>
#include <thread>
#include <vector>

namespace a2av::test {
namespace {

constexpr int kTokenTag = 77;

// `start` on every rank, rank r > 0 starting only once rank r - 1 has started.
void chained(MPI_Comm comm, const std::function<void()>& start) {
  const int me = rank_of(comm), size = size_of(comm);
  int token = 0;
  if (me > 0) MPI_Recv(&token, 1, MPI_INT, me - 1, kTokenTag, comm, MPI_STATUS_IGNORE);
  start();
  if (me + 1 < size) MPI_Ssend(&token, 1, MPI_INT, me + 1, kTokenTag, comm);
}

// A fresh duplicate of the tests' communicator: one a2av has never seen.
struct Fresh {
  MPI_Comm comm = MPI_COMM_NULL;
  Fresh() { MPI_Comm_dup(world(), &comm); }
  ~Fresh() { MPI_Comm_free(&comm); }
};

// One exchange's buffers, its expected result from the vendor MPI_Alltoallv.
struct Exchange {
  std::vector<int> sc, sd, rc, rd;
  std::vector<unsigned char> send, got, want;

  Exchange(MPI_Comm comm, std::uint64_t seed) {
    const int me = rank_of(comm);
    const Layout l = layout_for(uniform(size_of(comm), 300, seed), me, seed);
    for (std::size_t p = 0; p < l.sendcounts.size(); ++p) {
      sc.push_back(static_cast<int>(l.sendcounts[p]));
      sd.push_back(static_cast<int>(l.sdispls[p]));
      rc.push_back(static_cast<int>(l.recvcounts[p]));
      rd.push_back(static_cast<int>(l.rdispls[p]));
    }
    send.resize(l.send_extent);
    for (std::size_t b = 0; b < send.size(); ++b) send[b] = pattern(me, 0, b + seed);
    got.assign(l.recv_extent, kPoison);
    want = got;
    vendor_alltoallv(send.data(), l, MPI_BYTE, want.data(), comm);
  }

  MPI_Request start(MPI_Comm comm) {
    MPI_Request request = MPI_REQUEST_NULL;
    EXPECT_EQ(A2AV_Ialltoallv(send.data(), sc.data(), sd.data(), MPI_BYTE, got.data(), rc.data(),
                              rd.data(), MPI_BYTE, comm, &request),
              A2AV_SUCCESS)
        << A2AV_Last_error_message();
    EXPECT_EQ(std::string(A2AV_Last_algorithm()).rfind("nonblocking:", 0), 0u)
        << A2AV_Last_algorithm();
    return request;
  }
};

TEST(FirstCall, IalltoallvStartsWithoutWaitingForPeers) {
  const Fresh fresh;
  Exchange ex(fresh.comm, 1);
  MPI_Request request = MPI_REQUEST_NULL;
  chained(fresh.comm, [&] { request = ex.start(fresh.comm); });
  EXPECT_EQ(MPI_Wait(&request, MPI_STATUS_IGNORE), MPI_SUCCESS);
  EXPECT_EQ(ex.got, ex.want) << "on rank " << rank_of(fresh.comm);
}

TEST(FirstCall, InPlace) {
  const Fresh fresh;
  const int me = rank_of(fresh.comm), size = size_of(fresh.comm);
  std::vector<int> counts(size, 2), displs(size), buf(2 * size), want(2 * size);
  for (int p = 0; p < size; ++p) {
    displs[p] = 2 * p;
    buf[2 * p] = me * 100 + p, buf[2 * p + 1] = -(me * 100 + p);
    want[2 * p] = p * 100 + me, want[2 * p + 1] = -(p * 100 + me);
  }
  MPI_Request request = MPI_REQUEST_NULL;
  chained(fresh.comm, [&] {
    EXPECT_EQ(A2AV_Ialltoallv(MPI_IN_PLACE, nullptr, nullptr, MPI_DATATYPE_NULL, buf.data(),
                              counts.data(), displs.data(), MPI_INT, fresh.comm, &request),
              A2AV_SUCCESS)
        << A2AV_Last_error_message();
  });
  EXPECT_EQ(MPI_Wait(&request, MPI_STATUS_IGNORE), MPI_SUCCESS);
  EXPECT_EQ(buf, want) << "on rank " << me;
}

TEST(FirstCall, SeveralStartedBeforeAnyCompletes) {
  const Fresh fresh;
  std::vector<Exchange> exchanges;
  for (std::uint64_t seed = 1; seed <= 5; ++seed) exchanges.emplace_back(fresh.comm, seed);
  std::vector<MPI_Request> requests;
  chained(fresh.comm, [&] {
    for (Exchange& ex : exchanges) requests.push_back(ex.start(fresh.comm));
  });
  for (auto r = requests.rbegin(); r != requests.rend(); ++r)
    EXPECT_EQ(MPI_Wait(&*r, MPI_STATUS_IGNORE), MPI_SUCCESS);
  for (const Exchange& ex : exchanges)
    EXPECT_EQ(ex.got, ex.want) << "on rank " << rank_of(fresh.comm);
}

TEST(FirstCall, FirstNonblockingAfterBlocking) {
  const Fresh fresh;
  Exchange blocking(fresh.comm, 3), ex(fresh.comm, 4);
  EXPECT_EQ(A2AV_Alltoallv(blocking.send.data(), blocking.sc.data(), blocking.sd.data(), MPI_BYTE,
                           blocking.got.data(), blocking.rc.data(), blocking.rd.data(), MPI_BYTE,
                           fresh.comm),
            A2AV_SUCCESS)
      << A2AV_Last_error_message();
  EXPECT_EQ(blocking.got, blocking.want);
  MPI_Request request = MPI_REQUEST_NULL;
  chained(fresh.comm, [&] { request = ex.start(fresh.comm); });
  EXPECT_EQ(MPI_Wait(&request, MPI_STATUS_IGNORE), MPI_SUCCESS);
  EXPECT_EQ(ex.got, ex.want) << "on rank " << rank_of(fresh.comm);
}

// A communicator set up when made (A2AV_Comm_prepare, as the preload does for the program's):
// its first start waits for nobody under every A2AV_COMM_IDUP, Open MPI's default 0 included.
TEST(FirstCall, PreparedCommunicatorNeverWaits) {
  const Fresh fresh;
  ASSERT_EQ(A2AV_Comm_prepare(fresh.comm), A2AV_SUCCESS) << A2AV_Last_error_message();
  EXPECT_EQ(A2AV_Comm_prepare(fresh.comm), A2AV_SUCCESS);  // a second time: nothing to do
  Exchange ex(fresh.comm, 7);
  MPI_Request request = MPI_REQUEST_NULL;
  chained(fresh.comm, [&] { request = ex.start(fresh.comm); });
  EXPECT_EQ(MPI_Wait(&request, MPI_STATUS_IGNORE), MPI_SUCCESS);
  EXPECT_EQ(ex.got, ex.want) << "on rank " << rank_of(fresh.comm);
  EXPECT_EQ(A2AV_Comm_prepare(MPI_COMM_NULL), A2AV_ERR_ARG);
}

// Where a2av's setup would wait for the other ranks (A2AV_COMM_IDUP=0, Open MPI's default), a
// start on a communicator not yet set up runs the MPI library's exchange, and a2av's once a
// blocking call has set it up; with A2AV_COMM_IDUP=1, or on one rank, a2av's from the first
// start.
TEST(FirstCall, StartBeforeTheSetupRunsTheLibrarysWhereTheSetupWouldWait) {
  // A2AV_COMM_IDUP's default is the MPI library's.
  const bool setup_waits = !env_flag("A2AV_COMM_IDUP") && size_of(world()) > 1;
  const std::string library = "nonblocking:vendor (communicator not set up)";
  const Fresh fresh;
  Exchange first(fresh.comm, 8), blocking(fresh.comm, 9), later(fresh.comm, 10);
  MPI_Request request = MPI_REQUEST_NULL;
  std::string route;
  chained(fresh.comm, [&] {
    request = first.start(fresh.comm);
    route = A2AV_Last_algorithm();
  });
  EXPECT_EQ(route == library, setup_waits) << route;
  EXPECT_EQ(MPI_Wait(&request, MPI_STATUS_IGNORE), MPI_SUCCESS);
  EXPECT_EQ(first.got, first.want) << "on rank " << rank_of(fresh.comm);
  EXPECT_EQ(A2AV_Alltoallv(blocking.send.data(), blocking.sc.data(), blocking.sd.data(), MPI_BYTE,
                           blocking.got.data(), blocking.rc.data(), blocking.rd.data(), MPI_BYTE,
                           fresh.comm),
            A2AV_SUCCESS)
      << A2AV_Last_error_message();
  request = later.start(fresh.comm);
  EXPECT_NE(A2AV_Last_algorithm(), library);
  EXPECT_EQ(MPI_Wait(&request, MPI_STATUS_IGNORE), MPI_SUCCESS);
  EXPECT_EQ(later.got, later.want) << "on rank " << rank_of(fresh.comm);
}

// The program's own nonblocking collectives on the communicator, started before and after the
// first A2AV_Ialltoallv, rank 0 starting its second only after it has driven progress on the
// exchange for a while (the setup's rounds, if any, then come earlier there than elsewhere).
// Under Open MPI with A2AV_COMM_IDUP=1 its MPI_Comm_idup fails this (docs/design.md): skipped.
TEST(FirstCall, OtherNonblockingCollectivesAroundTheSetup) {
#if defined(OPEN_MPI)
  const char* idup = std::getenv("A2AV_COMM_IDUP");
  if (idup && std::string(idup) == "1") GTEST_SKIP() << "Open MPI's MPI_Comm_idup (ompi#2025)";
#endif
  const Fresh fresh;
  const int me = rank_of(fresh.comm), size = size_of(fresh.comm);
  Exchange ex(fresh.comm, 6);
  std::vector<int> first(64, me == 0 ? 7 : -1), second(64, me == 0 ? 9 : -1);
  int sum = 0;
  MPI_Request requests[4];
  MPI_Ibcast(first.data(), 64, MPI_INT, 0, fresh.comm, &requests[0]);
  requests[1] = ex.start(fresh.comm);
  MPI_Iallreduce(&me, &sum, 1, MPI_INT, MPI_SUM, fresh.comm, &requests[2]);
  if (me == 0)
    for (int i = 0, done = 0; i < 50 && !done; ++i) {
      MPI_Test(&requests[1], &done, MPI_STATUS_IGNORE);
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  MPI_Ibcast(second.data(), 64, MPI_INT, 0, fresh.comm, &requests[3]);
  EXPECT_EQ(MPI_Waitall(4, requests, MPI_STATUSES_IGNORE), MPI_SUCCESS);
  EXPECT_EQ(ex.got, ex.want) << "on rank " << me;
  EXPECT_EQ(first, std::vector<int>(64, 7));
  EXPECT_EQ(second, std::vector<int>(64, 9));
  EXPECT_EQ(sum, size * (size - 1) / 2);
}

// On a periodic ring each rank sends block s (0: down, 1: up) and receives in slot 0 what its
// lower neighbour sent up, in slot 1 what its upper neighbour sent down (MPI-4.1 Section 8.6).
TEST(FirstCall, IneighborAlltoallvOnAFreshRing) {
  const int size = size_of(world());
  const int periodic = 1;
  MPI_Comm ring = MPI_COMM_NULL;
  MPI_Cart_create(world(), 1, &size, &periodic, 0, &ring);
  const int me = rank_of(ring);
  const int below = (me - 1 + size) % size, above = (me + 1) % size;
  std::vector<int> counts = {1, 1}, displs = {0, 1}, send = {me * 10, me * 10 + 1}, got(2, -1);
  const std::vector<int> want = {below * 10 + 1, above * 10};
  MPI_Request request = MPI_REQUEST_NULL;
  chained(ring, [&] {
    EXPECT_EQ(
        A2AV_Ineighbor_alltoallv(send.data(), counts.data(), displs.data(), MPI_INT, got.data(),
                                 counts.data(), displs.data(), MPI_INT, ring, &request),
        A2AV_SUCCESS)
        << A2AV_Last_error_message();
  });
  EXPECT_EQ(MPI_Wait(&request, MPI_STATUS_IGNORE), MPI_SUCCESS);
  EXPECT_EQ(got, want) << "on rank " << me;
  MPI_Comm_free(&ring);
}

// Where the MPI library pairs neighbourhood blocks wrongly (a periodic dimension of one
// process: both neighbours are the rank itself), a start on a topology not set up does not run
// the library's exchange: it sets a2av up, waiting for the other ranks (so not in a chain),
// and every block lands where MPI-4.1 Section 8.6 says: block s in block s^1.
TEST(FirstCall, IneighborAlltoallvWhereTheLibraryPairsBlocksWrongly) {
  const int size = size_of(world());
  const int dims[] = {size, 1}, periods[] = {1, 1};
  MPI_Comm grid = MPI_COMM_NULL;
  MPI_Cart_create(world(), 2, dims, periods, 0, &grid);
  const int me = rank_of(grid);
  const int below = (me - 1 + size) % size, above = (me + 1) % size;
  std::vector<int> counts(4, 1), displs = {0, 1, 2, 3}, got(4, -1);
  std::vector<int> send = {me * 10, me * 10 + 1, me * 10 + 2, me * 10 + 3};
  const std::vector<int> want = {below * 10 + 1, above * 10, me * 10 + 3, me * 10 + 2};
  MPI_Request request = MPI_REQUEST_NULL;
  ASSERT_EQ(A2AV_Ineighbor_alltoallv(send.data(), counts.data(), displs.data(), MPI_INT, got.data(),
                                     counts.data(), displs.data(), MPI_INT, grid, &request),
            A2AV_SUCCESS)
      << A2AV_Last_error_message();
  EXPECT_EQ(std::string(A2AV_Last_algorithm()), "neighbor:nonblocking:direct");
  EXPECT_EQ(MPI_Wait(&request, MPI_STATUS_IGNORE), MPI_SUCCESS);
  EXPECT_EQ(got, want) << "on rank " << me;
  MPI_Comm_free(&grid);
}

}  // namespace
}  // namespace a2av::test
