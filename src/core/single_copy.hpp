// Cross-memory attach: a rank copies a block straight out of a peer's send buffer (Linux
// process_vm_readv), one copy per byte where a copy through shared memory costs two. The
// kernel allows it between processes of one user unless a security module forbids it: Yama's
// ptrace_scope 1 allows it once the peer consents with PR_SET_PTRACER (as Open MPI's shared-
// memory transport does), 2 and 3 do not, nor do some container profiles, nor SimGrid, whose
// ranks share one process. So it is tried once per communicator, collectively: every rank
// reads a word from its neighbour, and all agree; where any could not, no rank uses it.
#pragma once

#include <mpi.h>
#include <sys/types.h>

#include <cstddef>
#include <string>
#include <vector>

namespace a2av {

class SingleCopy {
 public:
  // Collective over `comm`, whose ranks share a node. A2AV_SINGLE_COPY=0 turns it off.
  explicit SingleCopy(MPI_Comm comm);

  bool ok() const { return !pids_.empty(); }
  const std::string& failure() const { return failure_; }  // why not, where !ok()
  // Copies `bytes` from address `from` of rank `peer` into `to`; fails with A2AV_ERR_MPI if
  // the kernel refuses (and with A2AV_ERR_ARG where !ok(): a caller that did not check).
  void read(void* to, int peer, const void* from, std::size_t bytes) const;

 private:
  std::vector<pid_t> pids_;  // by rank; empty where not available
  std::string failure_;
};

}  // namespace a2av
