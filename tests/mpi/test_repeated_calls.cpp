// Calls repeated with the same arguments reuse their checked form (src/alltoallv/
// recent_calls.hpp). Every change a user can make between two calls must still be seen:
// new data, counts or displacements changed in the same arrays, other buffers, more
// argument sets than are kept, a datatype or communicator freed and made again (its handle
// may come back), the same arguments on another communicator, and an error after a kept
// call. Each call is compared with the vendor.
#include "harness.hpp"

#include <a2av/a2av.h>

#include "driver/recent_calls.hpp"

#include <algorithm>

namespace a2av::test {
namespace {

const char* const kDirectSpecs[] = {"auto",      "spread_out", "linear",
                                    "scattered", "pairwise",   "shared_memory"};

// One rank's arguments, kept at fixed addresses so that a test can change them in place.
struct Arguments {
  Layout layout;
  std::vector<unsigned char> send, got, want;

  Arguments(const Matrix& counts, std::uint64_t seed, int elem_bytes = 1)
      : layout(layout_for(counts, rank_of(world()), seed)),
        send(layout.send_extent * elem_bytes),
        got(layout.recv_extent * elem_bytes),
        want(got.size()) {}
};

// Fresh data (salted so that a result of an earlier call cannot pass), then the spec and
// the vendor on the same arguments; the receive buffers must be equal byte for byte.
void expect_as_vendor(const char* spec, Arguments& a, MPI_Datatype type, MPI_Comm comm, int salt) {
  const int me = rank_of(comm);
  const Layout& l = a.layout;
  for (std::size_t i = 0; i < a.send.size(); ++i)
    a.send[i] = static_cast<unsigned char>(pattern(me, salt, static_cast<std::int64_t>(i)));
  std::fill(a.got.begin(), a.got.end(), kPoison);
  std::fill(a.want.begin(), a.want.end(), kPoison);
  ASSERT_EQ(vendor_alltoallv(a.send.data(), l, type, a.want.data(), comm), MPI_SUCCESS);
  ASSERT_EQ(A2AV_Alltoallv_with(spec, a.send.data(), l.sendcounts.data(), l.sdispls.data(), type,
                                a.got.data(), l.recvcounts.data(), l.rdispls.data(), type, comm),
            A2AV_SUCCESS)
      << spec << ": " << A2AV_Last_error_message();
  EXPECT_TRUE(a.got == a.want) << spec << " (salt " << salt << ") differs from the vendor on rank "
                               << me;
}

TEST(RepeatedCalls, SameArgumentsWithNewData) {
  for (const char* spec : kDirectSpecs) {
    Arguments a(uniform(size_of(world()), 50, 1), 2);
    for (int salt = 0; salt < 5; ++salt) expect_as_vendor(spec, a, MPI_BYTE, world(), salt);
  }
}

// MPI_IN_PLACE ignores the send arguments, and programs pass NULL for them: a repeated call
// must not read them (a crash in the recent-calls cache, found under the preload).
TEST(RepeatedCalls, InPlaceWithNullSendArguments) {
  const int me = rank_of(world()), size = size_of(world());
  std::vector<int> counts(size), displs(size);
  int total = 0;
  for (int j = 0; j < size; ++j) {
    counts[j] = (me + j) % 3 + 1;  // symmetric, as MPI_IN_PLACE needs
    displs[j] = total;
    total += counts[j];
  }
  const std::vector<MPI_Count> wide_counts(counts.begin(), counts.end());
  const std::vector<MPI_Aint> wide_displs(displs.begin(), displs.end());
  for (const char* spec : {"vendor", "auto", "spread_out", "tuna", "bruck"}) {
    for (int round = 0; round < 3; ++round) {
      std::vector<int> got(total), want(total);
      for (int i = 0; i < total; ++i) got[i] = want[i] = 1000 * me + 10 * i + round;
      ASSERT_EQ(MPI_Alltoallv(MPI_IN_PLACE, nullptr, nullptr, MPI_INT, want.data(), counts.data(),
                              displs.data(), MPI_INT, world()),
                MPI_SUCCESS);
      ASSERT_EQ(A2AV_Alltoallv_with(spec, MPI_IN_PLACE, nullptr, nullptr, MPI_INT, got.data(),
                                    wide_counts.data(), wide_displs.data(), MPI_INT, world()),
                A2AV_SUCCESS)
          << spec << ": " << A2AV_Last_error_message();
      EXPECT_EQ(got, want) << spec << ", call " << round << ", rank " << me;
    }
  }
}

TEST(RepeatedCalls, CountsAndDisplacementsChangedInTheSameArrays) {
  const int size = size_of(world()), me = rank_of(world());
  std::vector<Layout> next;
  for (std::uint64_t seed = 5; seed < 9; ++seed)
    next.push_back(layout_for(uniform(size, 200, seed), me, seed));
  for (const char* spec : kDirectSpecs) {
    Arguments a(uniform(size, 200, 3), 4);
    // Room for every layout below (and a shift by one), at the same addresses throughout.
    for (const Layout& l : next) {
      a.send.resize(std::max<std::size_t>(a.send.size(), l.send_extent));
      a.got.resize(std::max<std::size_t>(a.got.size(), l.recv_extent + 1));
    }
    a.want.resize(a.got.size());
    expect_as_vendor(spec, a, MPI_BYTE, world(), 0);
    expect_as_vendor(spec, a, MPI_BYTE, world(), 1);
    int salt = 2;
    for (const Layout& l : next) {
      std::copy(l.sendcounts.begin(), l.sendcounts.end(), a.layout.sendcounts.begin());
      std::copy(l.recvcounts.begin(), l.recvcounts.end(), a.layout.recvcounts.begin());
      std::copy(l.sdispls.begin(), l.sdispls.end(), a.layout.sdispls.begin());
      std::copy(l.rdispls.begin(), l.rdispls.end(), a.layout.rdispls.begin());
      expect_as_vendor(spec, a, MPI_BYTE, world(), salt++);
      // Only the receive displacements move, by one byte.
      for (MPI_Aint& d : a.layout.rdispls) d += 1;
      expect_as_vendor(spec, a, MPI_BYTE, world(), salt++);
    }
  }
}

TEST(RepeatedCalls, MoreArgumentSetsThanAreKept) {
  const int size = size_of(world());
  std::vector<Arguments> sets;
  for (std::uint64_t seed = 0; seed < RecentCalls::kSlots + 3; ++seed)
    sets.emplace_back(uniform(size, 30, seed), seed);
  for (int round = 0; round < 3; ++round)
    for (std::size_t i = 0; i < sets.size(); ++i)
      expect_as_vendor("auto", sets[i], MPI_BYTE, world(), round * 10 + static_cast<int>(i));
}

TEST(RepeatedCalls, DatatypeFreedAndMadeAgain) {
  // Open MPI hands a freed type's handle to the next type made: the same handle value then
  // names elements of another size.
  Arguments a(uniform(size_of(world()), 20, 6), 7, 12);
  for (int elem : {4, 12, 4, 2, 12}) {
    MPI_Datatype type;
    MPI_Type_contiguous(elem, MPI_BYTE, &type);
    MPI_Type_commit(&type);
    expect_as_vendor("auto", a, type, world(), elem);
    expect_as_vendor("auto", a, type, world(), elem + 1);
    MPI_Type_free(&type);
  }
}

TEST(RepeatedCalls, StridedDatatypeRepeated) {
  // A strided type goes through packing copies; repeated calls must pack anew each time.
  Arguments a(uniform(size_of(world()), 10, 8), 9, 16);
  MPI_Datatype type;
  MPI_Type_vector(2, 4, 8, MPI_BYTE, &type);
  MPI_Type_commit(&type);
  for (int salt = 0; salt < 3; ++salt) expect_as_vendor("auto", a, type, world(), salt);
  MPI_Type_free(&type);
}

TEST(RepeatedCalls, CommunicatorFreedAndMadeAgain) {
  Arguments a(uniform(size_of(world()), 40, 10), 11);
  for (int round = 0; round < 3; ++round) {
    MPI_Comm comm;
    MPI_Comm_dup(world(), &comm);
    expect_as_vendor("spread_out", a, MPI_BYTE, comm, round);
    expect_as_vendor("spread_out", a, MPI_BYTE, comm, round + 10);
    MPI_Comm_free(&comm);
  }
}

TEST(RepeatedCalls, SameArgumentsOnTwoCommunicators) {
  // The same buffers and counts on the world and on its ranks in reverse order: a call on
  // one must not run as the kept call of the other.
  MPI_Comm reversed;
  MPI_Comm_split(world(), 0, size_of(world()) - rank_of(world()), &reversed);
  const int size = size_of(world());
  Arguments a(Matrix(size, std::vector<std::int64_t>(size, 24)), 17);  // the same for any order
  for (int round = 0; round < 3; ++round) {
    expect_as_vendor("auto", a, MPI_BYTE, world(), 2 * round);
    expect_as_vendor("auto", a, MPI_BYTE, reversed, 2 * round + 1);
  }
  MPI_Comm_free(&reversed);
}

TEST(RepeatedCalls, ErrorAfterAKeptCallIsAgreedAndTheNextCallIsClean) {
  const int size = size_of(world()), me = rank_of(world());
  if (size < 2) GTEST_SKIP() << "needs a peer";
  for (const char* spec : kDirectSpecs) {
    Arguments a(uniform(size, 30, 12), 13);
    expect_as_vendor(spec, a, MPI_BYTE, world(), 0);
    expect_as_vendor(spec, a, MPI_BYTE, world(), 1);
    const MPI_Count saved = a.layout.sendcounts[0];
    if (me == size - 1) a.layout.sendcounts[0] = -1;
    const Layout& l = a.layout;
    const int rc =
        A2AV_Alltoallv_with(spec, a.send.data(), l.sendcounts.data(), l.sdispls.data(), MPI_BYTE,
                            a.got.data(), l.recvcounts.data(), l.rdispls.data(), MPI_BYTE, world());
    EXPECT_EQ(rc, A2AV_ERR_ARG) << spec << " on rank " << me;
    a.layout.sendcounts[0] = saved;
    expect_as_vendor(spec, a, MPI_BYTE, world(), 2);
  }
}

TEST(RepeatedCalls, ReportsTheSameAlgorithmWhenRepeated) {
  Arguments a(uniform(size_of(world()), 10, 14), 15);
  expect_as_vendor("auto", a, MPI_BYTE, world(), 0);
  const std::string first = A2AV_Last_algorithm();
  expect_as_vendor("auto", a, MPI_BYTE, world(), 1);
  EXPECT_EQ(first, A2AV_Last_algorithm());
  EXPECT_FALSE(first.empty());
}

}  // namespace
}  // namespace a2av::test
