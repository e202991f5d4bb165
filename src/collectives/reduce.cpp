// Reduce ([Lecture14], "Reduction": the hypercube algorithm run
// backwards; "Revisiting Broadcast" for any P), with gamma the cost per byte of the op:
//  - binomial: the binomial tree toward the root; ceil(lg P) (alpha + n beta + n gamma).
//    A non-commutative op needs the tree in rank order: rooted at 0, then one more message
//    to the root.
//  - rabenseifner: reduce-scatter by recursive halving, then a binomial gather of the
//    pieces (Rabenseifner 2004, as in MPICH); 2 lg P alpha + 2 (P-1)/P n beta +
//    (P-1)/P n gamma for a power of two, the fold adds alpha + n (beta + gamma) otherwise.
#include "collectives/halving.hpp"

namespace a2av::coll {
namespace {

// Whether relative rank v has a child in the binomial tree of `size` ranks.
bool has_children(int v, int size) {
  for (int mask = 1; mask < size && !(v & mask); mask <<= 1)
    if (v + mask < size) return true;
  return false;
}

void reduce_binomial(const void* send_buf, void* recv_buf, std::int64_t count, const Type& type,
                     MPI_Op op, int root, const Comm& c) {
  const int tree_root = commutative(op) ? root : 0;
  const int v = relative(c.rank, tree_root, c.size);
  // Leaves send the user's buffer as it is; only ranks with children need two buffers.
  const std::int64_t held = has_children(v, c.size) ? count : 0;
  const Buffers<2> buffers(type, std::array{held, held});
  std::byte *mine = nullptr, *theirs = nullptr;
  auto result = [&]() -> const void* { return mine ? mine : send_buf; };
  for (int mask = 1; mask < c.size; mask <<= 1) {
    if (v & mask) {
      send(result(), count, type, absolute(v - mask, tree_root, c.size), c);
      break;
    }
    if (v + mask >= c.size) continue;
    if (!mine) {
      mine = buffers[0];
      theirs = buffers[1];
      copy(send_buf, mine, count, type);
    }
    // The child's ranks follow ours: ours is the left operand.
    recv(theirs, count, type, absolute(v + mask, tree_root, c.size), c);
    reduce_local(mine, theirs, count, type, op);
    std::swap(mine, theirs);
  }
  if (tree_root == root) {
    if (c.rank == root) copy(result(), recv_buf, count, type);
  } else if (c.rank == tree_root) {
    send(result(), count, type, root, c);
  } else if (c.rank == root) {
    recv(recv_buf, count, type, tree_root, c);
  }
}

void reduce_rabenseifner(const void* send_buf, void* recv_buf, std::int64_t count, const Type& type,
                         MPI_Op op, int root, const Comm& c) {
  const Buffers<2> buffers(type, {count, count});
  std::byte *const acc = buffers[0], *const scratch = buffers[1];
  copy(send_buf, acc, count, type);
  const Fold f = fold(acc, scratch, count, type, op, c);
  // A root that handed its vector on gets the result from its odd partner.
  const int target = root < 2 * f.extra ? root / 2 : root - f.extra;
  const int holder = f.rank_of(target);
  if (f.newrank >= 0) {
    const Pieces pieces{(count + f.p2 - 1) / f.p2, count};
    const Window w = reduce_scatter_halving(acc, scratch, pieces, type, op, f, c);
    gather_halves(acc, pieces, w, target, type, f, c);
  }
  if (holder == root) {
    if (c.rank == root) copy(acc, recv_buf, count, type);
  } else if (c.rank == holder) {
    send(acc, count, type, root, c);
  } else if (c.rank == root) {
    recv(recv_buf, count, type, holder, c);
  }
}

}  // namespace

void reduce(const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype type, MPI_Op op,
            int root, MPI_Comm comm, Algorithm algorithm) {
  const Call call = start(Collective::reduce, comm, type, count, algorithm, root);
  require_op(op);
  require_buffer(sendbuf, count, "reduce: sendbuf");
  if (call.c.rank == root) require_buffer(recvbuf, count, "reduce: recvbuf");
  if (count == 0) return;
  if (call.algorithm == Algorithm::binomial)
    reduce_binomial(sendbuf, recvbuf, count, call.type, op, root, call.c);
  else
    reduce_rabenseifner(sendbuf, recvbuf, count, call.type, op, root, call.c);
}

}  // namespace a2av::coll
