#include "core/node_segment.hpp"

#include "core/check.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <cstring>

namespace a2av {
namespace {

constexpr std::size_t kNameBytes = 64;

std::string unique_name() {
  static std::atomic<unsigned> made{0};
  return fmt::format("/a2av.{}.{}", getpid(), made.fetch_add(1));
}

std::string errno_text(const char* what) {
  return fmt::format("{}: {}", what, std::strerror(errno));
}

// Rank 0: creates the object with all its pages (posix_fallocate, so that a full /dev/shm
// is an error here rather than a SIGBUS later). Returns the failure, or "".
std::string create(const std::string& name, std::size_t bytes) {
  const int fd = shm_open(name.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
  if (fd < 0) return errno_text("shm_open");
  const int rc = posix_fallocate(fd, 0, static_cast<off_t>(bytes));
  close(fd);
  if (rc != 0) {
    shm_unlink(name.c_str());
    return fmt::format("posix_fallocate of {} bytes: {}", bytes, std::strerror(rc));
  }
  return "";
}

}  // namespace

NodeSegment::NodeSegment(MPI_Comm comm, std::size_t part_bytes) {
  int rank = 0, size = 0;
  check_mpi(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
  check_mpi(MPI_Comm_size(comm, &size), "MPI_Comm_size");
  size_ = static_cast<std::size_t>(size);
  // Rank 0 decides the size and makes the object; the others learn both from it.
  struct {
    std::uint64_t part_bytes;
    std::array<char, kNameBytes> name;
  } made{part_bytes, {}};
  std::string failure;
  if (rank == 0 && !kNodeSegments) failure = "simulated ranks share no memory (SimGrid SMPI build)";
  if (rank == 0 && kNodeSegments && part_bytes == 0) failure = "no shared memory was asked for";
  if (!kNodeSegments) part_bytes = 0;
  if (rank == 0 && part_bytes > 0) {
    const std::string name = unique_name();
    failure = create(name, part_bytes * size);
    if (failure.empty()) std::strncpy(made.name.data(), name.c_str(), kNameBytes - 1);
  }
  check_mpi(MPI_Bcast(&made, sizeof made, MPI_BYTE, 0, comm), "MPI_Bcast");
  const std::size_t bytes = made.part_bytes * size;
  void* mapped = MAP_FAILED;
  if (made.name[0] != '\0') {
    const int fd = shm_open(made.name.data(), O_RDWR, 0);
    if (fd < 0) failure = errno_text("shm_open");
    if (fd >= 0) {
      mapped = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
      if (mapped == MAP_FAILED) failure = errno_text("mmap");
      close(fd);
    }
  }
  // Everyone has tried to map it: the name can go, and the ranks agree on the outcome.
  int first_failed = failure.empty() && made.name[0] != '\0' ? size : rank;
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, &first_failed, 1, MPI_INT, MPI_MIN, comm), "MPI_Allreduce");
  if (rank == 0 && made.name[0] != '\0') shm_unlink(made.name.data());
  if (first_failed == size) {
    base_ = static_cast<std::byte*>(mapped);
    part_bytes_ = made.part_bytes;
    return;
  }
  if (mapped != MAP_FAILED) munmap(mapped, bytes);
  std::array<char, 256> reason{};
  if (rank == first_failed) std::strncpy(reason.data(), failure.c_str(), reason.size() - 1);
  check_mpi(MPI_Bcast(reason.data(), reason.size(), MPI_CHAR, first_failed, comm), "MPI_Bcast");
  failure_ = fmt::format("rank {}: {}", first_failed, reason.data());
}

NodeSegment::~NodeSegment() {
  if (base_) munmap(base_, part_bytes_ * size_);
}

}  // namespace a2av
