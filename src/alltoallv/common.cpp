#include "alltoallv/algorithm.hpp"

#include <cstring>

namespace a2av {

void copy_self_block(const AlgorithmCall& ex) {
  const int me = ex.ctx.rank;
  const std::int64_t bytes = std::min(ex.send.bytes[me], ex.recv.bytes[me]);
  if (bytes > 0) std::memmove(ex.recv.at(me), ex.send.at(me), bytes);
}

void announce_by_messages(const CommContext& ctx, const ParamValues&, int code, PeerErrors& peers) {
  announce_error(ctx.comm, code, peers);
}

std::int64_t no_memory(const BoundInput&, const ParamValues&) {
  return 0;
}

}  // namespace a2av
