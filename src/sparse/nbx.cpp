// NBX: Hoefler, Siebert, Lumsdaine, "Scalable Communication Protocols for Dynamic Sparse Data
// Exchange", PPoPP 2010, Section 3 and Algorithm 2. Every message is a synchronous send, so
// its completion means the destination has matched it; a rank whose sends have all completed
// enters a nonblocking consensus, and once that completes every message of the round has been
// matched, and received, by its destination. Meanwhile each rank probes for any message and
// receives it (MPI_Iprobe then MPI_Recv from the source found, which matches the same message
// in a single thread; MPI_Improbe would also serve threads, but SimGrid's SMPI lacks it).
// The consensus is an allreduce (MAXLOC of error code and rank, MAX of auto's statistics)
// rather than the paper's barrier, so the round agrees on errors, and on what the next call's
// auto chooses from, at no extra latency.
// The sends keep the bound on requests in flight (WindowedSends): a rank whose window is full
// goes on probing and receiving, and enters the consensus once its last send has completed.
// Memory: a request per message sent up to the bound (and a datatype for any above 2 GiB).
#include "sparse/sparse.hpp"
#include "sparse/windowed_sends.hpp"

#include "core/p2p.hpp"
#include "core/spin.hpp"
#include "core/tags.hpp"

#include <algorithm>
#include <array>

namespace a2av {
namespace {

// A nonblocking allreduce of (error code, rank) by MAXLOC and of the statistics by MAX, as a
// dissemination: in round i a rank sends what it knows to rank + 2^i and merges what rank -
// 2^i sends it; after ceil(log2 P) rounds every rank knows the maxima (a maximum taken twice
// is the same). Point-to-point, so NBX does not rest on the MPI library's nonblocking
// collectives (SimGrid's are linear in P). Source: the dissemination barrier of Hensgen,
// Finkel, Manber (1988), carrying values.
class Consensus {
 public:
  Consensus(const CommContext& ctx, int tag, const Fault& local, Statistics statistics)
      : ctx_(ctx), tag_(tag), known_{local.code, ctx.rank, statistics.messages, statistics.bytes} {}

  bool started() const { return started_; }
  void start() {
    started_ = true;
    post();
  }
  // Advances without blocking; true once every rank's value is known here.
  bool test() {
    if (done_) return true;
    int complete = 0;
    check_mpi(MPI_Testall(2, requests_, &complete, MPI_STATUSES_IGNORE), "MPI_Testall");
    if (!complete) return false;
    InFlight::ended(2);
    merge();
    distance_ *= 2;
    post();
    return done_;
  }
  Fault agreed() const {
    return {static_cast<int>(known_[0]), known_[0] ? static_cast<int>(known_[1]) : -1, {}};
  }
  Statistics statistics() const { return {known_[2], known_[3]}; }

 private:
  void merge() {
    if (incoming_[0] > known_[0] || (incoming_[0] == known_[0] && incoming_[1] < known_[1]))
      known_[0] = incoming_[0], known_[1] = incoming_[1];
    known_[2] = std::max(known_[2], incoming_[2]);
    known_[3] = std::max(known_[3], incoming_[3]);
  }
  void post() {
    if (distance_ >= ctx_.size) {
      done_ = true;
      return;
    }
    outgoing_ = known_;
    const int from = (ctx_.rank - distance_ % ctx_.size + ctx_.size) % ctx_.size;
    check_mpi(MPI_Irecv(incoming_.data(), 4, MPI_INT64_T, from, tag_, ctx_.comm, &requests_[0]),
              "MPI_Irecv");
    check_mpi(MPI_Isend(outgoing_.data(), 4, MPI_INT64_T, (ctx_.rank + distance_) % ctx_.size, tag_,
                        ctx_.comm, &requests_[1]),
              "MPI_Isend");
    InFlight::posted(2);
  }

  const CommContext& ctx_;
  int tag_;
  std::array<std::int64_t, 4> known_, incoming_{}, outgoing_{};  // code, rank, statistics
  MPI_Request requests_[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
  int distance_ = 1;
  bool started_ = false, done_ = false;
};

}  // namespace

Fault nbx(const std::vector<Parcel>& parcels, const SparseContext& at, const Fault& local,
          Inbox& inbox) {
  const CommContext& ctx = at.ctx;
  MemoryTracker& memory = at.memory;
  const int tag = next_sparse_tag(ctx);
  std::vector<const Parcel*> mine;
  if (!local)
    for (const Parcel& p : parcels) mine.push_back(&p);
  WindowedSends sends(std::move(mine), tag, ctx.comm, true, memory);
  sends.advance();  // posts the first window
  // The round's consensus: a tag apart from its messages (core/tags.hpp).
  Consensus consensus(ctx, tags::kSparseConsensus.at(tags::kSparseMessages.index_of(tag)), local,
                      at.local);
  // Ranks sharing cores give theirs away after an idle turn: spinning would starve the peers
  // this rank waits for.
  const bool yield_when_idle = ctx.cores_shared;
  for (bool done = false; !done;) {
    int arrived = 0;
    MPI_Status status;
    check_mpi(MPI_Iprobe(MPI_ANY_SOURCE, tag, ctx.comm, &arrived, &status), "MPI_Iprobe");
    if (arrived) inbox.receive(status, tag, ctx.comm);  // the probed one: its source's first
    if (!consensus.started()) {
      if (sends.advance()) consensus.start();
    } else {
      done = consensus.test();
    }
    if (!arrived && !done && yield_when_idle) yield_core();
  }
  at.agreed = consensus.statistics();
  Fault fault = consensus.agreed();
  if (fault && fault.rank == ctx.rank) fault.message = local.message;
  return fault;
}

}  // namespace a2av
