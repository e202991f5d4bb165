// The in-place exchange's driver: checks, one agreement, the layout, the algorithm.
//
// Collectives before any byte moves: MPI_Alltoall of the counts (the receive counts),
// one MPI_Allreduce(MAX) that agrees on errors, C, the smallest capacity and the algorithm,
// then MPI_Exscan of the counts (each block's offset in its destination's sequence) and
// MPI_Allgather of the receive totals (where the fillers go). All O(P) per rank.
#include <a2av/inplace.hpp>

#include "core/call.hpp"
#include "core/check.hpp"
#include "core/spec.hpp"
#include "inplace/algorithms.hpp"

#include <a2av/a2av.h>

#include <limits>

namespace a2av {
namespace {

using inplace::Layout;
using inplace::State;

enum class Kind : std::int64_t { bitonic = 1, pairwise = 2, automatic = 3 };

struct InplaceSpec {
  Kind kind = Kind::automatic;
  std::int64_t chunk_bytes = std::int64_t{1} << 20;
};

}  // namespace

inline constexpr Param kChunkBytes{"chunk_bytes", 1, std::int64_t{1} << 30, std::int64_t{1} << 20,
                                   "bytes of staging per step, shared by the pairs in flight"};

// In the order of Kind: bitonic, pairwise, auto.
std::span<const FamilyAlgorithm> inplace_algorithms() {
  static const FamilyAlgorithm table[] = {
      {"inplace_bitonic",
       "compare-split steps of a bitonic network over the ranks",
       {&kChunkBytes},
       "",
       "",
       "[Zhuang09] Section 3.2"},
      {"inplace_pairwise",
       "P-1 pairwise meetings, blocks forwarded along chains",
       {&kChunkBytes},
       "",
       "",
       "[Zhuang09] Section 3.3"},
      {"inplace_auto",
       "the faster of the two for the counts, by a metadata replay",
       {&kChunkBytes},
       "",
       "",
       "a2av's own (docs/memory.md, inplace_auto)"},
  };
  return table;
}

namespace {

// "" and "auto" are inplace_auto.
InplaceSpec parse_inplace_spec(std::string_view text) {
  static const std::vector<SpecGrammar> grammar = grammar_of(inplace_algorithms());
  if (text.empty() || text == "auto") text = "inplace_auto";
  const ParsedSpec parsed = parse_spec(text, grammar, {"in-place ", false});
  constexpr Kind kinds[] = {Kind::bitonic, Kind::pairwise, Kind::automatic};
  return {kinds[parsed.index], parsed.values[kChunkBytes]};
}

// What this rank can check alone; the first error wins.
struct LocalCheck {
  int code = A2AV_SUCCESS;
  std::string message;
  InplaceSpec spec;
  std::int64_t elem_size = 1;
  std::vector<std::int64_t> send;
  std::int64_t send_total = 0;

  template <class... Args>
  void set(int c, fmt::format_string<Args...> f, Args&&... args) {
    if (code) return;
    code = c;
    message = fmt::format(f, std::forward<Args>(args)...);
  }
};

LocalCheck check_locally(const void* buf, MPI_Count capacity, std::span<const MPI_Count> sendcounts,
                         MPI_Datatype type, int size, std::string_view algorithm) {
  LocalCheck c;
  c.send.assign(size, 0);
  try {
    c.spec = parse_inplace_spec(algorithm);
    const TypeInfo t = type_info(type);
    if (!t.contiguous || t.true_lb != 0 || t.size == 0)
      fail(A2AV_ERR_DATATYPE,
           "the in-place exchange moves elements as bytes: the type must be contiguous, with "
           "no gaps and a zero lower bound (size {}, extent {})",
           t.size, t.extent);
    c.elem_size = t.size;
  } catch (const Error& e) {
    c.set(e.code(), "{}", e.what());
  }
  if (!c.code && c.spec.chunk_bytes < c.elem_size)
    c.set(A2AV_ERR_ALGORITHM, "chunk_bytes={} is smaller than one element ({} bytes)",
          c.spec.chunk_bytes, c.elem_size);
  if (capacity < 0) c.set(A2AV_ERR_ARG, "capacity {} is negative", capacity);
  if (sendcounts.size() < static_cast<std::size_t>(size))
    c.set(A2AV_ERR_ARG, "sendcounts has {} entries for {} ranks", sendcounts.size(), size);
  if (c.code) return c;
  const std::int64_t limit = std::numeric_limits<std::int64_t>::max() / c.elem_size / size;
  for (int j = 0; j < size; ++j) {
    if (sendcounts[j] < 0) c.set(A2AV_ERR_ARG, "sendcounts[{}] = {} is negative", j, sendcounts[j]);
    if (sendcounts[j] > limit - c.send_total)
      c.set(A2AV_ERR_ARG, "the send total overflows 64-bit byte counts");
    if (c.code) return c;
    c.send_total += sendcounts[j];
  }
  if (!buf && capacity > 0) c.set(A2AV_ERR_ARG, "buf is NULL with capacity {}", capacity);
  if (!buf && c.send_total > 0) c.set(A2AV_ERR_ARG, "buf is NULL with data to send");
  if (c.send_total > capacity)
    c.set(A2AV_ERR_CAPACITY, "the send total {} exceeds the capacity {}", c.send_total, capacity);
  if (!c.code) c.send.assign(sendcounts.begin(), sendcounts.begin() + size);
  return c;
}

enum Slot { kCode, kRank, kLength, kNegCapacity, kKind, kNegKind, kChunk, kNegChunk, kSlots };

// Every rank learns the worst error, C, the smallest capacity and whether all chose alike.
void agree(const CommContext& ctx, LocalCheck& c, std::int64_t recv_total, MPI_Count capacity,
           Layout& layout) {
  std::int64_t v[kSlots] = {c.code,
                            c.code ? -ctx.rank : -ctx.size,
                            std::max(c.send_total, recv_total),
                            -capacity,
                            static_cast<std::int64_t>(c.spec.kind),
                            -static_cast<std::int64_t>(c.spec.kind),
                            c.spec.chunk_bytes,
                            -c.spec.chunk_bytes};
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, v, kSlots, MPI_INT64_T, MPI_MAX, ctx.comm),
            "MPI_Allreduce");
  if (v[kCode] != A2AV_SUCCESS) {
    if (c.code) throw Error(c.code, c.message);
    throw Error(static_cast<int>(v[kCode]),
                fmt::format("rank {} rejected its arguments ({})", -v[kRank],
                            A2AV_Error_string(static_cast<int>(v[kCode]))));
  }
  if (v[kKind] != -v[kNegKind] || v[kChunk] != -v[kNegChunk])
    fail(A2AV_ERR_ALGORITHM, "the ranks named different in-place algorithms or chunk sizes");
  layout.length = v[kLength];
  if (-v[kNegCapacity] < layout.length)
    fail(A2AV_ERR_CAPACITY,
         "in-place buffer too small: the exchange needs {} elements on every rank (the largest "
         "send or receive total of any rank) and the smallest capacity is {}",
         layout.length, -v[kNegCapacity]);
}

void fill_layout(const CommContext& ctx, Layout& layout) {
  const int p = ctx.size;
  layout.send_prefix.assign(p, 0);
  check_mpi(
      MPI_Exscan(layout.send.data(), layout.send_prefix.data(), p, MPI_INT64_T, MPI_SUM, ctx.comm),
      "MPI_Exscan");
  if (ctx.rank == 0) layout.send_prefix.assign(p, 0);  // MPI leaves rank 0's result undefined
  std::int64_t recv_total = 0;
  for (std::int64_t n : layout.recv) recv_total += n;
  layout.recv_totals.assign(p, 0);
  check_mpi(MPI_Allgather(&recv_total, 1, MPI_INT64_T, layout.recv_totals.data(), 1, MPI_INT64_T,
                          ctx.comm),
            "MPI_Allgather");
}

std::string describe(Kind kind, std::int64_t chunk_bytes) {
  return fmt::format("inplace_{}:chunk_bytes={}", kind == Kind::bitonic ? "bitonic" : "pairwise",
                     chunk_bytes);
}

}  // namespace

std::vector<MPI_Count> exchange_inplace(void* buf, MPI_Count capacity,
                                        std::span<const MPI_Count> sendcounts, MPI_Datatype type,
                                        MPI_Comm comm, std::string_view algorithm,
                                        InplaceInfo* info) {
  const CommContext& ctx = comm_context(comm);
  LocalCheck checked = check_locally(buf, capacity, sendcounts, type, ctx.size, algorithm);
  Layout layout;
  layout.elem_size = checked.elem_size;
  layout.send = checked.send;
  layout.recv.assign(ctx.size, 0);
  check_mpi(MPI_Alltoall(layout.send.data(), 1, MPI_INT64_T, layout.recv.data(), 1, MPI_INT64_T,
                         ctx.comm),
            "MPI_Alltoall");
  std::int64_t recv_total = 0;
  for (std::int64_t n : layout.recv) recv_total += n;
  agree(ctx, checked, recv_total, capacity, layout);
  fill_layout(ctx, layout);

  MemoryTracker memory;
  const std::int64_t metadata = 4 * ctx.size * static_cast<std::int64_t>(sizeof(std::int64_t));
  memory.allocate(metadata);
  const std::int64_t data_bytes = layout.length * layout.elem_size;
  TempBuffer chunk(memory,
                   std::max(layout.elem_size, std::min(checked.spec.chunk_bytes, data_bytes)));
  State state{ctx,
              static_cast<std::byte*>(buf),
              layout,
              inplace::initial_runs(ctx.rank, layout),
              {chunk.data(), chunk.capacity()}};
  state.note_runs(state.runs.size());
  inplace::spread_to_runs(state.base, layout.elem_size, state.runs);

  Kind kind = checked.spec.kind;
  if (kind == Kind::automatic) {
    const inplace::AutoChoice choice = inplace::choose_algorithm(state);
    kind = choice.pairwise ? Kind::pairwise : Kind::bitonic;
    if (info) info->auto_estimates = {choice.bitonic_cost, choice.pairwise_cost};
  }
  if (kind == Kind::bitonic) {
    inplace::run_bitonic(state);
  } else {
    inplace::run_pairwise(state);
  }
  if (!inplace::is_final(ctx.rank, layout, state.runs))
    fail(A2AV_ERR_MPI, "internal error: the in-place exchange ended with a wrong layout");
  // Run lists: our own, the partner's and the merged one at most.
  const auto runs_bytes = static_cast<std::int64_t>(3 * state.peak_runs * sizeof(inplace::Run));
  memory.allocate(runs_bytes);
  memory.release(runs_bytes);
  if (info) {
    info->algorithm = describe(kind, checked.spec.chunk_bytes);
    info->peak_temp_bytes = memory.peak();
    info->length = layout.length;
    info->peak_runs = static_cast<std::int64_t>(state.peak_runs);
  }
  return {layout.recv.begin(), layout.recv.end()};
}

}  // namespace a2av
