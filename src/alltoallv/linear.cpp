// linear: post every receive, then every send, in ascending rank order (Open MPI's basic
// linear alltoallv). One round, P-1 messages each way, no temporary memory.
// Source: fan-tuna-configurable-alltoallv.txt, Section II(d).
#include "alltoallv/algorithm.hpp"
#include "core/p2p.hpp"

namespace a2av {

void run_linear(const Exchange& ex, const Params&) {
  const int me = ex.ctx.rank, size = ex.ctx.size;
  Requests requests(ex.in_band);
  requests.reserve(2 * size);
  for (int peer = 0; peer < size; ++peer)
    if (peer != me) requests.irecv(ex.recv.at(peer), ex.recv.bytes[peer], peer, 0, ex.ctx.comm);
  for (int peer = 0; peer < size; ++peer)
    if (peer != me) requests.isend(ex.send.at(peer), ex.send.bytes[peer], peer, 0, ex.ctx.comm);
  copy_self_block(ex);
  requests.wait_all(ex.mismatch);
}

}  // namespace a2av
