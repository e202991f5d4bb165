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
// Named, not anonymous: NodeSegment::Steps keeps them.
namespace segment_blocks {

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

}  // namespace segment_blocks

namespace {

using namespace segment_blocks;

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

double simulated_poll_seconds() {
  static const double seconds =
      1e-9 * static_cast<double>(*env_integer("A2AV_SIM_POLL_NANOSECONDS"));
  return seconds;
}

void charge_copy(std::size_t bytes) {
  static const double bandwidth = env_number("A2AV_SIM_COPY_BANDWIDTH");
  if (bandwidth > 0) uncharged_copy_seconds += static_cast<double>(bytes) / bandwidth;
  if (uncharged_copy_seconds >= simulated_poll_seconds()) {
    smpi_execute(uncharged_copy_seconds);
    uncharged_copy_seconds = 0;
  }
}

void simulated_poll() {
  smpi_execute(simulated_poll_seconds() + uncharged_copy_seconds);
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

// Making a segment, one collective at a time: rank 0 tells the sizes of the parts; then, per
// route until one serves, rank 0 makes the object and tells where it is, every rank maps it, and
// the ranks agree on the first that failed (all keep the mapping, or none does) and learn why.
// Each collective is started nonblocking; advance() waits for it or tests it.
struct NodeSegment::Steps {
  enum class Step { kSizes, kAddress, kOutcome, kReason, kDone };

  Steps(MPI_Comm comm, std::vector<std::size_t> part_bytes, NodeSegment& segment)
      : comm_(comm), size_(comm_size(comm)), parts_(std::move(part_bytes)), segment_(segment) {
    check_mpi(MPI_Comm_rank(comm, &rank_), "MPI_Comm_rank");
    parts_.resize(size_);
    check_mpi(MPI_Ibcast(parts_.data(), static_cast<int>(size_ * sizeof(std::size_t)), MPI_BYTE, 0,
                         comm, &request_),
              "MPI_Ibcast");
  }

  // True once every step is done; `wait`: waits for each collective instead of testing it.
  bool advance(bool wait) {
    while (step_ != Step::kDone) {
      int done = 1;
      if (wait)
        check_mpi(MPI_Wait(&request_, MPI_STATUS_IGNORE), "MPI_Wait");
      else
        check_mpi(MPI_Test(&request_, &done, MPI_STATUS_IGNORE), "MPI_Test");
      if (!done) return false;
      next();
    }
    return true;
  }

 private:
  // Acts on the collective just completed and starts the next.
  void next() {
    switch (step_) {
      case Step::kSizes:
        return lay_out();
      case Step::kAddress:
        return map();
      case Step::kOutcome:
        return settle();
      case Step::kReason:
        return give_reason();
      case Step::kDone:
        return;
    }
  }

  // Rank 0 decides the sizes and makes the object; the others learn both from it.
  void lay_out() {
    segment_.offsets_.assign(1, 0);
    for (const std::size_t bytes : parts_)
      segment_.offsets_.push_back(segment_.offsets_.back() + (bytes + kLine - 1) / kLine * kLine);
    if (segment_.bytes() > 0) return try_route();
    segment_.failure_ = "rank 0: no shared memory was asked for";
    step_ = Step::kDone;
  }

  void try_route() {
    if (rank_ == 0) {
      made_ = create_block(segment_.bytes(), kRoutes[route_]);
      failure_ = made_.failure;
    }
    address_ = made_.address;
    check_mpi(MPI_Ibcast(&address_, sizeof address_, MPI_BYTE, 0, comm_, &request_), "MPI_Ibcast");
    step_ = Step::kAddress;
  }

  void map() {
    mapped_ = address_.path[0] != '\0' ? map_block(address_, segment_.bytes(), failure_) : nullptr;
    first_failed_ = mapped_ ? size_ : rank_;
    check_mpi(MPI_Iallreduce(MPI_IN_PLACE, &first_failed_, 1, MPI_INT, MPI_MIN, comm_, &request_),
              "MPI_Iallreduce");
    step_ = Step::kOutcome;
  }

  // Everyone has tried to map it: rank 0 lets go of it, and all keep it or none does.
  void settle() {
    if (rank_ == 0) release_block(made_);
    made_ = MadeBlock{};
    if (first_failed_ == size_) {
      segment_.base_ = static_cast<std::byte*>(mapped_);
      step_ = Step::kDone;
      return;
    }
    if (mapped_) unmap_block(mapped_, segment_.bytes());
    reason_.fill('\0');
    if (rank_ == first_failed_) std::strncpy(reason_.data(), failure_.c_str(), reason_.size() - 1);
    check_mpi(MPI_Ibcast(reason_.data(), static_cast<int>(reason_.size()), MPI_CHAR, first_failed_,
                         comm_, &request_),
              "MPI_Ibcast");
    step_ = Step::kReason;
  }

  // Every rank learns why: the failure, or why the route that served was not the first.
  void give_reason() {
    const bool last = route_ + 1 == kRoutes.size();
    (last ? segment_.failure_ : segment_.fallback_) =
        fmt::format("rank {}: {}", first_failed_, reason_.data());
    if (last) {
      step_ = Step::kDone;
      return;
    }
    ++route_;
    try_route();
  }

  MPI_Comm comm_;
  int rank_ = 0;
  int size_;
  std::vector<std::size_t> parts_;
  NodeSegment& segment_;
  Step step_ = Step::kSizes;
  MPI_Request request_ = MPI_REQUEST_NULL;  // the collective in flight
  std::size_t route_ = 0;                   // into kRoutes
  MadeBlock made_;                          // rank 0's object, until every rank has tried it
  BlockAddress address_;
  void* mapped_ = nullptr;
  std::string failure_;  // why this rank could not make or map it
  int first_failed_ = 0;
  std::array<char, 256> reason_{};  // the first failed rank's failure
};

NodeSegment::NodeSegment(MPI_Comm comm, std::size_t part_bytes)
    : NodeSegment(comm, std::vector<std::size_t>(comm_size(comm), part_bytes)) {}

NodeSegment::NodeSegment(MPI_Comm comm, std::vector<std::size_t> part_bytes) {
  Steps(comm, std::move(part_bytes), *this).advance(true);
}

NodeSegment::~NodeSegment() {
  if (base_) unmap_block(base_, bytes());
}

NodeSegmentMaker::NodeSegmentMaker(MPI_Comm comm, std::size_t part_bytes)
    : segment_(new NodeSegment),
      steps_(std::make_unique<NodeSegment::Steps>(
          comm, std::vector<std::size_t>(comm_size(comm), part_bytes), *segment_)) {}

NodeSegmentMaker::~NodeSegmentMaker() {
  if (!steps_) return;
  try {
    steps_->advance(true);
  } catch (const Error&) {  // a destructor must not throw; nothing is left to undo
  }
}

bool NodeSegmentMaker::advance(bool wait) {
  return steps_->advance(wait);
}

std::unique_ptr<NodeSegment> NodeSegmentMaker::take() {
  steps_.reset();
  return std::move(segment_);
}

}  // namespace a2av
