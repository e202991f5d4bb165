#include "core/node_segment.hpp"

#include "core/check.hpp"
#include "core/environment.hpp"

#ifdef A2AV_SIMULATION
#include <smpi/smpi.h>
#endif

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string_view>

namespace a2av {
namespace {

constexpr std::size_t kNameBytes = 64;

// How the others reach the object rank 0 makes.
enum class Route {
  kAnonymous,  // no name: a memfd, opened through rank 0's /proc/<pid>/fd entry
  kNamed,      // a /dev/shm name, unlinked once everyone has mapped the object
};

// What rank 0 tells the others: a path to open and, on the anonymous route, the identity of
// the object it must lead to (a rank in another pid namespace would find another process).
struct BlockAddress {
  Route route = Route::kAnonymous;
  std::array<char, kNameBytes> path{};  // empty: rank 0 made nothing
  std::uint64_t device = 0, inode = 0;
};

// Rank 0's hold on the object while the others map it.
struct MadeBlock {
  BlockAddress address;
  std::string failure;  // why nothing was made
  int fd = -1;          // the anonymous object's descriptor
};

#ifdef A2AV_SIMULATION
// Under SimGrid SMPI every rank is an actor of one process, so its memory is shared already:
// rank 0 maps anonymous memory, the path is the address, and the last rank to let go unmaps
// it. (All actors run on one thread: the count of holders needs no atomics.) Pages are zero
// until touched, so the thousands of segments of a large simulation cost what they hold.
constexpr std::array kRoutes{Route::kAnonymous};

struct Holders {
  alignas(kLine) std::size_t count;
};

MadeBlock create_block(std::size_t bytes, Route) {  // bytes: whole lines
  MadeBlock made;
  void* block = mmap(nullptr, sizeof(Holders) + bytes, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (block == MAP_FAILED) {
    made.failure = fmt::format("cannot map {} bytes", bytes);
    return made;
  }
  fmt::format_to_n(made.address.path.data(), kNameBytes - 1, "{}",
                   reinterpret_cast<std::uintptr_t>(block));
  return made;
}

void* map_block(const BlockAddress& address, std::size_t, std::string&) {
  auto* holders = reinterpret_cast<Holders*>(std::strtoull(address.path.data(), nullptr, 10));
  ++holders->count;
  return holders + 1;
}

void unmap_block(void* base, std::size_t bytes) {
  Holders* holders = static_cast<Holders*>(base) - 1;
  if (--holders->count == 0) munmap(holders, sizeof(Holders) + bytes);
}

void release_block(const MadeBlock&) {}
#else
// Anonymous first: it never has a name, so a job killed at any moment leaves nothing in
// /dev/shm. Named where /proc does not lead every rank to rank 0's descriptor.
constexpr std::array kRoutes{Route::kAnonymous, Route::kNamed};

std::string errno_text(std::string_view what) {
  return fmt::format("{}: {}", what, std::strerror(errno));
}

std::string unique_name() {
  static std::atomic<unsigned> made{0};
  return fmt::format("/a2av.{}.{}", getpid(), made.fetch_add(1));
}

// Gives the object all its pages (so that a full /dev/shm or memory limit is an error here
// rather than a SIGBUS later). Returns the failure, or "".
std::string allocate(int fd, std::size_t bytes) {
  const int rc = posix_fallocate(fd, 0, static_cast<off_t>(bytes));
  return rc == 0 ? "" : fmt::format("posix_fallocate of {} bytes: {}", bytes, std::strerror(rc));
}

MadeBlock create_anonymous(std::size_t bytes) {
  MadeBlock made;
  made.fd = memfd_create("a2av", MFD_CLOEXEC);
  if (made.fd < 0) {
    made.failure = errno_text("memfd_create");
    return made;
  }
  struct stat identity {};
  made.failure = allocate(made.fd, bytes);
  if (made.failure.empty() && fstat(made.fd, &identity) != 0) made.failure = errno_text("fstat");
  if (!made.failure.empty()) {
    close(made.fd);
    made.fd = -1;
    return made;
  }
  fmt::format_to_n(made.address.path.data(), kNameBytes - 1, "/proc/{}/fd/{}", getpid(), made.fd);
  made.address.device = identity.st_dev;
  made.address.inode = identity.st_ino;
  return made;
}

MadeBlock create_named(std::size_t bytes) {
  MadeBlock made;
  made.address.route = Route::kNamed;
  const std::string name = unique_name();
  const int fd = shm_open(name.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
  if (fd < 0) {
    made.failure = errno_text("shm_open");
    return made;
  }
  made.failure = allocate(fd, bytes);
  close(fd);
  if (made.failure.empty())
    std::strncpy(made.address.path.data(), name.c_str(), kNameBytes - 1);
  else
    shm_unlink(name.c_str());
  return made;
}

MadeBlock create_block(std::size_t bytes, Route route) {
  return route == Route::kAnonymous ? create_anonymous(bytes) : create_named(bytes);
}

// A descriptor of the object at `address`, or -1 with the reason in `failure`.
int open_block(const BlockAddress& address, std::string& failure) {
  const char* path = address.path.data();
  if (address.route == Route::kNamed) {
    const int fd = shm_open(path, O_RDWR, 0);
    if (fd < 0) failure = errno_text("shm_open");
    return fd;
  }
  const int fd = open(path, O_RDWR | O_CLOEXEC);
  if (fd < 0) {
    failure = errno_text(fmt::format("open {}", path));
    return -1;
  }
  struct stat identity {};
  if (fstat(fd, &identity) == 0 && identity.st_dev == address.device &&
      identity.st_ino == address.inode)
    return fd;
  close(fd);
  failure = fmt::format("{} is not rank 0's segment (another pid namespace?)", path);
  return -1;
}

// Maps the object, or returns null with the reason in `failure`.
void* map_block(const BlockAddress& address, std::size_t bytes, std::string& failure) {
  const int fd = open_block(address, failure);
  if (fd < 0) return nullptr;
  void* mapped = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (mapped != MAP_FAILED) return mapped;
  failure = errno_text("mmap");
  return nullptr;
}

void unmap_block(void* base, std::size_t bytes) {
  munmap(base, bytes);
}

// Once everyone has tried to map the object, only the mappings keep it alive.
void release_block(const MadeBlock& made) {
  if (made.fd >= 0) close(made.fd);
  if (made.address.route == Route::kNamed && made.address.path[0] != '\0')
    shm_unlink(made.address.path.data());
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

// One collective try at a segment by `route`: every rank keeps the mapping, or none does and
// all learn the first rank that failed (and that rank why).
struct Attempt {
  std::byte* base = nullptr;
  int first_failed = 0;  // the communicator's size where none did
  std::string failure;
};

Attempt attempt_segment(MPI_Comm comm, std::size_t bytes, Route route) {
  int rank = 0;
  const int size = comm_size(comm);
  check_mpi(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
  Attempt attempt;
  MadeBlock made;
  if (rank == 0) {
    made = create_block(bytes, route);
    attempt.failure = made.failure;
  }
  BlockAddress address = made.address;
  check_mpi(MPI_Bcast(&address, sizeof address, MPI_BYTE, 0, comm), "MPI_Bcast");
  void* mapped = address.path[0] != '\0' ? map_block(address, bytes, attempt.failure) : nullptr;
  // Everyone has tried to map it: rank 0 lets go of it, and the ranks agree on the outcome.
  attempt.first_failed = mapped ? size : rank;
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, &attempt.first_failed, 1, MPI_INT, MPI_MIN, comm),
            "MPI_Allreduce");
  if (rank == 0) release_block(made);
  if (attempt.first_failed == size)
    attempt.base = static_cast<std::byte*>(mapped);
  else if (mapped)
    unmap_block(mapped, bytes);
  return attempt;
}

// "rank R: why" of the attempt's first failed rank, on every rank (collective).
std::string agreed_reason(MPI_Comm comm, const Attempt& attempt) {
  std::array<char, 256> reason{};
  int rank = 0;
  check_mpi(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
  if (rank == attempt.first_failed)
    std::strncpy(reason.data(), attempt.failure.c_str(), reason.size() - 1);
  check_mpi(MPI_Bcast(reason.data(), reason.size(), MPI_CHAR, attempt.first_failed, comm),
            "MPI_Bcast");
  return fmt::format("rank {}: {}", attempt.first_failed, reason.data());
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
  const int size = comm_size(comm);
  // Rank 0 decides the sizes and makes the object; the others learn both from it.
  part_bytes.resize(size);
  check_mpi(
      MPI_Bcast(part_bytes.data(), static_cast<int>(size * sizeof(std::size_t)), MPI_BYTE, 0, comm),
      "MPI_Bcast");
  offsets_.assign(1, 0);
  for (const std::size_t bytes : part_bytes)
    offsets_.push_back(offsets_.back() + (bytes + kLine - 1) / kLine * kLine);
  if (bytes() == 0) {
    failure_ = "rank 0: no shared memory was asked for";
    return;
  }
  for (const Route route : kRoutes) {
    const Attempt attempt = attempt_segment(comm, bytes(), route);
    if (attempt.first_failed == size) {
      base_ = attempt.base;
      return;
    }
    // Every rank learns why: the failure, or why the route that served was not the first.
    (route == kRoutes.back() ? failure_ : fallback_) = agreed_reason(comm, attempt);
  }
}

NodeSegment::~NodeSegment() {
  if (base_) unmap_block(base_, bytes());
}

}  // namespace a2av
