// spread_out: all receives and sends nonblocking at once, in round-robin order (receive
// from rank-i, send to rank+i), so each rank targets a different peer at each step.
// One round, P-1 messages each way, no temporary memory; beyond the bound on requests in
// flight, the steps slide through it in that order.
// Source: Fan et al. [Fan24], Section II(d) (Kang et al. [17]).
#include "alltoallv/registry.hpp"
#include "core/p2p.hpp"
#include "core/tags.hpp"

namespace a2av {
namespace {

void run_spread_out(const AlgorithmCall& ex, const ParamValues&) {
  Requests requests(ex.in_band, InFlight::limit());
  requests.reserve(2 * ex.ctx.size);
  post_direct_steps(ex, requests, 1, ex.ctx.size, round_robin_step);
  copy_self_block(ex);
  requests.wait_all(ex.mismatch);
}

}  // namespace

const AlgorithmDescriptor& spread_out_algorithm() {
  static const AlgorithmDescriptor d{
      .name = "spread_out",
      .summary = "all nonblocking at once, round-robin peers rank+i / rank-i",
      .source = "[Fan24] Section II(d)",
      .run = run_spread_out,
      .announce = announce_by_messages,
      .model = {ModelShape::direct},
      .candidates = [](const CandidateScope&,
                       std::vector<std::string>& out) { out.emplace_back("spread_out"); },
      .test_specs = {{"spread_out"}},
      .bounds_in_flight = true,
  };
  return d;
}

}  // namespace a2av
