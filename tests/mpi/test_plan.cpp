// Persistent plans: every algorithm, run several times with changing send contents, each
// result byte-exact against vendor, and after the communicator is freed; a plan that outlives
// MPI_Finalize; in-place and non-contiguous plans; the C API; errors found when the plan is
// made.
#include "harness.hpp"

#include <a2av/plan.hpp>

#include <numeric>
#include <optional>

namespace a2av::test {
namespace {

struct Buffers {
  Layout l;
  std::vector<int> send, got, want;
  std::vector<int> isc, isd, irc, ird;

  Buffers(const Matrix& counts, int me) : l(layout_for(counts, me, 4)) {
    send.resize(l.send_extent);
    got.assign(l.recv_extent, -1);
    want = got;
    for (std::size_t p = 0; p < l.sendcounts.size(); ++p) {
      isc.push_back(static_cast<int>(l.sendcounts[p]));
      isd.push_back(static_cast<int>(l.sdispls[p]));
      irc.push_back(static_cast<int>(l.recvcounts[p]));
      ird.push_back(static_cast<int>(l.rdispls[p]));
    }
  }
  void refill(int me, int round) {
    std::iota(send.begin(), send.end(), me * 100000 + round * 1000);
    MPI_Alltoallv(send.data(), isc.data(), isd.data(), MPI_INT, want.data(), irc.data(), ird.data(),
                  MPI_INT, world());
  }
};

TEST(Plan, EveryAlgorithmRepeatedWithNewContents) {
  const int me = rank_of(world()), size = size_of(world());
  for (const auto& spec : specs_for(size)) {
    Buffers b(uniform(size, 40, 19), me);
    Plan plan(b.send.data(), b.l.sendcounts, b.l.sdispls, MPI_INT, b.got.data(), b.l.recvcounts,
              b.l.rdispls, MPI_INT, world(), {.algorithm = spec});
    for (int round = 0; round < 3; ++round) {
      b.refill(me, round);
      plan.run();
      EXPECT_EQ(b.got, b.want) << spec << " round " << round << " on rank " << me;
    }
    EXPECT_FALSE(plan.algorithm().empty());
  }
}

// A plan refers to its communicator as a persistent request does: it runs after the
// communicator's MPI_Comm_free, and the last of the two to go frees a2av's state.
TEST(Plan, RunsAfterItsCommunicatorIsFreed) {
  const int me = rank_of(world()), size = size_of(world());
  // The pin is the plan's whatever it runs: three routes (auto's, the library's, TuNA's rounds).
  for (const std::string spec : {"auto", "vendor", "tuna:radix=2"}) {
    MPI_Comm comm = MPI_COMM_NULL;
    MPI_Comm_dup(world(), &comm);
    Buffers b(power_law(size, 300, 23), me);
    Plan plan(b.send.data(), b.l.sendcounts, b.l.sdispls, MPI_INT, b.got.data(), b.l.recvcounts,
              b.l.rdispls, MPI_INT, comm, {.algorithm = spec});
    MPI_Comm_free(&comm);
    for (int round = 0; round < 2; ++round) {
      b.refill(me, round);
      plan.run();
      EXPECT_EQ(b.got, b.want) << spec << " round " << round << " on rank " << me;
    }
  }
}

// A plan destroyed after MPI_Finalize, as a C++ program's objects in main's scope are: its
// communicator freed, so that the plan holds a2av's state last. The test passes if the program
// then ends without error (no MPI call is made after MPI_Finalize).
std::optional<Plan> plan_outliving_mpi;
std::vector<int> outliving_send, outliving_recv;

TEST(Plan, OutlivesMpiFinalize) {
  const int size = size_of(world());
  std::vector<MPI_Count> counts(size, 2);
  std::vector<MPI_Aint> displs(size);
  for (int p = 0; p < size; ++p) displs[p] = 2 * p;
  outliving_send.assign(2 * size, rank_of(world()));
  outliving_recv.assign(2 * size, -1);
  MPI_Comm comm = MPI_COMM_NULL;
  MPI_Comm_dup(world(), &comm);
  plan_outliving_mpi.emplace(outliving_send.data(), counts, displs, MPI_INT, outliving_recv.data(),
                             counts, displs, MPI_INT, comm);
  MPI_Comm_free(&comm);
  plan_outliving_mpi->run();
  for (int k = 0; k < 2 * size; ++k) EXPECT_EQ(outliving_recv[k], k / 2);
}

TEST(Plan, InPlaceAndCApi) {
  const int me = rank_of(world()), size = size_of(world());
  std::vector<MPI_Count> counts(size, 3);
  std::vector<MPI_Aint> displs(size);
  std::vector<int> icounts(size, 3), idispls(size);
  for (int p = 0; p < size; ++p) displs[p] = idispls[p] = 3 * p;
  std::vector<int> buf(3 * size), want(3 * size);
  A2AV_Plan plan = nullptr;
  ASSERT_EQ(
      A2AV_Alltoallv_init(MPI_IN_PLACE, nullptr, nullptr, MPI_DATATYPE_NULL, buf.data(),
                          counts.data(), displs.data(), MPI_INT, world(), "tuna:radix=2", &plan),
      A2AV_SUCCESS)
      << A2AV_Last_error_message();
  for (int round = 0; round < 3; ++round) {
    std::iota(buf.begin(), buf.end(), me * 1000 + round);
    want = buf;
    MPI_Alltoallv(MPI_IN_PLACE, nullptr, nullptr, MPI_DATATYPE_NULL, want.data(), icounts.data(),
                  idispls.data(), MPI_INT, world());
    EXPECT_EQ(A2AV_Start(plan), A2AV_SUCCESS) << A2AV_Last_error_message();
    EXPECT_EQ(buf, want) << "round " << round;
    EXPECT_EQ(std::string(A2AV_Last_algorithm()).rfind("tuna:radix=2", 0), 0u);
  }
  EXPECT_EQ(A2AV_Plan_free(&plan), A2AV_SUCCESS);
  EXPECT_EQ(plan, nullptr);
}

TEST(Plan, ErrorsAreFoundWhenThePlanIsMade) {
  const int me = rank_of(world()), size = size_of(world());
  std::vector<MPI_Count> counts(size, 1);
  std::vector<MPI_Aint> displs(size);
  std::iota(displs.begin(), displs.end(), 0);
  if (me == 0) counts[size - 1] = -1;
  std::vector<int> send(size), recv(size);
  A2AV_Plan plan = nullptr;
  const int code =
      A2AV_Alltoallv_init(send.data(), counts.data(), displs.data(), MPI_INT, recv.data(),
                          counts.data(), displs.data(), MPI_INT, world(), "spread_out", &plan);
  EXPECT_EQ(code, A2AV_ERR_ARG);
  EXPECT_EQ(plan, nullptr);
}

}  // namespace
}  // namespace a2av::test
