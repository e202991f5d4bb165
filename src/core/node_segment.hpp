// Memory that every rank of a communicator maps, for ranks that share one node: a shared
// memory object created by rank 0 without a name (memfd_create) and opened by the others
// through rank 0's /proc/<pid>/fd entry, so that a job killed at any moment leaves nothing in
// /dev/shm; where that path does not lead every rank to it, a named POSIX object, unlinked
// as soon as all have mapped it (docs/design.md, "Shared-memory segments"). Under SimGrid
// SMPI, whose ranks share one process: a block of its heap. Each rank owns a cache-line
// aligned part. Making it is collective (NodeSegmentMaker makes it without waiting for the other
// ranks); releasing it is local.
#pragma once

#include "core/check.hpp"
#include "core/spin.hpp"

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace a2av {

// A cache line: parts begin on one, and flags that different ranks write keep to their own.
inline constexpr std::size_t kLine = 64;

// A copy into or out of a segment. Under SimGrid SMPI, where the computation between MPI
// calls is (almost) free, it costs what the platform charges an on-node message's bytes: the
// bandwidth in A2AV_SIM_COPY_BANDWIDTH (bytes/s; scripts/simulate.sh sets the platform's
// loopback bandwidth).
inline void copy_on_node(void* to, const void* from, std::size_t bytes) {
  if (bytes == 0) return;  // either pointer may be null then: memcpy must not see it
  std::memcpy(to, from, bytes);
#ifdef A2AV_SIMULATION
  charge_copy(bytes);
#endif
}

// Bytes of shared memory per rank for the cells of an algorithm: A2AV_SHM_BYTES if set (0:
// none, the algorithm runs its fallback), else min(1 MiB, 32 MiB / P).
std::int64_t shared_memory_budget(int size);

// One turn of waiting for another rank of the node: spins while every rank has a core, else
// gives the core away; every 64th turn lets MPI progress (a peer may wait on a message this
// rank sent).
inline void wait_on_node(int idle, bool cores_shared, MPI_Comm comm) {
  if (!cores_shared && idle < 4096) return pause_briefly();
  if (idle % 64 == 63) {
    int found = 0;
    check_mpi(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &found, MPI_STATUS_IGNORE),
              "MPI_Iprobe");
  }
  yield_core();
}

class NodeSegment {
 public:
  // Collective over `comm`, whose ranks must share a node; rank r's part has part_bytes[r]
  // bytes (rounded up to a cache line; rank 0's list counts; all 0: none). Every rank gets
  // the same outcome: mapped (ok()) or not, with the first failure's reason on every rank.
  NodeSegment(MPI_Comm comm, std::vector<std::size_t> part_bytes);
  // Parts of one size (rank 0's counts).
  NodeSegment(MPI_Comm comm, std::size_t part_bytes);
  ~NodeSegment();
  NodeSegment(const NodeSegment&) = delete;
  NodeSegment& operator=(const NodeSegment&) = delete;

  bool ok() const { return base_ != nullptr; }
  const std::string& failure() const { return failure_; }
  // Why the nameless route failed ("rank R: ...") where a named one was tried; else "".
  const std::string& fallback() const { return fallback_; }
  std::size_t part_bytes(int rank) const { return offsets_[rank + 1] - offsets_[rank]; }
  std::size_t bytes() const { return offsets_.back(); }
  std::byte* part(int rank) const { return base_ + offsets_[rank]; }

 private:
  friend class NodeSegmentMaker;
  struct Steps;
  NodeSegment() = default;

  std::byte* base_ = nullptr;
  std::vector<std::size_t> offsets_;  // by rank, then the total
  std::string failure_;
  std::string fallback_;
};

// A NodeSegment of parts of one size (rank 0's counts) made without waiting for the other ranks:
// the constructor's collective steps, each started nonblocking and tested by advance(), for a
// nonblocking start, which must not wait for its peers. Collective over `comm` all the same:
// every rank makes it, in the same order relative to its other collectives on `comm`.
class NodeSegmentMaker {
 public:
  NodeSegmentMaker(MPI_Comm comm, std::size_t part_bytes);
  // Runs the steps left to the end (waiting: the other ranks run theirs).
  ~NodeSegmentMaker();
  NodeSegmentMaker(const NodeSegmentMaker&) = delete;
  NodeSegmentMaker& operator=(const NodeSegmentMaker&) = delete;

  // Advances without blocking (`wait`: to the end); true once every rank has the outcome.
  bool advance(bool wait = false);
  // Once advance() has returned true: the segment, mapped or not as with the constructor.
  std::unique_ptr<NodeSegment> take();

 private:
  std::unique_ptr<NodeSegment> segment_;  // before steps_, which write into it until destroyed
  std::unique_ptr<NodeSegment::Steps> steps_;
};

}  // namespace a2av
