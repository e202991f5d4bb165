// MPI_Alltoallv semantics beyond byte blocks, for every algorithm: datatypes (built-in,
// contiguous struct, strided vector sent and received as ints), sub-communicators,
// MPI_IN_PLACE, the C++ container API, and validation of agreeing counts.
#include "harness.hpp"

#include <a2av/alltoallv.hpp>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <numeric>

namespace a2av::test {
namespace {

// Runs spec and vendor with the given types; element e of the block src->dst is the ints
// (src, dst, e, 7) laid out by the send type. Compares received buffers whole.
void expect_typed_same(const std::string& spec, MPI_Datatype send_type, MPI_Datatype recv_type,
                       int ints_per_send_elem, int ints_per_recv_elem, MPI_Comm comm) {
  const int me = rank_of(comm), size = size_of(comm);
  const Matrix counts = uniform(size, 6, 31);
  MPI_Aint lb, send_extent, recv_extent;
  MPI_Type_get_extent(send_type, &lb, &send_extent);
  MPI_Type_get_extent(recv_type, &lb, &recv_extent);
  const int ratio = ints_per_send_elem / ints_per_recv_elem;  // recv elems per send elem
  std::vector<MPI_Count> sc(size), rc(size);
  std::vector<MPI_Aint> sd(size), rd(size);
  MPI_Aint s_at = 1, r_at = 2;  // leading gaps
  for (int p = 0; p < size; ++p) {
    sc[p] = counts[me][p];
    sd[p] = s_at;
    s_at += sc[p] + 1;
    rc[p] = counts[p][me] * ratio;
    rd[p] = r_at;
    r_at += rc[p] + 2;
  }
  std::vector<char> send(s_at * send_extent, 0);
  // Fill every int slot with a recognisable value; holes of the send type are ignored.
  auto* ints = reinterpret_cast<int*>(send.data());
  for (std::size_t i = 0; i < send.size() / sizeof(int); ++i)
    ints[i] = me * 1000003 + static_cast<int>(i);
  const auto before = send;
  std::vector<char> got(r_at * recv_extent, static_cast<char>(kPoison)), want = got;
  std::vector<int> isc(sc.begin(), sc.end()), isd(sd.begin(), sd.end()), irc(rc.begin(), rc.end()),
      ird(rd.begin(), rd.end());
  MPI_Alltoallv(send.data(), isc.data(), isd.data(), send_type, want.data(), irc.data(), ird.data(),
                recv_type, comm);
  EXPECT_EQ(A2AV_Alltoallv_with(spec.c_str(), send.data(), sc.data(), sd.data(), send_type,
                                got.data(), rc.data(), rd.data(), recv_type, comm),
            A2AV_SUCCESS)
      << spec << ": " << A2AV_Last_error_message();
  EXPECT_TRUE(send == before) << spec << ": send buffer changed";
  EXPECT_TRUE(got == want) << spec << ": rank " << me << " differs from vendor";
}

class EveryAlgorithm : public testing::Test {
 protected:
  std::vector<std::string> specs = specs_for(size_of(world()));
};

TEST_F(EveryAlgorithm, BuiltinTypes) {
  for (const auto& spec : specs) {
    expect_typed_same(spec, MPI_INT, MPI_INT, 1, 1, world());
    expect_typed_same(spec, MPI_DOUBLE, MPI_DOUBLE, 2, 2, world());
  }
}

TEST_F(EveryAlgorithm, ContiguousStructType) {
  struct Particle {
    int id;
    int cell;
    double x;
  };
  MPI_Datatype particle;
  const int lengths[3] = {1, 1, 1};
  const MPI_Aint offsets[3] = {offsetof(Particle, id), offsetof(Particle, cell),
                               offsetof(Particle, x)};
  const MPI_Datatype types[3] = {MPI_INT, MPI_INT, MPI_DOUBLE};
  MPI_Type_create_struct(3, lengths, offsets, types, &particle);
  MPI_Type_commit(&particle);
  for (const auto& spec : specs) expect_typed_same(spec, particle, particle, 4, 4, world());
  MPI_Type_free(&particle);
}

TEST_F(EveryAlgorithm, StridedVectorSentReceivedAsInts) {
  // Two ints taken from every four: a non-contiguous send type; received as MPI_INT pairs.
  MPI_Datatype vec, strided, pair;
  MPI_Type_vector(2, 1, 2, MPI_INT, &vec);
  MPI_Type_create_resized(vec, 0, 4 * sizeof(int), &strided);
  MPI_Type_commit(&strided);
  MPI_Type_contiguous(2, MPI_INT, &pair);
  MPI_Type_commit(&pair);
  for (const auto& spec : specs) {
    expect_typed_same(spec, strided, MPI_INT, 2, 1, world());
    expect_typed_same(spec, pair, strided, 2, 2, world());
  }
  MPI_Type_free(&vec);
  MPI_Type_free(&strided);
  MPI_Type_free(&pair);
}

// A rank may reuse its send buffer once its call returns: the blocks its peers read straight
// from it (shared_memory above 64 KiB, node_aware's large blocks within a node) have been read
// by then. Each rank overwrites its buffer on return, which a peer still to read would get.
TEST_F(EveryAlgorithm, SendBufferFreeOnReturn) {
  const int me = rank_of(world()), size = size_of(world());
  constexpr int kBlock = 70000;
  std::vector<MPI_Count> counts(size, kBlock);
  std::vector<MPI_Aint> displs(size);
  for (int p = 0; p < size; ++p) displs[p] = static_cast<MPI_Aint>(p) * kBlock;
  auto fill = [&](std::vector<unsigned char>& send) {
    for (std::size_t i = 0; i < send.size(); ++i) send[i] = static_cast<unsigned char>(me * 31 + i);
  };
  std::vector<unsigned char> send(static_cast<std::size_t>(size) * kBlock), want(send.size());
  fill(send);
  MPI_Alltoall(send.data(), kBlock, MPI_BYTE, want.data(), kBlock, MPI_BYTE, world());
  for (const std::string& spec : specs) {
    fill(send);
    std::vector<unsigned char> got(send.size(), 0);
    EXPECT_EQ(A2AV_Alltoallv_with(spec.c_str(), send.data(), counts.data(), displs.data(), MPI_BYTE,
                                  got.data(), counts.data(), displs.data(), MPI_BYTE, world()),
              A2AV_SUCCESS)
        << spec << ": " << A2AV_Last_error_message();
    std::fill(send.begin(), send.end(), 0xee);
    EXPECT_TRUE(got == want) << spec << ": rank " << me << " differs from vendor";
  }
}

TEST_F(EveryAlgorithm, SubCommunicatorsInReverseOrder) {
  const int me = rank_of(world());
  MPI_Comm half;
  MPI_Comm_split(world(), me % 2, -me, &half);
  for (const auto& spec : specs_for(size_of(half)))
    expect_same_as_vendor(spec, uniform(size_of(half), 300, 41), half, 5);
  MPI_Comm_free(&half);
}

TEST_F(EveryAlgorithm, InPlaceSymmetricExchange) {
  const int me = rank_of(world()), size = size_of(world());
  Matrix counts = uniform(size, 50, 77);
  for (int i = 0; i < size; ++i)
    for (int j = 0; j < i; ++j) counts[i][j] = counts[j][i];
  std::vector<MPI_Count> c(size);
  std::vector<MPI_Aint> d(size);
  std::vector<int> ic(size), id(size);
  MPI_Aint at = 3;
  for (int p = size - 1; p >= 0; --p) {  // blocks in reverse order, with gaps
    c[p] = ic[p] = static_cast<int>(counts[me][p]);
    d[p] = id[p] = static_cast<int>(at);
    at += c[p] + 1;
  }
  std::vector<int> initial(at);
  std::iota(initial.begin(), initial.end(), me * 100000);
  std::vector<int> want = initial;
  MPI_Alltoallv(MPI_IN_PLACE, nullptr, nullptr, MPI_DATATYPE_NULL, want.data(), ic.data(),
                id.data(), MPI_INT, world());
  for (const auto& spec : specs) {
    if (spec == "vendor") continue;  // vendor in place is the reference itself
    std::vector<int> got = initial;
    EXPECT_EQ(A2AV_Alltoallv_with(spec.c_str(), MPI_IN_PLACE, nullptr, nullptr, MPI_DATATYPE_NULL,
                                  got.data(), c.data(), d.data(), MPI_INT, world()),
              A2AV_SUCCESS)
        << spec << ": " << A2AV_Last_error_message();
    EXPECT_TRUE(got == want) << spec << ": in-place result differs on rank " << me;
    // Contiguous in place: blocks are swapped through at most the chunk, never copied whole.
    const char* chunk = std::getenv("A2AV_INPLACE_CHUNK");
    EXPECT_LE(A2AV_Last_peak_bytes(), chunk ? std::atoll(chunk) : 1 << 20) << spec;
  }
}

TEST(InPlace, LargeBlocksNeedOnlyTheChunk) {
  // 256 KiB per peer in place: peak temporary memory stays within the 1 MiB default chunk
  // (or A2AV_INPLACE_CHUNK), whatever the data size; the result matches vendor.
  const int me = rank_of(world()), size = size_of(world());
  const int ints = 65536;
  std::vector<MPI_Count> c(size, ints);
  std::vector<MPI_Aint> d(size);
  std::vector<int> ic(size, ints), id(size);
  for (int p = 0; p < size; ++p) d[p] = id[p] = p * ints;
  std::vector<int> got(static_cast<std::size_t>(size) * ints);
  std::iota(got.begin(), got.end(), me * 7919);
  std::vector<int> want = got;
  MPI_Alltoallv(MPI_IN_PLACE, nullptr, nullptr, MPI_DATATYPE_NULL, want.data(), ic.data(),
                id.data(), MPI_INT, world());
  ASSERT_EQ(A2AV_Alltoallv_with("spread_out", MPI_IN_PLACE, nullptr, nullptr, MPI_DATATYPE_NULL,
                                got.data(), c.data(), d.data(), MPI_INT, world()),
            A2AV_SUCCESS)
      << A2AV_Last_error_message();
  EXPECT_TRUE(got == want);
  const char* chunk = std::getenv("A2AV_INPLACE_CHUNK");
  EXPECT_LE(A2AV_Last_peak_bytes(), chunk ? std::atoll(chunk) : 1 << 20);
}

TEST(CppApi, ExchangeComputesReceiveCounts) {
  const int me = rank_of(world()), size = size_of(world());
  std::vector<MPI_Count> sendcounts(size);
  std::vector<double> send;
  for (int p = 0; p < size; ++p) {
    sendcounts[p] = (me + 2 * p) % 5;
    for (int k = 0; k < sendcounts[p]; ++k) send.push_back(me * 100 + p + k / 10.0);
  }
  CallInfo info;
  std::vector<MPI_Count> recvcounts;
  const auto got = exchange<double>(send, sendcounts, world(),
                                    {.algorithm = "tuna:radix=2", .validate = true, .info = &info},
                                    {}, &recvcounts);
  std::vector<double> want;
  for (int src = 0; src < size; ++src) {
    EXPECT_EQ(recvcounts[src], (src + 2 * me) % 5);
    for (int k = 0; k < (src + 2 * me) % 5; ++k) want.push_back(src * 100 + me + k / 10.0);
  }
  EXPECT_EQ(got, want);
  EXPECT_EQ(info.algorithm.rfind("tuna:radix=", 0), 0u) << info.algorithm;
}

TEST(CppApi, ErrorsThrowWithCode) {
  const int size = size_of(world());
  std::vector<MPI_Count> counts(size, 0);
  std::vector<int> nothing;
  try {
    exchange<int>(nothing, counts, world(), {.algorithm = "no_such_algorithm"}, counts);
    ADD_FAILURE() << "no exception";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), A2AV_ERR_ALGORITHM);
    EXPECT_NE(std::string(e.what()).find("tuna"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace a2av::test
