#include "harness.hpp"

#include "alltoallv/registry.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <random>
#include <set>

namespace a2av::test {

int rank_of(MPI_Comm comm) {
  int r = 0;
  MPI_Comm_rank(comm, &r);
  return r;
}
int size_of(MPI_Comm comm) {
  int s = 0;
  MPI_Comm_size(comm, &s);
  return s;
}

namespace {
MPI_Comm tested = MPI_COMM_WORLD;
}  // namespace

MPI_Comm world() {
  return tested;
}
void set_world(MPI_Comm comm) {
  tested = comm;
}

namespace {

Matrix filled(int size, auto cell) {
  Matrix m(size, std::vector<std::int64_t>(size));
  for (int i = 0; i < size; ++i)
    for (int j = 0; j < size; ++j) m[i][j] = cell(i, j);
  return m;
}

}  // namespace

Matrix uniform(int size, std::int64_t max, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  return filled(size, [&](int, int) { return static_cast<std::int64_t>(rng() % (max + 1)); });
}

Matrix normal(int size, std::int64_t mean, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> dist(static_cast<double>(mean), mean / 4.0);
  return filled(size, [&](int, int) { return std::max<std::int64_t>(0, std::llround(dist(rng))); });
}

Matrix power_law(int size, std::int64_t max, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  return filled(size, [&](int, int) {
    const double u = (rng() >> 11) * 0x1.0p-53;  // [0, 1)
    return static_cast<std::int64_t>(static_cast<double>(max) * std::pow(u, 4.0));
  });
}

Matrix zero_rows_cols(int size, std::int64_t max, std::uint64_t seed) {
  Matrix m = uniform(size, max, seed);
  for (int k = 0; k < size; ++k) {
    if (k % 3 == 1) std::fill(m[k].begin(), m[k].end(), 0);  // sends nothing
    if (k % 3 == 2)
      for (auto& row : m) row[k] = 0;  // receives nothing
  }
  return m;
}

Matrix one_hot(int size, std::int64_t max, std::uint64_t seed) {
  const int hot = static_cast<int>(seed % size);
  return filled(size, [&](int, int j) { return j == hot ? max : 0; });
}

Matrix one_holder(int size, std::int64_t max, std::uint64_t seed) {
  const int holder = static_cast<int>((seed / 7) % size);
  return filled(size, [&](int i, int) { return i == holder ? max : 0; });
}

const std::vector<Generator>& generators() {
  static const std::vector<Generator> all = {
      {"uniform", uniform},     {"normal", normal},
      {"power_law", power_law}, {"zero_rows_cols", zero_rows_cols},
      {"one_hot", one_hot},     {"one_holder", one_holder},
  };
  return all;
}

int emulated_node_size() {
  const char* emulated = std::getenv("A2AV_EMULATE_NODES");
  return emulated ? std::max(0, std::atoi(emulated)) : 0;
}

bool one_node(int size) {
  const int q = emulated_node_size();
  return q == 0 || q >= size;
}

// Every algorithm's representative specs (its descriptor's test_specs), on the launches
// they suit; "{radix}" stands for each radix of the sweep (2, 3, ceil(sqrt P), P-1, P, P+5).
std::vector<std::string> specs_for(int size) {
  const int root = static_cast<int>(std::ceil(std::sqrt(static_cast<double>(size))));
  const std::set<int> radices = {
      2, 3, std::max(2, root), std::max(2, size - 1), std::max(2, size), size + 5};
  const Nodes launch = one_node(size) ? Nodes::one : Nodes::several;
  std::vector<std::string> specs;
  for (const AlgorithmDescriptor* a : algorithm_table()) {
    if (a->one_node_only && launch != Nodes::one) continue;
    for (const TestSpec& t : a->test_specs) {
      if (t.nodes != Nodes::any && t.nodes != launch) continue;
      const auto at = t.spec.find("{radix}");
      if (at == std::string::npos) {
        specs.push_back(t.spec);
        continue;
      }
      for (int r : radices) specs.push_back(std::string(t.spec).replace(at, 7, std::to_string(r)));
    }
  }
  return specs;
}

Layout layout_for(const Matrix& counts, int rank, std::uint64_t seed) {
  const int size = static_cast<int>(counts.size());
  Layout l;
  std::mt19937_64 rng(seed * 7919 + rank);
  auto place = [&](auto count_of, std::vector<MPI_Count>& c, std::vector<MPI_Aint>& d,
                   std::int64_t& extent) {
    std::vector<int> order(size);
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), rng);
    c.assign(size, 0);
    d.assign(size, 0);
    std::int64_t at = static_cast<std::int64_t>(rng() % 3);
    for (int peer : order) {
      c[peer] = count_of(peer);
      d[peer] = at;
      at += c[peer] + static_cast<std::int64_t>(rng() % 3);  // gaps between blocks
    }
    extent = at;
  };
  place([&](int peer) { return counts[rank][peer]; }, l.sendcounts, l.sdispls, l.send_extent);
  place([&](int peer) { return counts[peer][rank]; }, l.recvcounts, l.rdispls, l.recv_extent);
  return l;
}

int vendor_alltoallv(const void* send, const Layout& l, MPI_Datatype type, void* recv,
                     MPI_Comm comm) {
  const int size = size_of(comm);
  std::vector<int> sc(size), sd(size), rc(size), rd(size);
  for (int p = 0; p < size; ++p) {
    sc[p] = static_cast<int>(l.sendcounts[p]);
    sd[p] = static_cast<int>(l.sdispls[p]);
    rc[p] = static_cast<int>(l.recvcounts[p]);
    rd[p] = static_cast<int>(l.rdispls[p]);
  }
  return MPI_Alltoallv(send, sc.data(), sd.data(), type, recv, rc.data(), rd.data(), type, comm);
}

int in_flight_bound(const std::string& spec) {
  const auto key = spec.find("in_flight=");
  if (key != std::string::npos) return std::atoi(spec.c_str() + key + 10);
  const char* env = std::getenv("A2AV_MAX_IN_FLIGHT");
  return env && *env ? std::max(8, std::atoi(env)) : 64;  // the documented range and default
}

std::int64_t expect_same_as_vendor(const std::string& spec, const Matrix& counts, MPI_Comm comm,
                                   std::uint64_t seed, int elem_bytes, Bases bases) {
  const int me = rank_of(comm), size = size_of(comm);
  const Layout l = layout_for(counts, me, seed);
  // At the buffers' ends, every displacement is negative or zero: the same bytes.
  const bool at_ends = bases == Bases::at_ends;
  Layout passed = l;
  for (int peer = 0; at_ends && peer < size; ++peer) {
    passed.sdispls[peer] -= l.send_extent;
    passed.rdispls[peer] -= l.recv_extent;
  }
  const std::int64_t send_base = at_ends ? l.send_extent * elem_bytes : 0;
  const std::int64_t recv_base = at_ends ? l.recv_extent * elem_bytes : 0;
  MPI_Datatype type;
  MPI_Type_contiguous(elem_bytes, MPI_BYTE, &type);
  MPI_Type_commit(&type);

  std::vector<unsigned char> send(l.send_extent * elem_bytes, 0x5A);
  for (int peer = 0; peer < size; ++peer)
    for (std::int64_t b = 0; b < l.sendcounts[peer] * elem_bytes; ++b)
      send[l.sdispls[peer] * elem_bytes + b] = pattern(me, peer, b);
  const auto send_before = send;
  std::vector<unsigned char> got(l.recv_extent * elem_bytes, kPoison), want = got;

  EXPECT_EQ(vendor_alltoallv(send.data() + send_base, passed, type, want.data() + recv_base, comm),
            MPI_SUCCESS);
  const int rc_a2av = A2AV_Alltoallv_with(
      spec.c_str(), send.data() + send_base, passed.sendcounts.data(), passed.sdispls.data(), type,
      got.data() + recv_base, passed.recvcounts.data(), passed.rdispls.data(), type, comm);
  MPI_Type_free(&type);
  EXPECT_EQ(rc_a2av, A2AV_SUCCESS)
      << spec << " on rank " << me << ": " << A2AV_Last_error_message();
  EXPECT_TRUE(send == send_before) << spec << ": the send buffer changed on rank " << me;
  std::int64_t first_diff = -1;
  for (std::size_t i = 0; i < got.size() && first_diff < 0; ++i)
    if (got[i] != want[i]) first_diff = static_cast<std::int64_t>(i);
  EXPECT_EQ(first_diff, -1) << spec << ": rank " << me << " differs from vendor at byte "
                            << first_diff;
  std::int64_t pattern_errors = 0;
  for (int peer = 0; peer < size; ++peer)
    for (std::int64_t b = 0; b < l.recvcounts[peer] * elem_bytes; ++b)
      pattern_errors += got[l.rdispls[peer] * elem_bytes + b] != pattern(peer, me, b);
  EXPECT_EQ(pattern_errors, 0) << spec << ": rank " << me << " received wrong bytes";
  const std::string ran = A2AV_Last_algorithm();
  if (a2av::parse_spec(ran).algorithm->bounds_in_flight) {
    EXPECT_LE(A2AV_Last_in_flight(), in_flight_bound(spec))
        << spec << " (ran " << ran << "): more requests in flight than the bound on rank " << me;
  }
  return A2AV_Last_peak_bytes();
}

}  // namespace a2av::test
