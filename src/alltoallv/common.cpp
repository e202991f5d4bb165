#include "alltoallv/algorithm.hpp"

#include <cstring>

namespace a2av {

void copy_self_block(const Exchange& ex) {
  const int me = ex.ctx.rank;
  const std::int64_t bytes = std::min(ex.send.bytes[me], ex.recv.bytes[me]);
  if (bytes > 0) std::memmove(ex.recv.at(me), ex.send.at(me), bytes);
}

}  // namespace a2av
