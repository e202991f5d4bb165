#include "core/single_copy.hpp"

#include "core/check.hpp"
#include "core/environment.hpp"

#include <sys/prctl.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

namespace a2av {
namespace {

struct Probe {
  std::int64_t pid;
  std::uint64_t address;  // of a word holding kProbeValue ^ rank
};
constexpr std::uint64_t kProbeValue = 0xa2a5'c0de'0000'0000;

// Reads one word of rank `peer` (its probe) through the kernel; "" if it came back right.
std::string try_reading(const Probe& peer, std::uint64_t expected) {
  std::uint64_t word = 0;
  iovec local{&word, sizeof word};
  iovec remote{reinterpret_cast<void*>(peer.address), sizeof word};
  const ssize_t n = process_vm_readv(static_cast<pid_t>(peer.pid), &local, 1, &remote, 1, 0);
  if (n < 0) return std::strerror(errno);
  if (n != sizeof word || word != expected) return "a probe word came back wrong";
  return "";
}

}  // namespace

SingleCopy::SingleCopy(MPI_Comm comm) {
  int rank = 0, size = 1;
  check_mpi(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
  check_mpi(MPI_Comm_size(comm, &size), "MPI_Comm_size");
#ifdef A2AV_SIMULATION
  failure_ = "not under SimGrid (ranks share one process)";
  return;
#endif
  // Every rank takes part in the collectives below whatever its own setting says.
  const bool wanted = env_flag("A2AV_SINGLE_COPY");
  // Consent to be read by the other ranks where Yama asks for it; elsewhere EINVAL, harmless.
  if (wanted) prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
  const std::uint64_t probe = kProbeValue ^ static_cast<std::uint64_t>(rank);
  const Probe mine{getpid(), reinterpret_cast<std::uint64_t>(&probe)};
  std::vector<Probe> all(size);
  check_mpi(MPI_Allgather(&mine, sizeof mine, MPI_BYTE, all.data(), sizeof mine, MPI_BYTE, comm),
            "MPI_Allgather");
  const int next = (rank + 1) % size;
  const std::string why =
      wanted ? try_reading(all[next], kProbeValue ^ static_cast<std::uint64_t>(next)) : "";
  // The probe word must outlive the neighbour's read: the allreduce orders them.
  int all_ok = wanted && why.empty();
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, &all_ok, 1, MPI_INT, MPI_MIN, comm), "MPI_Allreduce");
  if (!all_ok) {
    failure_ = !wanted       ? "A2AV_SINGLE_COPY=0"
               : why.empty() ? "another rank could not read its neighbour's memory"
                             : "process_vm_readv: " + why;
    return;
  }
  for (const Probe& p : all) pids_.push_back(static_cast<pid_t>(p.pid));
}

void SingleCopy::read(void* to, int peer, const void* from, std::size_t bytes) const {
  if (!ok()) fail(A2AV_ERR_ARG, "single copy read without cross-memory attach: {}", failure_);
  // One call moves at most about 2 GiB (the kernel's MAX_RW_COUNT): loop.
  for (std::size_t done = 0; done < bytes;) {
    iovec local{static_cast<std::byte*>(to) + done, bytes - done};
    iovec remote{const_cast<std::byte*>(static_cast<const std::byte*>(from)) + done, bytes - done};
    const ssize_t n = process_vm_readv(pids_[peer], &local, 1, &remote, 1, 0);
    if (n <= 0)
      fail(A2AV_ERR_MPI, "process_vm_readv of {} bytes from rank {}: {}", bytes - done, peer,
           n < 0 ? std::strerror(errno) : "nothing read");
    done += static_cast<std::size_t>(n);
  }
}

}  // namespace a2av
