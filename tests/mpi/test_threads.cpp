// Threads (docs/design.md, "Threads"): under MPI_THREAD_MULTIPLE, kThreads threads of every
// rank, each on its own communicator, call a2av at the same time: alltoallv under every
// algorithm, the nonblocking alltoallv, the typed C++ form (a byte type per element size), the
// sparse exchange and the in-place exchange, and now and then a call with an unknown
// algorithm. Every result is checked byte for byte against the
// pattern each rank can compute for every other, and the A2AV_Last_* queries against what the same
// thread's call reported through the C++ API just before (the same exchange, its info). Halfway,
// every thread swaps its communicator for a duplicate and frees the old one, two nonblocking
// exchanges still pending on it, while the others run.
// A plain main: failures are printed, and the exit status is non-zero.
#include <a2av/a2av.h>
#include <a2av/alltoallv.hpp>
#include <a2av/inplace.hpp>
#include <a2av/sparse.hpp>

#include <mpi.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace {

constexpr int kThreads = 6;
constexpr int kIterations = 200;
constexpr int kErrorEvery = 25;  // one call in this many names an unknown algorithm
constexpr unsigned char kPoison = 0xA5;

std::atomic<int> failures{0};
std::mutex print_mutex;

// One exchange, as every rank derives it alike.
struct Round {
  int thread;
  int iteration;
  int rank;
  int size;
};

template <class... Args>
void report(const Round& r, const char* format, Args... args) {
  failures.fetch_add(1);
  const std::lock_guard lock(print_mutex);
  std::fprintf(stderr, "FAIL rank %d thread %d iteration %d: ", r.rank, r.thread, r.iteration);
  std::fprintf(stderr, format, args...);
  std::fputc('\n', stderr);
}

std::uint64_t mix(std::uint64_t x) {  // splitmix64
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

std::uint64_t hash(const Round& r, std::uint64_t a, std::uint64_t b) {
  return mix(mix(mix(static_cast<std::uint64_t>(r.thread) * 1000 + r.iteration) + a) + b);
}

// Bytes rank src sends rank dst: about a quarter empty, the rest up to 8 * (thread + 1), so
// that threads differ in their peak bytes.
std::int64_t block_bytes(const Round& r, int src, int dst) {
  const std::uint64_t h = hash(r, src, dst);
  return h % 4 == 0 ? 0 : static_cast<std::int64_t>(h / 4 % (8 * (r.thread + 1) + 1));
}

unsigned char content(const Round& r, int src, int dst, std::int64_t b) {
  return static_cast<unsigned char>(src * 131 + dst * 31 + b * 7 + r.thread * 17 + r.iteration);
}

// Whether the calling thread's A2AV_Last_* report what `expected` says the exchange did.
void expect_last(const Round& r, const char* what, std::string_view algorithm,
                 std::int64_t peak_bytes) {
  if (*A2AV_Last_error_message())
    report(r, "%s: A2AV_Last_error_message is \"%s\" after a success", what,
           A2AV_Last_error_message());
  if (A2AV_Last_algorithm() != algorithm)
    report(r, "%s: A2AV_Last_algorithm is \"%s\", the call ran \"%.*s\"", what,
           A2AV_Last_algorithm(), static_cast<int>(algorithm.size()), algorithm.data());
  if (A2AV_Last_peak_bytes() != peak_bytes)
    report(r, "%s: A2AV_Last_peak_bytes is %lld, the call's peak was %lld", what,
           static_cast<long long>(A2AV_Last_peak_bytes()), static_cast<long long>(peak_bytes));
}

// --- alltoallv ----------------------------------------------------------------------------

// This rank's counts and displacements: blocks in reverse rank order with a byte of gap
// before each, so that displacements are neither packed nor in rank order.
struct Layout {
  std::vector<MPI_Count> sendcounts, recvcounts;
  std::vector<MPI_Aint> sdispls, rdispls;
  std::int64_t send_extent = 0, recv_extent = 0;
};

Layout layout_for(const Round& r) {
  Layout l;
  l.sendcounts.resize(r.size), l.recvcounts.resize(r.size);
  l.sdispls.resize(r.size), l.rdispls.resize(r.size);
  for (int peer = r.size - 1; peer >= 0; --peer) {
    l.sendcounts[peer] = block_bytes(r, r.rank, peer);
    l.recvcounts[peer] = block_bytes(r, peer, r.rank);
    l.sdispls[peer] = l.send_extent + 1;
    l.rdispls[peer] = l.recv_extent + 1;
    l.send_extent += 1 + l.sendcounts[peer];
    l.recv_extent += 1 + l.recvcounts[peer];
  }
  return l;
}

std::vector<unsigned char> send_data(const Round& r, const Layout& l) {
  std::vector<unsigned char> send(l.send_extent, kPoison);
  for (int peer = 0; peer < r.size; ++peer)
    for (std::int64_t b = 0; b < l.sendcounts[peer]; ++b)
      send[l.sdispls[peer] + b] = content(r, r.rank, peer, b);
  return send;
}

// The receive buffer MPI_Alltoallv leaves: every block's pattern, the gaps untouched.
std::vector<unsigned char> expected_receive(const Round& r, const Layout& l) {
  std::vector<unsigned char> recv(l.recv_extent, kPoison);
  for (int peer = 0; peer < r.size; ++peer)
    for (std::int64_t b = 0; b < l.recvcounts[peer]; ++b)
      recv[l.rdispls[peer] + b] = content(r, peer, r.rank, b);
  return recv;
}

void check_buffer(const Round& r, const char* what, const std::vector<unsigned char>& got,
                  const std::vector<unsigned char>& expected) {
  const auto [at, _] = std::mismatch(got.begin(), got.end(), expected.begin());
  if (at != got.end())
    report(r, "%s: byte %td is %d, expected %d", what, at - got.begin(), *at,
           expected[at - got.begin()]);
}

// The exchange through the C++ API (what it did: info), then through the C API, whose
// A2AV_Last_* must tell the same.
void run_alltoallv(const Round& r, MPI_Comm comm, const std::string& spec) {
  const Layout l = layout_for(r);
  const std::vector<unsigned char> send = send_data(r, l), expected = expected_receive(r, l);
  std::vector<unsigned char> recv(l.recv_extent, kPoison);
  a2av::CallInfo info;
  a2av::alltoallv(send.data(), l.sendcounts, l.sdispls, MPI_BYTE, recv.data(), l.recvcounts,
                  l.rdispls, MPI_BYTE, comm, {.algorithm = spec, .info = &info});
  check_buffer(r, spec.c_str(), recv, expected);
  std::fill(recv.begin(), recv.end(), kPoison);
  const int rc = A2AV_Alltoallv_with(spec.c_str(), send.data(), l.sendcounts.data(),
                                     l.sdispls.data(), MPI_BYTE, recv.data(), l.recvcounts.data(),
                                     l.rdispls.data(), MPI_BYTE, comm);
  if (rc != A2AV_SUCCESS)
    return report(r, "A2AV_Alltoallv_with(%s) returned %d: %s", spec.c_str(), rc,
                  A2AV_Last_error_message());
  check_buffer(r, spec.c_str(), recv, expected);
  check_buffer(r, "the send buffer", send, send_data(r, l));
  expect_last(r, spec.c_str(), info.algorithm, info.peak_temp_bytes);
}

// The typed C++ form with elements of Bytes bytes, for which a2av::mpi_type() commits a byte
// type of that size, shared by every thread (each thread uses another size).
template <std::size_t Bytes>
void run_typed(const Round& r, MPI_Comm comm) {
  using Element = std::array<unsigned char, Bytes>;
  const auto elements = [&](int src, int dst) { return block_bytes(r, src, dst) / 2; };
  const auto blocks = [&](bool received) {
    std::vector<Element> data;
    for (int peer = 0; peer < r.size; ++peer) {
      const int src = received ? peer : r.rank, dst = received ? r.rank : peer;
      for (std::int64_t i = 0; i < elements(src, dst); ++i) {
        Element& e = data.emplace_back();
        for (std::size_t b = 0; b < Bytes; ++b) e[b] = content(r, src, dst, i * Bytes + b);
      }
    }
    return data;
  };
  std::vector<MPI_Count> sendcounts(r.size), recvcounts(r.size);
  for (int peer = 0; peer < r.size; ++peer) {
    sendcounts[peer] = elements(r.rank, peer);
    recvcounts[peer] = elements(peer, r.rank);
  }
  const std::vector<Element> send = blocks(false);
  if (a2av::exchange<Element>(send, sendcounts, comm, {}, recvcounts) != blocks(true))
    report(r, "a2av::exchange of %zu-byte elements delivered other data", Bytes);
}

// An element size per thread.
constexpr void (*kTyped[])(const Round&, MPI_Comm) = {run_typed<3>, run_typed<5>, run_typed<6>,
                                                      run_typed<7>, run_typed<9>, run_typed<12>};
static_assert(std::size(kTyped) == kThreads);

// An unknown algorithm on every rank: A2AV_ERR_ALGORITHM everywhere, and this thread's
// A2AV_Last_error_message says so (other threads' successes clear only their own).
void run_unknown_algorithm(const Round& r, MPI_Comm comm) {
  const std::vector<MPI_Count> counts(r.size, 0);
  const std::vector<MPI_Aint> displs(r.size, 0);
  unsigned char byte = 0;
  const int rc = A2AV_Alltoallv_with("no_such_algorithm", &byte, counts.data(), displs.data(),
                                     MPI_BYTE, &byte, counts.data(), displs.data(), MPI_BYTE, comm);
  if (rc != A2AV_ERR_ALGORITHM)
    report(r, "the unknown algorithm returned %d, not A2AV_ERR_ALGORITHM", rc);
  if (!std::strstr(A2AV_Last_error_message(), "no_such_algorithm"))
    report(r, "A2AV_Last_error_message after the unknown algorithm: \"%s\"",
           A2AV_Last_error_message());
}

// Two nonblocking exchanges of the same blocks in flight at once on this communicator, both
// waited for together (every thread's MPI calls advance every thread's exchanges). Each start
// reports its schedule and peak bytes; the two must agree.
// `free_before_wait`: frees `comm` with the two exchanges pending, which then complete inside
// whichever thread's MPI calls advance them.
void run_nonblocking(const Round& r, MPI_Comm comm, bool free_before_wait = false) {
  const Layout l = layout_for(r);
  const auto ints = [](const auto& values) {
    return std::vector<int>(values.begin(), values.end());
  };
  const std::vector<int> sendcounts = ints(l.sendcounts), sdispls = ints(l.sdispls),
                         recvcounts = ints(l.recvcounts), rdispls = ints(l.rdispls);
  const std::vector<unsigned char> send = send_data(r, l), expected = expected_receive(r, l);
  std::vector<unsigned char> recv[2] = {std::vector<unsigned char>(l.recv_extent, kPoison),
                                        std::vector<unsigned char>(l.recv_extent, kPoison)};
  MPI_Request requests[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
  std::string algorithm[2];
  std::int64_t peak_bytes[2] = {};
  for (int k = 0; k < 2; ++k) {
    const int rc =
        A2AV_Ialltoallv(send.data(), sendcounts.data(), sdispls.data(), MPI_BYTE, recv[k].data(),
                        recvcounts.data(), rdispls.data(), MPI_BYTE, comm, &requests[k]);
    if (rc != A2AV_SUCCESS)
      report(r, "A2AV_Ialltoallv returned %d: %s", rc, A2AV_Last_error_message());
    algorithm[k] = A2AV_Last_algorithm();
    peak_bytes[k] = A2AV_Last_peak_bytes();
  }
  if (free_before_wait) MPI_Comm_free(&comm);
  if (MPI_Waitall(2, requests, MPI_STATUSES_IGNORE) != MPI_SUCCESS)
    report(r, "MPI_Waitall on two A2AV_Ialltoallv failed");
  for (const auto& got : recv) check_buffer(r, "A2AV_Ialltoallv", got, expected);
  if (!algorithm[0].starts_with("nonblocking:") || algorithm[0] != algorithm[1] ||
      peak_bytes[0] != peak_bytes[1])
    report(r, "the two A2AV_Ialltoallv report \"%s\" (%lld bytes) and \"%s\" (%lld bytes)",
           algorithm[0].c_str(), static_cast<long long>(peak_bytes[0]), algorithm[1].c_str(),
           static_cast<long long>(peak_bytes[1]));
}

// --- sparse exchange ----------------------------------------------------------------------

struct Message {
  int peer;  // destination when sent, source when received
  std::vector<std::byte> data;
  bool operator==(const Message&) const = default;
};

// What rank src sends in round r: up to 4 messages, any destinations (itself and repeats
// included), up to 16 * (thread + 1) bytes each.
std::vector<Message> sparse_messages(const Round& r, int src) {
  std::vector<Message> out(hash(r, src, 1u << 20) % 5);
  for (std::size_t i = 0; i < out.size(); ++i) {
    const std::uint64_t h = hash(r, src, (1u << 21) + i);
    out[i].peer = static_cast<int>(h % r.size);
    out[i].data.resize(h / r.size % (16 * (r.thread + 1) + 1));
    for (std::size_t b = 0; b < out[i].data.size(); ++b)
      out[i].data[b] = std::byte{content(r, src, out[i].peer, static_cast<std::int64_t>(b + i))};
  }
  return out;
}

// What arrives at this rank: by source, one source's messages in the order sent.
std::vector<Message> sparse_expected(const Round& r) {
  std::vector<Message> in;
  for (int src = 0; src < r.size; ++src)
    for (Message& m : sparse_messages(r, src))
      if (m.peer == r.rank) in.push_back({src, std::move(m.data)});
  return in;
}

void check_sparse(const Round& r, const char* what, const std::vector<Message>& got) {
  const std::vector<Message> expected = sparse_expected(r);
  if (got.size() != expected.size())
    return report(r, "%s: %zu messages arrived, expected %zu", what, got.size(), expected.size());
  for (std::size_t i = 0; i < got.size(); ++i)
    if (got[i] != expected[i])
      return report(r, "%s: message %zu (from %d, %zu bytes) differs", what, i, got[i].peer,
                    got[i].data.size());
}

void run_sparse(const Round& r, MPI_Comm comm, const std::string& algorithm) {
  const std::vector<Message> mine = sparse_messages(r, r.rank);
  std::vector<a2av::OutgoingMessage> outgoing;
  std::vector<int> destinations;
  std::vector<const void*> buffers;
  std::vector<MPI_Count> bytes;
  for (const Message& m : mine) {
    outgoing.push_back({m.peer, m.data});
    destinations.push_back(m.peer);
    buffers.push_back(m.data.data());
    bytes.push_back(static_cast<MPI_Count>(m.data.size()));
  }
  const a2av::SparseResult result = a2av::sparse_exchange(outgoing, comm, {algorithm});
  std::vector<Message> got;
  for (const a2av::IncomingMessage& m : result.messages())
    got.push_back({m.source, {m.data.begin(), m.data.end()}});
  check_sparse(r, algorithm.c_str(), got);

  A2AV_Sparse received = nullptr;
  const int rc =
      A2AV_Sparse_exchange(static_cast<int>(mine.size()), destinations.data(), buffers.data(),
                           bytes.data(), comm, algorithm.c_str(), &received);
  if (rc != A2AV_SUCCESS)
    return report(r, "A2AV_Sparse_exchange(%s) returned %d: %s", algorithm.c_str(), rc,
                  A2AV_Last_error_message());
  expect_last(r, algorithm.c_str(), "sparse:" + result.algorithm(), result.peak_temp_bytes());
  int count = 0;
  A2AV_Sparse_count(received, &count);
  got.clear();
  for (int i = 0; i < count; ++i) {
    int source = -1;
    const void* data = nullptr;
    MPI_Count size = 0;
    A2AV_Sparse_message(received, i, &source, &data, &size);
    const auto* first = static_cast<const std::byte*>(data);
    got.push_back({source, {first, first + size}});
  }
  A2AV_Sparse_free(&received);
  check_sparse(r, algorithm.c_str(), got);
}

// --- in-place exchange --------------------------------------------------------------------

// C: the largest send or receive total of any rank, the capacity every rank passes.
std::int64_t inplace_capacity(const Round& r) {
  std::int64_t capacity = 0;
  for (int i = 0; i < r.size; ++i) {
    std::int64_t sent = 0, received = 0;
    for (int j = 0; j < r.size; ++j) {
      sent += block_bytes(r, i, j);
      received += block_bytes(r, j, i);
    }
    capacity = std::max({capacity, sent, received});
  }
  return capacity;
}

// On entry: this rank's blocks in destination order; on exit: what it receives in source order.
std::vector<unsigned char> inplace_data(const Round& r, bool received) {
  std::vector<unsigned char> data;
  for (int peer = 0; peer < r.size; ++peer) {
    const int src = received ? peer : r.rank, dst = received ? r.rank : peer;
    for (std::int64_t b = 0; b < block_bytes(r, src, dst); ++b)
      data.push_back(content(r, src, dst, b));
  }
  data.resize(inplace_capacity(r), kPoison);
  return data;
}

void check_inplace(const Round& r, const char* what, std::vector<unsigned char>& buf,
                   std::span<const MPI_Count> recvcounts) {
  for (int src = 0; src < r.size; ++src)
    if (recvcounts[src] != block_bytes(r, src, r.rank))
      return report(r, "%s: %lld bytes from rank %d, expected %lld", what,
                    static_cast<long long>(recvcounts[src]), src,
                    static_cast<long long>(block_bytes(r, src, r.rank)));
  std::int64_t total = 0;
  for (const MPI_Count c : recvcounts) total += c;
  buf.resize(total);  // beyond the data the buffer holds whatever the exchange left there
  std::vector<unsigned char> expected = inplace_data(r, true);
  expected.resize(total);
  check_buffer(r, what, buf, expected);
}

void run_inplace(const Round& r, MPI_Comm comm, const std::string& algorithm) {
  std::vector<MPI_Count> sendcounts(r.size), recvcounts(r.size);
  for (int dst = 0; dst < r.size; ++dst) sendcounts[dst] = block_bytes(r, r.rank, dst);
  std::vector<unsigned char> buf = inplace_data(r, false);
  a2av::InplaceInfo info;
  const std::vector<MPI_Count> received = a2av::exchange_inplace(
      buf.data(), static_cast<MPI_Count>(buf.size()), sendcounts, MPI_BYTE, comm, algorithm, &info);
  check_inplace(r, algorithm.c_str(), buf, received);

  buf = inplace_data(r, false);
  const int rc =
      A2AV_Exchange_inplace(buf.data(), static_cast<MPI_Count>(buf.size()), sendcounts.data(),
                            recvcounts.data(), MPI_BYTE, comm, algorithm.c_str());
  if (rc != A2AV_SUCCESS)
    return report(r, "A2AV_Exchange_inplace(%s) returned %d: %s", algorithm.c_str(), rc,
                  A2AV_Last_error_message());
  expect_last(r, algorithm.c_str(), info.algorithm, info.peak_temp_bytes);
  check_inplace(r, algorithm.c_str(), buf, recvcounts);
}

// --- the threads --------------------------------------------------------------------------

struct Algorithms {
  std::vector<std::string> alltoallv, sparse, inplace;
};

// Every alltoallv algorithm by its registry name (those meant for one node where all ranks
// share one), every sparse and in-place algorithm, the in-place ones also in small chunks.
Algorithms algorithms(bool one_node) {
  Algorithms a;
  for (const a2av::AlgorithmDescription& d : a2av::algorithms())
    if (d.family == "alltoallv" && (one_node || !d.one_node_only)) a.alltoallv.push_back(d.name);
  a.sparse = {"nbx", "grid", "dense", "auto"};
  if (one_node) a.sparse.push_back("shared_memory");
  a.inplace = {"inplace_bitonic", "inplace_pairwise", "inplace_auto",
               "inplace_bitonic:chunk_bytes=16", "inplace_pairwise:chunk_bytes=16"};
  return a;
}

template <class T>
const T& pick(const std::vector<T>& from, const Round& r) {
  return from[(r.iteration / 6 * 7 + r.thread) % from.size()];
}

// One thread's exchanges; swaps its communicator for a duplicate halfway (freeing it between
// the starts and the wait of a nonblocking round), and frees it at the end (both collective on
// this communicator alone, so safe beside the other threads).
void run_thread(int thread, MPI_Comm comm, const Algorithms& algorithms) {
  Round r{thread, 0, 0, 0};
  MPI_Comm_rank(comm, &r.rank);
  MPI_Comm_size(comm, &r.size);
  for (; r.iteration < kIterations; ++r.iteration) {
    if (r.iteration == kIterations / 2) {
      MPI_Comm fresh = MPI_COMM_NULL;
      MPI_Comm_dup(comm, &fresh);
      run_nonblocking(r, comm, true);
      comm = fresh;
    }
    if ((r.iteration + thread) % kErrorEvery == kErrorEvery - 1) {
      run_unknown_algorithm(r, comm);
      continue;
    }
    switch ((r.iteration + thread) % 6) {
      case 0:
      case 1:
        run_alltoallv(r, comm, pick(algorithms.alltoallv, r));
        break;
      case 2:
        run_sparse(r, comm, pick(algorithms.sparse, r));
        break;
      case 3:
        run_inplace(r, comm, pick(algorithms.inplace, r));
        break;
      case 4:
        run_nonblocking(r, comm);
        break;
      default:
        kTyped[thread](r, comm);
    }
  }
  MPI_Comm_free(&comm);
}

// Any exception ends the run: a thread that stops calling would leave its peers waiting.
void run_guarded(int thread, MPI_Comm comm, const Algorithms& algorithms) {
  try {
    run_thread(thread, comm, algorithms);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "FAIL thread %d: %s\n", thread, e.what());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
}

bool all_on_one_node() {
  MPI_Comm node = MPI_COMM_NULL;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  int node_size = 0, size = 0;
  MPI_Comm_size(node, &node_size);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_free(&node);
  return node_size == size && !std::getenv("A2AV_EMULATE_NODES");
}

}  // namespace

int main(int argc, char** argv) {
  int provided = MPI_THREAD_SINGLE;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (provided < MPI_THREAD_MULTIPLE) {
    if (rank == 0)
      std::printf("SKIPPED: the MPI library provides thread level %d, not MPI_THREAD_MULTIPLE\n",
                  provided);
    MPI_Finalize();
    return 0;
  }
  const Algorithms chosen = algorithms(all_on_one_node());
  // Duplicated here, in the same order on every rank: MPI_Comm_dup is collective on its
  // parent, which the threads would otherwise duplicate in any order.
  std::vector<MPI_Comm> comms(kThreads);
  for (MPI_Comm& comm : comms) MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  const double start = MPI_Wtime();
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back(run_guarded, t, comms[t], std::cref(chosen));
  for (std::thread& t : threads) t.join();
  const double seconds = MPI_Wtime() - start;
  int failed = failures.load();
  MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0)
    std::printf(
        "%s: %d threads x %d exchanges per rank, %zu alltoallv algorithms, %.2f s, "
        "%d failures\n",
        failed ? "FAILED" : "PASSED", kThreads, kIterations, chosen.alltoallv.size(), seconds,
        failed);
  MPI_Finalize();
  return failed ? 1 : 0;
}
