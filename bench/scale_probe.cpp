// scale_probe: times a2av specs at rank counts where `a2av bench` cannot go in a simulation.
// `a2av bench` builds the whole P x P count matrix on every rank (P^2 work per rank, P^3 in
// all: at P = 4096 a quarter of an hour per matrix on one simulating core). Here each rank
// draws only its own row and column, from a counter-based hash of (seed, sender, receiver),
// so setup is O(P) per rank. Blocks are uniform in 0..S bytes, as TuNA's evaluation draws them
// (Fan et al. [Fan24], Section V-A); every received byte is checked against
// its encoding before timing. The spec MPI_Alltoallv times the MPI library's own. Output: the
// `results` records of a2av-bench JSON that tools/scale_report.py reads (docs/scale.md).
// --shared-buffers (simulation only) maps every rank's send and receive buffers onto one region
// (SMPI_SHARED_MALLOC), where P of them would not fit the simulating machine's memory (P = 4096,
// 1 KiB: 16 GiB); their bytes are then nobody's, and nothing is checked.
//
//   smpirun -np 4096 ... scale_probe --specs "tuna:radix=2;tuna_coalesced" --sizes 16,256
//           --json out.json
#include <a2av/a2av.h>

#include <fmt/core.h>
#include <mpi.h>
#ifdef A2AV_SIMULATION
#undef exit  // SimGrid's smpicxx defines exit(x) as a macro, which breaks CLI11's App::exit
#endif
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#ifdef A2AV_SIMULATION
#include <smpi/smpi.h>  // SMPI_SHARED_MALLOC
#endif

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

namespace {

std::uint64_t mix(std::uint64_t x) {  // splitmix64's finalizer
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// A rank's send or receive buffer: its own, or (shared) one region that every rank's maps.
class Buffer {
 public:
  Buffer(std::size_t bytes, bool shared) : bytes_(bytes), shared_(shared) {
#ifdef A2AV_SIMULATION
    if (shared)
      data_ = static_cast<unsigned char*>(SMPI_SHARED_MALLOC(std::max<std::size_t>(bytes, 1)));
#endif
    if (!shared_) data_ = new unsigned char[bytes]();
  }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  ~Buffer() {
#ifdef A2AV_SIMULATION
    if (shared_) {
      SMPI_SHARED_FREE(data_);
      return;
    }
#endif
    delete[] data_;
  }
  unsigned char* data() {
    return data_;
  }
  unsigned char& operator[](std::size_t i) {
    return data_[i];
  }
  std::size_t size() const {
    return bytes_;
  }

 private:
  unsigned char* data_ = nullptr;
  std::size_t bytes_;
  bool shared_;
};

struct Exchange {
  int rank = 0, size = 1;
  std::vector<MPI_Count> send_counts, recv_counts;
  std::vector<MPI_Aint> send_displs, recv_displs;
  std::unique_ptr<Buffer> send, recv;
  bool shared = false;  // the buffers: their bytes are nobody's
};

unsigned char encoding(int from, int to, std::int64_t k) {
  return static_cast<unsigned char>(from * 131 + to * 31 + k * 7);
}

Exchange make_exchange(std::int64_t max_block, std::uint64_t seed, bool shared) {
  Exchange e;
  e.shared = shared;
  MPI_Comm_rank(MPI_COMM_WORLD, &e.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &e.size);
  auto block = [&](int from, int to) {
    const auto cell = static_cast<std::uint64_t>(from) * e.size + to;
    return static_cast<MPI_Count>(mix(seed * 0x9e3779b97f4a7c15ULL + cell) % (max_block + 1));
  };
  MPI_Aint sent = 0, received = 0;
  for (int peer = 0; peer < e.size; ++peer) {
    e.send_counts.push_back(block(e.rank, peer));
    e.recv_counts.push_back(block(peer, e.rank));
    e.send_displs.push_back(sent);
    e.recv_displs.push_back(received);
    sent += e.send_counts.back();
    received += e.recv_counts.back();
  }
  e.send = std::make_unique<Buffer>(sent, shared);
  e.recv = std::make_unique<Buffer>(received, shared);
  if (shared) return e;
  for (int peer = 0; peer < e.size; ++peer)
    for (MPI_Count k = 0; k < e.send_counts[peer]; ++k)
      (*e.send)[e.send_displs[peer] + k] = encoding(e.rank, peer, k);
  return e;
}

bool all_bytes_right(Exchange& e) {
  bool right = true;
  for (int peer = 0; peer < e.size && right; ++peer)
    for (MPI_Count k = 0; k < e.recv_counts[peer] && right; ++k)
      right = (*e.recv)[e.recv_displs[peer] + k] == encoding(peer, e.rank, k);
  int mine = right, all = 0;
  MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  return all;
}

constexpr const char* kVendor = "MPI_Alltoallv";

void run_vendor(Exchange& e) {
  auto ints = [](const auto& v) { return std::vector<int>(v.begin(), v.end()); };
  const auto sc = ints(e.send_counts), sd = ints(e.send_displs), rc = ints(e.recv_counts),
             rd = ints(e.recv_displs);
  MPI_Alltoallv(e.send->data(), sc.data(), sd.data(), MPI_BYTE, e.recv->data(), rc.data(),
                rd.data(), MPI_BYTE, MPI_COMM_WORLD);
}

void run(Exchange& e, const std::string& spec) {
  if (spec == kVendor) return run_vendor(e);
  const int rc = A2AV_Alltoallv_with(
      spec.c_str(), e.send->data(), e.send_counts.data(), e.send_displs.data(), MPI_BYTE,
      e.recv->data(), e.recv_counts.data(), e.recv_displs.data(), MPI_BYTE, MPI_COMM_WORLD);
  if (rc != A2AV_SUCCESS) {
    fmt::print(stderr, "scale_probe: rank {}: {} returned {}\n", e.rank, spec,
               A2AV_Error_string(rc));
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
}

double timed(Exchange& e, const std::string& spec) {
  MPI_Barrier(MPI_COMM_WORLD);
  const double start = MPI_Wtime();
  run(e, spec);
  double seconds = MPI_Wtime() - start;
  MPI_Allreduce(MPI_IN_PLACE, &seconds, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return seconds;
}

double median(std::vector<double> v) {
  std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
  return v[v.size() / 2];
}

int ranks_per_node() {
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  int size = 0;
  MPI_Comm_size(node, &size);
  MPI_Comm_free(&node);
  MPI_Bcast(&size, 1, MPI_INT, 0, MPI_COMM_WORLD);
  return size;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  CLI::App app{"Times a2av specs with O(P) setup per rank (uniform 0..S blocks)"};
  std::vector<std::string> specs{"tuna:radix=2", "tuna_coalesced"};
  std::vector<std::int64_t> sizes{16, 1024};
  int warmup = 1, iterations = 1;
  std::uint64_t seed = 1;
  std::string json;
  bool shared = false;
  app.add_option("--specs", specs, "a2av specs, separated by ';' (MPI_Alltoallv: the vendor's)")
      ->delimiter(';');
  app.add_option("--sizes", sizes, "max block bytes S, separated by ','")
      ->delimiter(',')
      ->check(CLI::Range(std::int64_t{0}, std::int64_t{1} << 30));
  app.add_option("--warmup", warmup, "discarded calls per point")->check(CLI::NonNegativeNumber);
  app.add_option("--iterations", iterations, "timed calls per point")->check(CLI::PositiveNumber);
  app.add_option("--seed", seed, "seed of the block sizes");
  app.add_option("--json", json, "write the records here (rank 0)");
#ifdef A2AV_SIMULATION
  app.add_flag("--shared-buffers", shared,
               "every rank's buffers on one shared region (SMPI_SHARED_MALLOC), not checked");
#endif
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    const int code = app.exit(error);
    MPI_Finalize();
    return code;
  }
  const int per_node = ranks_per_node();
  nlohmann::json results = nlohmann::json::array();
  // Rewritten after every point: a simulation of hours that is stopped keeps what it measured.
  const auto save = [&] {
    if (!json.empty())
      std::ofstream(json) << nlohmann::json{{"schema", "a2av-scale-probe/1"}, {"results", results}}
                          << "\n";
  };
  for (std::int64_t size : sizes) {
    Exchange e = make_exchange(size, seed, shared);
    for (const std::string& spec : specs) {
      if (!shared) std::fill(e.recv->data(), e.recv->data() + e.recv->size(), 0);
      run(e, spec);
      const std::string ran = spec == kVendor ? spec : A2AV_Last_algorithm();  // auto's choice
      long long accounted[2] = {spec == kVendor ? 0 : A2AV_Last_peak_bytes(),
                                spec == kVendor ? 0 : A2AV_Last_in_flight()};
      MPI_Allreduce(MPI_IN_PLACE, accounted, 2, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
      const auto [peak, in_flight] = accounted;
      const bool validated = shared || all_bytes_right(e);
      for (int i = 0; i < warmup; ++i) run(e, spec);
      std::vector<double> times;
      for (int i = 0; i < iterations; ++i) times.push_back(timed(e, spec));
      if (e.rank != 0) continue;
      fmt::print("P={} S={} {:<28} {:>10.1f} us  peak {} B  in flight {}  ran {}{}\n", e.size, size,
                 spec, median(times) * 1e6, peak, in_flight, ran,
                 shared      ? "  (shared buffers, not checked)"
                 : validated ? ""
                             : "  WRONG RESULT");
      std::fflush(stdout);
      results.push_back(
          {{"ranks", e.size},
           {"ranks_per_node", per_node},
           {"pattern", "uniform"},
           {"seed", seed},
           {"size", size},
           {"requested", spec},
           {"algorithm", ran},
           {"median_s", median(times)},
           {"peak_temp_bytes", spec == kVendor ? nlohmann::json() : nlohmann::json(peak)},
           {"max_in_flight", spec == kVendor ? nlohmann::json() : nlohmann::json(in_flight)},
           {"validated", shared ? nlohmann::json() : nlohmann::json(validated)}});
      save();
      if (!validated) MPI_Abort(MPI_COMM_WORLD, 2);
    }
  }
  MPI_Finalize();
  return 0;
}
