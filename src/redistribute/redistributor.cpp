// The redistribution driver: checks the map on every rank before anything moves, then runs
// the chosen algorithm and places the arrived blocks by index with the local algorithm.
#include <a2av/redistribute.hpp>

#include "core/check.hpp"
#include "core/spec.hpp"
#include "redistribute/engine.hpp"

#include <numeric>

namespace a2av {

struct Redistributor::State {
  std::byte* blocks;
  std::int64_t nblocks;
  std::int64_t block_bytes;
  const CommContext* ctx;
  std::vector<std::int64_t> sizes;  // nblocks of every rank
  enum class Kind { automatic, parking, cyclic } kind = Kind::automatic;
  bool dictionary = false;
};

namespace {

using Kind = Redistributor::State::Kind;

constexpr Param kDictionary{"dictionary", 0, 1, 0,
                            "1: the paper's ascending edge order; 0: edges streamed in "
                            "rotated order"};

}  // namespace

std::span<const FamilyAlgorithm> redistribution_algorithms() {
  static const FamilyAlgorithm table[] = {
      {"parking",
       "Pinar-Hendrickson phases, blocks that cannot move yet parked",
       {},
       "",
       "",
       "[Siegel10] Section 3.1, Figure 3"},
      {"cyclic",
       "the cyclic scheduler: every block moves once, straight home",
       {&kDictionary},
       "",
       "",
       "[Siegel10] Section 3.2, Figure 4"},
      {"auto",
       "parking or cyclic, by the blocks that leave",
       {},
       "",
       "",
       "a2av's own (docs/redistribute.md)"},
  };
  return table;
}

namespace {

// "" is auto; in the order of Kind.
void parse_algorithm(std::string_view text, Redistributor::State& s) {
  static const std::vector<SpecGrammar> grammar = grammar_of(redistribution_algorithms());
  const ParsedSpec parsed =
      parse_spec(text.empty() ? "auto" : text, grammar, {"redistribution ", false});
  constexpr Kind kinds[] = {Kind::parking, Kind::cyclic, Kind::automatic};
  s.kind = kinds[parsed.index];
  s.dictionary = parsed.values.has(kDictionary) && parsed.values[kDictionary] == 1;
}

// Agrees on the worst error code across ranks; throws it everywhere.
// Also agrees (MAX) on `flag`, which it returns.
int agree(const CommContext& ctx, int code, const std::string& message, int flag = 0) {
  int v[2] = {code, flag};
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, v, 2, MPI_INT, MPI_MAX, ctx.comm), "MPI_Allreduce");
  if (v[0] == A2AV_SUCCESS) return v[1];
  throw Error(v[0], code == v[0] ? message : "another rank rejected the redistribution");
}

// Local checks (ranges), then every destination checks that no two blocks claim the same
// one of its blocks: one MPI_Alltoall of counts and one MPI_Alltoallv of indices. Returns
// whether any block leaves its rank.
bool check_map(const Redistributor::State& s, std::span<const int> dest_rank,
               std::span<const MPI_Count> dest_index, MemoryTracker& memory) {
  const CommContext& ctx = *s.ctx;
  const int p = ctx.size;
  std::string message;
  int code = A2AV_SUCCESS;
  auto reject = [&](std::string m) {
    if (code == A2AV_SUCCESS) code = A2AV_ERR_ARG, message = std::move(m);
  };
  if (static_cast<std::int64_t>(dest_rank.size()) < s.nblocks ||
      static_cast<std::int64_t>(dest_index.size()) < s.nblocks)
    reject(fmt::format("the map has {} ranks and {} indices for {} blocks", dest_rank.size(),
                       dest_index.size(), s.nblocks));
  std::vector<int> count(p, 0);
  for (std::int64_t i = 0; code == A2AV_SUCCESS && i < s.nblocks; ++i) {
    const int r = dest_rank[i];
    if (r < 0) continue;
    if (r >= p)
      reject(fmt::format("block {} goes to rank {} of {}", i, r, p));
    else if (dest_index[i] < 0 || dest_index[i] >= s.sizes[r])
      reject(fmt::format("block {} goes to block {} of rank {}, which has {}", i, dest_index[i], r,
                         s.sizes[r]));
    else
      ++count[r];
  }
  if (code != A2AV_SUCCESS) std::fill(count.begin(), count.end(), 0);
  std::vector<int> incoming(p);
  check_mpi(MPI_Alltoall(count.data(), 1, MPI_INT, incoming.data(), 1, MPI_INT, ctx.comm),
            "MPI_Alltoall");
  const std::int64_t arriving = std::accumulate(incoming.begin(), incoming.end(), std::int64_t{0});
  if (arriving > s.nblocks)
    reject(fmt::format("{} blocks are sent to this rank's {} blocks", arriving, s.nblocks));
  agree(ctx, code, message);

  std::vector<int> sdispl(p, 0), rdispl(p, 0);
  for (int r = 1; r < p; ++r)
    sdispl[r] = sdispl[r - 1] + count[r - 1], rdispl[r] = rdispl[r - 1] + incoming[r - 1];
  const std::int64_t tracked = (s.nblocks + arriving) * 8 + s.nblocks;
  memory.allocate(tracked);
  std::vector<std::int64_t> out(static_cast<std::size_t>(s.nblocks)),
      in(static_cast<std::size_t>(arriving));
  std::vector<int> at = sdispl;
  for (std::int64_t i = 0; i < s.nblocks; ++i)
    if (dest_rank[i] >= 0) out[at[dest_rank[i]]++] = dest_index[i];
  check_mpi(MPI_Alltoallv(out.data(), count.data(), sdispl.data(), MPI_INT64_T, in.data(),
                          incoming.data(), rdispl.data(), MPI_INT64_T, ctx.comm),
            "MPI_Alltoallv");
  std::vector<bool> claimed(static_cast<std::size_t>(s.nblocks), false);
  for (int r = 0; r < p && code == A2AV_SUCCESS; ++r)
    for (int k = rdispl[r]; k < rdispl[r] + incoming[r]; ++k) {
      if (!claimed[in[k]]) {
        claimed[in[k]] = true;
        continue;
      }
      reject(
          fmt::format("two blocks are sent to block {} of rank {} (one from rank {}): the "
                      "map is not injective",
                      in[k], ctx.rank, r));
      break;
    }
  memory.release(tracked);
  int leaving = 0;
  for (int r = 0; r < p; ++r) leaving |= r != ctx.rank && count[r] > 0;
  return agree(ctx, code, message, leaving) != 0;
}

// auto: the cyclic scheduler moves every block once, straight home, and with its edges
// streamed in rotated order it keeps every rank busy on transposes too; but a cycle through
// a rank without free space moves one block per round trip. Parking instead lends free
// space where it is. So auto takes parking when every rank can take in all that is bound
// for it at once (one phase, no schedule), or when some rank has no free space while the
// ranks together have at least one rank's average outgoing volume free; else cyclic.
bool choose_parking(const Redistributor::State& s, const redist::Engine& e) {
  std::vector<std::int64_t> out = redist::outgoing_counts(e);
  out[s.ctx->rank] = 0;
  std::vector<std::int64_t> in(s.ctx->size);
  check_mpi(MPI_Alltoall(out.data(), 1, MPI_INT64_T, in.data(), 1, MPI_INT64_T, s.ctx->comm),
            "MPI_Alltoall");
  const std::int64_t free = e.store.free_count();
  const std::int64_t incoming = std::accumulate(in.begin(), in.end(), std::int64_t{0});
  // {all fit, some rank without free space} by MIN and MAX of 0/1, sums of free and moves
  std::int64_t flags[2] = {incoming <= free, -(free == 0 ? 1 : 0)};
  std::int64_t sums[2] = {free, incoming};
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, flags, 2, MPI_INT64_T, MPI_MIN, s.ctx->comm),
            "MPI_Allreduce");
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, sums, 2, MPI_INT64_T, MPI_SUM, s.ctx->comm),
            "MPI_Allreduce");
  const bool all_fit = flags[0] == 1, some_full = flags[1] == -1;
  return all_fit || (some_full && sums[0] * s.ctx->size >= sums[1]);
}

}  // namespace

Redistributor::Redistributor(void* blocks, MPI_Count nblocks, MPI_Count block_bytes, MPI_Comm comm,
                             std::string_view algorithm)
    : state_(std::make_unique<State>()) {
  State& s = *state_;
  s.ctx = &comm_context(comm);
  s.blocks = static_cast<std::byte*>(blocks);
  s.nblocks = nblocks;
  s.block_bytes = block_bytes;
  std::string message;
  int code = A2AV_SUCCESS;
  try {
    parse_algorithm(algorithm, s);
    if (nblocks < 0) fail(A2AV_ERR_ARG, "nblocks {} is negative", nblocks);
    if (block_bytes < 1 || block_bytes > INT32_MAX)
      fail(A2AV_ERR_ARG, "block_bytes {} is outside 1..{}", block_bytes, INT32_MAX);
    if (!blocks && nblocks > 0) fail(A2AV_ERR_ARG, "blocks is NULL with {} blocks", nblocks);
  } catch (const Error& e) {
    code = e.code();
    message = e.what();
  }
  agree(*s.ctx, code, message);
  s.sizes.resize(s.ctx->size);
  check_mpi(MPI_Allgather(&s.nblocks, 1, MPI_INT64_T, s.sizes.data(), 1, MPI_INT64_T, s.ctx->comm),
            "MPI_Allgather");
}

Redistributor::~Redistributor() = default;

RedistStats Redistributor::run(std::span<const int> dest_rank,
                               std::span<const MPI_Count> dest_index) {
  State& s = *state_;
  MemoryTracker memory;
  memory.allocate(5 * s.ctx->size * static_cast<std::int64_t>(sizeof(std::int64_t)));
  const bool anything_leaves = check_map(s, dest_rank, dest_index, memory);
  RedistStats stats;
  redist::BlockStore store(s.blocks, s.nblocks, s.block_bytes, memory);
  for (std::int64_t i = 0; i < s.nblocks; ++i) {
    store.rank[i] = dest_rank[i] < 0 ? -1 : dest_rank[i];
    store.index[i] = dest_index[i];
  }
  redist::Engine engine{*s.ctx, store, memory, stats};
  const bool parking = s.kind == Kind::parking ||
                       (s.kind == Kind::automatic && anything_leaves && choose_parking(s, engine));
  if (!anything_leaves) {  // every block stays on its rank: no communication after the checks
    stats.algorithm = "local";
  } else if (parking) {
    stats.algorithm = "parking";
    redist::run_parking(engine);
  } else {
    stats.algorithm = s.dictionary ? "cyclic:dictionary=1" : "cyclic:dictionary=0";
    redist::run_cyclic(engine, s.dictionary);
  }
  stats.local_copies += store.place_by_index();
  stats.peak_temp_bytes = memory.peak();
  return stats;
}

}  // namespace a2av
