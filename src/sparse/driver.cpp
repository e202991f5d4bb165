// a2av::sparse_exchange: checks the messages, picks the algorithm (auto: from statistics the
// ranks agreed on in the previous exchange, or in one allreduce on the first), runs it, and
// orders what arrived by source. docs/algorithms.md, "Sparse".
#include "sparse/byte_message.hpp"
#include "sparse/sparse.hpp"

#include "core/check.hpp"
#include "core/environment.hpp"
#include "core/p2p.hpp"
#include "core/per_thread.hpp"
#include "core/tags.hpp"

#include <cstdlib>
#include <string_view>

namespace a2av {

std::span<const FamilyAlgorithm> sparse_algorithms() {
  static const FamilyAlgorithm table[] = {
      {"nbx",
       "nonblocking consensus: synchronous sends, then a barrier once all are matched",
       {},
       "",
       "",
       "Hoefler, Siebert, Lumsdaine, PPoPP 2010, Algorithm 2 (NBX)"},
      {"grid",
       "two NBX hops over a near-square grid of ranks, messages aggregated per hop",
       {},
       "",
       "",
       "a2av's own (docs/algorithms.md, section Sparse)"},
      {"dense",
       "an all-to-all of byte counts, then a2av's alltoallv",
       {},
       "",
       "",
       "a2av's own (docs/algorithms.md, section Sparse)"},
      {"shared_memory",
       "ranks on one node: messages through a shared segment",
       {},
       "a shared segment (all ranks on one node, else A2AV_ERR_ALGORITHM)",
       "nbx",
       "a2av's own (docs/algorithms.md, section Sparse)"},
      {"auto",
       "chooses from the agreed message counts and sizes",
       {},
       "",
       "",
       "docs/algorithms.md, section Sparse"},
  };
  return table;
}

namespace {

// In the order of sparse_algorithms().
enum class Algorithm { nbx, grid, dense, shared_memory, automatic };

Algorithm parse(std::string_view name) {
  if (name.empty()) name = env_string("A2AV_SPARSE_ALGORITHM");  // unset: auto
  static const std::vector<SpecGrammar> grammar = grammar_of(sparse_algorithms());
  return static_cast<Algorithm>(parse_spec(name, grammar, {"sparse exchange ", false}).index);
}

std::string_view name_of(Algorithm a) {
  return sparse_algorithms()[static_cast<std::size_t>(a)].name;
}

// This rank's messages as parcels, or the reason they are not.
Fault check(std::span<const OutgoingMessage> messages, const CommContext& ctx,
            std::string_view rejected, std::vector<Parcel>& parcels) {
  if (!rejected.empty()) return {A2AV_ERR_ARG, ctx.rank, std::string(rejected)};
  parcels.reserve(messages.size());
  for (std::size_t i = 0; i < messages.size(); ++i) {
    const OutgoingMessage& m = messages[i];
    if (m.destination < 0 || m.destination >= ctx.size)
      return {A2AV_ERR_ARG, ctx.rank,
              fmt::format("message {} goes to rank {}, outside the communicator of {} ranks", i,
                          m.destination, ctx.size)};
    if (!m.data.data() && !m.data.empty())
      return {A2AV_ERR_ARG, ctx.rank, fmt::format("message {} has no data but a size", i)};
    parcels.push_back(
        {m.destination, ctx.rank, m.data.data(), static_cast<std::int64_t>(m.data.size())});
  }
  return {};
}

// Up to this many ranks auto takes the dense path without asking: its counts all-to-all
// costs less than the allreduce a choice needs, and its arrays hold at most 16 entries
// (measured at P = 2..16: docs/bench.md, "Sparse exchange").
constexpr int kDenseUpTo = 16;

// auto's choice from the largest message count and byte total of any rank, P and C =
// ceil(sqrt(P)): dense when some rank sends to half the ranks or more (the dense algorithms'
// O(P) costs are then paid anyway); the grid when ranks send more than 2C small messages (its
// 2C aggregated messages beat that many); NBX otherwise.
Algorithm choose(std::int64_t max_messages, std::int64_t max_bytes, int size) {
  if (size > 1 && 2 * max_messages >= size) return Algorithm::dense;
  int columns = 1;
  while (columns * columns < size) ++columns;
  const bool small = max_messages > 0 && max_bytes / max_messages <= 1024;
  if (max_messages > 2 * columns && small) return Algorithm::grid;
  return Algorithm::nbx;
}

Statistics statistics_of(const std::vector<Parcel>& parcels) {
  Statistics mine{static_cast<std::int64_t>(parcels.size()), 0};
  for (const Parcel& p : parcels) mine.bytes += p.bytes;
  return mine;
}

// One allreduce: the statistics auto needs, and the error with the highest code from the
// lowest rank (as a fault word, which MAX picks).
Statistics agree_on_statistics(const Statistics& mine, const CommContext& ctx, Fault& local) {
  std::int64_t values[3] = {mine.messages, mine.bytes,
                            static_cast<std::int64_t>(local.word(ctx.size))};
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, values, 3, MPI_INT64_T, MPI_MAX, ctx.comm),
            "MPI_Allreduce");
  if (values[2])
    local = Fault::from_word(static_cast<std::uint64_t>(values[2]), ctx.size, ctx.rank, local);
  return {values[0], values[1]};
}

// auto: shared memory where every rank shares the node; dense on few ranks; otherwise a choice
// from the statistics the previous exchange on this communicator agreed on (every algorithm
// but shared memory agrees on them on its way, and on errors), or, on the first, from an
// allreduce of this one's. A changed pattern thus costs one exchange on the old choice.
Algorithm choose_automatically(const Statistics& mine, const CommContext& ctx, Fault& local,
                               std::optional<Statistics>& agreed) {
  if (ctx.size == ctx.node_size && sparse_shared_memory_available(ctx))
    return Algorithm::shared_memory;
  if (ctx.size <= kDenseUpTo) return Algorithm::dense;
  if (ctx.sparse_max_messages >= 0)
    return choose(ctx.sparse_max_messages, ctx.sparse_max_bytes, ctx.size);
  agreed = agree_on_statistics(mine, ctx, local);
  if (local) local.raise(ctx.rank);
  return choose(agreed->messages, agreed->bytes, ctx.size);
}

Fault run(Algorithm chosen, const std::vector<Parcel>& parcels, const SparseContext& at,
          const Fault& local, Inbox& inbox) {
  switch (chosen) {
    case Algorithm::nbx:
      return nbx(parcels, at, local, inbox);
    case Algorithm::grid:
      return grid_exchange(parcels, at, local, inbox);
    case Algorithm::shared_memory:
      return sparse_shared_memory(parcels, at, local, inbox);
    default:
      return dense_exchange(parcels, at, local, inbox);
  }
}

}  // namespace

void Fault::raise(int my_rank) const {
  if (rank == my_rank && !message.empty()) throw Error(code, message);
  throw Error(
      code, fmt::format("rank {} gave the sparse exchange a bad argument (error {})", rank, code));
}

void Inbox::receive(MPI_Status status, int tag, MPI_Comm comm) {
  const std::int64_t bytes = message_bytes(status);
  const ByteMessage m(bytes);
  check_mpi(MPI_Recv(slot(status.MPI_SOURCE, bytes), m.count(), m.type(), status.MPI_SOURCE, tag,
                     comm, MPI_STATUS_IGNORE),
            "MPI_Recv");
}

namespace {

// What a thread keeps of the results it freed: one buffer, the largest up to kMaxBytes,
// freed with the thread. A result freed after that (a static one, at exit) keeps nothing:
// `gone`, trivially destructible, can still be read then.
A2AV_THREAD_LOCAL bool gone = false;
struct KeptStorage {
  static constexpr std::size_t kMaxBytes = std::size_t{16} << 20;
  ReceivedBytes bytes;
  ~KeptStorage() { gone = true; }
};
A2AV_THREAD_LOCAL KeptStorage kept;

}  // namespace

Inbox Inbox::with_kept_storage() {
  Inbox inbox;
  if (gone) return inbox;
  inbox.storage_ = std::move(kept.bytes);
  inbox.storage_.clear();
  return inbox;
}

void Inbox::note_unread(int source, const Error& why) {
  if (!unread_)
    unread_ = Error(why.code(), fmt::format("the message from rank {}: {}", source, why.what()));
}

std::byte* Inbox::slot(int source, std::int64_t bytes) {
  const auto offset = static_cast<std::int64_t>(storage_.size());
  storage_.resize(storage_.size() + static_cast<std::size_t>(bytes));
  records_.push_back({source, offset, bytes});
  return storage_.data() + offset;
}

SparseResult SparseResultBuilder::build(Inbox&& inbox, std::string algorithm,
                                        std::int64_t peak_temp_bytes, int max_in_flight) {
  std::stable_sort(inbox.records_.begin(), inbox.records_.end(),
                   [](const auto& a, const auto& b) { return a.source < b.source; });
  SparseResult result;
  result.storage_ = std::move(inbox.storage_);
  result.messages_.reserve(inbox.records_.size());
  for (const auto& r : inbox.records_)
    result.messages_.push_back(
        {r.source, {result.storage_.data() + r.offset, static_cast<std::size_t>(r.bytes)}});
  result.algorithm_ = std::move(algorithm);
  result.peak_temp_bytes_ = peak_temp_bytes;
  result.max_in_flight_ = max_in_flight;
  return result;
}

SparseResult::~SparseResult() {
  if (gone || storage_.capacity() <= kept.bytes.capacity() ||
      storage_.capacity() > KeptStorage::kMaxBytes)
    return;
  kept.bytes = std::move(storage_);
}

int next_sparse_tag(const CommContext& ctx) {
  return tags::kSparseMessages.cycle(ctx.sparse_rounds++);
}

SparseResult run_sparse_exchange(std::span<const OutgoingMessage> messages, MPI_Comm comm,
                                 std::string_view algorithm, std::string_view rejected) {
  const CommContext& ctx = comm_context(comm);
  if (ctx.is_intercomm) fail(A2AV_ERR_ARG, "intercommunicators are not supported");
  Algorithm chosen = parse(algorithm);
  MemoryTracker memory;
  const InFlightScope in_flight(0);  // the default bound; its high-water mark is reported
  std::vector<Parcel> parcels;
  Fault local = check(messages, ctx, rejected, parcels);
  const auto parcel_bytes = static_cast<std::int64_t>(parcels.capacity() * sizeof(Parcel));
  memory.allocate(parcel_bytes);
  const Statistics mine = statistics_of(parcels);
  std::optional<Statistics> agreed;
  if (chosen == Algorithm::automatic) chosen = choose_automatically(mine, ctx, local, agreed);
  const SparseContext at{comm, ctx, memory, mine, agreed};
  Inbox inbox = Inbox::with_kept_storage();
  const Fault fault = run(chosen, parcels, at, local, inbox);
  if (agreed && !fault)  // the same on every rank: the fault and the statistics are agreed
    ctx.sparse_max_messages = agreed->messages, ctx.sparse_max_bytes = agreed->bytes;
  if (fault) fault.raise(ctx.rank);
  inbox.raise_unread();
  memory.release(parcel_bytes);
  return SparseResultBuilder::build(std::move(inbox), std::string(name_of(chosen)), memory.peak(),
                                    InFlight::high_water());
}

SparseResult sparse_exchange(std::span<const OutgoingMessage> messages, MPI_Comm comm,
                             const SparseOptions& options) {
  return run_sparse_exchange(messages, comm, options.algorithm, {});
}

}  // namespace a2av
