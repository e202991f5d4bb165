// The textbook collectives (a2av/collectives.hpp) against the vendor MPI collective of the
// same name, byte for byte: every algorithm and auto, roots 0, P/2 and P-1, sizes from 0 to
// 1 MiB, datatypes with holes and a non-zero true lower bound, built-in and user operators,
// a non-commutative one included (all algorithms claim operand order). Receive buffers are
// poisoned alike for both, so gaps must stay untouched; send buffers must stay unchanged.
// Values are integers (doubles too), so every sum is exact and results must be identical.
#include "harness.hpp"

#include <a2av/collectives.hpp>

#include <algorithm>
#include <cstring>
#include <functional>
#include <set>

namespace a2av::test {
namespace {

using coll::Algorithm;
using coll::Collective;

struct Affine {  // x -> a x + b over integers mod 2^64
  std::uint64_t a, b;
};
// Apply f, then g: composition is associative but not commutative.
struct Compose {
  Affine operator()(const Affine& f, const Affine& g) const { return {f.a * g.a, f.b * g.a + g.b}; }
};
// Compose on the strided type, 32-bit maps in ints 0 and 3 of each 16-byte element: a
// non-commutative operator on a type with holes, which MPI's built-in operators reject.
void compose_strided(void* in, void* inout, int* length, MPI_Datatype*) {
  const auto* f = static_cast<const std::uint32_t*>(in);
  auto* g = static_cast<std::uint32_t*>(inout);
  for (int e = 0; e < *length; ++e, f += 4, g += 4) {
    g[3] = f[3] * g[0] + g[3];
    g[0] = f[0] * g[0];
  }
}

struct SumMod1000 {
  int operator()(int x, int y) const { return (x + y) % 1000; }
};

// A datatype and how to fill a buffer of it with valid values.
struct Kind {
  std::string name;
  MPI_Datatype type;
  bool doubles = false;  // fill as integer-valued doubles, else as 32-bit ints
  MPI_Aint extent = 0;
};

MPI_Datatype committed(MPI_Datatype t) {
  MPI_Type_commit(&t);
  return t;
}

// Two ints with two-int holes between them (extent 16 bytes, size 8).
MPI_Datatype strided_type() {
  MPI_Datatype t;
  MPI_Type_vector(2, 1, 3, MPI_INT, &t);
  return committed(t);
}

// Two ints at byte 8 of a 20-byte element: true lower bound 8, holes before and after.
MPI_Datatype shifted_type() {
  int length = 2;
  MPI_Aint at = 8;
  MPI_Datatype inner, t;
  MPI_Type_create_hindexed(1, &length, &at, MPI_INT, &inner);
  MPI_Type_create_resized(inner, 0, 20, &t);
  MPI_Type_free(&inner);
  return committed(t);
}

Kind make_kind(std::string name, MPI_Datatype type, bool doubles = false) {
  MPI_Aint lb = 0, extent = 0;
  MPI_Type_get_extent(type, &lb, &extent);
  return {std::move(name), type, doubles, extent};
}

const std::vector<Kind>& kinds() {
  static const std::vector<Kind> all{
      make_kind("int", MPI_INT), make_kind("double", MPI_DOUBLE, true),
      make_kind("strided", strided_type()), make_kind("shifted", shifted_type()),
      make_kind("affine", mpi_type<Affine>())};
  return all;
}
const Kind& kind(const std::string& name) {
  for (const Kind& k : kinds())
    if (k.name == name) return k;
  throw std::logic_error(name);
}

using Bytes = std::vector<unsigned char>;

// count elements of values in [0, 500] (affine: any 64-bit words), by rank and salt.
Bytes filled(const Kind& k, std::int64_t count, int rank, int salt) {
  Bytes data(static_cast<std::size_t>(count * k.extent + 8));
  std::uint64_t state = 0x9E3779B97F4A7C15ull * (rank + 1) + salt;
  for (std::size_t at = 0; at + 8 <= data.size(); at += 8) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    const std::int32_t v[2] = {static_cast<std::int32_t>(state >> 33) % 501,
                               static_cast<std::int32_t>(state >> 40) % 501};
    if (k.name == "affine") {
      std::memcpy(&data[at], &state, 8);
    } else if (k.doubles) {
      const double d = v[0];
      std::memcpy(&data[at], &d, 8);
    } else {
      std::memcpy(&data[at], v, 8);
    }
  }
  return data;
}

Bytes poisoned(const Kind& k, std::int64_t count) {
  return Bytes(static_cast<std::size_t>(count * k.extent + 8), kPoison);
}

std::vector<int> roots(int size) {
  std::set<int> r{0, size / 2, size - 1};
  return {r.begin(), r.end()};
}

// Element counts per rank (vector or block) from 0 up to 1 MiB of data in all, for `kind`;
// blocks shrink with P so that P blocks stay within 1 MiB.
std::vector<std::int64_t> counts_for(const Kind& k, int blocks) {
  std::vector<std::int64_t> counts{0, 1, 3, 100};
  const std::int64_t big = (k.name == "int" ? 1 << 20 : 1 << 16) / (k.extent * blocks);
  if (big > 100) counts.push_back(big);
  return counts;
}

std::vector<Algorithm> with_auto(Collective c) {
  auto all = coll::algorithms(c);
  all.push_back(Algorithm::automatic);
  return all;
}

// Runs ours and vendor on copies of the same buffers and compares what they leave behind.
void expect_same(const std::string& what, const Bytes& send, const Bytes& recv_poison,
                 const std::function<void(const void*, void*)>& ours,
                 const std::function<void(const void*, void*)>& vendor) {
  Bytes got = recv_poison, want = recv_poison;
  vendor(send.data(), want.data());
  const Bytes before = send;
  try {
    ours(send.data(), got.data());
  } catch (const Error& e) {
    ADD_FAILURE() << what << ": " << e.what();
    return;
  }
  EXPECT_TRUE(send == before) << what << ": send buffer changed";
  const auto diff = std::mismatch(got.begin(), got.end(), want.begin());
  EXPECT_TRUE(diff.first == got.end())
      << what << ": rank " << rank_of(world()) << " differs from vendor at byte "
      << (diff.first - got.begin()) << " of " << got.size();
}

std::string label(Collective c, Algorithm a, const Kind& k, std::int64_t count, int root = -1) {
  std::string text = std::string(coll::name(c)) + ":" + std::string(coll::name(a)) + " " + k.name +
                     " count " + std::to_string(count);
  return root >= 0 ? text + " root " + std::to_string(root) : text;
}

class Collectives : public testing::Test {
 protected:
  MPI_Comm comm = world();
  int me = rank_of(world()), size = size_of(world());
};

TEST_F(Collectives, Bcast) {
  for (const Kind& k : kinds())
    for (std::int64_t n : counts_for(k, 1))
      for (int root : roots(size))
        for (Algorithm a : with_auto(Collective::bcast)) {
          // bcast works in place: the "send" is what the root holds, the rest is poison.
          const Bytes start = me == root ? filled(k, n, root, 1) : poisoned(k, n);
          expect_same(
              label(Collective::bcast, a, k, n, root), {}, start,
              [&](const void*, void* buf) { coll::bcast(buf, n, k.type, root, comm, a); },
              [&](const void*, void* buf) {
                MPI_Bcast(buf, static_cast<int>(n), k.type, root, comm);
              });
        }
}

TEST_F(Collectives, ScatterAndGather) {
  for (const Kind& k : kinds())
    for (std::int64_t n : counts_for(k, size))
      for (int root : roots(size))
        for (Algorithm a : with_auto(Collective::scatter)) {
          const int in = static_cast<int>(n);
          expect_same(
              label(Collective::scatter, a, k, n, root), filled(k, n * size, me, 2), poisoned(k, n),
              [&](const void* s, void* r) { coll::scatter(s, r, n, k.type, root, comm, a); },
              [&](const void* s, void* r) {
                MPI_Scatter(s, in, k.type, r, in, k.type, root, comm);
              });
          expect_same(
              label(Collective::gather, a, k, n, root), filled(k, n, me, 3), poisoned(k, n * size),
              [&](const void* s, void* r) { coll::gather(s, r, n, k.type, root, comm, a); },
              [&](const void* s, void* r) {
                MPI_Gather(s, in, k.type, r, in, k.type, root, comm);
              });
        }
}

TEST_F(Collectives, AllgatherAndAlltoall) {
  for (const Kind& k : kinds())
    for (std::int64_t n : counts_for(k, size)) {
      const int in = static_cast<int>(n);
      for (Algorithm a : with_auto(Collective::allgather))
        expect_same(
            label(Collective::allgather, a, k, n), filled(k, n, me, 4), poisoned(k, n * size),
            [&](const void* s, void* r) { coll::allgather(s, r, n, k.type, comm, a); },
            [&](const void* s, void* r) { MPI_Allgather(s, in, k.type, r, in, k.type, comm); });
      for (Algorithm a : with_auto(Collective::alltoall))
        expect_same(
            label(Collective::alltoall, a, k, n), filled(k, n * size, me, 5), poisoned(k, n * size),
            [&](const void* s, void* r) { coll::alltoall(s, r, n, k.type, comm, a); },
            [&](const void* s, void* r) { MPI_Alltoall(s, in, k.type, r, in, k.type, comm); });
    }
}

struct Reduction {
  std::string kind;
  MPI_Op op;
  std::string op_name;
};

// Built-in operators on built-in types, a commutative user operator and non-commutative
// ones on a contiguous and a strided type.
class Reductions : public Collectives {
 protected:
  coll::UserOp<Affine, Compose> compose{false};
  coll::UserOp<int, SumMod1000> sum_mod{true};
  MPI_Op strided_compose = [] {
    MPI_Op op;
    MPI_Op_create(&compose_strided, 0, &op);
    return op;
  }();
  ~Reductions() override { MPI_Op_free(&strided_compose); }
  std::vector<Reduction> cases{
      {"int", MPI_SUM, "sum"},        {"int", MPI_MAX, "max"},
      {"int", MPI_BXOR, "bxor"},      {"double", MPI_SUM, "sum"},
      {"double", MPI_MIN, "min"},     {"strided", strided_compose, "compose"},
      {"int", sum_mod.get(), "user"}, {"affine", compose.get(), "compose"}};
};

TEST_F(Reductions, ReduceAndAllreduce) {
  for (const Reduction& r : cases) {
    const Kind& k = kind(r.kind);
    // Vectors up to 1 MiB / P: every operation and algorithm, in little time at 16 ranks.
    for (std::int64_t n : counts_for(k, size)) {
      const int in = static_cast<int>(n);
      const std::string what = r.op_name + " ";
      for (int root : roots(size))
        for (Algorithm a : with_auto(Collective::reduce))
          expect_same(
              what + label(Collective::reduce, a, k, n, root), filled(k, n, me, 6), poisoned(k, n),
              [&](const void* s, void* b) { coll::reduce(s, b, n, k.type, r.op, root, comm, a); },
              [&](const void* s, void* b) { MPI_Reduce(s, b, in, k.type, r.op, root, comm); });
      for (Algorithm a : with_auto(Collective::allreduce))
        expect_same(
            what + label(Collective::allreduce, a, k, n), filled(k, n, me, 7), poisoned(k, n),
            [&](const void* s, void* b) { coll::allreduce(s, b, n, k.type, r.op, comm, a); },
            [&](const void* s, void* b) { MPI_Allreduce(s, b, in, k.type, r.op, comm); });
    }
  }
}

// Ranks renumbered in reverse: the operand order follows the sub-communicator's ranks.
TEST_F(Reductions, ReversedSubcommunicatorAndTypedForms) {
  MPI_Comm reversed;
  MPI_Comm_split(world(), 0, size - me, &reversed);
  const int rme = rank_of(reversed);
  const std::vector<Affine> mine{{2u * rme + 3, 5u + rme}, {7u, 1u * rme}};
  for (Algorithm a : with_auto(Collective::allreduce)) {
    const auto got = coll::allreduce<Affine>(mine, compose.get(), reversed, a);
    std::vector<Affine> want(2);
    MPI_Allreduce(mine.data(), want.data(), 2, mpi_type<Affine>(), compose.get(), reversed);
    EXPECT_EQ(0, std::memcmp(got.data(), want.data(), sizeof(Affine) * 2)) << coll::name(a);
  }
  std::vector<int> block{rme, 10 * rme};
  const auto gathered = coll::allgather<int>(block, reversed);
  for (int i = 0; i < size; ++i) {
    EXPECT_EQ(gathered[2 * i], i);
    EXPECT_EQ(gathered[2 * i + 1], 10 * i);
  }
  std::vector<int> data(3, rme == size - 1 ? 42 : -1);
  coll::bcast<int>(data, size - 1, reversed, Algorithm::scatter_allgather);
  EXPECT_EQ(data, std::vector<int>(3, 42));
  std::vector<int> to_each(size);
  for (int j = 0; j < size; ++j) to_each[j] = 100 * rme + j;
  const auto from_each = coll::alltoall<int>(to_each, reversed, Algorithm::bruck);
  for (int i = 0; i < size; ++i) EXPECT_EQ(from_each[i], 100 * i + rme);
  MPI_Comm_free(&reversed);
}

int error_code(const std::function<void()>& call) {
  try {
    call();
  } catch (const Error& e) {
    return e.code();
  }
  return A2AV_SUCCESS;
}

TEST_F(Collectives, Errors) {
  int x[2] = {1, 2}, y[2] = {};
  EXPECT_EQ(error_code([&] { coll::bcast(x, 2, MPI_INT, size, comm); }), A2AV_ERR_ARG);
  EXPECT_EQ(error_code([&] { coll::bcast(x, -1, MPI_INT, 0, comm); }), A2AV_ERR_ARG);
  EXPECT_EQ(error_code([&] { coll::bcast(x, 2, MPI_DATATYPE_NULL, 0, comm); }), A2AV_ERR_DATATYPE);
  EXPECT_EQ(error_code([&] { coll::bcast(x, 2, MPI_INT, 0, comm, Algorithm::bruck); }),
            A2AV_ERR_ALGORITHM);
  EXPECT_EQ(error_code([&] { coll::allreduce(MPI_IN_PLACE, y, 2, MPI_INT, MPI_SUM, comm); }),
            A2AV_ERR_ARG);
  EXPECT_EQ(error_code([&] { coll::allreduce(x, y, 2, MPI_INT, MPI_OP_NULL, comm); }),
            A2AV_ERR_ARG);
  EXPECT_EQ(error_code([&] { coll::parse_algorithm("hypercube"); }), A2AV_ERR_ALGORITHM);
  EXPECT_EQ(coll::parse_algorithm("auto"), Algorithm::automatic);
  EXPECT_EQ(coll::parse_collective("allgather"), Collective::allgather);
  EXPECT_TRUE(y[0] == 0 && y[1] == 0);
}

// Temporary memory is accounted per call: a reduction needs room for a partner's vector
// (Rabenseifner: at most the whole vector), a broadcast of a contiguous type none.
TEST_F(Collectives, TemporaryMemoryIsAccounted) {
  std::vector<int> x(1000, 1), y(1000);
  coll::allreduce(x.data(), y.data(), 1000, MPI_INT, MPI_SUM, comm, Algorithm::rabenseifner);
  EXPECT_EQ(y[999], size);
  const std::int64_t vector_bytes = 1000 * sizeof(int);
  if (size > 1) {
    EXPECT_GT(coll::last_peak_temp_bytes(), 0);
  }
  EXPECT_LE(coll::last_peak_temp_bytes(), 2 * vector_bytes);
  coll::bcast(x.data(), 1000, MPI_INT, 0, comm, Algorithm::binomial);
  EXPECT_EQ(coll::last_peak_temp_bytes(), 0);
}

// The model is the lecture's formulas; auto picks an implemented algorithm.
TEST(CollectiveModel, LectureFormulas) {
  const coll::Machine m{1e-6, 1e-9, 0};
  EXPECT_DOUBLE_EQ(coll::predict(Collective::bcast, Algorithm::binomial, 8, 1000, m),
                   3 * (1e-6 + 1000 * 1e-9));
  EXPECT_DOUBLE_EQ(coll::predict(Collective::alltoall, Algorithm::exchange, 5, 100, m),
                   4 * (1e-6 + 100 * 1e-9));
  EXPECT_DOUBLE_EQ(coll::predict(Collective::scatter, Algorithm::binomial, 8, 100, m),
                   3e-6 + 7 * 100 * 1e-9);
  // Long messages: van de Geijn beats the tree, as the lecture says.
  EXPECT_LT(coll::predict(Collective::bcast, Algorithm::scatter_allgather, 16, 1 << 20, m),
            coll::predict(Collective::bcast, Algorithm::binomial, 16, 1 << 20, m));
  for (int c = 0; c <= static_cast<int>(Collective::alltoall); ++c)
    for (std::int64_t bytes : {8, 1 << 20}) {
      const auto collective = static_cast<Collective>(c);
      const auto valid = coll::algorithms(collective);
      EXPECT_NE(std::find(valid.begin(), valid.end(), coll::choose(collective, 16, bytes, bytes)),
                valid.end());
    }
}

}  // namespace
}  // namespace a2av::test
