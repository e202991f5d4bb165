#include "driver/alltoallv.hpp"

#include "alltoallv/inplace_symmetric.hpp"
#include "alltoallv/registry.hpp"
#include "core/check.hpp"
#include "core/comm_context.hpp"
#include "core/environment.hpp"
#include "core/per_thread.hpp"
#include "driver/recent_calls.hpp"
#include "tuning/selector.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <new>

namespace a2av {
namespace {

struct LocalStatus {
  int code = A2AV_SUCCESS;
  std::string message;

  void set(int c, std::string m) {
    if (code == A2AV_SUCCESS) {
      code = c;
      message = std::move(m);
    }
  }
};

std::string_view chosen_spec_text(std::string_view spec) {
  static const std::string_view env = env_string("A2AV_ALGORITHM");  // unset: auto
  if (!spec.empty()) return spec;
  return env;
}

// With validation: every rank learns what each peer will send it and compares.
void check_counts(const CommContext& ctx, const std::vector<std::int64_t>& send_bytes,
                  const std::vector<std::int64_t>& recv_bytes, LocalStatus& status) {
  // A rank whose arguments failed sends -1: its own error is what the ranks agree on.
  std::vector<std::int64_t> incoming(ctx.size), outgoing = send_bytes;
  outgoing.resize(ctx.size, -1);
  check_mpi(
      MPI_Alltoall(outgoing.data(), 1, MPI_INT64_T, incoming.data(), 1, MPI_INT64_T, ctx.comm),
      "MPI_Alltoall");
  if (status.code != A2AV_SUCCESS) return;
  for (int peer = 0; peer < ctx.size; ++peer)
    if (incoming[peer] >= 0 && incoming[peer] != recv_bytes[peer])
      return status.set(A2AV_ERR_COUNTS,
                        fmt::format("rank {} sends {} bytes to rank {}, which expects {}", peer,
                                    incoming[peer], ctx.rank, recv_bytes[peer]));
}

// Parsed specs by text, so repeated calls parse nothing. Bounded: cleared when full (what
// holds a SpecRef keeps its spec).
const SpecRef& cached_spec(std::string_view text) {
  A2AV_THREAD_LOCAL std::map<std::string, SpecRef, std::less<>> cache;
  if (auto it = cache.find(text); it != cache.end()) return it->second;
  if (cache.size() >= 256) cache.clear();
  auto parsed = std::make_shared<const Spec>(parse_spec(text));
  return cache.emplace(std::string(text), std::move(parsed)).first->second;
}

SpecRef parse_checked(std::string_view text, LocalStatus& status) {
  try {
    return cached_spec(text);
  } catch (const Error& e) {
    status.set(e.code(), e.what());
    return cached_spec("auto");  // agree the error the way ranks with the default spec do
  }
}

// One allreduce carries the worst error code, the lowest rank that has it, and the
// statistics auto selection needs: the largest block, and sums of bytes and empty blocks.
struct Agreement {
  int code;
  int first_rank;
  ExchangeStats stats;
  bool uniform_blocks;  // every block of every rank has stats.max_block bytes
};

enum Slot { kCode, kRank, kMaxBlock, kTotal, kEmpty, kSlots };

void max_then_sum(void* in, void* inout, int* length, MPI_Datatype*) {
  const auto* a = static_cast<const std::int64_t*>(in);
  auto* b = static_cast<std::int64_t*>(inout);
  for (int base = 0; base < *length; base += kSlots) {
    for (int i = kCode; i <= kMaxBlock; ++i) b[base + i] = std::max(a[base + i], b[base + i]);
    for (int i = kTotal; i < kSlots; ++i) b[base + i] += a[base + i];
  }
}

MPI_Op agreement_op() {
  static MPI_Op op = [] {
    MPI_Op created;
    check_mpi(MPI_Op_create(max_then_sum, 1, &created), "MPI_Op_create");
    return created;
  }();
  return op;
}

// A2AV_AGREE_ERRORS=0 skips the allreduce where nothing else needs it: local errors are
// then returned by the rank that found them alone, and its peers may block, as in MPI.
bool agreement_required(const Spec& spec, const CommContext& ctx, bool validating) {
  static const bool agree_errors = env_flag("A2AV_AGREE_ERRORS");
  return agree_errors || validating || spec.algorithm->needs_agreed_blocks ||
         (!spec.algorithm->run && choice_needs_statistics(ctx.size, agreed_node_size(ctx)));
}

Agreement agree(const CommContext& ctx, int code, const std::vector<std::int64_t>& send_bytes,
                bool required) {
  std::int64_t v[kSlots] = {code, code ? -ctx.rank : -ctx.size, 0, 0, 0};
  for (std::int64_t bytes : send_bytes) {
    v[kMaxBlock] = std::max(v[kMaxBlock], bytes);
    v[kTotal] += bytes;
    v[kEmpty] += bytes == 0;
  }
  if (send_bytes.empty()) v[kEmpty] = ctx.size;
  if (ctx.size > 1 && required)
    check_mpi(MPI_Allreduce(MPI_IN_PLACE, v, kSlots, MPI_INT64_T, agreement_op(), ctx.comm),
              "MPI_Allreduce");
  const double blocks = static_cast<double>(ctx.size) * ctx.size;
  const std::int64_t squared = std::int64_t{ctx.size} * ctx.size;
  return {static_cast<int>(v[kCode]), static_cast<int>(-v[kRank]),
          ExchangeStats{ctx.size, agreed_node_size(ctx), v[kMaxBlock], v[kTotal] / blocks,
                        v[kEmpty] / blocks},
          v[kTotal] % squared == 0 && v[kTotal] / squared == v[kMaxBlock]};
}

// Resolves auto from the agreed statistics, or from P alone where the choice needs none
// (`stats` null); with A2AV_VERBOSE, rank 0 says why.
SpecRef resolve_auto(const CommContext& ctx, const ExchangeStats* stats) {
  const bool explain = verbose() && ctx.rank == 0;
  const Choice choice = choose_algorithm(
      stats ? *stats : ExchangeStats{ctx.size, agreed_node_size(ctx), 0, 0, 0}, explain);
  if (explain && stats)
    std::fprintf(stderr,
                 "a2av: auto chose %.*s (%s) for P=%d, ranks per node %d, largest block %lld B, "
                 "mean block %.1f B, %.0f%% empty\n",
                 static_cast<int>(choice.spec.size()), choice.spec.data(), choice.reason.c_str(),
                 stats->size, stats->ranks_per_node, static_cast<long long>(stats->max_block),
                 stats->mean_block, 100 * stats->sparsity);
  if (explain && !stats)
    std::fprintf(stderr,
                 "a2av: auto chose %.*s (%s) for P=%d, ranks per node %d, from P alone; errors "
                 "are agreed in band, without an allreduce\n",
                 static_cast<int>(choice.spec.size()), choice.spec.data(), choice.reason.c_str(),
                 ctx.size, ctx.node_size);
  return cached_spec(choice.spec);
}

// The algorithm that runs when errors can be agreed in band (docs/errors.md): the spec names
// one that can, or auto picks one from P alone. Null when the ranks must agree before data
// moves: validation, MPI_IN_PLACE (a swap cannot be undone), and any algorithm or choice that
// needs the agreed statistics.
SpecRef in_band_choice(const SpecRef& spec, const CommContext& ctx, const Call& call,
                       bool validating) {
  if (ctx.size == 1 || validating || call.in_place()) return nullptr;
  if (spec->algorithm->run) return spec->algorithm->agrees_in_band() ? spec : nullptr;
  if (choice_needs_statistics(ctx.size, agreed_node_size(ctx))) return nullptr;
  // The choice from P alone depends only on P and ranks per node: kept for the next call.
  A2AV_THREAD_LOCAL int size = 0, node_size = 0;
  A2AV_THREAD_LOCAL SpecRef chosen;
  if (verbose() || ctx.size != size || ctx.node_size != node_size) {
    chosen = resolve_auto(ctx, nullptr);
    size = ctx.size;
    node_size = ctx.node_size;
  }
  return chosen->algorithm->agrees_in_band() ? chosen : nullptr;
}

}  // namespace

void prepare_into(Prepared& out, const Call& call, std::string_view spec_text, bool validate,
                  bool in_band_allowed, MemoryTracker& memory) {
  const CommContext& ctx = comm_context(call.comm);
  LocalStatus status;
  SpecRef spec = parse_checked(chosen_spec_text(spec_text), status);
  out.in_flight = spec->in_flight;  // auto's choice keeps it
  // Only vendor runs on intercommunicators: every algorithm falls back to it there.
  if (ctx.is_intercomm && !spec->algorithm->intercommunicators) spec = cached_spec("vendor");
  // Reused up to the size the recent calls keep: a call allocates nothing once warm.
  CheckedCall& reused = per_thread<CheckedCall>();
  CheckedCall fresh;
  CheckedCall& checked = ctx.size <= RecentCalls::kMaxRecentSize ? reused : fresh;
  check_call(call, ctx.size, checked);
  if (checked.code) status.set(checked.code, checked.message);
  out.ctx = &ctx;
  out.spec = nullptr;
  out.max_block = 0;
  out.uniform_blocks = false;
  out.in_band = false;
  out.unagreed = false;
  out.vendor_ints.clear();
  if (!status.code && spec->algorithm != &vendor_algorithm()) {
    if (!out.normalized) out.normalized.emplace();
    try {  // before agreeing, so that a failed allocation is agreed like any other error
      out.normalized->assign(call, checked, memory);
    } catch (const std::bad_alloc&) {
      status.set(A2AV_ERR_CAPACITY, "the packed copy of the data cannot be allocated");
    }
  } else {
    out.normalized.reset();
  }
  const std::vector<std::int64_t> no_bytes;
  const auto& send_bytes = status.code ? no_bytes : checked.send_bytes;
  const auto& recv_bytes = status.code ? no_bytes : checked.recv_bytes;
  if (status.code == A2AV_SUCCESS && !ctx.is_intercomm &&
      send_bytes[ctx.rank] != recv_bytes[ctx.rank])
    status.set(A2AV_ERR_COUNTS, fmt::format("rank {} sends itself {} bytes but expects {}",
                                            ctx.rank, send_bytes[ctx.rank], recv_bytes[ctx.rank]));
  static const bool validate_env = env_flag("A2AV_VALIDATE");
  const bool validating = validate || spec->validate || validate_env;
  // vendor keeps MPI's semantics: an argument error is this rank's alone, found before the
  // vendor call, with no agreement (docs/errors.md); validation agrees.
  // (An intercommunicator's groups cannot agree through ctx's collectives: vendor alone.)
  if (spec->algorithm == &vendor_algorithm() &&
      (ctx.is_intercomm || (in_band_allowed && !validating))) {
    if (status.code) throw Error(status.code, status.message);
    out.spec = std::move(spec);
    out.unagreed = true;
    if (!vendor_int_arrays(call, ctx.size, out.vendor_ints)) out.vendor_ints.clear();
    return;
  }
  SpecRef in_band = in_band_allowed ? in_band_choice(spec, ctx, call, validating) : nullptr;
  if (in_band && status.code) {
    PeerErrors peers;
    const InFlightScope in_flight(in_band->in_flight);  // the call's bound, and its report
    in_band->algorithm->announce(ctx, in_band->params, status.code, peers);
    throw Error(std::max(status.code, peers.code()), status.message);
  }
  if (in_band) {
    out.spec = std::move(in_band);
    out.in_band = true;
    return;
  }
  if (validating) check_counts(ctx, send_bytes, recv_bytes, status);
  if (!spec->algorithm->run && status.code == A2AV_SUCCESS) {
    try {
      check_tuning_file();
    } catch (const Error& e) {
      status.set(e.code(), e.what());
    }
  }
  const Agreement agreed =
      agree(ctx, status.code, send_bytes, agreement_required(*spec, ctx, validating));
  if (agreed.code != A2AV_SUCCESS) {
    if (status.code != A2AV_SUCCESS) throw Error(agreed.code, status.message);
    fail(agreed.code, "rank {} reported: {}", agreed.first_rank, A2AV_Error_string(agreed.code));
  }
  if (!spec->algorithm->run) spec = resolve_auto(ctx, &agreed.stats);
  out.spec = std::move(spec);
  out.max_block = agreed.stats.max_block;
  out.uniform_blocks = agreed.uniform_blocks;
}

Call call_from_spans(const void* sendbuf, std::span<const MPI_Count> sendcounts,
                     std::span<const MPI_Aint> sdispls, MPI_Datatype sendtype, void* recvbuf,
                     std::span<const MPI_Count> recvcounts, std::span<const MPI_Aint> rdispls,
                     MPI_Datatype recvtype, MPI_Comm comm, std::string& rejected) {
  const auto size = static_cast<std::size_t>(comm_context(comm).size);
  const bool in_place = sendbuf == MPI_IN_PLACE;
  const std::size_t lengths[] = {recvcounts.size(), rdispls.size(), sendcounts.size(),
                                 sdispls.size()};
  for (std::size_t i = 0; i < (in_place ? 2 : 4) && rejected.empty(); ++i)
    if (lengths[i] < size)
      rejected =
          fmt::format("count and displacement spans need {} entries, one has {}", size, lengths[i]);
  if (!rejected.empty())
    return {sendbuf, nullptr, nullptr,  sendtype, recvbuf,
            nullptr, nullptr, recvtype, comm,     rejected.c_str()};
  if (in_place)
    return {sendbuf,           nullptr,        nullptr,  sendtype, recvbuf,
            recvcounts.data(), rdispls.data(), recvtype, comm};
  return {sendbuf,           sendcounts.data(), sdispls.data(), sendtype, recvbuf,
          recvcounts.data(), rdispls.data(),    recvtype,       comm};
}

Prepared prepare_alltoallv(const Call& call, std::string_view spec_text, bool validate,
                           bool in_band_allowed, MemoryTracker& memory) {
  Prepared prepared;
  prepare_into(prepared, call, spec_text, validate, in_band_allowed, memory);
  return prepared;
}

int execute(const Call& call, Prepared& prepared, MemoryTracker& memory) {
  const InFlightScope in_flight(prepared.in_flight);
  Mismatch mismatch;
  if (!prepared.vendor_ints.empty()) {
    run_vendor_on(call, prepared.vendor_ints, prepared.ctx->comm);
    return 0;
  }
  if (prepared.spec->algorithm == &vendor_algorithm()) {
    const ByteBlocks no_blocks;
    vendor_algorithm().run(
        {*prepared.ctx, no_blocks, no_blocks, prepared.max_block, memory, mismatch, call},
        prepared.spec->params);
    return 0;
  }
  NormalizedCall& normalized = *prepared.normalized;
  if (normalized.swaps_in_place()) {
    swap_symmetric_in_place(*prepared.ctx, normalized.recv(), inplace_chunk_bytes(), memory,
                            mismatch);
    mismatch.raise();
    return InFlight::high_water();
  }
  normalized.begin();
  PeerErrors peers;
  prepared.spec->algorithm->run(
      {*prepared.ctx, normalized.send(), normalized.recv(), prepared.max_block, memory, mismatch,
       call, prepared.in_band ? &peers : nullptr, prepared.uniform_blocks},
      prepared.spec->params);
  peers.raise();
  mismatch.raise();
  normalized.finish();
  return InFlight::high_water();
}

// A call equal to a recent one reuses its Prepared; any other is prepared in a slot of the
// recent calls (recent_calls.hpp).
CallResult run_alltoallv(const Call& call, std::string_view spec_text, bool validate) {
  MemoryTracker memory;
  const RecentCalls::Lease lease =
      recent_calls().prepare(call, chosen_spec_text(spec_text), validate, memory);
  Prepared& prepared = lease.prepared();
  const int in_flight = execute(call, prepared, memory);
  const CommContext& ctx = *prepared.ctx;
  return {prepared.spec.get(),     ctx.size,      ctx.node_size, ctx.uniform_nodes,
          prepared.uniform_blocks, memory.peak(), in_flight};
}

}  // namespace a2av
