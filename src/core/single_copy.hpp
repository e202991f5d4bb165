// Cross-memory attach: a rank copies a block straight out of a peer's send buffer (Linux
// process_vm_readv), one copy per byte where a copy through shared memory costs two. The
// kernel allows it between processes of one user unless a security module forbids it: Yama's
// ptrace_scope 1 allows it once the peer consents with PR_SET_PTRACER (as Open MPI's shared-
// memory transport does), 2 and 3 do not, nor do some container profiles, nor SimGrid, whose
// ranks share one process. So it is tried once per communicator, collectively: every rank
// reads a word from its neighbour, and all agree; where any could not, no rank uses it.
#pragma once

#include <a2av/error.hpp>

#include <mpi.h>
#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace a2av {

class SingleCopy {
 public:
  // Collective over `comm`, whose ranks share a node. A2AV_SINGLE_COPY=0 turns it off.
  explicit SingleCopy(MPI_Comm comm);
  SingleCopy() = default;  // not available; made by SingleCopyMaker

  bool ok() const { return !pids_.empty(); }
  const std::string& failure() const { return failure_; }  // why not, where !ok()
  // Copies `bytes` from address `from` of rank `peer` into `to`. Where the kernel refuses
  // (a range not mapped: a buffer shorter than its counts and displacements say), returns
  // why, for the caller to note with the block's sender (Mismatch) and go on: thrown, it would
  // leave the sender waiting for this read. Fails with A2AV_ERR_ARG where !ok() (a caller that
  // did not check).
  [[nodiscard]] std::optional<Error> read(void* to, int peer, const void* from,
                                          std::size_t bytes) const;

 private:
  friend class SingleCopyMaker;
  std::vector<pid_t> pids_;  // by rank; empty where not available
  std::string failure_;
};

struct CommContext;

// The communicator's SingleCopy (CommContext::single_copy), tried once, collectively, by the
// first caller that made a node segment on it (shared_memory's cells, the sparse exchange's).
const SingleCopy& communicator_single_copy(const CommContext& ctx);

// The constructor's steps (an allgather of the probes, a read, an allreduce of the outcome),
// each started nonblocking and tested by advance(), for a nonblocking start, which must not
// wait for its peers (as NodeSegmentMaker). Collective over `comm` all the same.
class SingleCopyMaker {
 public:
  explicit SingleCopyMaker(MPI_Comm comm);
  SingleCopyMaker(const SingleCopyMaker&) = delete;
  SingleCopyMaker& operator=(const SingleCopyMaker&) = delete;
  // Advances without blocking (`wait`: to the end); true once every rank has the outcome.
  bool advance(bool wait = false);
  // Once advance() has returned true.
  SingleCopy take() { return std::move(made_); }

 private:
  struct Probe {
    std::int64_t pid;
    std::uint64_t address;  // of a word holding kProbeValue ^ rank
  };
  enum class Step { kGathering, kAgreeing, kDone };
  bool completed(bool wait);  // the step's collective
  void agree();
  void settle();

  MPI_Comm comm_;
  int rank_ = 0, size_ = 1;
  bool wanted_ = false;
  std::uint64_t probe_ = 0;  // read by the next rank: lives until every rank has agreed
  Probe mine_{};
  std::vector<Probe> all_;
  std::string why_;  // this rank's reading failed: why
  int all_ok_ = 0;
  MPI_Request request_ = MPI_REQUEST_NULL;
  Step step_ = Step::kDone;
  SingleCopy made_;
};

}  // namespace a2av
