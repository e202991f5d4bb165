// pairwise: P-1 steps; at step i send to rank+i and receive from rank-i, one exchange in
// flight at a time (Open MPI's pairwise). P-1 rounds, no temporary memory.
// Source: fan-tuna-configurable-alltoallv.txt, Section II(d).
#include "alltoallv/algorithm.hpp"
#include "core/p2p.hpp"

namespace a2av {

void run_pairwise(const Exchange& ex, const Params&) {
  const int me = ex.ctx.rank, size = ex.ctx.size;
  copy_self_block(ex);
  for (int i = 1; i < size; ++i) {
    const int to = (me + i) % size, from = (me - i + size) % size;
    sendrecv(ex.send.at(to), ex.send.bytes[to], to, ex.recv.at(from), ex.recv.bytes[from], from, 0,
             ex.ctx.comm, ex.mismatch, ex.in_band);
  }
}

}  // namespace a2av
