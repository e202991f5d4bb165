#include "core/single_copy.hpp"

#include "core/check.hpp"
#include "core/comm_context.hpp"
#include "core/environment.hpp"

#include <sys/prctl.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <memory>

namespace a2av {
namespace {

constexpr std::uint64_t kProbeValue = 0xa2a5'c0de'0000'0000;

// Reads one word at `address` of process `pid` through the kernel; "" if it came back right.
std::string try_reading(std::int64_t pid, std::uint64_t address, std::uint64_t expected) {
  std::uint64_t word = 0;
  iovec local{&word, sizeof word};
  iovec remote{reinterpret_cast<void*>(address), sizeof word};
  const ssize_t n = process_vm_readv(static_cast<pid_t>(pid), &local, 1, &remote, 1, 0);
  if (n < 0) return std::strerror(errno);
  if (n != sizeof word || word != expected) return "a probe word came back wrong";
  return "";
}

}  // namespace

const SingleCopy& communicator_single_copy(const CommContext& ctx) {
  if (!ctx.single_copy) ctx.single_copy = std::make_shared<SingleCopy>(ctx.comm);
  return *ctx.single_copy;
}

SingleCopy::SingleCopy(MPI_Comm comm) {
  SingleCopyMaker maker(comm);
  maker.advance(true);
  *this = maker.take();
}

SingleCopyMaker::SingleCopyMaker(MPI_Comm comm) : comm_(comm) {
  check_mpi(MPI_Comm_rank(comm, &rank_), "MPI_Comm_rank");
  check_mpi(MPI_Comm_size(comm, &size_), "MPI_Comm_size");
#ifdef A2AV_SIMULATION
  made_.failure_ = "not under SimGrid (ranks share one process)";
  return;
#endif
  // Every rank takes part in the collectives below whatever its own setting says.
  wanted_ = env_flag("A2AV_SINGLE_COPY");
  // Consent to be read by the other ranks where Yama asks for it; elsewhere EINVAL, harmless.
  if (wanted_) prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
  probe_ = kProbeValue ^ static_cast<std::uint64_t>(rank_);
  mine_ = {getpid(), reinterpret_cast<std::uint64_t>(&probe_)};
  all_.resize(static_cast<std::size_t>(size_));
  check_mpi(MPI_Iallgather(&mine_, sizeof mine_, MPI_BYTE, all_.data(), sizeof mine_, MPI_BYTE,
                           comm_, &request_),
            "MPI_Iallgather");
  step_ = Step::kGathering;
}

bool SingleCopyMaker::advance(bool wait) {
  while (step_ != Step::kDone) {
    if (!completed(wait)) return false;
    if (step_ == Step::kGathering)
      agree();
    else
      settle();
  }
  return true;
}

bool SingleCopyMaker::completed(bool wait) {
  if (wait) {
    check_mpi(MPI_Wait(&request_, MPI_STATUS_IGNORE), "MPI_Wait");
    return true;
  }
  int done = 0;
  check_mpi(MPI_Test(&request_, &done, MPI_STATUS_IGNORE), "MPI_Test");
  return done != 0;
}

// Reads the next rank's probe; the allreduce also orders that read before the probe's end.
void SingleCopyMaker::agree() {
  const int next = (rank_ + 1) % size_;
  const Probe& peer = all_[static_cast<std::size_t>(next)];
  if (wanted_)
    why_ = try_reading(peer.pid, peer.address, kProbeValue ^ static_cast<std::uint64_t>(next));
  all_ok_ = wanted_ && why_.empty();
  check_mpi(MPI_Iallreduce(MPI_IN_PLACE, &all_ok_, 1, MPI_INT, MPI_MIN, comm_, &request_),
            "MPI_Iallreduce");
  step_ = Step::kAgreeing;
}

void SingleCopyMaker::settle() {
  step_ = Step::kDone;
  if (!all_ok_) {
    made_.failure_ = !wanted_       ? "A2AV_SINGLE_COPY=0"
                     : why_.empty() ? "another rank could not read its neighbour's memory"
                                    : "process_vm_readv: " + why_;
    return;
  }
  for (const Probe& p : all_) made_.pids_.push_back(static_cast<pid_t>(p.pid));
}

std::optional<Error> SingleCopy::read(void* to, int peer, const void* from,
                                      std::size_t bytes) const {
  if (!ok()) fail(A2AV_ERR_ARG, "single copy read without cross-memory attach: {}", failure_);
  // One call moves at most about 2 GiB (the kernel's MAX_RW_COUNT): loop.
  for (std::size_t done = 0; done < bytes;) {
    iovec local{static_cast<std::byte*>(to) + done, bytes - done};
    iovec remote{const_cast<std::byte*>(static_cast<const std::byte*>(from)) + done, bytes - done};
    const ssize_t n = process_vm_readv(pids_[peer], &local, 1, &remote, 1, 0);
    if (n > 0) {
      done += static_cast<std::size_t>(n);
      continue;
    }
    const int why = n < 0 ? errno : 0;
    if (why == EFAULT)
      return Error(A2AV_ERR_ARG,
                   fmt::format("{} of its bytes lie outside the sender's send buffer or this "
                               "rank's receive buffer: are both as long as the counts and "
                               "displacements say? (process_vm_readv: {})",
                               bytes - done, std::strerror(why)));
    return Error(A2AV_ERR_MPI, fmt::format("process_vm_readv of {} bytes: {}", bytes - done,
                                           why ? std::strerror(why) : "nothing read"));
  }
  return std::nullopt;
}

}  // namespace a2av
