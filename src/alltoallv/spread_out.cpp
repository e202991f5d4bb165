// spread_out: all receives and sends nonblocking at once, in round-robin order (receive
// from rank-i, send to rank+i), so each rank targets a different peer at each step.
// One round, P-1 messages each way, no temporary memory.
// Source: Fan et al. [Fan24], Section II(d) (Kang et al. [17]).
#include "alltoallv/registry.hpp"
#include "core/p2p.hpp"
#include "core/tags.hpp"

namespace a2av {
namespace {

void run_spread_out(const AlgorithmCall& ex, const ParamValues&) {
  const int me = ex.ctx.rank, size = ex.ctx.size;
  Requests requests(ex.in_band);
  requests.reserve(2 * size);
  for (int i = 1; i < size; ++i) {
    const int from = (me - i + size) % size;
    requests.irecv(ex.recv.at(from), ex.recv.bytes[from], from, tags::kDirectBlock.tag(),
                   ex.ctx.comm);
  }
  for (int i = 1; i < size; ++i) {
    const int to = (me + i) % size;
    requests.isend(ex.send.at(to), ex.send.bytes[to], to, tags::kDirectBlock.tag(), ex.ctx.comm);
  }
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
  };
  return d;
}

}  // namespace a2av
