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

NodeSegment::NodeSegment(MPI_Comm comm, std::size_t part_bytes) : part_bytes_(part_bytes) {
  int rank = 0, size = 0;
  check_mpi(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
  check_mpi(MPI_Comm_size(comm, &size), "MPI_Comm_size");
  const std::size_t bytes = part_bytes * static_cast<std::size_t>(size);
  std::array<char, kNameBytes> name{};
  std::string failure;
  if (rank == 0) {
    const std::string made = unique_name();
    failure = create(made, bytes);
    if (failure.empty()) std::strncpy(name.data(), made.c_str(), name.size() - 1);
  }
  check_mpi(MPI_Bcast(name.data(), kNameBytes, MPI_CHAR, 0, comm), "MPI_Bcast");
  void* mapped = MAP_FAILED;
  if (name[0] != '\0') {
    const int fd = shm_open(name.data(), O_RDWR, 0);
    if (fd < 0) failure = errno_text("shm_open");
    if (fd >= 0) {
      mapped = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
      if (mapped == MAP_FAILED) failure = errno_text("mmap");
      close(fd);
    }
  }
  // Everyone has tried to map it: the name can go, and the ranks agree on the outcome.
  const bool failed = !failure.empty() || name[0] == '\0';
  int first_failed = failed ? rank : size;
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, &first_failed, 1, MPI_INT, MPI_MIN, comm), "MPI_Allreduce");
  if (rank == 0 && name[0] != '\0') shm_unlink(name.data());
  if (first_failed == size) {
    base_ = static_cast<std::byte*>(mapped);
    mapped_bytes_ = bytes;
    return;
  }
  if (mapped != MAP_FAILED) munmap(mapped, bytes);
  std::array<char, 256> reason{};
  if (rank == first_failed) std::strncpy(reason.data(), failure.c_str(), reason.size() - 1);
  check_mpi(MPI_Bcast(reason.data(), reason.size(), MPI_CHAR, first_failed, comm), "MPI_Bcast");
  failure_ = fmt::format("rank {}: {}", first_failed, reason.data());
}

NodeSegment::~NodeSegment() {
  if (base_) munmap(base_, mapped_bytes_);
}

}  // namespace a2av
