// GoogleTest main for MPI tests: every rank runs every test; only rank 0 prints the
// progress, while failures are printed by the rank that saw them. The process exits
// non-zero on any rank with a failure, so mpiexec fails.
//
// One launch tests several communicators, in turn (MPICH's MTestGetIntracomm does the
// same): the whole launch, then, from 4 ranks up, two groups of W/2+1 and W/2-1 ranks at
// once, drawn in a scrambled order. Launches of 1, 2, 4, 8 and 16 ranks so cover
// communicators of 1, 2, 3, 4, 5, 7, 8, 9 and 16 ranks. A2AV_TEST_COMMS=world keeps to the
// whole launch (the shapes of emulated nodes, tests written for one size).
#include "harness.hpp"

#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <random>
#include <vector>

namespace {

class RankFailurePrinter : public testing::EmptyTestEventListener {
 public:
  explicit RankFailurePrinter(int rank) : rank_(rank) {}
  void OnTestPartResult(const testing::TestPartResult& result) override {
    if (result.failed())
      std::fprintf(stderr, "[rank %d] %s:%d: %s\n", rank_, result.file_name(), result.line_number(),
                   result.summary());
  }

 private:
  int rank_;
};

// This rank's group in a launch split in two, scrambled by a seeded permutation that every
// rank computes alike.
MPI_Comm split_group(int rank, int size) {
  std::vector<int> position(size);
  std::iota(position.begin(), position.end(), 0);
  std::shuffle(position.begin(), position.end(), std::mt19937(size));
  const int first = size / 2 + 1;
  MPI_Comm group = MPI_COMM_NULL;
  MPI_Comm_split(MPI_COMM_WORLD, position[rank] < first ? 0 : 1, position[rank], &group);
  return group;
}

std::vector<MPI_Comm> communicators_to_test(int rank, int size) {
  std::vector<MPI_Comm> comms{MPI_COMM_WORLD};
  const char* only = std::getenv("A2AV_TEST_COMMS");
  if (size >= 4 && !(only && std::strcmp(only, "world") == 0))
    comms.push_back(split_group(rank, size));
  return comms;
}

// Before each pass over the tests: the communicator it runs on (one pass per communicator).
class CommunicatorPerIteration : public testing::EmptyTestEventListener {
 public:
  CommunicatorPerIteration(std::vector<MPI_Comm> comms, int rank)
      : comms_(std::move(comms)), rank_(rank) {}
  void OnTestIterationStart(const testing::UnitTest&, int iteration) override {
    const MPI_Comm comm = comms_[static_cast<std::size_t>(iteration) % comms_.size()];
    a2av::test::set_world(comm);
    if (rank_ != 0) return;
    if (comm == MPI_COMM_WORLD)
      std::printf("[ comms    ] the whole launch\n");
    else
      std::printf("[ comms    ] two groups at once, in scrambled order; this one has %d ranks\n",
                  a2av::test::size_of(comm));
  }

 private:
  std::vector<MPI_Comm> comms_;
  int rank_;
};

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  testing::InitGoogleTest(&argc, argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  std::vector<MPI_Comm> comms = communicators_to_test(rank, size);
  GTEST_FLAG_SET(repeat, static_cast<int>(comms.size()));
  GTEST_FLAG_SET(recreate_environments_when_repeating, true);  // a test's environment per pass
  auto& listeners = testing::UnitTest::GetInstance()->listeners();
  listeners.Append(new CommunicatorPerIteration(comms, rank));
  if (rank != 0) {
    delete listeners.Release(listeners.default_result_printer());
    listeners.Append(new RankFailurePrinter(rank));
  }
  const int failed = RUN_ALL_TESTS();
  int any_failed = 0;
  MPI_Allreduce(&failed, &any_failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  for (MPI_Comm& comm : comms)
    if (comm != MPI_COMM_WORLD) MPI_Comm_free(&comm);
  MPI_Finalize();
  return any_failed ? 1 : 0;
}
