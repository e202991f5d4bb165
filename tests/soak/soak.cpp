// Soak test: many a2av calls with changing patterns, sizes, datatypes, algorithms
// and entry points, on communicators created and freed every few calls, so that the state
// a2av keeps per communicator and per thread is set up and torn down thousands of times.
// Checks that resident memory, open file descriptors and the library's /dev/shm entries stay
// flat between a sample after a warm-up and one at the end, with no soak communicator alive
// at either. Every call's receive buffer is checked byte for byte (blocks and the poisoned
// gaps between them); every 100th alltoallv is also compared with MPI_Alltoallv.
//
//   soak [--calls N] [--comm-every K] [--warmup W] [--algorithms a,b,...]
//        [--sparse-algorithms a,b,...] [--pid-dir DIR]
//
// A2AV_SOAK_CALLS sets the default of --calls (100000). With --pid-dir each rank writes
// DIR/rank<r>.pid once its first communicator's calls are done (tests/soak/kill_mid_exchange.py
// waits for them). Exits non-zero on a wrong result or on growth beyond the limits below.
#include <a2av/a2av.h>
#include <a2av/alltoallv.hpp>
#include <a2av/inplace.hpp>
#include <a2av/sparse.hpp>

#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <span>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace {

constexpr unsigned char kPoison = 0xA5;
constexpr std::int64_t kVendorCheckEvery = 100;
constexpr std::int64_t kLargeBlockElements = 65536;
// Resident memory may grow by this much, or by this fraction of the start, whichever is more:
// the allocator and MPI keep some memory they were given; a leak grows without bound.
constexpr long kRssSlackKiB = 8 * 1024;
constexpr double kRssSlackFraction = 0.10;

struct Settings {
  std::int64_t calls = 100000;
  std::int64_t comm_every = 100;
  std::int64_t warmup = 500;
  std::vector<std::string> algorithms = {"auto",           "vendor",     "linear", "spread_out",
                                         "scattered",      "pairwise",   "tuna",   "tuna_coalesced",
                                         "tuna_staggered", "node_aware", "bruck",  "shared_memory"};
  std::vector<std::string> sparse_algorithms = {"auto", "nbx", "grid", "dense", "shared_memory"};
  std::vector<std::string> inplace_algorithms = {
      "inplace_auto", "inplace_bitonic", "inplace_pairwise", "inplace_bitonic:chunk_bytes=4096"};
  std::string pid_dir;
};

[[noreturn]] void die(const std::string& message) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  std::fprintf(stderr, "soak: rank %d: %s\n", rank, message.c_str());
  MPI_Abort(MPI_COMM_WORLD, 1);
  std::abort();
}

std::vector<std::string> split_list(std::string_view text) {
  std::vector<std::string> items;
  std::stringstream in{std::string(text)};
  for (std::string item; std::getline(in, item, ',');)
    if (!item.empty()) items.push_back(item);
  return items;
}

Settings parse_settings(int argc, char** argv) {
  Settings s;
  if (const char* calls = std::getenv("A2AV_SOAK_CALLS")) s.calls = std::atoll(calls);
  for (int i = 1; i < argc; ++i) {
    const std::string_view flag = argv[i];
    if (i + 1 >= argc) die("missing value after " + std::string(flag));
    const char* value = argv[++i];
    if (flag == "--calls")
      s.calls = std::atoll(value);
    else if (flag == "--comm-every")
      s.comm_every = std::max(1LL, std::atoll(value));
    else if (flag == "--warmup")
      s.warmup = std::atoll(value);
    else if (flag == "--algorithms")
      s.algorithms = split_list(value);
    else if (flag == "--sparse-algorithms")
      s.sparse_algorithms = split_list(value);
    else if (flag == "--pid-dir")
      s.pid_dir = value;
    else
      die("unknown option " + std::string(flag));
  }
  // Samples are taken between communicators: the warm-up ends on such a boundary, before the
  // last one (or, for runs too short to have one, at the start).
  const std::int64_t warmup = std::min(s.warmup, s.calls / 10);
  s.warmup = (warmup + s.comm_every - 1) / s.comm_every * s.comm_every;
  if (s.warmup >= s.calls) s.warmup = 0;
  return s;
}

std::uint64_t mix(std::uint64_t x) {  // splitmix64's finaliser
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

// The block sizes of one call, a function of the call number alone, so that every rank knows
// every rank's counts without asking.
struct Pattern {
  enum Kind { kUniform, kSkewed, kZeros, kSparse, kLarge };
  std::uint64_t seed = 0;
  Kind kind = kUniform;
  int hot = 0;  // kSkewed: the rank that receives the large blocks

  std::int64_t count(int src, int dst) const {
    const std::uint64_t h = mix(seed ^ (std::uint64_t(src) << 20) ^ (std::uint64_t(dst) << 40));
    switch (kind) {
      case kUniform:
        return h % 257;
      case kSkewed:
        return dst == hot ? h % 4097 : h % 33;
      case kZeros:
        return 0;
      case kSparse:
        return h % 4 == 0 ? (h >> 2) % 1025 : 0;
      case kLarge:
        return h % (kLargeBlockElements + 1);
    }
    return 0;
  }
  unsigned char byte(int src, int dst, std::int64_t b) const {
    return static_cast<unsigned char>(src * 131 + dst * 31 + b * 7 + (b >> 8) + seed);
  }
};

Pattern pattern_of(std::int64_t call, int size) {
  const std::uint64_t h = mix(std::uint64_t(call) * 3 + 1);
  // Two calls in a row share a pattern, so that the cache of recent calls hits too.
  Pattern p;
  p.seed = mix(std::uint64_t(call / 2));
  p.kind = call % 331 == 0 ? Pattern::kLarge : static_cast<Pattern::Kind>((call / 2) % 4);
  p.hot = static_cast<int>(h % size);
  return p;
}

// This rank's buffers for a pattern: send blocks in reverse destination order, receive blocks
// in source order, with gaps of 0..2 elements, so that displacements are not just prefix sums.
struct Layout {
  std::vector<MPI_Count> sendcounts, recvcounts;
  std::vector<MPI_Aint> sdispls, rdispls;
  std::int64_t send_extent = 0, recv_extent = 0;  // elements
};

Layout layout_for(const Pattern& p, int rank, int size) {
  Layout l;
  l.sendcounts.resize(size);
  l.sdispls.resize(size);
  for (int dst = size - 1; dst >= 0; --dst) {
    l.send_extent += dst % 3;
    l.sdispls[dst] = l.send_extent;
    l.sendcounts[dst] = p.count(rank, dst);
    l.send_extent += l.sendcounts[dst];
  }
  for (int src = 0; src < size; ++src) {
    l.recv_extent += (src + p.seed) % 3;
    l.rdispls.push_back(l.recv_extent);
    l.recvcounts.push_back(p.count(src, rank));
    l.recv_extent += l.recvcounts.back();
  }
  l.recv_extent += 1;  // a poisoned tail: an overrun shows
  return l;
}

struct Buffers {
  std::vector<unsigned char> send, recv, reference;
};

void fill_send(const Pattern& p, const Layout& l, int rank, int elem, Buffers& b) {
  b.send.assign(static_cast<std::size_t>(l.send_extent * elem), kPoison);
  for (std::size_t dst = 0; dst < l.sendcounts.size(); ++dst) {
    unsigned char* block = b.send.data() + l.sdispls[dst] * elem;
    for (std::int64_t i = 0; i < l.sendcounts[dst] * elem; ++i)
      block[i] = p.byte(rank, static_cast<int>(dst), i);
  }
  b.recv.assign(static_cast<std::size_t>(l.recv_extent * elem), kPoison);
}

bool block_matches(const Pattern& p, int src, int dst, const unsigned char* data,
                   std::int64_t bytes) {
  for (std::int64_t i = 0; i < bytes; ++i)
    if (data[i] != p.byte(src, dst, i)) return false;
  return true;
}

// Every received block holds its pattern and every gap is still poison.
bool receive_buffer_right(const Pattern& p, const Layout& l, int rank, int elem,
                          const std::vector<unsigned char>& recv) {
  std::int64_t at = 0;
  for (std::size_t src = 0; src < l.recvcounts.size(); ++src) {
    const std::int64_t begin = l.rdispls[src] * elem, bytes = l.recvcounts[src] * elem;
    for (; at < begin; ++at)
      if (recv[at] != kPoison) return false;
    if (!block_matches(p, static_cast<int>(src), rank, recv.data() + begin, bytes)) return false;
    at = begin + bytes;
  }
  for (; at < l.recv_extent * elem; ++at)
    if (recv[at] != kPoison) return false;
  return true;
}

// A layout as MPI_Alltoallv and the C API take it.
struct IntLayout {
  std::vector<int> sendcounts, sdispls, recvcounts, rdispls;

  explicit IntLayout(const Layout& l)
      : sendcounts(l.sendcounts.begin(), l.sendcounts.end()),
        sdispls(l.sdispls.begin(), l.sdispls.end()),
        recvcounts(l.recvcounts.begin(), l.recvcounts.end()),
        rdispls(l.rdispls.begin(), l.rdispls.end()) {}
};

// The entry points the soak goes through; each checks its own result and returns what ran.
struct Call {
  std::int64_t number = 0;
  MPI_Comm comm = MPI_COMM_NULL;
  int rank = 0, size = 1;
  Pattern pattern;
  int elem = 1;  // bytes per element
  MPI_Datatype type = MPI_BYTE;
};

void compare_with_vendor(const Call& c, const Layout& l, Buffers& b) {
  b.reference.assign(b.recv.size(), kPoison);
  const IntLayout i(l);
  MPI_Alltoallv(b.send.data(), i.sendcounts.data(), i.sdispls.data(), c.type, b.reference.data(),
                i.recvcounts.data(), i.rdispls.data(), c.type, c.comm);
  if (b.reference != b.recv) die("differs from MPI_Alltoallv at call " + std::to_string(c.number));
}

std::string run_alltoallv(const Call& c, const std::string& spec, Buffers& b) {
  const Layout l = layout_for(c.pattern, c.rank, c.size);
  fill_send(c.pattern, l, c.rank, c.elem, b);
  std::string ran = spec;
  if (c.number % 11 == 3) {  // the C API, its algorithm from the environment (auto)
    const IntLayout i(l);
    const int code =
        A2AV_Alltoallv(b.send.data(), i.sendcounts.data(), i.sdispls.data(), c.type, b.recv.data(),
                       i.recvcounts.data(), i.rdispls.data(), c.type, c.comm);
    if (code != A2AV_SUCCESS) die(std::string("A2AV_Alltoallv: ") + A2AV_Last_error_message());
    ran = std::string("C API: ") + A2AV_Last_algorithm();
  } else if (c.number % 19 == 9) {  // nonblocking
    const IntLayout i(l);
    MPI_Request request = MPI_REQUEST_NULL;
    const int code =
        A2AV_Ialltoallv(b.send.data(), i.sendcounts.data(), i.sdispls.data(), c.type, b.recv.data(),
                        i.recvcounts.data(), i.rdispls.data(), c.type, c.comm, &request);
    if (code != A2AV_SUCCESS) die(std::string("A2AV_Ialltoallv: ") + A2AV_Last_error_message());
    MPI_Wait(&request, MPI_STATUS_IGNORE);
    ran = "nonblocking";
  } else {
    a2av::alltoallv(b.send.data(), l.sendcounts, l.sdispls, c.type, b.recv.data(), l.recvcounts,
                    l.rdispls, c.type, c.comm, {.algorithm = spec});
  }
  if (!receive_buffer_right(c.pattern, l, c.rank, c.elem, b.recv))
    die("wrong result of " + ran + " at call " + std::to_string(c.number));
  if (c.number % kVendorCheckEvery == 0) compare_with_vendor(c, l, b);
  return ran;
}

std::string run_sparse(const Call& c, const std::string& spec, Buffers& b) {
  const Layout l = layout_for(c.pattern, c.rank, c.size);
  fill_send(c.pattern, l, c.rank, 1, b);
  std::vector<a2av::OutgoingMessage> messages;
  for (int dst = 0; dst < c.size; ++dst)
    if (l.sendcounts[dst] > 0)
      messages.push_back({dst, std::as_bytes(std::span(b.send).subspan(
                                   l.sdispls[dst], static_cast<std::size_t>(l.sendcounts[dst])))});
  const a2av::SparseResult result = a2av::sparse_exchange(messages, c.comm, {.algorithm = spec});
  std::size_t next = 0;
  const auto arrived = result.messages();
  for (int src = 0; src < c.size; ++src) {
    const std::int64_t bytes = c.pattern.count(src, c.rank);
    if (bytes == 0) continue;
    const bool right =
        next < arrived.size() && arrived[next].source == src &&
        std::int64_t(arrived[next].data.size()) == bytes &&
        block_matches(c.pattern, src, c.rank,
                      reinterpret_cast<const unsigned char*>(arrived[next].data.data()), bytes);
    if (!right) die("wrong sparse result of " + spec + " at call " + std::to_string(c.number));
    ++next;
  }
  if (next != arrived.size()) die("extra sparse messages at call " + std::to_string(c.number));
  return "sparse " + spec;
}

// The elements every rank's buffer must hold: the most any rank sends or receives.
std::int64_t inplace_capacity(const Pattern& p, int size) {
  std::int64_t most = 0;
  for (int r = 0; r < size; ++r) {
    std::int64_t sent = 0, received = 0;
    for (int q = 0; q < size; ++q) sent += p.count(r, q), received += p.count(q, r);
    most = std::max({most, sent, received});
  }
  return most;
}

std::string run_inplace(const Call& c, const std::string& spec, Buffers& b) {
  const std::int64_t capacity = inplace_capacity(c.pattern, c.size);
  b.send.assign(static_cast<std::size_t>(std::max<std::int64_t>(capacity, 1) * c.elem), kPoison);
  std::vector<MPI_Count> sendcounts(c.size);
  std::int64_t at = 0;
  for (int dst = 0; dst < c.size; ++dst) {
    sendcounts[dst] = c.pattern.count(c.rank, dst);
    for (std::int64_t i = 0; i < sendcounts[dst] * c.elem; ++i)
      b.send[at++] = c.pattern.byte(c.rank, dst, i);
  }
  const auto recvcounts =
      a2av::exchange_inplace(b.send.data(), capacity, sendcounts, c.type, c.comm, spec);
  at = 0;
  for (int src = 0; src < c.size; ++src) {
    const std::int64_t bytes = c.pattern.count(src, c.rank) * c.elem;
    if (recvcounts[src] * c.elem != bytes ||
        !block_matches(c.pattern, src, c.rank, &b.send[at], bytes))
      die("wrong in-place result of " + spec + " at call " + std::to_string(c.number));
    at += bytes;
  }
  return "in-place " + spec;
}

// Which entry point call n goes through, and with which algorithm.
std::string run_call(const Settings& s, const Call& c, Buffers& b) {
  const std::uint64_t n = static_cast<std::uint64_t>(c.number);
  if (n % 13 == 5 && !s.sparse_algorithms.empty())
    return run_sparse(c, s.sparse_algorithms[(n / 13) % s.sparse_algorithms.size()], b);
  if (n % 17 == 7 && c.pattern.kind != Pattern::kLarge)
    return run_inplace(c, s.inplace_algorithms[(n / 17) % s.inplace_algorithms.size()], b);
  return run_alltoallv(c, s.algorithms[(n / 2) % s.algorithms.size()], b);
}

// The communicator of generation g, made in one of several ways; `previous` is still alive
// when the recipe needs it (a duplicate of it) and may be MPI_COMM_NULL otherwise.
MPI_Comm make_comm(std::int64_t generation, MPI_Comm previous) {
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm made = MPI_COMM_NULL;
  switch (generation % 4) {
    case 0:
      MPI_Comm_dup(MPI_COMM_WORLD, &made);
      break;
    case 1:
      MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &made);
      break;  // ranks reversed
    case 2:
      MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &made);
      break;  // two halves
    default:
      MPI_Comm_dup(previous == MPI_COMM_NULL ? MPI_COMM_WORLD : previous, &made);
  }
  return made;
}

// Replaces `comm` by generation g's communicator, freeing the old one before or after making
// the new one (a duplicate of the old one needs it alive).
void renew_comm(std::int64_t generation, MPI_Comm& comm) {
  const bool free_first = generation % 2 == 0 && generation % 4 != 3;
  if (free_first && comm != MPI_COMM_NULL) MPI_Comm_free(&comm);
  MPI_Comm made = make_comm(generation, comm);
  if (comm != MPI_COMM_NULL) MPI_Comm_free(&comm);
  comm = made;
}

struct Sample {
  long rss_kib = 0;
  long fds = 0;
  long shm_entries = 0;  // /dev/shm names of segments this rank created
};

long resident_kib() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind("VmRSS:", 0) == 0) return std::atol(line.c_str() + 6);
  return -1;
}

long entries_in(const char* dir, std::string_view prefix) {
  long n = 0;
  std::error_code ignored;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ignored))
    n += entry.path().filename().string().starts_with(prefix);
  return n;
}

// Segments are nameless where /proc allows; elsewhere they are /a2av.<creator's pid>.<n>
// (src/core/node_segment.cpp). Counting only this process's leaves other jobs sharing /dev/shm
// out.
Sample sample_now() {
  const std::string own_segments = "a2av." + std::to_string(getpid()) + ".";
  return {resident_kib(), entries_in("/proc/self/fd", ""), entries_in("/dev/shm", own_segments)};
}

void write_pid_file(const std::string& dir) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const std::string path = dir + "/rank" + std::to_string(rank) + ".pid";
  std::ofstream(path + ".tmp") << getpid() << "\n";
  std::filesystem::rename(path + ".tmp", path);  // the waiting script never reads half a file
}

// A sample taken with no soak communicator alive, once the ranks are all there.
Sample sample_between(MPI_Comm& comm) {
  if (comm != MPI_COMM_NULL) MPI_Comm_free(&comm);
  MPI_Barrier(MPI_COMM_WORLD);
  return sample_now();
}

Call call_on(MPI_Comm comm, std::int64_t n) {
  Call c;
  c.number = n;
  c.comm = comm;
  MPI_Comm_rank(comm, &c.rank);
  MPI_Comm_size(comm, &c.size);
  c.pattern = pattern_of(n, c.size);
  c.elem = n % 5 == 4 ? 4 : 1;
  c.type = c.elem == 4 ? MPI_INT : MPI_BYTE;
  return c;
}

struct Totals {
  std::int64_t communicators = 0;
  // middle: halfway from the start to the end, to tell a leak (growing all along) from memory
  // kept once (flat later)
  Sample start, middle, end;
  double seconds = 0;
};

// Runs every call, on a new communicator every comm_every calls; samples once the warm-up is
// done and at the end.
Totals run_soak(const Settings& s) {
  Totals t;
  Buffers buffers;
  const auto begin = std::chrono::steady_clock::now();
  MPI_Comm comm = MPI_COMM_NULL;
  int samples = 0;
  const std::int64_t halfway = s.warmup + (s.calls - s.warmup) / 2;
  for (std::int64_t n = 0; n < s.calls;) {
    if (samples == 0 && n >= s.warmup) t.start = t.middle = sample_between(comm), ++samples;
    if (samples == 1 && n >= halfway) t.middle = sample_between(comm), ++samples;
    renew_comm(t.communicators++, comm);
    for (const std::int64_t last = std::min(s.calls, n + s.comm_every); n < last; ++n)
      run_call(s, call_on(comm, n), buffers);
    if (t.communicators == 1 && !s.pid_dir.empty()) write_pid_file(s.pid_dir);
  }
  t.end = sample_between(comm);
  t.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  return t;
}

long max_over_ranks(long value) {
  MPI_Allreduce(MPI_IN_PLACE, &value, 1, MPI_LONG, MPI_MAX, MPI_COMM_WORLD);
  return value;
}

long sum_over_ranks(long value) {
  MPI_Allreduce(MPI_IN_PLACE, &value, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  return value;
}

struct Row {
  const char* what;
  long start, middle, end, growth, limit;
};

// Prints the table on rank 0; returns whether every rank stayed within the limits.
bool report(const Settings& s, const Totals& t) {
  const Sample& a = t.start;
  const Sample& m = t.middle;
  const Sample& z = t.end;
  const long rss_limit = std::max(kRssSlackKiB, static_cast<long>(a.rss_kib * kRssSlackFraction));
  const bool rss_ok = z.rss_kib - a.rss_kib <= rss_limit;
  const bool within = rss_ok && z.fds <= a.fds && z.shm_entries == a.shm_entries;
  const Row rows[] = {
      {"VmRSS KiB (max over ranks)", max_over_ranks(a.rss_kib), max_over_ranks(m.rss_kib),
       max_over_ranks(z.rss_kib), max_over_ranks(z.rss_kib - a.rss_kib), max_over_ranks(rss_limit)},
      {"open fds (max over ranks)", max_over_ranks(a.fds), max_over_ranks(m.fds),
       max_over_ranks(z.fds), max_over_ranks(z.fds - a.fds), 0},
      {"/dev/shm a2av entries (all ranks)", sum_over_ranks(a.shm_entries),
       sum_over_ranks(m.shm_entries), sum_over_ranks(z.shm_entries),
       max_over_ranks(std::abs(z.shm_entries - a.shm_entries)), 0}};
  int ok = within;
  MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (rank != 0) return ok;
  std::printf("soak: %lld calls on %d ranks, %lld communicators, %zu algorithms, %.1f s\n",
              static_cast<long long>(s.calls), size, static_cast<long long>(t.communicators),
              s.algorithms.size(), t.seconds);
  std::printf(
      "soak: sampled after %lld calls, halfway from there and at the end, no soak communicator "
      "alive\n",
      static_cast<long long>(s.warmup));
  std::printf("%-36s %10s %10s %10s %12s %10s\n", "", "start", "halfway", "end", "max growth",
              "limit");
  for (const Row& r : rows)
    std::printf("%-36s %10ld %10ld %10ld %+12ld %10ld\n", r.what, r.start, r.middle, r.end,
                r.growth, r.limit);
  std::printf("soak: %s\n", ok ? "PASS" : "FAIL (growth beyond the limits)");
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const Settings settings = parse_settings(argc, argv);
  bool ok = false;
  try {
    ok = report(settings, run_soak(settings));
  } catch (const std::exception& e) {
    die(std::string("a2av threw: ") + e.what());
  }
  MPI_Finalize();
  return ok ? 0 : 1;
}
