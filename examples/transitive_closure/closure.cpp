// Semi-naive transitive closure with a hash-partitioned join and one a2av all-to-all per
// iteration (TuNA paper, Section VI-B).
#include "closure.hpp"

#include <a2av/alltoallv.hpp>
#include <a2av/inplace.hpp>
#include <a2av/sparse.hpp>

#include <algorithm>

namespace tc {

namespace {

// One all-to-all of tuples per call, timed.
class Shuffle {
 public:
  Shuffle(std::string algorithm, MPI_Comm comm)
      : algorithm_(std::move(algorithm)),
        inplace_(algorithm_.starts_with("inplace")),
        sparse_(algorithm_.starts_with("sparse")),
        comm_(comm) {
    MPI_Comm_size(comm, &ranks_);
  }

  // buckets[j]: the tuples for rank j. Returns what every rank sent this one.
  std::vector<Tuple> operator()(std::vector<std::vector<Tuple>>& buckets) {
    if (sparse_) return sparse(buckets);
    std::vector<MPI_Count> sendcounts(ranks_);
    std::vector<Tuple> send;
    for (int j = 0; j < ranks_; ++j) {
      sendcounts[j] = static_cast<MPI_Count>(buckets[j].size());
      send.insert(send.end(), buckets[j].begin(), buckets[j].end());
      std::vector<Tuple>().swap(buckets[j]);
    }
    // The receive counts are the same for every algorithm: one MPI_Alltoall, not timed.
    const std::vector<MPI_Count> recvcounts = a2av::exchange_counts(sendcounts, comm_);
    const double t0 = MPI_Wtime();
    std::vector<Tuple> recv = inplace_ ? in_place(std::move(send), sendcounts, recvcounts)
                                       : out_of_place(send, sendcounts, recvcounts);
    seconds_ += MPI_Wtime() - t0;
    return recv;
  }

  double seconds() const { return seconds_; }
  const std::string& ran() const { return ran_; }

 private:
  std::vector<Tuple> out_of_place(const std::vector<Tuple>& send,
                                  const std::vector<MPI_Count>& sendcounts,
                                  const std::vector<MPI_Count>& recvcounts) {
    a2av::CallInfo info;
    std::vector<Tuple> recv = a2av::exchange<Tuple>(
        send, sendcounts, comm_, {.algorithm = algorithm_, .info = &info}, recvcounts);
    ran_ = info.algorithm;
    return recv;
  }

  // "sparse" or "sparse:ALGORITHM": the non-empty buckets as messages of a sparse exchange,
  // which learns the receive side itself (so its time includes what the other algorithms
  // get from the untimed MPI_Alltoall of counts).
  std::vector<Tuple> sparse(std::vector<std::vector<Tuple>>& buckets) {
    const double t0 = MPI_Wtime();
    std::vector<a2av::OutgoingMessage> messages;
    for (int j = 0; j < ranks_; ++j)
      if (!buckets[j].empty()) messages.push_back({j, std::as_bytes(std::span(buckets[j]))});
    const std::string_view spec =
        algorithm_.size() > 7 ? std::string_view(algorithm_).substr(7) : std::string_view{};
    const a2av::SparseResult result = a2av::sparse_exchange(messages, comm_, {.algorithm = spec});
    std::vector<Tuple> recv(static_cast<std::size_t>(result.received_bytes()) / sizeof(Tuple));
    auto* at = reinterpret_cast<std::byte*>(recv.data());
    for (const a2av::IncomingMessage& m : result.messages())
      at = std::copy(m.data.begin(), m.data.end(), at);
    seconds_ += MPI_Wtime() - t0;
    ran_ = "sparse:" + result.algorithm();
    for (auto& bucket : buckets) std::vector<Tuple>().swap(bucket);
    return recv;
  }

  // The send buffer becomes the receive buffer, grown to what the largest rank needs (one
  // MPI_Allreduce, timed with the exchange since only the in-place engine needs it).
  std::vector<Tuple> in_place(std::vector<Tuple> buffer, const std::vector<MPI_Count>& sendcounts,
                              const std::vector<MPI_Count>& recvcounts) {
    MPI_Count received = 0;
    for (MPI_Count c : recvcounts) received += c;
    std::int64_t capacity =
        std::max<std::int64_t>(static_cast<std::int64_t>(buffer.size()), received);
    MPI_Allreduce(MPI_IN_PLACE, &capacity, 1, MPI_INT64_T, MPI_MAX, comm_);
    buffer.resize(static_cast<std::size_t>(capacity));
    a2av::InplaceInfo info;
    // "inplace" names the engine's auto selection, which the C++ API spells "".
    const std::string_view spec = algorithm_ == "inplace" ? std::string_view{} : algorithm_;
    a2av::exchange_inplace(std::span<Tuple>(buffer), sendcounts, comm_, spec, &info);
    ran_ = info.algorithm;
    buffer.resize(static_cast<std::size_t>(received));
    return buffer;
  }

  std::string algorithm_;
  bool inplace_, sparse_;
  MPI_Comm comm_;
  int ranks_ = 1;
  double seconds_ = 0;
  std::string ran_ = "-";
};

std::vector<std::vector<Tuple>> by_owner(const std::vector<Tuple>& tuples, bool by_source,
                                         int ranks) {
  std::vector<std::vector<Tuple>> buckets(ranks);
  for (Tuple t : tuples) buckets[owner(by_source ? source(t) : target(t), ranks)].push_back(t);
  return buckets;
}

// G sorted, so the out-edges of b are one range.
std::pair<const Tuple*, const Tuple*> out_edges(const std::vector<Tuple>& g, Vertex b) {
  const auto first = std::lower_bound(g.begin(), g.end(), make_tuple(b, 0));
  const auto last = std::upper_bound(first, g.end(), make_tuple(b, kMaxVertex + 1U));
  return {g.data() + (first - g.begin()), g.data() + (last - g.begin())};
}

// D(a, b) joined with G(b, c): each (a, c) bucketed for owner(c).
std::vector<std::vector<Tuple>> join(const std::vector<Tuple>& delta, const std::vector<Tuple>& g,
                                     int ranks) {
  std::vector<std::vector<Tuple>> buckets(ranks);
  for (Tuple ab : delta) {
    const auto [first, last] = out_edges(g, target(ab));
    for (const Tuple* bc = first; bc != last; ++bc)
      buckets[owner(target(*bc), ranks)].push_back(make_tuple(source(ab), target(*bc)));
  }
  return buckets;
}

// The pairs of `arrived` not yet in the closure, now added to it.
std::vector<Tuple> keep_new(const std::vector<Tuple>& arrived, TupleSet& closure) {
  std::vector<Tuple> fresh;
  for (Tuple t : arrived)
    if (closure.insert(t)) fresh.push_back(t);
  return fresh;
}

std::uint64_t global_count(std::size_t local, MPI_Comm comm) {
  std::uint64_t n = local;
  MPI_Allreduce(MPI_IN_PLACE, &n, 1, MPI_UINT64_T, MPI_SUM, comm);
  return n;
}

}  // namespace

ClosureRun distributed_closure(const std::vector<Tuple>& my_edges, const std::string& algorithm,
                               MPI_Comm comm) {
  int ranks = 1;
  MPI_Comm_size(comm, &ranks);
  Shuffle shuffle(algorithm, comm);
  ClosureRun run;
  MPI_Barrier(comm);
  const double t0 = MPI_Wtime();

  auto g_buckets = by_owner(my_edges, true, ranks);
  std::vector<Tuple> g = shuffle(g_buckets);
  std::sort(g.begin(), g.end());
  g.erase(std::unique(g.begin(), g.end()), g.end());
  auto t_buckets = by_owner(my_edges, false, ranks);
  TupleSet closure;
  std::vector<Tuple> delta = keep_new(shuffle(t_buckets), closure);

  while (global_count(delta.size(), comm) > 0) {
    auto buckets = join(delta, g, ranks);
    delta = keep_new(shuffle(buckets), closure);
    ++run.iterations;
  }
  run.seconds = MPI_Wtime() - t0;
  run.exchange_seconds = shuffle.seconds();
  run.ran = shuffle.ran();
  std::uint64_t summary[2] = {closure.size(), closure.hash()};
  MPI_Allreduce(MPI_IN_PLACE, summary, 2, MPI_UINT64_T, MPI_SUM, comm);
  run.summary = {summary[0], summary[1]};
  return run;
}

}  // namespace tc
