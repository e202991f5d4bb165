// linear: post every receive, then every send, in ascending rank order (Open MPI's basic
// linear alltoallv). One round, P-1 messages each way, no temporary memory; beyond the
// bound on requests in flight, each peer's receive and send together, ascending.
// Source: Fan et al. [Fan24], Section II(d).
#include "alltoallv/registry.hpp"
#include "core/p2p.hpp"
#include "core/tags.hpp"

namespace a2av {
namespace {

// Step i is the i-th peer in ascending order, this rank skipped. The steps of two peers
// differ, but ascending order is deadlock-free under the bound all the same: the pair of
// lowest ranks still pending is the next step of both.
DirectStep ascending(int me, int, int i) {
  const int peer = i - 1 < me ? i - 1 : i;
  return {peer, peer};
}

void run_linear(const AlgorithmCall& ex, const ParamValues&) {
  Requests requests(ex.in_band, InFlight::limit());
  requests.reserve(2 * ex.ctx.size);
  post_direct_steps(ex, requests, 1, ex.ctx.size, ascending);
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
      .bounds_in_flight = true,
  };
  return d;
}

}  // namespace a2av
