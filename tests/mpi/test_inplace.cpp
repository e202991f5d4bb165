// The in-place exchange (A2AV_Exchange_inplace, a2av::exchange_inplace) against the vendor
// MPI_Alltoallv: every algorithm, every bench pattern and the harness's matrices, element
// sizes 1, 4, 16 and 48, capacities at the minimum and above, chunks of one element and
// more; and every error agreed on all ranks with the buffer unchanged.
#include "harness.hpp"

#include <a2av/inplace.hpp>

#include "../../tools/a2av/patterns.hpp"

#include <algorithm>
#include <cstring>
#include <numeric>

namespace a2av::test {
namespace {

const char* const kAlgorithms[] = {"inplace_bitonic", "inplace_pairwise", "inplace_auto"};

MPI_Datatype element_type(int bytes) {
  MPI_Datatype t;
  MPI_Type_contiguous(bytes, MPI_BYTE, &t);
  MPI_Type_commit(&t);
  return t;
}

std::int64_t row_total(const Matrix& m, int i) {
  return std::accumulate(m[i].begin(), m[i].end(), std::int64_t{0});
}
std::int64_t col_total(const Matrix& m, int j) {
  std::int64_t t = 0;
  for (const auto& row : m) t += row[j];
  return t;
}
// C: the largest send or receive total of any rank.
std::int64_t needed_length(const Matrix& m) {
  std::int64_t c = 0;
  for (int i = 0; i < static_cast<int>(m.size()); ++i)
    c = std::max({c, row_total(m, i), col_total(m, i)});
  return c;
}

// This rank's send data in destination order, elem bytes per element, patterned.
std::vector<unsigned char> send_data(const Matrix& m, int rank, int elem) {
  std::vector<unsigned char> data;
  for (int j = 0; j < static_cast<int>(m.size()); ++j)
    for (std::int64_t b = 0; b < m[rank][j] * elem; ++b) data.push_back(pattern(rank, j, b));
  return data;
}

// What the vendor delivers for the same data: S(rank) in source order.
std::vector<unsigned char> vendor_result(const Matrix& m, MPI_Comm comm, MPI_Datatype type,
                                         int elem) {
  const int rank = rank_of(comm), size = size_of(comm);
  std::vector<int> sc(size), sd(size), rc(size), rd(size);
  for (int j = 0; j < size; ++j) {
    sc[j] = static_cast<int>(m[rank][j]);
    rc[j] = static_cast<int>(m[j][rank]);
    sd[j] = j ? sd[j - 1] + sc[j - 1] : 0;
    rd[j] = j ? rd[j - 1] + rc[j - 1] : 0;
  }
  const auto send = send_data(m, rank, elem);
  std::vector<unsigned char> recv(static_cast<std::size_t>(col_total(m, rank) * elem) + 1, kPoison);
  MPI_Alltoallv(send.data(), sc.data(), sd.data(), type, recv.data(), rc.data(), rd.data(), type,
                comm);
  recv.pop_back();
  return recv;
}

// Runs the in-place exchange with capacity C + extra and checks it byte for byte: the
// received data and counts as the vendor's, and the bytes beyond C untouched.
InplaceInfo expect_exchange(const std::string& spec, const Matrix& m, int elem,
                            std::int64_t extra = 0) {
  MPI_Comm comm = world();
  const int rank = rank_of(comm), size = size_of(comm);
  MPI_Datatype type = element_type(elem);
  const std::int64_t capacity = needed_length(m) + extra;
  std::vector<unsigned char> buf(static_cast<std::size_t>(capacity * elem), kPoison);
  const auto send = send_data(m, rank, elem);
  std::copy(send.begin(), send.end(), buf.begin());
  std::vector<MPI_Count> counts(m[rank].begin(), m[rank].end());
  InplaceInfo info;
  const auto recvcounts = exchange_inplace(buf.data(), capacity, counts, type, comm, spec, &info);
  const auto expected = vendor_result(m, comm, type, elem);
  for (int j = 0; j < size; ++j) EXPECT_EQ(recvcounts[j], m[j][rank]) << "from rank " << j;
  EXPECT_TRUE(std::equal(expected.begin(), expected.end(), buf.begin()))
      << spec << ": received data differ from MPI_Alltoallv's";
  EXPECT_TRUE(std::all_of(buf.begin() + needed_length(m) * elem, buf.end(),
                          [](unsigned char b) { return b == kPoison; }))
      << spec << ": bytes beyond C were written";
  EXPECT_EQ(info.length, needed_length(m));
  MPI_Type_free(&type);
  return info;
}

Matrix from_pattern(const std::string& name, int size, std::int64_t scale, std::uint64_t seed) {
  return bench::make_counts(bench::parse_pattern(name), size, scale, seed);
}

const std::vector<std::string>& bench_patterns() {
  static const std::vector<std::string> names = {
      "zhuang1",   "zhuang2", "zhuang3", "zhuang4", "uniform", "constant",  "normal",
      "power-law", "sparse",  "fft-n1",  "fft-n2",  "one-hot", "all-to-one"};
  return names;
}

TEST(Inplace, BenchPatternsEveryAlgorithm) {
  const int size = size_of(world());
  for (const auto& name : bench_patterns())
    for (const char* algorithm : kAlgorithms) {
      SCOPED_TRACE(name + " " + algorithm);
      expect_exchange(algorithm, from_pattern(name, size, 6, 11), 4);
    }
}

TEST(Inplace, HarnessMatricesCapacityAtMinimumAndAbove) {
  const int size = size_of(world());
  // Seed 1 with the capacity at its minimum, seed 2 with 9 bytes to spare.
  for (const auto& g : generators())
    for (std::uint64_t seed : {1, 2})
      for (const char* algorithm : kAlgorithms) {
        SCOPED_TRACE(g.name + " " + algorithm + " seed " + std::to_string(seed));
        expect_exchange(algorithm, g.make(size, 7, seed), 1, seed == 1 ? 0 : 9);
      }
}

TEST(Inplace, ElementSizes) {
  const int size = size_of(world());
  for (int elem : {1, 4, 16, 48})
    for (const char* algorithm : kAlgorithms) {
      SCOPED_TRACE(std::string(algorithm) + " elem " + std::to_string(elem));
      expect_exchange(algorithm, uniform(size, 9, 5 + elem), elem, 1);
    }
}

TEST(Inplace, ChunkOfOneElementAndOfAFew) {
  const int size = size_of(world());
  for (const std::string algorithm : {"inplace_bitonic", "inplace_pairwise"})
    for (int chunk : {16, 16 * 3, 16 * 3 + 5}) {
      SCOPED_TRACE(algorithm + " chunk " + std::to_string(chunk));
      const auto spec = algorithm + ":chunk_bytes=" + std::to_string(chunk);
      const auto info = expect_exchange(spec, power_law(size, 12, 3), 16);
      EXPECT_EQ(info.algorithm, spec);
    }
}

// Zhuang case 4: every rank sends everything to one destination (the serial chain for
// the pairwise algorithm), with totals that differ per rank.
TEST(Inplace, EverythingToOneDestinationWithUnequalTotals) {
  const int size = size_of(world());
  Matrix m(size, std::vector<std::int64_t>(size, 0));
  for (int i = 0; i < size; ++i) m[i][(i + size - 1) % size] = 3 + 5 * i;
  for (const char* algorithm : kAlgorithms) expect_exchange(algorithm, m, 4);
}

TEST(Inplace, NothingToExchange) {
  const int size = size_of(world());
  const Matrix m(size, std::vector<std::int64_t>(size, 0));
  for (const char* algorithm : kAlgorithms) expect_exchange(algorithm, m, 8);
}

TEST(Inplace, ExtraMemoryIsTheChunkAndMetadata) {
  const int size = size_of(world());
  for (const char* algorithm : kAlgorithms) {
    const auto info =
        expect_exchange(std::string(algorithm) + ":chunk_bytes=256", uniform(size, 40, 9), 16);
    const std::int64_t runs_bytes = 3 * info.peak_runs * 24;
    EXPECT_LE(info.peak_temp_bytes, 256 + 4 * size * 8 + runs_bytes);
    EXPECT_GT(info.peak_temp_bytes, 0);
  }
}

TEST(Inplace, TypedFormAndCApi) {
  MPI_Comm comm = world();
  const int rank = rank_of(comm), size = size_of(comm);
  // Rank i sends i + j + 1 doubles to rank j, valued 1000 i + j.
  std::vector<MPI_Count> counts(size);
  std::int64_t capacity = 0;
  for (int i = 0; i < size; ++i) {
    std::int64_t row = 0, col = 0;
    for (int j = 0; j < size; ++j) row += i + j + 1, col += j + i + 1;
    capacity = std::max({capacity, row, col});
  }
  std::vector<double> buf(capacity);
  std::size_t at = 0;
  for (int j = 0; j < size; ++j) {
    counts[j] = rank + j + 1;
    for (MPI_Count k = 0; k < counts[j]; ++k) buf[at++] = 1000.0 * rank + j;
  }
  auto c_buf = buf;
  const auto received = exchange_inplace(std::span<double>(buf), counts, comm);
  std::vector<MPI_Count> c_received(size);
  ASSERT_EQ(A2AV_Exchange_inplace(c_buf.data(), capacity, counts.data(), c_received.data(),
                                  MPI_DOUBLE, comm, nullptr),
            A2AV_SUCCESS);
  EXPECT_EQ(received, c_received);
  at = 0;
  for (int i = 0; i < size; ++i) {
    ASSERT_EQ(received[i], i + rank + 1);
    for (MPI_Count k = 0; k < received[i]; ++k, ++at) {
      EXPECT_EQ(buf[at], 1000.0 * i + rank);
      EXPECT_EQ(c_buf[at], 1000.0 * i + rank);
    }
  }
  EXPECT_NE(std::string(A2AV_Last_algorithm()).find("inplace_"), std::string::npos);
}

// ---- errors: every rank returns the same code, and the buffer is as it was ----

struct ErrorCase {
  std::vector<unsigned char> buf, before;
  std::vector<MPI_Count> counts;
  std::int64_t capacity = 0;
};

ErrorCase uniform_case(int elem) {
  const int rank = rank_of(world()), size = size_of(world());
  const Matrix m = uniform(size, 5, 21);
  ErrorCase c;
  c.capacity = needed_length(m);
  c.buf.assign(static_cast<std::size_t>(c.capacity * elem), kPoison);
  const auto send = send_data(m, rank, elem);
  std::copy(send.begin(), send.end(), c.buf.begin());
  c.before = c.buf;
  c.counts.assign(m[rank].begin(), m[rank].end());
  return c;
}

void expect_error_everywhere(int rc, int code, const ErrorCase& c) {
  EXPECT_EQ(rc, code) << A2AV_Last_error_message();
  EXPECT_NE(std::string(A2AV_Last_error_message()), "");
  EXPECT_EQ(c.buf, c.before) << "the buffer changed on a failed call";
}

TEST(InplaceErrors, CapacityTooSmallOnOneRank) {
  const int rank = rank_of(world()), size = size_of(world());
  ErrorCase c = uniform_case(1);
  const std::int64_t capacity = rank == size - 1 ? c.capacity - 1 : c.capacity;
  const int rc = A2AV_Exchange_inplace(c.buf.data(), capacity, c.counts.data(), nullptr, MPI_BYTE,
                                       world(), "inplace_bitonic");
  expect_error_everywhere(rc, A2AV_ERR_CAPACITY, c);
}

TEST(InplaceErrors, ChunkSmallerThanOneElement) {
  ErrorCase c = uniform_case(16);
  MPI_Datatype type = element_type(16);
  const int rc = A2AV_Exchange_inplace(c.buf.data(), c.capacity, c.counts.data(), nullptr, type,
                                       world(), "inplace_pairwise:chunk_bytes=15");
  expect_error_everywhere(rc, A2AV_ERR_ALGORITHM, c);
  EXPECT_NE(std::string(A2AV_Last_error_message()).find("smaller than one element"),
            std::string::npos);
  MPI_Type_free(&type);
}

TEST(InplaceErrors, UnknownAlgorithmOrParameter) {
  for (const char* spec :
       {"inplace_quick", "inplace_bitonic:radix=2", "inplace_auto:chunk_bytes=0", "tuna"}) {
    ErrorCase c = uniform_case(1);
    const int rc = A2AV_Exchange_inplace(c.buf.data(), c.capacity, c.counts.data(), nullptr,
                                         MPI_BYTE, world(), spec);
    expect_error_everywhere(rc, A2AV_ERR_ALGORITHM, c);
  }
}

TEST(InplaceErrors, NegativeCountOnOneRank) {
  const int rank = rank_of(world());
  ErrorCase c = uniform_case(1);
  if (rank == 0) c.counts.back() = -1;
  const int rc = A2AV_Exchange_inplace(c.buf.data(), c.capacity, c.counts.data(), nullptr, MPI_BYTE,
                                       world(), nullptr);
  expect_error_everywhere(rc, A2AV_ERR_ARG, c);
}

TEST(InplaceErrors, TypeWithGaps) {
  ErrorCase c = uniform_case(1);
  MPI_Datatype gappy;
  MPI_Type_vector(1, 1, 2, MPI_INT, &gappy);
  MPI_Datatype resized;
  MPI_Type_create_resized(gappy, 0, 8, &resized);
  MPI_Type_commit(&resized);
  const int rc = A2AV_Exchange_inplace(c.buf.data(), c.capacity / 8, c.counts.data(), nullptr,
                                       resized, world(), nullptr);
  expect_error_everywhere(rc, A2AV_ERR_DATATYPE, c);
  MPI_Type_free(&resized);
  MPI_Type_free(&gappy);
}

TEST(InplaceErrors, RanksNamingDifferentAlgorithms) {
  const int rank = rank_of(world()), size = size_of(world());
  if (size == 1) GTEST_SKIP() << "needs two ranks";
  ErrorCase c = uniform_case(1);
  const int rc = A2AV_Exchange_inplace(c.buf.data(), c.capacity, c.counts.data(), nullptr, MPI_BYTE,
                                       world(), rank == 0 ? "inplace_bitonic" : "inplace_pairwise");
  expect_error_everywhere(rc, A2AV_ERR_ALGORITHM, c);
}

}  // namespace
}  // namespace a2av::test
