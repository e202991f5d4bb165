// pairwise: P-1 steps; at step i send to rank+i and receive from rank-i, one exchange in
// flight at a time (Open MPI's pairwise). P-1 rounds, no temporary memory.
// Source: Fan et al. [Fan24], Section II(d).
#include "alltoallv/registry.hpp"
#include "core/p2p.hpp"
#include "core/tags.hpp"

namespace a2av {
namespace {

void run_pairwise(const AlgorithmCall& ex, const ParamValues&) {
  const int me = ex.ctx.rank, size = ex.ctx.size;
  copy_self_block(ex);
  for (int i = 1; i < size; ++i) {
    const int to = (me + i) % size, from = (me - i + size) % size;
    sendrecv(ex.send.at(to), ex.send.bytes[to], to, ex.recv.at(from), ex.recv.bytes[from], from,
             tags::kDirectBlock.tag(), ex.ctx.comm, ex.mismatch, ex.in_band);
  }
}

}  // namespace

const AlgorithmDescriptor& pairwise_algorithm() {
  static const AlgorithmDescriptor d{
      .name = "pairwise",
      .summary = "P-1 send-receive steps with rank+i / rank-i",
      .source = "[Fan24] Section II(d)",
      .run = run_pairwise,
      .announce = announce_by_messages,
      .model = {ModelShape::direct, nullptr, true},
      .candidates = [](const CandidateScope&,
                       std::vector<std::string>& out) { out.emplace_back("pairwise"); },
      .test_specs = {{"pairwise"}},
      .bounds_in_flight = true,
  };
  return d;
}

}  // namespace a2av
