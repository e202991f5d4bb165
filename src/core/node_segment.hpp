// Memory that every rank of a communicator maps, for ranks that share one node: a POSIX
// shared-memory object, created by rank 0, opened and mapped by the others, and unlinked as
// soon as all have mapped it, so that nothing is left behind even if the job dies. Each rank
// owns an equal, cache-line aligned part. Making it is collective; releasing it is local.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace a2av {

// Whether ranks on one node may share memory. Not in the SimGrid SMPI build: its ranks are
// simulated, and what they did through shared memory would take no simulated time.
#ifdef A2AV_SIMULATION
inline constexpr bool kNodeSegments = false;
#else
inline constexpr bool kNodeSegments = true;
#endif

class NodeSegment {
 public:
  // Collective over `comm`, whose ranks must share a node; rank 0's part_bytes counts (0:
  // none). Every rank gets the same outcome: mapped (ok()) or not, with the first failure's
  // reason on every rank.
  NodeSegment(MPI_Comm comm, std::size_t part_bytes);
  ~NodeSegment();
  NodeSegment(const NodeSegment&) = delete;
  NodeSegment& operator=(const NodeSegment&) = delete;

  bool ok() const { return base_ != nullptr; }
  const std::string& failure() const { return failure_; }
  std::size_t part_bytes() const { return part_bytes_; }
  std::byte* part(int rank) const { return base_ + static_cast<std::size_t>(rank) * part_bytes_; }

 private:
  std::byte* base_ = nullptr;
  std::size_t part_bytes_ = 0;
  std::size_t size_ = 0;
  std::string failure_;
};

}  // namespace a2av
