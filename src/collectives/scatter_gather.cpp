// Scatter and gather ([Lecture14], "Scatter" and "Minimum
// spanning tree algorithm"), n = all P blocks:
//  - linear: the root sends (receives) every block itself; (P-1) alpha + (P-1)/P n beta.
//  - binomial: the minimum spanning tree, each subtree's blocks travel together;
//    ceil(lg P) alpha + (P-1)/P n beta, with room for its subtree's blocks on inner ranks
//    (and on a root other than 0, whose blocks are rotated into relative-rank order).
#include "collectives/common.hpp"

#include "core/check.hpp"
#include "core/p2p.hpp"

#include <vector>

namespace a2av::coll {
namespace {

void wait_all(std::vector<MPI_Request>& requests) {
  std::vector<MPI_Status> statuses;
  check_mpi(wait_all_settled(requests, statuses), "MPI_Waitall");
}

void scatter_linear(const void* send, void* recv_buf, std::int64_t count, const Type& type,
                    int root, const Comm& c) {
  if (c.rank != root) return recv(recv_buf, count, type, root, c);
  std::vector<MPI_Request> requests;
  for (int r = 0; r < c.size; ++r) {
    if (r == root) continue;
    requests.emplace_back();
    check_mpi(MPI_Isend(type.at(send, r * count), as_int(count), type.type, r, c.tag, c.comm,
                        &requests.back()),
              "MPI_Isend");
  }
  copy(type.at(send, root * count), recv_buf, count, type);
  wait_all(requests);
}

void gather_linear(const void* send_buf, void* recv, std::int64_t count, const Type& type, int root,
                   const Comm& c) {
  if (c.rank != root) return send(send_buf, count, type, root, c);
  std::vector<MPI_Request> requests;
  for (int r = 0; r < c.size; ++r) {
    if (r == root) continue;
    requests.emplace_back();
    check_mpi(MPI_Irecv(type.at(recv, r * count), as_int(count), type.type, r, c.tag, c.comm,
                        &requests.back()),
              "MPI_Irecv");
  }
  copy(send_buf, type.at(recv, root * count), count, type);
  wait_all(requests);
}

// Blocks in rank order <-> in order of ranks relative to root: two runs that swap places.
void rotate(const void* from, void* to, std::int64_t count, const Type& type, int shift, int size) {
  copy(type.at(from, shift * count), to, (size - shift) * count, type);
  copy(from, type.at(to, (size - shift) * count), shift * count, type);
}

void scatter_binomial(const void* send, void* recv_buf, std::int64_t count, const Type& type,
                      int root, const Comm& c) {
  const int v = relative(c.rank, root, c.size), blocks = subtree(v, c.size);
  const Pieces pieces{count, count * c.size};
  if (blocks == 1 && v != 0)
    return binomial_scatter(static_cast<std::byte*>(recv_buf), pieces, type, root, c);
  Elements held(type, blocks * count);
  if (v == 0) rotate(send, held.data(), count, type, root, c.size);
  binomial_scatter(held.data(), pieces, type, root, c);
  copy(held.data(), recv_buf, count, type);
}

void gather_binomial(const void* send_buf, void* recv, std::int64_t count, const Type& type,
                     int root, const Comm& c) {
  const int v = relative(c.rank, root, c.size), blocks = subtree(v, c.size);
  const Pieces pieces{count, count * c.size};
  // A leaf only sends its own block: the tree never writes through this pointer.
  if (blocks == 1 && v != 0)
    return binomial_gather(static_cast<std::byte*>(const_cast<void*>(send_buf)), pieces, type, root,
                           c);
  if (root == 0 && v == 0) {  // relative order is rank order: gather in place
    copy(send_buf, recv, count, type);
    return binomial_gather(static_cast<std::byte*>(recv), pieces, type, root, c);
  }
  Elements held(type, blocks * count);
  copy(send_buf, held.data(), count, type);
  binomial_gather(held.data(), pieces, type, root, c);
  if (v == 0) rotate(held.data(), recv, count, type, c.size - root, c.size);
}

}  // namespace

void scatter(const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype type, int root,
             MPI_Comm comm, Algorithm algorithm) {
  const Call call = start(Collective::scatter, comm, type, count, algorithm, root);
  if (call.c.rank == root) require_buffer(sendbuf, count, "scatter: sendbuf");
  require_buffer(recvbuf, count, "scatter: recvbuf");
  if (count == 0) return;
  if (call.algorithm == Algorithm::linear)
    scatter_linear(sendbuf, recvbuf, count, call.type, root, call.c);
  else
    scatter_binomial(sendbuf, recvbuf, count, call.type, root, call.c);
}

void gather(const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype type, int root,
            MPI_Comm comm, Algorithm algorithm) {
  const Call call = start(Collective::gather, comm, type, count, algorithm, root);
  require_buffer(sendbuf, count, "gather: sendbuf");
  if (call.c.rank == root) require_buffer(recvbuf, count, "gather: recvbuf");
  if (count == 0) return;
  if (call.algorithm == Algorithm::linear)
    gather_linear(sendbuf, recvbuf, count, call.type, root, call.c);
  else
    gather_binomial(sendbuf, recvbuf, count, call.type, root, call.c);
}

}  // namespace a2av::coll
