// A C++ user of the installed a2av: every rank sends a seeded random number of values (zeros
// included) to every rank through a2av::exchange and checks what arrives against the same
// exchange through MPI_Alltoallv. Rank 0 prints " No Errors" when every rank agrees.
#include <a2av/version.h>
#include <mpi.h>
#include <a2av/alltoallv.hpp>

#include <cstdio>
#include <random>
#include <vector>

namespace {

// What rank `from` sends rank `to`: 0 to 4 values, the same on both sides.
MPI_Count count(int from, int to) {
  return std::minstd_rand(1 + from * 7919 + to)() % 5;
}

long value(int from, int to, MPI_Count k) {
  return from * 1000003L + to * 1009L + k;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);

  std::vector<MPI_Count> sendcounts(size);
  std::vector<long> send;
  for (int to = 0; to < size; ++to) {
    sendcounts[to] = count(rank, to);
    for (MPI_Count k = 0; k < sendcounts[to]; ++k) send.push_back(value(rank, to, k));
  }
  a2av::CallInfo info;
  std::vector<MPI_Count> recvcounts;
  const std::vector<long> received =
      a2av::exchange<long>(send, sendcounts, MPI_COMM_WORLD, {.info = &info}, {}, &recvcounts);

  // The vendor's answer to the same exchange.
  std::vector<int> scounts(size), sdispls(size), rcounts(size), rdispls(size);
  for (int j = 0, s = 0, r = 0; j < size; s += scounts[j], r += rcounts[j], ++j) {
    scounts[j] = static_cast<int>(sendcounts[j]);
    rcounts[j] = static_cast<int>(count(j, rank));
    sdispls[j] = s;
    rdispls[j] = r;
  }
  std::vector<long> expected(rdispls.back() + rcounts.back());
  MPI_Alltoallv(send.data(), scounts.data(), sdispls.data(), MPI_LONG, expected.data(),
                rcounts.data(), rdispls.data(), MPI_LONG, MPI_COMM_WORLD);

  int errors = received != expected;
  for (int j = 0; j < size; ++j) errors += recvcounts[j] != rcounts[j];
  MPI_Allreduce(MPI_IN_PLACE, &errors, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) {
    std::printf("a2av %s, %d ranks, %s, peak %lld temporary bytes\n", A2AV_VERSION_STRING, size,
                info.algorithm.c_str(), static_cast<long long>(info.peak_temp_bytes));
    std::printf(errors == 0 ? " No Errors\n" : " Found %d errors\n", errors);
  }
  MPI_Finalize();
  return errors == 0 ? 0 : 1;
}
