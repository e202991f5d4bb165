// What every collective algorithm shares: the private communicator, element addressing for
// any datatype (extent, true extent), blocking messages in elements, local copies and
// reductions, and the piece arithmetic of the tree and ring algorithms.
#pragma once

#include <a2av/collectives.hpp>

#include "core/memory.hpp"

#include <mpi.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <numeric>

namespace a2av::coll {

struct Comm {
  MPI_Comm comm;
  int rank;
  int size;
  int tag;
};

// The private duplicate of `user`, with `tag` (collective k: core/tags.hpp, kCollectives.at(k));
// throws for intercommunicators.
Comm private_comm(MPI_Comm user, int tag);

// Ranks relative to a root, as trees and rings number them.
inline int relative(int rank, int root, int size) {
  return (rank - root + size) % size;
}
inline int absolute(int relative_rank, int root, int size) {
  return (relative_rank + root) % size;
}
// A message length for MPI's int counts; throws A2AV_ERR_ARG beyond INT_MAX.
int as_int(std::int64_t count);
int floor_pow2(int n);  // largest power of two <= n (n >= 1)
int ceil_log2(int n);   // smallest l with 2^l >= n

// Element i of a buffer of `type` lies at base + i * extent, its bytes within
// [true_lb, true_lb + true_extent) of that.
struct Type {
  explicit Type(MPI_Datatype type);
  MPI_Datatype type;
  MPI_Aint extent = 0, true_lb = 0, true_extent = 0;
  int size = 0;
  bool contiguous = false;  // size == extent == true_extent: count elements are one byte range
  std::byte* at(void* base, std::int64_t index) const {
    return static_cast<std::byte*>(base) + index * extent;
  }
  const std::byte* at(const void* base, std::int64_t index) const {
    return static_cast<const std::byte*>(base) + index * extent;
  }
};

// The temporary memory of the calling thread's current collective (reset by start()).
MemoryTracker& call_memory();

// Fresh memory for `count` elements, addressed like a user buffer of the type; charged to
// call_memory() while it lives.
class Elements {
 public:
  Elements(const Type& type, std::int64_t count);
  ~Elements();
  Elements(const Elements&) = delete;
  Elements& operator=(const Elements&) = delete;
  std::byte* data() const { return base_; }

 private:
  std::unique_ptr<std::byte[]> storage_;
  std::byte* base_ = nullptr;
  std::int64_t bytes_ = 0;
};

// N buffers of the given element counts in one allocation. Large allocations freed together
// leave glibc's heap top above its trim threshold, so their pages went back to the OS and
// faulted in again on every call (a 1 MiB reduce took 8x the vendor's time in a sweep, a
// 512 KiB Bruck alltoall 10x).
template <std::size_t N>
class Buffers {
 public:
  Buffers(const Type& type, const std::array<std::int64_t, N>& counts)
      : elements_(type, std::accumulate(counts.begin(), counts.end(), std::int64_t{0})) {
    std::int64_t at = 0;
    for (std::size_t i = 0; i < N; ++i) {
      starts_[i] = type.at(elements_.data(), at);
      at += counts[i];
    }
  }
  std::byte* operator[](std::size_t i) const { return starts_[i]; }

 private:
  Elements elements_;
  std::array<std::byte*, N> starts_{};
};

void send(const void* buf, std::int64_t count, const Type& type, int peer, const Comm& c);
void recv(void* buf, std::int64_t count, const Type& type, int peer, const Comm& c);
void sendrecv(const void* out, std::int64_t out_count, int dest, void* in, std::int64_t in_count,
              int source, const Type& type, const Comm& c);
// Copies count elements between two buffers of the type (memcpy when contiguous).
void copy(const void* from, void* to, std::int64_t count, const Type& type);
// inout = in (op) inout, element by element: `in` is the left operand.
void reduce_local(const void* in, void* inout, std::int64_t count, const Type& type, MPI_Op op);
bool commutative(MPI_Op op);

// A buffer cut into P pieces of `piece` elements, the last ones shorter or empty; piece j
// is elements [begin(j), begin(j + 1)). Scatter uses piece = count, total = P * count.
struct Pieces {
  std::int64_t piece, total;
  std::int64_t begin(std::int64_t j) const { return std::min(j * piece, total); }
  std::int64_t length(std::int64_t from, std::int64_t to) const { return begin(to) - begin(from); }
};

// Binomial-tree scatter over ranks relative to root: relative rank v ends up with pieces
// [v, v + subtree(v)), `mine` addressing piece v (the root: piece 0, all pieces).
void binomial_scatter(std::byte* mine, const Pieces& pieces, const Type& type, int root,
                      const Comm& c);
// The mirror image: each rank holds its subtree's pieces at `mine`; the root ends with all.
void binomial_gather(std::byte* mine, const Pieces& pieces, const Type& type, int root,
                     const Comm& c);
// Pieces in a binomial subtree rooted at relative rank v.
int subtree(int v, int size);
// Ring allgather: relative rank v holds piece v of `base` (piece 0's address); P-1 steps
// to the right-hand neighbour later give every rank every piece.
void ring_allgather(std::byte* base, const Pieces& pieces, const Type& type, int root,
                    const Comm& c);

}  // namespace a2av::coll

namespace a2av::coll {

// One call's checked arguments: the private communicator, the type, the algorithm to run.
struct Call {
  Comm c;
  Type type;
  Algorithm algorithm;
};

// Checks what every entry point shares (datatype, count, the root of a rooted collective,
// the algorithm applies to the collective) and resolves automatic. Throws a2av::Error.
Call start(Collective collective, MPI_Comm comm, MPI_Datatype type, MPI_Count count,
           Algorithm algorithm, int root = 0);
// A buffer that must hold data: not null when count > 0, not MPI_IN_PLACE.
void require_buffer(const void* buf, MPI_Count count, const char* what);
void require_op(MPI_Op op);

}  // namespace a2av::coll
