// tuna_ablation: what each of TuNA's lean-round choices buys. It times a textbook two-phase
// TuNA (Fan et al. [Fan24], Algorithm 1: per round a blocking metadata
// MPI_Sendrecv, then every block packed, then the data MPI_Sendrecv; store of B*M bytes),
// then the same with one change at a time, then a2av's tuna (batch 1, then all rounds of a
// digit in flight), against the vendor MPI_Alltoallv. Rounds come from a2av's own schedule.
//
//   mpiexec -n 8 tuna_ablation --radix 2 --sizes 16,1024,16384
#include <a2av/a2av.h>

#include "alltoallv/tuna.hpp"

#include <fmt/core.h>
#include <mpi.h>
#ifdef A2AV_SIMULATION
#undef exit  // SimGrid's smpicxx defines exit(x) as a macro, which breaks CLI11's App::exit
#endif
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <functional>
#include <random>
#include <vector>

namespace {

using Bytes = std::vector<unsigned char>;

struct Problem {
  int rank, size;
  std::vector<MPI_Count> send_bytes, recv_bytes;
  std::vector<MPI_Aint> sdispl, rdispl;
  Bytes send, recv;
};

Problem make_problem(std::int64_t max_block, std::uint64_t seed) {
  Problem p;
  MPI_Comm_rank(MPI_COMM_WORLD, &p.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &p.size);
  std::mt19937_64 rng(seed);
  std::vector<std::int64_t> matrix(static_cast<std::size_t>(p.size) * p.size);
  for (auto& cell : matrix) cell = static_cast<std::int64_t>(rng() % (max_block + 1));
  std::int64_t s = 0, r = 0;
  for (int j = 0; j < p.size; ++j) {
    p.send_bytes.push_back(matrix[p.rank * p.size + j]);
    p.recv_bytes.push_back(matrix[j * p.size + p.rank]);
    p.sdispl.push_back(s);
    p.rdispl.push_back(r);
    s += p.send_bytes.back();
    r += p.recv_bytes.back();
  }
  p.send.resize(s);
  for (std::int64_t i = 0; i < s; ++i) p.send[i] = static_cast<unsigned char>(i * 7 + p.rank);
  p.recv.resize(r);
  return p;
}

// The textbook variants differ in two switches.
struct Variant {
  bool header;  // sizes travel in the data message (probe) instead of a metadata sendrecv
  bool direct;  // the direct block goes alone, in place, with no metadata
};

void textbook_tuna(Problem& p, int radix, Variant v) {
  const int n = p.size, me = p.rank;
  auto mod = [n](int x) { return ((x % n) + n) % n; };
  std::int64_t max_block = *std::max_element(p.send_bytes.begin(), p.send_bytes.end());
  std::vector<std::int64_t> stored(n, 0);
  MPI_Allreduce(MPI_IN_PLACE, &max_block, 1, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD);
  Bytes store(static_cast<std::size_t>(n) * max_block);  // a slot per distance (>= paper's B*M)
  std::memcpy(p.recv.data() + p.rdispl[me], p.send.data() + p.sdispl[me], p.send_bytes[me]);
  std::int64_t place = 1;
  int digit = 0;
  for (const auto& round : a2av::tuna_rounds(n, radix)) {
    for (; digit < round.digit; ++digit) place *= radix;
    const int to = mod(me + round.distance), from = mod(me - round.distance);
    std::vector<int> moving = round.forwarded;
    if (!v.direct) moving.insert(moving.begin(), round.distance);
    std::sort(moving.begin(), moving.end());
    auto held = [&](int d) -> std::pair<const unsigned char*, MPI_Count> {
      if (d % place == 0) return {p.send.data() + p.sdispl[mod(me + d)], p.send_bytes[mod(me + d)]};
      return {store.data() + d * max_block, stored[d]};
    };
    std::vector<std::int64_t> sizes_out, sizes_in(moving.size());
    Bytes out(moving.size() * sizeof(std::int64_t) * v.header);
    for (int d : moving) sizes_out.push_back(held(d).second);
    if (v.header) std::memcpy(out.data(), sizes_out.data(), out.size());
    for (int d : moving) out.insert(out.end(), held(d).first, held(d).first + held(d).second);
    MPI_Request direct_reqs[2];
    if (v.direct) {
      MPI_Irecv(p.recv.data() + p.rdispl[from], static_cast<int>(p.recv_bytes[from]), MPI_BYTE,
                from, 2, MPI_COMM_WORLD, &direct_reqs[0]);
      MPI_Isend(p.send.data() + p.sdispl[to], static_cast<int>(p.send_bytes[to]), MPI_BYTE, to, 2,
                MPI_COMM_WORLD, &direct_reqs[1]);
    }
    Bytes in;
    if (!moving.empty()) {
      if (v.header) {
        MPI_Request request;
        MPI_Isend(out.data(), static_cast<int>(out.size()), MPI_BYTE, to, 1, MPI_COMM_WORLD,
                  &request);
        MPI_Status status;
        MPI_Probe(from, 1, MPI_COMM_WORLD, &status);
        int count = 0;
        MPI_Get_count(&status, MPI_BYTE, &count);
        in.resize(count);
        MPI_Recv(in.data(), count, MPI_BYTE, from, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Wait(&request, MPI_STATUS_IGNORE);
        std::memcpy(sizes_in.data(), in.data(), sizes_in.size() * sizeof(std::int64_t));
        in.erase(in.begin(), in.begin() + sizes_in.size() * sizeof(std::int64_t));
      } else {
        MPI_Sendrecv(sizes_out.data(), static_cast<int>(sizes_out.size()), MPI_INT64_T, to, 0,
                     sizes_in.data(), static_cast<int>(sizes_in.size()), MPI_INT64_T, from, 0,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        std::int64_t total = 0;
        for (auto s : sizes_in) total += s;
        in.resize(total);
        MPI_Sendrecv(out.data(), static_cast<int>(out.size()), MPI_BYTE, to, 1, in.data(),
                     static_cast<int>(total), MPI_BYTE, from, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      }
    }
    std::int64_t at = 0;
    for (std::size_t i = 0; i < moving.size(); ++i) {
      const int d = moving[i];
      if (d < place * radix) {
        std::memcpy(p.recv.data() + p.rdispl[mod(me - d)], in.data() + at, sizes_in[i]);
      } else {
        std::memcpy(store.data() + d * max_block, in.data() + at, sizes_in[i]);
        stored[d] = sizes_in[i];
      }
      at += sizes_in[i];
    }
    if (v.direct) MPI_Waitall(2, direct_reqs, MPI_STATUSES_IGNORE);
  }
}

void run_vendor(Problem& p) {
  std::vector<int> sc(p.send_bytes.begin(), p.send_bytes.end()),
      sd(p.sdispl.begin(), p.sdispl.end()), rc(p.recv_bytes.begin(), p.recv_bytes.end()),
      rd(p.rdispl.begin(), p.rdispl.end());
  MPI_Alltoallv(p.send.data(), sc.data(), sd.data(), MPI_BYTE, p.recv.data(), rc.data(), rd.data(),
                MPI_BYTE, MPI_COMM_WORLD);
}

void run_a2av(Problem& p, const std::string& spec) {
  A2AV_Alltoallv_with(spec.c_str(), p.send.data(), p.send_bytes.data(), p.sdispl.data(), MPI_BYTE,
                      p.recv.data(), p.recv_bytes.data(), p.rdispl.data(), MPI_BYTE,
                      MPI_COMM_WORLD);
}

double median_time(Problem& p, const std::function<void(Problem&)>& run, int iterations) {
  std::vector<double> times;
  for (int i = 0; i < iterations + 5; ++i) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    run(p);
    double t = MPI_Wtime() - t0;
    MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (i >= 5) times.push_back(t);
  }
  std::nth_element(times.begin(), times.begin() + times.size() / 2, times.end());
  return times[times.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  CLI::App app{"Times textbook two-phase TuNA against a2av's lean rounds"};
  int radix = 2, iterations = 200;
  std::vector<std::int64_t> sizes{16, 1024, 16384};
  app.add_option("--radix", radix, "TuNA radix")->check(CLI::Range(2, 1 << 20));
  app.add_option("--sizes", sizes, "max block bytes S (uniform 0..S)")->delimiter(',');
  app.add_option("--iterations", iterations, "timed iterations")->check(CLI::PositiveNumber);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    MPI_Finalize();
    return code;
  }
  int size = 1, rank = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  radix = std::min(radix, std::max(2, size));
  const std::string lean = fmt::format("tuna:radix={}", radix);
  const std::vector<std::pair<std::string, std::function<void(Problem&)>>> variants = {
      {"vendor MPI_Alltoallv", run_vendor},
      {"textbook two-phase",
       [&](Problem& p) {
         textbook_tuna(p, radix, {false, false});
       }},
      {"+ sizes in data header",
       [&](Problem& p) {
         textbook_tuna(p, radix, {true, false});
       }},
      {"+ direct block alone, in place",
       [&](Problem& p) {
         textbook_tuna(p, radix, {false, true});
       }},
      {"+ both",
       [&](Problem& p) {
         textbook_tuna(p, radix, {true, true});
       }},
      {"a2av " + lean + ",batch=1", [&](Problem& p) { run_a2av(p, lean + ",batch=1"); }},
      {"a2av " + lean + " (digit in flight)", [&](Problem& p) { run_a2av(p, lean); }},
  };
  for (std::int64_t s : sizes) {
    Problem p = make_problem(s, 7);
    run_vendor(p);
    const Bytes reference = p.recv;
    if (rank == 0)
      fmt::print("\n# P={} radix={} uniform 0..{} bytes, median of {}\n", size, radix, s,
                 iterations);
    double vendor = 0;
    for (const auto& [name, run] : variants) {
      std::fill(p.recv.begin(), p.recv.end(), 0);
      run(p);
      int ok = p.recv == reference, all_ok = 0;
      MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
      const double t = median_time(p, run, iterations);
      if (vendor == 0) vendor = t;
      if (rank == 0)
        fmt::print("{:<40} {:>9.1f} us  {:>5.2f}x vendor{}\n", name, t * 1e6, t / vendor,
                   all_ok ? "" : "  WRONG RESULT");
    }
  }
  MPI_Finalize();
  return 0;
}
