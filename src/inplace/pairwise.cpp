// inplace_pairwise: the asymmetric pairwise exchange (Zhuang et al. [Zhuang09],
// Section 3.3, Fig. 4). Rank i meets every other rank once: first the lower ranks
// 0..i-1, then the higher ones i+1..P-1. When i meets a lower rank j, i hands over every
// element of S(j) it holds and takes in as many elements of j's choosing; when it meets a
// higher rank, it takes in every element of S(i) that rank holds and hands over as many of
// its smallest keys outside S(i) (S(i+1) first, then S(i+2), ...: the paper's rule, and the
// one under which nothing is ever left behind). Every rank keeps its elements in key order,
// so each meeting swaps one contiguous range on each side, followed by one local merge of
// two run lists.
//
// Why every range is contiguous: a rank meeting lower rank j holds no key below S(j) (it
// gave S(m), m < j, away at earlier meetings and is only handed keys above the giver's own
// S), so S(j) is its prefix; a rank meeting higher ranks holds S(i) and keys above it only.
// Meetings happen in the order of the pair (max, min) on both sides, so the blocking
// exchanges cannot deadlock. Cost: P-1 meetings per rank, each a run-list message or two
// and a swap of exactly what the pair must move; forwarded elements make the worst case
// O(N P) (the paper's serialized example, Zhuang case 4). Extra memory: the chunk buffer
// plus run lists.
#include "inplace/algorithms.hpp"

namespace a2av::inplace {
namespace {

// We are the higher rank: our prefix S(peer) for the peer's choice of elements.
void meet_lower(State& s, int peer) {
  const std::int64_t c = s.length();
  const std::int64_t give = count_below(s.runs, (peer + 1) * c);
  const Runs out = slice_runs(s.runs, 0, give);
  send_runs(s, peer, out);
  if (give == 0) return;
  const Runs in = recv_runs(s, peer);
  swap_range(s, peer, s.base, out, in);
  s.runs = merge_runs(s.base, s.elem(), in, slice_runs(s.runs, give, c - give), s.scratch);
  s.note_runs(s.runs.size());
}

// We are the lower rank: the peer's part of S(rank) for our smallest keys beyond S(rank).
void meet_higher(State& s, int peer) {
  const std::int64_t c = s.length();
  const Runs in = recv_runs(s, peer);
  const std::int64_t take = total_length(in);
  if (take == 0) return;
  const std::int64_t own = count_below(s.runs, (s.ctx.rank + 1) * c);
  const Runs out = slice_runs(s.runs, own, take);
  send_runs(s, peer, out);
  swap_range(s, peer, s.base + own * s.elem(), out, in);
  Runs merged = merge_runs(s.base, s.elem(), slice_runs(s.runs, 0, own), in, s.scratch);
  for (const Run& r : slice_runs(s.runs, own + take, c - own - take)) append_run(merged, r);
  s.runs = std::move(merged);
  s.note_runs(s.runs.size());
}

}  // namespace

void run_pairwise(State& state) {
  const int rank = state.ctx.rank, size = state.ctx.size;
  for (int peer = 0; peer < rank; ++peer) meet_lower(state, peer);
  for (int peer = rank + 1; peer < size; ++peer) meet_higher(state, peer);
}

}  // namespace a2av::inplace
