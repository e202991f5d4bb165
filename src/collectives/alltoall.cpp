// Alltoall with uniform blocks ([Lecture14], "All to all",
// "Exchange algorithm", "Recursive doubling for short messages"), n = one rank's P blocks:
//  - exchange: P-1 steps, in step i send to rank+i and receive from rank-i;
//    (P-1) alpha + (P-1) n/P beta, for long messages.
//  - bruck: store-and-forward in ceil(lg P) rounds for any P (Bruck et al. 1997, the
//    lecture's recursive doubling generalised); round k forwards the blocks whose index has
//    bit k set, about ceil(lg P) alpha + ceil(lg P) n/2 beta, plus local copies; room for
//    P + P/2 + P/2 blocks.
#include "collectives/common.hpp"

namespace a2av::coll {
namespace {

void alltoall_exchange(const void* send_buf, void* recv_buf, std::int64_t count, const Type& type,
                       const Comm& c) {
  copy(type.at(send_buf, c.rank * count), type.at(recv_buf, c.rank * count), count, type);
  for (int i = 1; i < c.size; ++i) {
    const int dest = (c.rank + i) % c.size, source = (c.rank - i + c.size) % c.size;
    sendrecv(type.at(send_buf, dest * count), count, dest, type.at(recv_buf, source * count), count,
             source, type, c);
  }
}

void alltoall_bruck(const void* send_buf, void* recv_buf, std::int64_t count, const Type& type,
                    const Comm& c) {
  const int p = c.size;
  // held[j]: first the block for rank + j; after the rounds, the block from rank - j.
  const std::int64_t half = (p / 2 + 1) * count;
  const Buffers<3> buffers(type, {p * count, half, half});
  std::byte *const held = buffers[0], *const out = buffers[1], *const in = buffers[2];
  const auto slot = [&](std::byte* base, std::int64_t j) { return type.at(base, j * count); };
  for (int j = 0; j < p; ++j)
    copy(type.at(send_buf, ((c.rank + j) % p) * count), slot(held, j), count, type);
  for (int dist = 1; dist < p; dist <<= 1) {
    int moved = 0;
    for (int j = dist; j < p; ++j)
      if (j & dist) copy(slot(held, j), slot(out, moved++), count, type);
    sendrecv(out, moved * count, (c.rank + dist) % p, in, moved * count, (c.rank - dist + p) % p,
             type, c);
    moved = 0;
    for (int j = dist; j < p; ++j)
      if (j & dist) copy(slot(in, moved++), slot(held, j), count, type);
  }
  for (int j = 0; j < p; ++j)
    copy(slot(held, j), type.at(recv_buf, ((c.rank - j + p) % p) * count), count, type);
}

}  // namespace

void alltoall(const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype type, MPI_Comm comm,
              Algorithm algorithm) {
  const Call call = start(Collective::alltoall, comm, type, count, algorithm);
  require_buffer(sendbuf, count, "alltoall: sendbuf");
  require_buffer(recvbuf, count, "alltoall: recvbuf");
  if (count == 0) return;
  if (call.algorithm == Algorithm::exchange)
    alltoall_exchange(sendbuf, recvbuf, count, call.type, call.c);
  else
    alltoall_bruck(sendbuf, recvbuf, count, call.type, call.c);
}

}  // namespace a2av::coll
