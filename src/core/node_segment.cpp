#include "core/node_segment.hpp"

#include "core/check.hpp"
#include "core/environment.hpp"

#ifdef A2AV_SIMULATION
#include <smpi/smpi.h>
#endif

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <optional>

namespace a2av {
namespace {

constexpr std::size_t kNameBytes = 64;

#ifdef A2AV_SIMULATION
// Under SimGrid SMPI every rank is an actor of one process, so its memory is shared already:
// rank 0 maps anonymous memory, the name is the address, and the last rank to let go unmaps
// it. (All actors run on one thread: the count of holders needs no atomics.) Pages are zero
// until touched, so the thousands of segments of a large simulation cost what they hold.
struct Holders {
  alignas(kLine) std::size_t count;
};

std::string create_block(std::size_t bytes, std::string& name) {  // bytes: whole lines
  void* block = mmap(nullptr, sizeof(Holders) + bytes, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (block == MAP_FAILED) return fmt::format("cannot map {} bytes", bytes);
  name = fmt::format("{}", reinterpret_cast<std::uintptr_t>(block));
  return "";
}

void* map_block(const char* name, std::size_t, std::string&) {
  auto* holders = reinterpret_cast<Holders*>(std::strtoull(name, nullptr, 10));
  ++holders->count;
  return holders + 1;
}

void unmap_block(void* base, std::size_t bytes) {
  Holders* holders = static_cast<Holders*>(base) - 1;
  if (--holders->count == 0) munmap(holders, sizeof(Holders) + bytes);
}

void remove_name(const char*) {}
#else
std::string errno_text(const char* what) {
  return fmt::format("{}: {}", what, std::strerror(errno));
}

std::string unique_name() {
  static std::atomic<unsigned> made{0};
  return fmt::format("/a2av.{}.{}", getpid(), made.fetch_add(1));
}

// Rank 0: creates the object with all its pages (posix_fallocate, so that a full /dev/shm
// is an error here rather than a SIGBUS later). Returns the failure, or "".
std::string create_block(std::size_t bytes, std::string& name) {
  name = unique_name();
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

// Maps the object, or returns null with the reason in `failure`.
void* map_block(const char* name, std::size_t bytes, std::string& failure) {
  const int fd = shm_open(name, O_RDWR, 0);
  if (fd < 0) {
    failure = errno_text("shm_open");
    return nullptr;
  }
  void* mapped = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (mapped != MAP_FAILED) return mapped;
  failure = errno_text("mmap");
  return nullptr;
}

void unmap_block(void* base, std::size_t bytes) {
  munmap(base, bytes);
}

void remove_name(const char* name) {
  shm_unlink(name);
}
#endif

}  // namespace

#ifdef A2AV_SIMULATION
namespace {
double uncharged_copy_seconds = 0;  // per rank: each has its own copy of the program
}  // namespace

void charge_copy(std::size_t bytes) {
  static const double bandwidth = env_number("A2AV_SIM_COPY_BANDWIDTH");
  if (bandwidth > 0) uncharged_copy_seconds += static_cast<double>(bytes) / bandwidth;
  if (uncharged_copy_seconds >= kSimulatedPollSeconds) {
    smpi_execute(uncharged_copy_seconds);
    uncharged_copy_seconds = 0;
  }
}

void simulated_poll() {
  smpi_execute(kSimulatedPollSeconds + uncharged_copy_seconds);
  uncharged_copy_seconds = 0;
}
#endif

namespace {

int comm_size(MPI_Comm comm) {
  int size = 0;
  check_mpi(MPI_Comm_size(comm, &size), "MPI_Comm_size");
  return size;
}

}  // namespace

std::int64_t shared_memory_budget(int size) {
  static const std::optional<std::int64_t> asked = env_integer("A2AV_SHM_BYTES");
  if (asked) return *asked;
  return std::min<std::int64_t>(1 << 20, (std::int64_t{32} << 20) / size);
}

NodeSegment::NodeSegment(MPI_Comm comm, std::size_t part_bytes)
    : NodeSegment(comm, std::vector<std::size_t>(comm_size(comm), part_bytes)) {}

NodeSegment::NodeSegment(MPI_Comm comm, std::vector<std::size_t> part_bytes) {
  int rank = 0;
  const int size = comm_size(comm);
  check_mpi(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
  // Rank 0 decides the sizes and makes the object; the others learn both from it.
  part_bytes.resize(size);
  check_mpi(
      MPI_Bcast(part_bytes.data(), static_cast<int>(size * sizeof(std::size_t)), MPI_BYTE, 0, comm),
      "MPI_Bcast");
  offsets_.assign(1, 0);
  for (const std::size_t bytes : part_bytes)
    offsets_.push_back(offsets_.back() + (bytes + kLine - 1) / kLine * kLine);
  const std::size_t bytes = offsets_.back();
  std::array<char, kNameBytes> name{};
  std::string failure;
  if (rank == 0 && bytes == 0) failure = "no shared memory was asked for";
  if (rank == 0 && bytes > 0) {
    std::string made;
    failure = create_block(bytes, made);
    if (failure.empty()) std::strncpy(name.data(), made.c_str(), kNameBytes - 1);
  }
  check_mpi(MPI_Bcast(name.data(), kNameBytes, MPI_CHAR, 0, comm), "MPI_Bcast");
  void* mapped = name[0] != '\0' ? map_block(name.data(), bytes, failure) : nullptr;
  // Everyone has tried to map it: the name can go, and the ranks agree on the outcome.
  int first_failed = failure.empty() && name[0] != '\0' ? size : rank;
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, &first_failed, 1, MPI_INT, MPI_MIN, comm), "MPI_Allreduce");
  if (rank == 0 && name[0] != '\0') remove_name(name.data());
  if (first_failed == size) {
    base_ = static_cast<std::byte*>(mapped);
    return;
  }
  if (mapped) unmap_block(mapped, bytes);
  std::array<char, 256> reason{};
  if (rank == first_failed) std::strncpy(reason.data(), failure.c_str(), reason.size() - 1);
  check_mpi(MPI_Bcast(reason.data(), reason.size(), MPI_CHAR, first_failed, comm), "MPI_Bcast");
  failure_ = fmt::format("rank {}: {}", first_failed, reason.data());
}

NodeSegment::~NodeSegment() {
  if (base_) unmap_block(base_, bytes());
}

}  // namespace a2av
