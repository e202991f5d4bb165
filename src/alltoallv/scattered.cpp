// scattered: spread-out in batches of `block_count` peers; each batch completes (Waitall)
// before the next starts, which bounds the requests in flight. ceil((P-1)/block_count)
// rounds, P-1 messages each way, no temporary memory.
// Source: MPICH's alltoallv "scattered"; Fan et al. [Fan24], Section II(d).
#include "alltoallv/registry.hpp"
#include "core/p2p.hpp"
#include "core/tags.hpp"

#include <algorithm>
#include <climits>

namespace a2av {
namespace {

constexpr Param kPeersPerBatch{"block_count", 1, INT_MAX, 8, "peers per batch"};

void run_scattered(const AlgorithmCall& ex, const ParamValues& params) {
  const int size = ex.ctx.size;
  const int batch = static_cast<int>(std::min<std::int64_t>(params[kPeersPerBatch], size));
  copy_self_block(ex);
  for (int first = 1; first < size; first += batch) {
    Requests requests(ex.in_band, InFlight::limit());
    post_direct_steps(ex, requests, first, std::min(size, first + batch), round_robin_step);
    requests.wait_all(ex.mismatch);
  }
}

}  // namespace

const AlgorithmDescriptor& scattered_algorithm() {
  static const AlgorithmDescriptor d{
      .name = "scattered",
      .summary =
          "spread_out in batches of block_count peers, each completed before the next (MPICH)",
      .params = {&kPeersPerBatch},
      .source = "MPICH's alltoallv scattered; [Fan24] Section II(d)",
      .run = run_scattered,
      .announce = announce_by_messages,
      .model = {ModelShape::direct, &kPeersPerBatch},
      .candidates =
          [](const CandidateScope&, std::vector<std::string>& out) {
            out.emplace_back("scattered:block_count=8");
          },
      .test_specs = {{"scattered:block_count=1"}, {"scattered:block_count=4"}},
      .bounds_in_flight = true,
  };
  return d;
}

}  // namespace a2av
