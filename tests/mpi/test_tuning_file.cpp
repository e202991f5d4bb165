// auto under A2AV_TUNING_FILE or A2AV_MACHINE_FILE (set by ctest): a good table's rule
// decides what runs, on every rank alike; a broken table fails every auto call on every
// rank, naming its line; a machine file lets the cost model choose, alike on every rank.
#include "harness.hpp"

#include <cstdlib>
#include <string>

namespace a2av::test {
namespace {

bool table_is_broken() {
  const char* path = std::getenv("A2AV_TUNING_FILE");
  return path && std::string(path).find("broken") != std::string::npos;
}

int run_auto(std::int64_t block) {
  const int size = size_of(world());
  std::vector<MPI_Count> counts(size, block);
  std::vector<MPI_Aint> displs(size);
  for (int p = 0; p < size; ++p) displs[p] = p * block;
  std::vector<char> send(size * block, 1), recv(size * block, 0);
  return A2AV_Alltoallv_c(send.data(), counts.data(), displs.data(), MPI_BYTE, recv.data(),
                          counts.data(), displs.data(), MPI_BYTE, world());
}

bool has_table() {
  return std::getenv("A2AV_TUNING_FILE") != nullptr;
}

TEST(MachineFile, CostModelDecidesAuto) {
  if (has_table()) GTEST_SKIP() << "a tuning table answers first";
  ASSERT_EQ(run_auto(100), A2AV_SUCCESS) << A2AV_Last_error_message();
  const std::string chosen = A2AV_Last_algorithm();
  EXPECT_FALSE(chosen.empty());
  // Every rank ran the same algorithm.
  const int length = static_cast<int>(chosen.size());
  int lo = length, hi = length;
  MPI_Allreduce(MPI_IN_PLACE, &lo, 1, MPI_INT, MPI_MIN, world());
  MPI_Allreduce(MPI_IN_PLACE, &hi, 1, MPI_INT, MPI_MAX, world());
  EXPECT_EQ(lo, hi) << chosen;
}

TEST(TuningFile, RulesDecideAuto) {
  if (!has_table() || table_is_broken()) GTEST_SKIP() << "no good table";
  ASSERT_EQ(run_auto(100), A2AV_SUCCESS) << A2AV_Last_error_message();
  EXPECT_EQ(std::string(A2AV_Last_algorithm()), "pairwise");
  ASSERT_EQ(run_auto(5000), A2AV_SUCCESS) << A2AV_Last_error_message();
  EXPECT_EQ(std::string(A2AV_Last_algorithm()), "scattered:block_count=2");
}

TEST(TuningFile, BrokenTableFailsEveryRank) {
  if (!has_table() || !table_is_broken()) GTEST_SKIP() << "no broken table";
  EXPECT_EQ(run_auto(100), A2AV_ERR_ALGORITHM);
  EXPECT_NE(std::string(A2AV_Last_error_message()).find("line 4"), std::string::npos)
      << A2AV_Last_error_message();
  // An explicit algorithm does not consult the table.
  const int size = size_of(world());
  std::vector<MPI_Count> counts(size, 1);
  std::vector<MPI_Aint> displs(size);
  for (int p = 0; p < size; ++p) displs[p] = p;
  std::vector<char> send(size, 1), recv(size, 0);
  EXPECT_EQ(A2AV_Alltoallv_with("linear", send.data(), counts.data(), displs.data(), MPI_BYTE,
                                recv.data(), counts.data(), displs.data(), MPI_BYTE, world()),
            A2AV_SUCCESS);
}

}  // namespace
}  // namespace a2av::test
