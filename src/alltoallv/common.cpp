#include "alltoallv/algorithm.hpp"

#include "core/tags.hpp"

#include <cstring>

namespace a2av {

void copy_self_block(const AlgorithmCall& ex) {
  const int me = ex.ctx.rank;
  const std::int64_t bytes = std::min(ex.send.bytes[me], ex.recv.bytes[me]);
  if (bytes > 0) std::memmove(ex.recv.at(me), ex.send.at(me), bytes);
}

DirectStep round_robin_step(int rank, int size, int step) {
  return {(rank - step + size) % size, (rank + step) % size};
}

void post_direct_steps(const AlgorithmCall& ex, Requests& requests, int first, int last,
                       DirectOrder order) {
  const int me = ex.ctx.rank, size = ex.ctx.size, tag = tags::kDirectBlock.tag();
  std::int64_t needed = 0;
  for (int i = first; i < last; ++i) {
    const DirectStep s = order(me, size, i);
    needed +=
        requests.requests_for(ex.recv.bytes[s.from]) + requests.requests_for(ex.send.bytes[s.to]);
  }
  if (needed <= requests.limit()) {
    for (int i = first; i < last; ++i) {
      const int from = order(me, size, i).from;
      requests.irecv(ex.recv.at(from), ex.recv.bytes[from], from, tag, ex.ctx.comm);
    }
    for (int i = first; i < last; ++i) {
      const int to = order(me, size, i).to;
      requests.isend(ex.send.at(to), ex.send.bytes[to], to, tag, ex.ctx.comm);
    }
    return;
  }
  for (int i = first; i < last; ++i) {
    const DirectStep s = order(me, size, i);
    requests.exchange(ex.recv.at(s.from), ex.recv.bytes[s.from], s.from, ex.send.at(s.to),
                      ex.send.bytes[s.to], s.to, tag, ex.ctx.comm);
  }
}

void announce_by_messages(const CommContext& ctx, const ParamValues&, int code, PeerErrors& peers) {
  announce_error(ctx.comm, code, peers);
}

std::int64_t no_memory(const BoundInput&, const ParamValues&) {
  return 0;
}

}  // namespace a2av
