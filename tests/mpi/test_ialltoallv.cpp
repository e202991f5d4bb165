// A2AV_Ialltoallv against the vendor MPI_Alltoallv, byte for byte (gaps included) for every
// count-matrix generator, completed by MPI_Wait, by MPI_Test in a loop, and several at once by
// MPI_Waitall; in place; errors reported locally with the request left null. Registered
// also with A2AV_ALGORITHM naming tuna, which runs TuNA's nonblocking schedule.
#include "harness.hpp"

#include <a2av/a2av.h>

#include <cstdlib>
#include <string>
#include <vector>

namespace a2av::test {
namespace {

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
    vendor_alltoallv(send.data(), l, MPI_BYTE, want.data(), MPI_COMM_WORLD);
  }

  MPI_Request start() {
    MPI_Request request = MPI_REQUEST_NULL;
    EXPECT_EQ(A2AV_Ialltoallv(send.data(), isc.data(), isd.data(), MPI_BYTE, got.data(), irc.data(),
                              ird.data(), MPI_BYTE, MPI_COMM_WORLD, &request),
              A2AV_SUCCESS)
        << A2AV_Last_error_message();
    return request;
  }
};

// The schedule A2AV_ALGORITHM asks for: the suite runs these tests with tuna specs as well.
std::string expected_schedule() {
  const char* env = std::getenv("A2AV_ALGORITHM");
  const std::string spec = env ? env : "";
  const bool tuna = spec == "tuna" || spec.starts_with("tuna:");
  return tuna ? "nonblocking:tuna" : "nonblocking:direct";
}

TEST(Ialltoallv, EveryGeneratorLikeVendor) {
  const int me = rank_of(MPI_COMM_WORLD), size = size_of(MPI_COMM_WORLD);
  for (const Generator& g : generators()) {
    Exchange ex(g.make(size, 300, 7), me, 11);
    MPI_Request request = ex.start();
    EXPECT_EQ(MPI_Wait(&request, MPI_STATUS_IGNORE), MPI_SUCCESS);
    EXPECT_EQ(request, MPI_REQUEST_NULL);
    EXPECT_EQ(ex.got, ex.want) << g.name << " on rank " << me;
    EXPECT_EQ(A2AV_Last_algorithm(), expected_schedule());
  }
}

TEST(Ialltoallv, CompletedByTestAndWaitall) {
  const int me = rank_of(MPI_COMM_WORLD), size = size_of(MPI_COMM_WORLD);
  std::vector<Exchange> exchanges;
  for (std::uint64_t seed = 1; seed <= 3; ++seed)
    exchanges.emplace_back(power_law(size, 2000, seed), me, seed);
  std::vector<MPI_Request> requests;
  for (Exchange& ex : exchanges) requests.push_back(ex.start());
  for (int done = 0; !done;) ASSERT_EQ(MPI_Test(&requests[0], &done, MPI_STATUS_IGNORE), 0);
  EXPECT_EQ(MPI_Waitall(2, &requests[1], MPI_STATUSES_IGNORE), MPI_SUCCESS);
  for (const Exchange& ex : exchanges) EXPECT_EQ(ex.got, ex.want) << "on rank " << me;
}

TEST(Ialltoallv, InPlace) {
  const int me = rank_of(MPI_COMM_WORLD), size = size_of(MPI_COMM_WORLD);
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
                            counts.data(), displs.data(), MPI_INT, MPI_COMM_WORLD, &request),
            A2AV_SUCCESS);
  MPI_Wait(&request, MPI_STATUS_IGNORE);
  EXPECT_EQ(buf, want) << "on rank " << me;
  EXPECT_GT(A2AV_Last_peak_bytes(), 0);  // the packed send blocks
}

TEST(Ialltoallv, LocalErrorsLeaveTheRequestNull) {
  const int size = size_of(MPI_COMM_WORLD);
  std::vector<int> counts(size, 1), displs(size), bad(size, 1);
  for (int j = 0; j < size; ++j) displs[j] = j;
  bad[0] = -1;
  std::vector<int> send(size), recv(size);
  MPI_Request request = MPI_REQUEST_NULL;
  EXPECT_EQ(A2AV_Ialltoallv(send.data(), bad.data(), displs.data(), MPI_INT, recv.data(),
                            counts.data(), displs.data(), MPI_INT, MPI_COMM_WORLD, &request),
            A2AV_ERR_ARG);
  EXPECT_EQ(request, MPI_REQUEST_NULL);
  EXPECT_EQ(A2AV_Ialltoallv(send.data(), counts.data(), displs.data(), MPI_INT, recv.data(),
                            counts.data(), displs.data(), MPI_INT, MPI_COMM_WORLD, nullptr),
            A2AV_ERR_ARG);
  EXPECT_EQ(
      A2AV_Ialltoallv(send.data(), counts.data(), displs.data(), MPI_DATATYPE_NULL, recv.data(),
                      counts.data(), displs.data(), MPI_INT, MPI_COMM_WORLD, &request),
      A2AV_ERR_DATATYPE);
}

}  // namespace
}  // namespace a2av::test
