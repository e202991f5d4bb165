// inplace_auto: the switch between the two in-place algorithms that Zhuang et al. leave as
// future work (Zhuang et al. [Zhuang09], Sections 3.3 and 5).
//
// The cost of either algorithm depends on the whole count matrix (pairwise forwards what a
// pair cannot exchange directly and can serialize, Zhuang case 4; bitonic moves little when
// the data are nearly in order), which no rank holds. So each rank replays both algorithms
// on metadata alone, O(P) memory: the bitonic network on its run lists (the same
// compare-split arithmetic, no data), and the pairwise meetings on per-destination counts.
// Each replay carries a clock along the messages: a step ends at max(both partners' clocks)
// + its bytes + a per-step latency, so the final maximum over ranks is the critical path of
// that algorithm's actual schedule, in bytes. auto takes the shorter. Cost: L(L+1)/2 + 2P-3
// small messages on the critical path and one MPI_Allreduce of two numbers.
#include "inplace/algorithms.hpp"

#include "core/check.hpp"
#include "core/tags.hpp"

namespace a2av::inplace {
namespace {

constexpr double kStepLatencyBytes = 32 * 1024;  // one round trip, as bytes of bandwidth

// Both partners leave a step at the later clock plus the step's cost.
double meet_clock(const State& s, int peer, double clock, double bytes) {
  double theirs = 0;
  check_mpi(
      MPI_Sendrecv(&clock, 1, MPI_DOUBLE, peer, tags::kInplaceClock.tag(), &theirs, 1, MPI_DOUBLE,
                   peer, tags::kInplaceClock.tag(), s.ctx.comm, MPI_STATUS_IGNORE),
      "MPI_Sendrecv");
  return std::max(clock, theirs) + bytes + kStepLatencyBytes;
}

double replay_bitonic(State& s) {
  const int rank = s.ctx.rank;
  double clock = 0;
  const Runs original = s.runs;  // the replay moves the run lists alone
  for_each_bitonic_step(rank, s.ctx.size, [&](int peer) {
    const Runs theirs = exchange_runs(s, peer);
    const bool lower = rank < peer;
    const std::int64_t m =
        lower ? upper_share(s.runs, theirs, s.length()) : upper_share(theirs, s.runs, s.length());
    s.runs = bitonic_keep(s.runs, theirs, m, lower, s.length());
    clock = meet_clock(s, peer, clock, static_cast<double>(m * s.elem()));
  });
  s.runs = original;
  return clock;
}

// Elements held per destination (fillers included): all the pairwise meetings look at.
std::vector<std::int64_t> held_per_destination(const State& s) {
  std::vector<std::int64_t> held(s.ctx.size, 0);
  for (const Run& r : s.runs) held[r.key / s.length()] += r.length;
  return held;
}

double replay_pairwise(const State& s) {
  const int rank = s.ctx.rank, size = s.ctx.size;
  std::vector<std::int64_t> held = held_per_destination(s);
  std::vector<std::int64_t> given(size);
  double clock = 0;
  for (int peer = 0; peer < size; ++peer) {
    if (peer == rank) continue;
    const bool higher = rank > peer;
    std::int64_t count = higher ? held[peer] : 0;
    if (higher) {  // our S(peer) for as many of its smallest keys beyond S(peer)
      check_mpi(
          MPI_Sendrecv(&count, 1, MPI_INT64_T, peer, tags::kInplaceClock.tag(), given.data(), size,
                       MPI_INT64_T, peer, tags::kInplaceClock.tag(), s.ctx.comm, MPI_STATUS_IGNORE),
          "MPI_Sendrecv");
      held[peer] = 0;
      for (int d = 0; d < size; ++d) held[d] += given[d];
    } else {
      check_mpi(MPI_Recv(&count, 1, MPI_INT64_T, peer, tags::kInplaceClock.tag(), s.ctx.comm,
                         MPI_STATUS_IGNORE),
                "MPI_Recv");
      std::fill(given.begin(), given.end(), 0);
      std::int64_t left = count;
      for (int d = rank + 1; d < size && left > 0; ++d) {
        given[d] = std::min(left, held[d]);
        held[d] -= given[d];
        left -= given[d];
      }
      held[rank] += count;
      check_mpi(
          MPI_Send(given.data(), size, MPI_INT64_T, peer, tags::kInplaceClock.tag(), s.ctx.comm),
          "MPI_Send");
    }
    clock = meet_clock(s, peer, clock, static_cast<double>(count * s.elem()));
  }
  return clock;
}

}  // namespace

AutoChoice choose_algorithm(State& state) {
  double clocks[2] = {replay_bitonic(state), replay_pairwise(state)};
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, clocks, 2, MPI_DOUBLE, MPI_MAX, state.ctx.comm),
            "MPI_Allreduce");
  return {clocks[1] <= clocks[0], clocks[1], clocks[0]};
}

}  // namespace a2av::inplace
