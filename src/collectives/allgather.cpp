// Allgather ([Lecture14], "AllGather" and "Allgather"), n = all P
// blocks:
//  - recursive_doubling: the hypercube exchange, partners rank XOR 2^k swap everything
//    they hold; lg P alpha + (P-1)/P n beta for a power of two. Otherwise the usual fold:
//    the first 2r ranks (r = P - 2^floor(lg P)) pair up, even hands its block to odd before
//    and gets the whole result after, 2 alpha + (n/P + n) beta more.
//  - ring: P-1 steps, each rank forwards to its right what came from its left;
//    (P-1) alpha + (P-1)/P n beta.
#include "collectives/common.hpp"

namespace a2av::coll {
namespace {

// The ranks that take part in the hypercube after the fold: new rank x stands for old
// ranks [first(x), first(x + 1)), in order.
struct HypercubeFold {
  int p2, extra;
  int first(int x) const { return x < extra ? 2 * x : x + extra; }
  int rank_of(int x) const { return x < extra ? 2 * x + 1 : x + extra; }
};

void allgather_recursive_doubling(void* recv_buf, std::int64_t count, const Type& type,
                                  const Comm& c) {
  const HypercubeFold f{floor_pow2(c.size), c.size - floor_pow2(c.size)};
  const auto block = [&](int rank) { return type.at(recv_buf, rank * count); };
  int x = c.rank - f.extra;
  if (c.rank < 2 * f.extra) {
    if (c.rank % 2 == 0) {
      send(block(c.rank), count, type, c.rank + 1, c);
      return recv(recv_buf, c.size * count, type, c.rank + 1, c);
    }
    recv(block(c.rank - 1), count, type, c.rank - 1, c);
    x = c.rank / 2;
  }
  for (int mask = 1; mask < f.p2; mask <<= 1) {
    // Both sides hold aligned groups of `mask` new ranks: contiguous old-rank ranges.
    const int mine = x & ~(mask - 1), theirs = (x ^ mask) & ~(mask - 1);
    sendrecv(block(f.first(mine)), (f.first(mine + mask) - f.first(mine)) * count,
             f.rank_of(x ^ mask), block(f.first(theirs)),
             (f.first(theirs + mask) - f.first(theirs)) * count, f.rank_of(x ^ mask), type, c);
  }
  if (c.rank < 2 * f.extra) send(recv_buf, c.size * count, type, c.rank - 1, c);
}

void allgather_ring(void* recv_buf, std::int64_t count, const Type& type, const Comm& c) {
  ring_allgather(static_cast<std::byte*>(recv_buf), Pieces{count, c.size * count}, type, 0, c);
}

}  // namespace

void allgather(const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype type,
               MPI_Comm comm, Algorithm algorithm) {
  const Call call = start(Collective::allgather, comm, type, count, algorithm);
  require_buffer(sendbuf, count, "allgather: sendbuf");
  require_buffer(recvbuf, count, "allgather: recvbuf");
  if (count == 0) return;
  copy(sendbuf, call.type.at(recvbuf, call.c.rank * count), count, call.type);
  if (call.algorithm == Algorithm::ring)
    allgather_ring(recvbuf, count, call.type, call.c);
  else
    allgather_recursive_doubling(recvbuf, count, call.type, call.c);
}

}  // namespace a2av::coll
