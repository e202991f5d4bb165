// Allreduce ([Lecture14], "Allreduce()": one phase instead of
// reduce + bcast, using duplex links), with gamma the cost per byte of the op:
//  - recursive_doubling: partners rank XOR 2^k exchange whole vectors and both combine;
//    lg P (alpha + n beta + n gamma) for a power of two, the usual fold of the extra ranks
//    adds 2 (alpha + n beta) + n gamma otherwise.
//  - rabenseifner: recursive-halving reduce-scatter + recursive-doubling allgather, for
//    long vectors; 2 lg P alpha + 2 (P-1)/P n beta + (P-1)/P n gamma, plus the same fold.
// Both combine lower ranks first, so non-commutative operators are exact.
#include "collectives/halving.hpp"

namespace a2av::coll {
namespace {

void allreduce_recursive_doubling(std::byte* acc, std::int64_t count, const Type& type, MPI_Op op,
                                  const Comm& c) {
  Elements scratch(type, count);
  const Fold f = fold(acc, scratch.data(), count, type, op, c);
  for (int mask = 1; f.newrank >= 0 && mask < f.p2; mask <<= 1) {
    const int partner = f.newrank ^ mask;
    sendrecv(acc, count, f.rank_of(partner), scratch.data(), count, f.rank_of(partner), type, c);
    if (partner < f.newrank || commutative(op)) {
      reduce_local(scratch.data(), acc, count, type, op);
    } else {
      reduce_local(acc, scratch.data(), count, type, op);
      copy(scratch.data(), acc, count, type);
    }
  }
  unfold(f, acc, count, type, c);
}

void allreduce_rabenseifner(std::byte* acc, std::int64_t count, const Type& type, MPI_Op op,
                            const Comm& c) {
  Elements scratch(type, count);
  const Fold f = fold(acc, scratch.data(), count, type, op, c);
  if (f.newrank >= 0) {
    const Pieces pieces{(count + f.p2 - 1) / f.p2, count};
    const Window w = reduce_scatter_halving(acc, scratch.data(), pieces, type, op, f, c);
    allgather_doubling(acc, pieces, w, type, f, c);
  }
  unfold(f, acc, count, type, c);
}

}  // namespace

void allreduce(const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype type, MPI_Op op,
               MPI_Comm comm, Algorithm algorithm) {
  const Call call = start(Collective::allreduce, comm, type, count, algorithm);
  require_op(op);
  require_buffer(sendbuf, count, "allreduce: sendbuf");
  require_buffer(recvbuf, count, "allreduce: recvbuf");
  if (count == 0) return;
  // The result accumulates in recvbuf itself.
  auto* acc = static_cast<std::byte*>(recvbuf);
  copy(sendbuf, acc, count, call.type);
  if (call.algorithm == Algorithm::recursive_doubling)
    allreduce_recursive_doubling(acc, count, call.type, op, call.c);
  else
    allreduce_rabenseifner(acc, count, call.type, op, call.c);
}

}  // namespace a2av::coll
