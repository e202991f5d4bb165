// particles: particle rebalancing over a2av. Particles in the periodic unit box drift towards
// an attractor that circles the box (particles.hpp), so the load of a fixed decomposition
// drifts out of balance. The box is decomposed along a Hilbert curve (decomposition.hpp);
// each step the particles that left their rank's part go to their new owner, and every K
// steps (or sooner, when a rank would exceed its fixed capacity) the curve is cut anew into P
// parts of N/P particles and the particles move with the same exchange or with
// a2av::Redistributor (exchange.hpp). Every rank keeps its particles in one array of fixed
// capacity, the memory budget.
//
// Every step it checks that the particle count and an order-independent checksum of the
// ids are those of the start, that a checksum of the full particle states is the same after
// the exchange as before it, and that every particle lies in its owner's part; it exits
// non-zero on any failure. --bench runs the same problem with each exchange and prints time
// and memory per rank; the final states must agree across exchanges, as the motion of a
// particle does not depend on which rank moves it.
#include "decomposition.hpp"
#include "exchange.hpp"
#include "particles.hpp"

#include <a2av/error.hpp>

#include <malloc.h>
#include <mpi.h>
#include <sys/resource.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <array>
#include <climits>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <string>
#include <vector>

namespace {

using particles::Census;
using particles::Decomposition;
using particles::Exchange;
using particles::Particle;

struct Args {
  std::int64_t particles_per_rank = 100000;
  int steps = 50;
  int rebalance_every = 10;
  double capacity_factor = 1.25;
  int grid_level = 7;
  std::string exchange = "inplace";
  std::string rebalance = "exchange";
  // The chunk is the in-place exchange's only extra memory besides O(P) metadata; 256 KiB is
  // about 5% of the default array, and no slower here than the library's 1 MiB.
  std::string inplace_algorithm = "inplace_auto:chunk_bytes=262144";
  std::string redistribute_algorithm = "auto";
  bool bench = false;
  bool verbose = false;
  int repetitions = 1;
  std::uint64_t seed = 1;
};

// One way of moving particles: the per-step exchange, and whether rebalancing uses the
// Redistributor instead.
struct Mode {
  std::string name;
  Exchange exchange;
  bool redistribute;
};

struct Result {
  bool ok = true;
  double total = 0, exchange = 0, sort = 0, move = 0, cut = 0, check = 0;  // s, max over ranks
  int scheduled = 0, forced = 0;
  std::int64_t particles = 0, leavers = 0;
  double peak_load = 0;  // largest count any rank held after an exchange, over N/P
  std::int64_t capacity = 0, array_bytes = 0, extra_bytes = 0, library_bytes = 0;  // max over ranks
  std::int64_t table_bytes = 0, histogram_bytes = 0;
  std::map<std::string, int> algorithms;  // rank 0's
  std::uint64_t final_state = 0;
};

int rank_of() {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}

int size_of() {
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return size;
}

double max_over_ranks(double x) {
  MPI_Allreduce(MPI_IN_PLACE, &x, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return x;
}

std::int64_t max_over_ranks(std::int64_t x) {
  MPI_Allreduce(MPI_IN_PLACE, &x, 1, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD);
  return x;
}

double mib(std::int64_t bytes) {
  return static_cast<double>(bytes) / (1 << 20);
}

// Peak resident memory of this process (VmHWM; getrusage's ru_maxrss where /proc is missing).
std::int64_t peak_rss_bytes() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind("VmHWM:", 0) == 0) return std::stoll(line.substr(6)) * 1024;
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<std::int64_t>(usage.ru_maxrss) * 1024;
}

// Sets the peak back to the current RSS (Linux 4.0 and later), after handing freed memory
// back to the system, so that each --bench mode's peak is its own. Returns false where the
// kernel does not allow it: the peaks are then running maxima.
bool reset_peak_rss() {
  malloc_trim(0);
  std::ofstream clear("/proc/self/clear_refs");
  clear << "5";
  clear.flush();
  return static_cast<bool>(clear);
}

// A uniform double in [0, 1) from the high 32 bits: 32 bits keep (cell + u) / grid below 1
// for every grid the example allows.
double unit(std::uint64_t bits) {
  return static_cast<double>(bits >> 32) * 0x1p-32;
}

// n0 particles per rank, ids rank * n0 .. rank * n0 + n0 - 1, placed uniformly in the rank's
// part of the initial decomposition, at rest.
void place_initial(std::span<Particle> parts, const Decomposition& decomposition,
                   const Args& args) {
  const auto first_id =
      static_cast<std::uint64_t>(rank_of()) * static_cast<std::uint64_t>(args.particles_per_rank);
  for (std::size_t i = 0; i < parts.size(); ++i) {
    Particle& p = parts[i];
    p = {first_id + i, 0, 0, 0, 0};
    const std::uint64_t h =
        particles::mix(args.seed * 0x9e3779b97f4a7c15ULL ^ particles::mix(p.id));
    decomposition.sample(rank_of(), unit(h), unit(h << 32), unit(particles::mix(h)), &p.x, &p.y);
  }
}

// Sums over all ranks of what must not change: count, id checksum, state checksum; and
// the particles that lie outside their rank's part.
struct Tally {
  std::uint64_t count = 0, ids = 0, states = 0, misplaced = 0;
};

Tally tally(std::span<const Particle> parts, const Decomposition& decomposition) {
  std::array<std::uint64_t, 4> t = {parts.size(), 0, 0, 0};
  const int rank = rank_of();
  for (const Particle& p : parts) {
    t[1] += particles::id_hash(p);
    t[2] += particles::state_hash(p);
    t[3] += decomposition.owner(p) != rank;
  }
  MPI_Allreduce(MPI_IN_PLACE, t.data(), 4, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
  return {t[0], t[1], t[2], t[3]};
}

Result simulate(const Args& args, const Mode& mode) {
  const int rank = rank_of(), size = size_of();
  Result result;
  result.particles = args.particles_per_rank * size;
  result.capacity = static_cast<std::int64_t>(
      std::ceil(args.capacity_factor * static_cast<double>(args.particles_per_rank)));
  const std::int64_t capacity = result.capacity;
  const double mean = static_cast<double>(args.particles_per_rank);

  Decomposition decomposition(args.grid_level, size);
  std::vector<Particle> slots(static_cast<std::size_t>(capacity));
  std::int64_t n = args.particles_per_rank;
  place_initial(std::span(slots).first(static_cast<std::size_t>(n)), decomposition, args);
  const Tally start = tally(std::span(slots).first(static_cast<std::size_t>(n)), decomposition);
  particles::Router router(mode.exchange, args.inplace_algorithm,
                           mode.redistribute ? args.redistribute_algorithm : "", slots,
                           MPI_COMM_WORLD);
  const particles::Flow flow{.seed = args.seed};

  MPI_Barrier(MPI_COMM_WORLD);
  const double begin = MPI_Wtime();
  for (int step = 1; step <= args.steps && result.ok; ++step) {
    double t = MPI_Wtime();
    const auto live = std::span(slots).first(static_cast<std::size_t>(n));
    std::uint64_t local_state = 0;
    const particles::Attractor attractor = particles::attractor_at(step, flow);
    for (Particle& p : live) {
      particles::advance(p, attractor, flow);
      local_state += particles::state_hash(p);
    }
    result.move += MPI_Wtime() - t;

    // The census under the current decomposition tells whether every rank could take its
    // arrivals; if not, rebalance now rather than overflow the budget.
    const bool scheduled = step % args.rebalance_every == 0;
    bool forced = false;
    Census census;
    if (!scheduled) {
      census = take_census(live, decomposition, local_state, MPI_COMM_WORLD);
      forced = census.max_total() > capacity;
    }
    if (scheduled || forced) {
      t = MPI_Wtime();
      decomposition.rebalance(live, MPI_COMM_WORLD);
      census = take_census(live, decomposition, local_state, MPI_COMM_WORLD);
      result.cut += MPI_Wtime() - t;
      result.scheduled += scheduled;
      result.forced += forced;
      if (census.max_total() > capacity) {
        if (rank == 0)
          std::printf(
              "FAILED at step %d: after rebalancing a rank would hold %lld particles, over its "
              "capacity %lld; raise --capacity-factor or --grid-level\n",
              step, static_cast<long long>(census.max_total()), static_cast<long long>(capacity));
        result.ok = false;
        break;
      }
    }
    result.leavers += census.leavers();
    result.peak_load = std::max(result.peak_load, static_cast<double>(census.max_total()) / mean);

    n = router.route(n, decomposition, census, scheduled || forced);

    t = MPI_Wtime();
    const Tally now = tally(std::span(slots).first(static_cast<std::size_t>(n)), decomposition);
    result.check += MPI_Wtime() - t;
    const bool same_particles = now.count == start.count && now.ids == start.ids;
    const bool same_states = now.states == census.state_sum;
    if (!same_particles || !same_states || now.misplaced != 0) {
      if (rank == 0)
        std::printf("FAILED at step %d (%s): %llu particles (expected %llu)%s%s, %llu misplaced\n",
                    step, mode.name.c_str(), static_cast<unsigned long long>(now.count),
                    static_cast<unsigned long long>(start.count),
                    now.ids == start.ids ? "" : ", id checksum changed",
                    same_states ? "" : ", state checksum changed by the exchange",
                    static_cast<unsigned long long>(now.misplaced));
      result.ok = false;
    }
    result.final_state = now.states;
    if (args.verbose && rank == 0)
      std::printf(
          "step %3d: %7lld leavers (%.2f%% of N), largest rank %.3f N/P%s\n", step,
          static_cast<long long>(census.leavers()),
          100.0 * static_cast<double>(census.leavers()) / static_cast<double>(result.particles),
          static_cast<double>(census.max_total()) / mean,
          forced      ? ", rebalanced (forced)"
          : scheduled ? ", rebalanced"
                      : "");
  }
  result.total = max_over_ranks(MPI_Wtime() - begin);

  const particles::RouteStats& stats = router.stats();
  result.exchange = max_over_ranks(stats.exchange_seconds);
  result.sort = max_over_ranks(stats.sort_seconds);
  result.move = max_over_ranks(result.move);
  result.cut = max_over_ranks(result.cut);
  result.check = max_over_ranks(result.check);
  result.array_bytes = capacity * static_cast<std::int64_t>(sizeof(Particle));
  result.extra_bytes = max_over_ranks(stats.peak_extra_bytes);
  result.library_bytes = max_over_ranks(stats.peak_library_bytes);
  result.table_bytes = decomposition.table_bytes();
  result.histogram_bytes = decomposition.histogram_bytes();
  result.algorithms = stats.algorithms;
  return result;
}

Mode mode_of(const Args& args) {
  const Exchange exchange = args.exchange == "vendor" ? Exchange::vendor
                            : args.exchange == "auto" ? Exchange::automatic
                                                      : Exchange::inplace;
  const bool redistribute = args.rebalance == "redistribute";
  return {redistribute ? args.exchange + "+redistribute" : args.exchange, exchange, redistribute};
}

void print_setup(const Args& args, const Result& r) {
  std::printf(
      "particles: P = %d, %lld per rank (N = %lld), capacity %lld per rank (x%.2f, %.2f MiB), "
      "%d steps, rebalance every %d, grid %dx%d cells\n",
      size_of(), static_cast<long long>(args.particles_per_rank),
      static_cast<long long>(r.particles), static_cast<long long>(r.capacity), args.capacity_factor,
      mib(r.array_bytes), args.steps, args.rebalance_every, 1 << args.grid_level,
      1 << args.grid_level);
}

bool run(const Args& args) {
  const Mode mode = mode_of(args);
  const Result r = simulate(args, mode);
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  const std::int64_t rss = max_over_ranks(static_cast<std::int64_t>(usage.ru_maxrss) * 1024);
  if (rank_of() != 0) return r.ok;
  print_setup(args, r);
  if (!r.ok) return false;
  std::printf(
      "checks passed at every step: count %lld and id checksum unchanged, state checksum "
      "unchanged by every exchange, every particle on its owner\n",
      static_cast<long long>(r.particles));
  std::printf(
      "rebalances: %d scheduled, %d forced; leavers %.3f%% of N per step; largest rank "
      "%.3f N/P\n",
      r.scheduled, r.forced,
      100.0 * static_cast<double>(r.leavers) / args.steps / static_cast<double>(r.particles),
      r.peak_load);
  std::printf(
      "time [s], max over ranks: total %.3f, exchange %.3f, sort by owner %.3f, move %.3f, "
      "rebalance cuts %.3f, checks %.3f\n",
      r.total, r.exchange, r.sort, r.move, r.cut, r.check);
  std::printf("exchanges (%s):", mode.name.c_str());
  for (const auto& [algorithm, calls] : r.algorithms)
    std::printf(" %s x%d;", algorithm.c_str(), calls);
  std::printf(
      "\nmemory per rank, max over ranks: particle array %.2f MiB + exchange extra %.2f MiB "
      "(of it a2av temporary %.2f MiB) = %.2f MiB; decomposition tables %.2f MiB + histogram "
      "%.2f MiB while rebalancing; peak RSS %.2f MiB\n",
      mib(r.array_bytes), mib(r.extra_bytes), mib(r.library_bytes),
      mib(r.array_bytes + r.extra_bytes), mib(r.table_bytes), mib(r.histogram_bytes), mib(rss));
  std::printf("final state checksum %016llx\n", static_cast<unsigned long long>(r.final_state));
  return r.ok;
}

double median(std::vector<double> v) {
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

// Every mode on the same problem, one after the other in this process, `repetitions` times
// with the modes alternating so that drift in the machine's load hits all alike; times are
// medians over the repetitions. The RSS peak is reset before every run.
bool bench(const Args& args) {
  const std::array<Mode, 4> modes = {Mode{"vendor", Exchange::vendor, false},
                                     Mode{"auto", Exchange::automatic, false},
                                     Mode{"inplace", Exchange::inplace, false},
                                     Mode{"inplace+redistribute", Exchange::inplace, true}};
  std::vector<Result> results(modes.size());
  std::vector<std::vector<double>> totals(modes.size()), exchanges(modes.size());
  std::vector<std::int64_t> rss(modes.size(), 0);
  std::vector<char> passed(modes.size(), 1);
  bool resettable = true;
  for (int rep = 0; rep < args.repetitions; ++rep) {
    for (std::size_t m = 0; m < modes.size(); ++m) {
      resettable = reset_peak_rss() && resettable;
      const Result r = simulate(args, modes[m]);
      rss[m] = std::max(rss[m], max_over_ranks(peak_rss_bytes()));
      passed[m] = passed[m] && r.ok && (rep == 0 || r.final_state == results[m].final_state);
      totals[m].push_back(r.total);
      exchanges[m].push_back(r.exchange);
      if (rep == 0) results[m] = r;
    }
  }
  for (std::size_t m = 0; m < modes.size(); ++m) {
    results[m].total = median(totals[m]);
    results[m].exchange = median(exchanges[m]);
  }
  // The motion does not depend on the exchange, so neither may the final state.
  bool ok = true;
  for (std::size_t m = 0; m < modes.size(); ++m) {
    passed[m] = passed[m] && results[m].final_state == results[0].final_state;
    ok = ok && passed[m];
  }
  if (rank_of() != 0) return ok;
  print_setup(args, results[0]);
  std::printf(
      "# time [s]: max over ranks of the run and of its exchanges, median of %d; speedup: "
      "vendor's over this one's; memory per rank [MiB], max over ranks: particle array + exchange "
      "extra "
      "(receive buffer or block map, plus a2av temporary), and peak RSS%s\n",
      args.repetitions, resettable ? "" : " (a running maximum: this kernel cannot reset it)");
  std::printf("%-21s %9s %9s %8s %8s %9s %9s %9s %9s  %s\n", "mode", "total", "exchange", "speedup",
              "(total)", "array", "extra", "peak", "RSS", "check");
  for (std::size_t m = 0; m < modes.size(); ++m) {
    const Result& r = results[m];
    std::printf("%-21s %9.3f %9.3f %8.2f %8.2f %9.2f %9.2f %9.2f %9.2f  %s\n",
                modes[m].name.c_str(), r.total, r.exchange, results[0].exchange / r.exchange,
                results[0].total / r.total, mib(r.array_bytes), mib(r.extra_bytes),
                mib(r.array_bytes + r.extra_bytes), mib(rss[m]), passed[m] ? "passed" : "FAILED");
  }
  for (std::size_t m = 0; m < modes.size(); ++m) {
    std::printf("# %s ran:", modes[m].name.c_str());
    for (const auto& [algorithm, calls] : results[m].algorithms)
      std::printf(" %s x%d;", algorithm.c_str(), calls);
    std::printf("\n");
  }
  std::printf("# rebalances %d scheduled, %d forced; leavers %.3f%% of N per step\n",
              results[0].scheduled, results[0].forced,
              100.0 * static_cast<double>(results[0].leavers) / args.steps /
                  static_cast<double>(results[0].particles));
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  CLI::App app{"Particle rebalancing with a2av's exchanges; run under mpiexec", "particles"};
  Args args;
  app.add_option("--particles-per-rank", args.particles_per_rank, "Particles each rank starts with")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{1} << 30));
  app.add_option("--steps", args.steps, "Time steps")->check(CLI::Range(0, 1 << 20));
  app.add_option("--rebalance-every", args.rebalance_every, "K: rebalance every K steps")
      ->check(CLI::Range(1, 1 << 20));
  app.add_option("--capacity-factor", args.capacity_factor,
                 "Capacity of each rank's particle array, in initial particles per rank")
      ->check(CLI::Range(1.0, 16.0));
  app.add_option("--grid-level", args.grid_level, "L: the decomposition grid has 2^L x 2^L cells")
      ->check(CLI::Range(1, 12));
  app.add_option("--exchange", args.exchange, "Exchange of the particles that change rank")
      ->check(CLI::IsMember({"vendor", "auto", "inplace"}));
  app.add_option("--rebalance", args.rebalance,
                 "Move particles at a rebalance with the exchange or a2av::Redistributor")
      ->check(CLI::IsMember({"exchange", "redistribute"}));
  app.add_option("--inplace-algorithm", args.inplace_algorithm,
                 "a2av::exchange_inplace spec (inplace_auto, inplace_bitonic, inplace_pairwise)");
  app.add_option("--redistribute-algorithm", args.redistribute_algorithm,
                 "a2av::Redistributor spec (auto, parking, cyclic)");
  app.add_flag("--bench", args.bench,
               "Run vendor, auto, inplace and inplace+redistribute; print time and memory");
  app.add_option("--repetitions", args.repetitions, "Runs of every mode with --bench")
      ->check(CLI::Range(1, 100));
  app.add_flag("--verbose", args.verbose, "Print every step's leavers and largest rank");
  app.add_option("--seed", args.seed, "Seed of the initial positions and the random kicks");
  int rc = 0;
  try {
    app.parse(argc, argv);
    const int size = size_of();
    if (std::ceil(args.capacity_factor * static_cast<double>(args.particles_per_rank)) > INT_MAX)
      throw CLI::ValidationError("--particles-per-rank", "the capacity must stay below 2^31");
    if ((std::int64_t{1} << (2 * args.grid_level)) < size)
      throw CLI::ValidationError("--grid-level", "the grid needs at least one cell per rank");
    rc = (args.bench ? bench(args) : run(args)) ? 0 : 1;
  } catch (const CLI::ParseError& e) {
    rc = rank_of() == 0 ? app.exit(e) : (e.get_exit_code() != 0);
  } catch (const a2av::Error& e) {
    if (rank_of() == 0) std::fprintf(stderr, "particles: %s\n", e.what());
    rc = 1;
  }
  MPI_Finalize();
  return rc;
}
