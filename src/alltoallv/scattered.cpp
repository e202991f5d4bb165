// scattered: spread-out in batches of `block_count` peers; each batch completes (Waitall)
// before the next starts, which bounds the requests in flight. ceil((P-1)/block_count)
// rounds, P-1 messages each way, no temporary memory.
// Source: MPICH's alltoallv "scattered"; fan-tuna-configurable-alltoallv.txt, Section II(d).
#include "alltoallv/algorithm.hpp"
#include "core/p2p.hpp"

#include <algorithm>

namespace a2av {

void run_scattered(const Exchange& ex, const Params& params) {
  const int me = ex.ctx.rank, size = ex.ctx.size;
  const int batch = static_cast<int>(std::min<std::int64_t>(params.at("block_count"), size));
  copy_self_block(ex);
  for (int first = 1; first < size; first += batch) {
    const int last = std::min(size, first + batch);
    Requests requests(ex.in_band);
    for (int i = first; i < last; ++i) {
      const int from = (me - i + size) % size;
      requests.irecv(ex.recv.at(from), ex.recv.bytes[from], from, 0, ex.ctx.comm);
    }
    for (int i = first; i < last; ++i) {
      const int to = (me + i) % size;
      requests.isend(ex.send.at(to), ex.send.bytes[to], to, 0, ex.ctx.comm);
    }
    requests.wait_all(ex.mismatch);
  }
}

}  // namespace a2av
