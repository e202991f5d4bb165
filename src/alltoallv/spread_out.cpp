// spread_out: all receives and sends nonblocking at once, in round-robin order (receive
// from rank-i, send to rank+i), so each rank targets a different peer at each step.
// One round, P-1 messages each way, no temporary memory.
// Source: fan-tuna-configurable-alltoallv.txt, Section II(d) (Kang et al. [17]).
#include "alltoallv/algorithm.hpp"
#include "core/p2p.hpp"

namespace a2av {

void run_spread_out(const Exchange& ex, const Params&) {
  const int me = ex.ctx.rank, size = ex.ctx.size;
  Requests requests(ex.in_band);
  requests.reserve(2 * size);
  for (int i = 1; i < size; ++i) {
    const int from = (me - i + size) % size;
    requests.irecv(ex.recv.at(from), ex.recv.bytes[from], from, 0, ex.ctx.comm);
  }
  for (int i = 1; i < size; ++i) {
    const int to = (me + i) % size;
    requests.isend(ex.send.at(to), ex.send.bytes[to], to, 0, ex.ctx.comm);
  }
  copy_self_block(ex);
  requests.wait_all(ex.mismatch);
}

}  // namespace a2av
