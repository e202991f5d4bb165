#include "alltoallv/registry.hpp"

#include "alltoallv/node_aware_rounds.hpp"
#include "alltoallv/tuna.hpp"
#include "core/check.hpp"

#include <fmt/ranges.h>

#include <algorithm>
#include <charconv>
#include <climits>

namespace a2av {
namespace {

constexpr std::int64_t kNoLimit = INT_MAX;

// In-band agreement of the message-based direct algorithms (core/p2p.hpp).
void announce_by_messages(const CommContext& ctx, const Params&, int code, PeerErrors& peers) {
  announce_error(ctx.comm, code, peers);
}

std::int64_t no_memory(const BoundInput&, const Params&) {
  return 0;
}

// The segment is the communicator's, not the call's; TuNA over the nodes adds its store and
// round messages on uniform nodes.
std::int64_t node_aware_bound(const BoundInput& in, const Params& p) {
  const int q = in.node_size;
  if (p.at("radix") == 0 || q <= 0 || q >= in.size || in.size % q != 0) return 0;
  const std::int64_t block =
      std::min(in.max_block, node_aware_threshold(p.at("direct_above"), in.size));
  return column_rounds_memory_bound(in.size / q, q, static_cast<int>(p.at("radix")), block);
}

std::int64_t tuna_bound(const BoundInput& in, const Params& p) {
  if (in.size == 1) return 0;
  return tuna_memory_bound(in.size, tuna_shape(p, in.size), in.max_block);
}

std::int64_t hierarchical_bound(const BoundInput& in, const Params& p) {
  const int q = hierarchical_node_size(p.at("ranks_per_node"), in.size, in.node_size, true);
  if (q == 0 || q == in.size) return tuna_bound(in, p);
  // Blocks above direct_above travel directly: the aggregated copies hold only smaller ones.
  const std::int64_t block = std::min(in.max_block, p.at("direct_above"));
  const int nodes = in.size / q;
  const std::int64_t phase1 = q == 1 ? 0 : tuna_memory_bound(q, tuna_shape(p, q), nodes * block);
  return std::min(in.send_total, in.size * block) + in.size * block + phase1;
}

const ParamSpec kRadix{"radix", 2, kNoLimit, 0,
                       "base of the rounds, 2..P (larger is clamped to P); default ceil(sqrt(P))"};
const ParamSpec kBatch{"batch", 1, kNoLimit, 0,
                       "rounds of one digit in flight at once; default radix-1 (all)"};
// The paper finds r = P (every block direct) best above 8 KiB on Polaris (Section V-B,
// Figure 7); so by default blocks above 8 KiB skip the rounds.
const ParamSpec kDirectAbove{"direct_above", 0, std::int64_t{1} << 62, 8192,
                             "blocks larger than this many bytes travel directly, not in rounds"};
const ParamSpec kAggregateAbove{
    "direct_above", 0, std::int64_t{1} << 62, kNodeAwareDirectAbove,
    "blocks larger than this many bytes travel directly, not aggregated (at most 1 MiB / P)"};
const ParamSpec kAgents{"agents", 0, kNoLimit, 0,
                        "ranks of a node that exchange with remote nodes; 0: all of them"};
const ParamSpec kNodeRadix{
    "radix", 0, kNoLimit, 0,
    "0: each pair of nodes exchanges one message; else TuNA's rounds over the nodes with this "
    "radix (clamped to 2..N; nodes of one size)"};
const ParamSpec kBlockCount{"block_count", 1, kNoLimit, 8,
                            "peers (nodes for hierarchical) per batch"};
const ParamSpec kRanksPerNode{"ranks_per_node", 0, kNoLimit, 0,
                              "ranks per node; 0: detected by MPI_COMM_TYPE_SHARED"};

std::int64_t parse_value(std::string_view key, std::string_view text) {
  std::int64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size())
    fail(A2AV_ERR_ALGORITHM, "parameter {}: '{}' is not an integer", key, text);
  return value;
}

std::string accepted_names() {
  std::vector<std::string_view> names;
  for (const auto& a : algorithm_table()) names.push_back(a.name);
  return fmt::format("{}", fmt::join(names, ", "));
}

std::string accepted_keys(const AlgorithmInfo& a) {
  std::vector<std::string> keys;
  for (const auto& p : a.params) keys.push_back(fmt::format("{} ({}..{})", p.key, p.min, p.max));
  keys.push_back("validate (0..1)");
  return fmt::format("{}", fmt::join(keys, ", "));
}

}  // namespace

const std::vector<AlgorithmInfo>& algorithm_table() {
  static const std::vector<AlgorithmInfo> table = {
      {"auto",
       "choose from P and the agreed largest block (docs/algorithms.md)",
       {},
       nullptr,
       no_memory},
      {"vendor", "the MPI library's MPI_Alltoallv", {}, run_vendor, no_memory},
      {"linear",
       "all receives then all sends, ascending rank",
       {},
       run_linear,
       no_memory,
       announce_by_messages},
      {"spread_out",
       "all nonblocking, round-robin peers",
       {},
       run_spread_out,
       no_memory,
       announce_by_messages},
      {"scattered",
       "spread-out in batches of block_count",
       {kBlockCount},
       run_scattered,
       no_memory,
       announce_by_messages},
      {"pairwise", "P-1 sendrecv steps", {}, run_pairwise, no_memory, announce_by_messages},
      {"shared_memory",
       "ranks on one node: small blocks through shared-memory cells, large ones direct",
       {},
       run_shared_memory,
       no_memory,
       announce_error_shared_memory},
      {"node_aware",
       "ranks on several nodes: shared memory inside a node, one message per pair of nodes",
       {kAggregateAbove, kAgents, kNodeRadix},
       run_node_aware,
       node_aware_bound,
       announce_error_node_aware},
      {"tuna",
       "tunable-radix logarithmic rounds",
       {kRadix, kBatch, kDirectAbove},
       run_tuna,
       tuna_bound,
       announce_error_tuna},
      {"tuna_coalesced",
       "hierarchical TuNA, coalesced inter-node phase",
       {kRadix, kBatch, kDirectAbove, kBlockCount, kRanksPerNode},
       run_tuna_coalesced,
       hierarchical_bound,
       announce_error_tuna_coalesced},
      {"tuna_staggered",
       "hierarchical TuNA, staggered inter-node phase",
       {kRadix, kBatch, kDirectAbove, kBlockCount, kRanksPerNode},
       run_tuna_staggered,
       hierarchical_bound,
       announce_error_tuna_staggered},
  };
  return table;
}

Spec parse_spec(std::string_view text) {
  const auto colon = text.find(':');
  const std::string_view name = text.substr(0, colon);
  Spec spec;
  for (const auto& a : algorithm_table())
    if (a.name == name) spec.algorithm = &a;
  if (!spec.algorithm)
    fail(A2AV_ERR_ALGORITHM, "unknown algorithm '{}'; accepted: {}", name, accepted_names());
  for (const auto& p : spec.algorithm->params) spec.params[std::string(p.key)] = p.fallback;
  std::string_view rest = colon == std::string_view::npos ? "" : text.substr(colon + 1);
  if (colon != std::string_view::npos && rest.empty())
    fail(A2AV_ERR_ALGORITHM, "'{}' has a ':' but no parameters", text);
  while (!rest.empty()) {
    const auto comma = rest.find(',');
    const std::string_view item = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? "" : rest.substr(comma + 1);
    const auto eq = item.find('=');
    if (eq == std::string_view::npos)
      fail(A2AV_ERR_ALGORITHM, "'{}' in '{}' is not key=value", item, text);
    const std::string_view key = item.substr(0, eq);
    const std::int64_t value = parse_value(key, item.substr(eq + 1));
    if (key == "validate") {
      if (value != 0 && value != 1) fail(A2AV_ERR_ALGORITHM, "validate must be 0 or 1");
      spec.validate = value == 1;
      continue;
    }
    const ParamSpec* param = nullptr;
    for (const auto& p : spec.algorithm->params)
      if (p.key == key) param = &p;
    if (!param)
      fail(A2AV_ERR_ALGORITHM, "{} has no parameter '{}'; accepted: {}", name, key,
           accepted_keys(*spec.algorithm));
    if (value < param->min || value > param->max)
      fail(A2AV_ERR_ALGORITHM, "{}: {}={} is out of range {}..{}", name, key, value, param->min,
           param->max);
    spec.params[std::string(key)] = value;
  }
  return spec;
}

std::string describe(const Spec& spec, int size, int node_size, bool uniform_nodes) {
  Params shown = spec.params;
  const AlgorithmInfo* ran = spec.algorithm;
  if (ran->name == "node_aware") {  // radix over the nodes, where they are of one size
    const bool even = node_size > 0 && size % node_size == 0;
    if (shown["radix"]) shown["radix"] = even ? tuna_radix(shown["radix"], size / node_size) : 0;
  } else if (shown.count("radix")) {
    int group = size;
    if (shown.count("ranks_per_node")) {
      group = hierarchical_node_size(shown["ranks_per_node"], size, node_size, uniform_nodes);
      shown["ranks_per_node"] = group;
      if (group == 0) {  // fell back to flat tuna: show what ran
        ran = &*std::find_if(algorithm_table().begin(), algorithm_table().end(),
                             [](const AlgorithmInfo& a) { return a.name == "tuna"; });
        group = size;
      }
    }
    shown["radix"] = tuna_radix(shown["radix"], group);
    shown["batch"] = tuna_batch(shown["batch"], static_cast<int>(shown["radix"]));
  }
  std::string text(ran->name);
  char sep = ':';
  for (const auto& p : ran->params) {
    text += fmt::format("{}{}={}", sep, p.key, shown[std::string(p.key)]);
    sep = ',';
  }
  return text;
}

}  // namespace a2av
