// Shared by the MPI tests: a GoogleTest main for MPI programs, seeded count-matrix
// generators, and a byte-exact checker against the vendor MPI_Alltoallv.
#pragma once

#include <a2av/a2av.h>

#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

namespace a2av::test {

int rank_of(MPI_Comm comm);
int size_of(MPI_Comm comm);

// The communicator the tests run on: the whole launch, then each group a split launch makes
// (tests/mpi/main.cpp). Tests use it wherever they would use MPI_COMM_WORLD.
MPI_Comm world();
void set_world(MPI_Comm comm);

// counts[i][j]: elements rank i sends rank j. Every rank generates the same matrix.
using Matrix = std::vector<std::vector<std::int64_t>>;

struct Generator {
  std::string name;
  Matrix (*make)(int size, std::int64_t scale, std::uint64_t seed);
};

Matrix uniform(int size, std::int64_t max, std::uint64_t seed);    // 0..max
Matrix normal(int size, std::int64_t mean, std::uint64_t seed);    // mean, sd mean/4
Matrix power_law(int size, std::int64_t max, std::uint64_t seed);  // heavy tail up to max
Matrix zero_rows_cols(int size, std::int64_t max,
                      std::uint64_t seed);                       // some ranks send/receive nothing
Matrix one_hot(int size, std::int64_t max, std::uint64_t seed);  // everyone sends to one rank
Matrix one_holder(int size, std::int64_t max, std::uint64_t seed);  // one rank holds all data
const std::vector<Generator>& generators();

// A2AV_EMULATE_NODES, the emulated ranks per node (0: unset).
int emulated_node_size();

// Whether a communicator of `size` ranks on this machine is one node to a2av (not split
// into emulated nodes by A2AV_EMULATE_NODES): shared_memory runs only then.
bool one_node(int size);

// Every algorithm spec worth testing at this size: each algorithm, the radices
// {2, 3, ceil(sqrt P), P-1, P, P+5}, batches, emulated nodes of 2 and 3 ranks.
std::vector<std::string> specs_for(int size);

// Layout of one rank's buffers for a matrix: blocks in a shuffled order with gaps, so
// displacements are arbitrary. In elements of the datatype.
struct Layout {
  std::vector<MPI_Count> sendcounts, recvcounts;
  std::vector<MPI_Aint> sdispls, rdispls;
  std::int64_t send_extent = 0, recv_extent = 0;  // elements spanned
};
Layout layout_for(const Matrix& counts, int rank, std::uint64_t seed);

// The vendor MPI_Alltoallv on `l` (counts and displacements converted to int).
int vendor_alltoallv(const void* send, const Layout& l, MPI_Datatype type, void* recv,
                     MPI_Comm comm);

// The value of byte b of the block src sends dst.
inline unsigned char pattern(int src, int dst, std::int64_t b) {
  return static_cast<unsigned char>(src * 131 + dst * 31 + b * 7 + (b >> 8));
}
inline constexpr unsigned char kPoison = 0xA5;

// Runs `spec` and the vendor MPI_Alltoallv on the same MPI_BYTE-sized inputs (element
// size elem_bytes via a contiguous type) and expects identical receive buffers, gaps
// included, an unchanged send buffer and the pattern in every block. Returns the peak
// temporary bytes the a2av call reported.
// The bound on requests in flight a spec runs under: its in_flight=N, else
// A2AV_MAX_IN_FLIGHT, else the default.
int in_flight_bound(const std::string& spec);
// Where the buffers passed point: at their starts, or at their ends (negative displacements,
// which MPI allows).
enum class Bases { at_starts, at_ends };
std::int64_t expect_same_as_vendor(const std::string& spec, const Matrix& counts, MPI_Comm comm,
                                   std::uint64_t seed, int elem_bytes = 1,
                                   Bases bases = Bases::at_starts);

}  // namespace a2av::test
