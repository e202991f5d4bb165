// Broadcast ([Lecture14], "Broadcast", "Hypercube broadcast
// algorithm" and "Revisiting Broadcast" / "Strategy for long messages"):
//  - binomial: the binomial tree over ranks relative to the root, the hypercube algorithm
//    for any P; ceil(lg P) rounds, ceil(lg P) (alpha + n beta).
//  - scatter_allgather: van de Geijn, a binomial scatter of P pieces then a ring allgather;
//    (ceil(lg P) + P - 1) alpha + 2 (P-1)/P n beta, which beats the tree for long messages.
#include "collectives/common.hpp"

namespace a2av::coll {
namespace {

void bcast_binomial(void* buf, std::int64_t count, const Type& type, int root, const Comm& c) {
  const int v = relative(c.rank, root, c.size);
  int mask = 1;
  for (; mask < c.size; mask <<= 1) {
    if (v & mask) {
      recv(buf, count, type, absolute(v - mask, root, c.size), c);
      break;
    }
  }
  for (mask >>= 1; mask > 0; mask >>= 1)
    if (v + mask < c.size) send(buf, count, type, absolute(v + mask, root, c.size), c);
}

void bcast_scatter_allgather(void* buf, std::int64_t count, const Type& type, int root,
                             const Comm& c) {
  // Pieces in relative-rank order sit at their final place in every rank's buffer.
  const Pieces pieces{(count + c.size - 1) / c.size, count};
  auto* base = static_cast<std::byte*>(buf);
  const int v = relative(c.rank, root, c.size);
  binomial_scatter(base + pieces.begin(v) * type.extent, pieces, type, root, c);
  ring_allgather(base, pieces, type, root, c);
}

}  // namespace

void bcast(void* buf, MPI_Count count, MPI_Datatype type, int root, MPI_Comm comm,
           Algorithm algorithm) {
  const Call call = start(Collective::bcast, comm, type, count, algorithm, root);
  require_buffer(buf, count, "bcast");
  if (call.c.size == 1 || count == 0) return;
  if (call.algorithm == Algorithm::binomial)
    bcast_binomial(buf, count, call.type, root, call.c);
  else
    bcast_scatter_allgather(buf, count, call.type, root, call.c);
}

}  // namespace a2av::coll
