// linear: post every receive, then every send, in ascending rank order (Open MPI's basic
// linear alltoallv). One round, P-1 messages each way, no temporary memory.
// Source: Fan et al. [Fan24], Section II(d).
#include "alltoallv/registry.hpp"
#include "core/p2p.hpp"
#include "core/tags.hpp"

namespace a2av {
namespace {

void run_linear(const AlgorithmCall& ex, const ParamValues&) {
  const int me = ex.ctx.rank, size = ex.ctx.size;
  Requests requests(ex.in_band);
  requests.reserve(2 * size);
  for (int peer = 0; peer < size; ++peer)
    if (peer != me)
      requests.irecv(ex.recv.at(peer), ex.recv.bytes[peer], peer, tags::kDirectBlock.tag(),
                     ex.ctx.comm);
  for (int peer = 0; peer < size; ++peer)
    if (peer != me)
      requests.isend(ex.send.at(peer), ex.send.bytes[peer], peer, tags::kDirectBlock.tag(),
                     ex.ctx.comm);
  copy_self_block(ex);
  requests.wait_all(ex.mismatch);
}

}  // namespace

const AlgorithmDescriptor& linear_algorithm() {
  static const AlgorithmDescriptor d{
      .name = "linear",
      .summary = "all receives, then all sends, ascending rank (Open MPI's basic linear)",
      .source = "[Fan24] Section II(d)",
      .run = run_linear,
      .announce = announce_by_messages,
      .model = {ModelShape::direct},
      .test_specs = {{"linear"}},
  };
  return d;
}

}  // namespace a2av
