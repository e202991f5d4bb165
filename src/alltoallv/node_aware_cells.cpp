#include "alltoallv/node_aware_cells.hpp"

#include "core/check.hpp"
#include "core/environment.hpp"

#include <algorithm>
#include <array>
#include <cstdio>
#include <map>

namespace a2av {
namespace {

constexpr std::int64_t kStagingBudget = std::int64_t{1} << 20;  // bytes per rank and parity

void find_layout(const CommContext& ctx, NodeAwareCells& c) {
  MPI_Group comm_group, node_group;
  check_mpi(MPI_Comm_group(ctx.comm, &comm_group), "MPI_Comm_group");
  check_mpi(MPI_Comm_group(ctx.node, &node_group), "MPI_Comm_group");
  int first = 0, leader = 0;
  check_mpi(MPI_Group_translate_ranks(node_group, 1, &first, comm_group, &leader),
            "MPI_Group_translate_ranks");
  MPI_Group_free(&node_group);
  MPI_Group_free(&comm_group);
  std::vector<int> leaders(ctx.size);
  check_mpi(MPI_Allgather(&leader, 1, MPI_INT, leaders.data(), 1, MPI_INT, ctx.comm),
            "MPI_Allgather");
  std::vector<int> distinct = leaders;
  std::sort(distinct.begin(), distinct.end());
  distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
  c.ranks.assign(distinct.size(), {});
  c.node_of.resize(ctx.size);
  for (int r = 0; r < ctx.size; ++r) {
    const int node = static_cast<int>(
        std::lower_bound(distinct.begin(), distinct.end(), leaders[r]) - distinct.begin());
    c.node_of[r] = node;
    if (r == ctx.rank) c.node = node, c.local = static_cast<int>(c.ranks[node].size());
    c.ranks[node].push_back(r);
  }
}

void plan_segment(NodeAwareCells& c) {
  const int n = node_count(c), me = c.node, q = node_size(c, me);
  c.section_at.resize(n);
  for (int m = 0; m < n; ++m) {
    c.section_at[m] = c.staging_bytes;
    const std::size_t q_m = node_size(c, m);
    c.staging_bytes += round_up(header_bytes(q_m) + q_m * static_cast<std::size_t>(c.threshold));
  }
  c.assigned.assign(q, {});
  c.slot_at.assign(n, 0);
  c.slots_bytes.assign(q, 0);
  if (c.radix) return;  // the column rounds need no agents and no slots
  for (int m = 0; m < n; ++m) {
    if (m == me) continue;
    const int g = agent_of(c, me, m);
    c.assigned[g].push_back(m);
  }
  for (int g = 0; g < q; ++g) {
    std::size_t at = 0;
    for (const int m : c.assigned[g]) {
      c.slot_at[m] = at;
      at += kLine + round_up(slot_capacity(c, m, me));
    }
    c.slots_bytes[g] = at;
  }
}

void explain(const CommContext& ctx, const NodeAwareCells& c, std::int64_t radix) {
  if (!verbose() || ctx.rank != 0) return;
  if (radix && !c.radix)
    std::fprintf(stderr, "a2av: node_aware:radix=%lld needs nodes of one size; they differ\n",
                 static_cast<long long>(radix));
  if (c.usable)
    std::fprintf(stderr,
                 "a2av: node_aware on %d ranks in %d nodes: %zu bytes of segment on this node, "
                 "blocks of up to %lld bytes aggregated, %s between nodes; larger ones within "
                 "the node %s\n",
                 ctx.size, node_count(c), c.segment->bytes(), static_cast<long long>(c.threshold),
                 c.radix ? "TuNA's rounds" : "one message per pair of nodes",
                 c.single_copy.ok() ? "read from the sender's buffer" : "sent as messages");
  else
    std::fprintf(stderr, "a2av: node_aware on %d ranks runs spread_out: %s\n", ctx.size,
                 !c.segment->ok()             ? c.segment->failure().c_str()
                 : node_count(c) > kMostNodes ? "more nodes than its message tags can tell apart"
                                              : "another node has no shared memory");
}

// TuNA over the nodes needs a member of every column on every node: nodes of one size.
void choose_columns(NodeAwareCells& c, std::int64_t radix) {
  const std::size_t q = c.ranks[c.node].size();
  for (const auto& node : c.ranks)
    if (node.size() != q) return;
  c.radix = static_cast<int>(radix);
  for (const auto& node : c.ranks) c.column.push_back(node[c.local]);
}

}  // namespace

// A communicator's node_aware layouts and cells, by (aggregation threshold, agents, radix).
using NodeAwareCellsByParams =
    std::map<std::array<std::int64_t, 3>, std::shared_ptr<NodeAwareCells>>;

// Made on the first call with these parameters (collective over the communicator).
NodeAwareCells& cells_of(const CommContext& ctx, const ParamValues& params) {
  const std::int64_t threshold = node_aware_threshold(params[kAggregateAbove], ctx.size);
  const std::int64_t radix = params[kNodeRadix];
  auto& made =
      ctx.kept.get<NodeAwareCellsByParams>()[{threshold, radix ? 0 : params[kAgents], radix}];
  if (made) return *made;
  made = std::make_shared<NodeAwareCells>();
  NodeAwareCells& c = *made;
  c.threshold = threshold;
  c.agents = static_cast<int>(params[kAgents]);
  find_layout(ctx, c);
  if (radix) choose_columns(c, radix);
  plan_segment(c);
  std::vector<std::size_t> parts;
  for (const std::size_t slots : c.slots_bytes)
    parts.push_back(kLine + 2 * (c.staging_bytes + slots) + addresses_bytes(node_size(c, c.node)));
  parts[0] += round_up(8 * static_cast<std::size_t>(node_count(c)));  // the claims
  c.segment = std::make_unique<NodeSegment>(ctx.node, std::move(parts));
  // Tried with the segment, over the node (both collective); its ranks agree.
  if (c.segment->ok()) c.single_copy = SingleCopy(ctx.node);
  int usable = c.segment->ok() && (c.radix || node_count(c) <= kMostNodes) ? 1 : 0;
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, &usable, 1, MPI_INT, MPI_MIN, ctx.comm), "MPI_Allreduce");
  c.usable = usable == 1;
  explain(ctx, c, radix);
  return c;
}

int node_aware_agent(int node, int remote, int nodes, int ranks, std::int64_t agents) {
  const int dealt_over =
      agents == 0 ? ranks : static_cast<int>(std::min<std::int64_t>(agents, ranks));
  return ((remote - node - 1 + nodes) % nodes) % dealt_over;
}

std::int64_t node_aware_threshold(std::int64_t direct_above, int size) {
  return std::min<std::int64_t>(direct_above, kStagingBudget / size);
}

}  // namespace a2av
