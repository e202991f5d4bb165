#include "tuning/cost_model.hpp"

#include "alltoallv/node_aware.hpp"
#include "alltoallv/node_aware_rounds.hpp"
#include "alltoallv/tuna_schedule.hpp"
#include "core/check.hpp"
#include "core/p2p.hpp"
#include "tuning/data_files.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>
#include <limits>
#include <map>
#include <utility>

namespace a2av {
namespace {

// Adds up phases for the ranks it follows: every rank with an exact matrix, rank 0 alone
// with mean block sizes (all ranks then cost the same).
class Timeline {
 public:
  Timeline(const Workload& w, const Machine& m, int ranks_per_node)
      : w_(w),
        m_(m),
        q_(std::max(1, ranks_per_node)),
        sharing_(m.cores_per_node > 0
                     ? std::max(1.0, static_cast<double>(std::min(q_, w.size)) / m.cores_per_node)
                     : 1.0),
        followed_(w.matrix ? w.size : 1),
        cost_(followed_, 0),
        node_bytes_((followed_ + q_ - 1) / q_, 0.0),
        link_bytes_(m.shared_links.size()),
        messages_(followed_, 0),
        bytes_(followed_, 0) {}

  int followed() const { return followed_; }
  int size() const { return w_.size; }
  const Workload& workload() const { return w_; }

  // Rank `from` sends `bytes` to rank `to` in the current phase. An empty block is sent only
  // `even_empty`: the direct algorithms do, to agree on errors in band.
  // `through`: another way than a message (shared_memory's cells), on the node.
  void send(int from, int to, double bytes, bool even_empty = false,
            const LinkCost* through = nullptr) {
    if ((bytes <= 0 && !even_empty) || from == to) return;
    const bool intra = from / q_ == to / q_;
    const LinkCost& link = through ? *through : intra ? m_.intra : m_.inter;
    const double c = (link.alpha + link.beta * bytes) * (intra ? sharing_ : 1.0);
    cost_[from] += c;
    phase_max_ = std::max(phase_max_, cost_[from] - phase_start_[from]);
    ++messages_[from];
    bytes_[from] += bytes;
    if (!through) count_crossings(from, to, bytes);
  }

  // Rank `rank` works `seconds` on its own (copies), in the current phase.
  void work(int rank, double seconds) {
    cost_[rank] += seconds * sharing_;
    phase_max_ = std::max(phase_max_, cost_[rank] - phase_start_[rank]);
  }

  void begin_phase() {
    phase_start_ = cost_;
    phase_max_ = 0;
    std::fill(node_bytes_.begin(), node_bytes_.end(), 0.0);
    for (auto& level : link_bytes_) level.clear();
  }
  // The phase lasts as long as its slowest rank, or as its busiest node's network
  // interface needs for the bytes its ranks send off the node (with mean blocks, the one
  // followed rank stands for each of its node's ranks).
  void end_phase() {
    double busiest = phase_max_;
    if (m_.node_injection)
      for (double bytes : node_bytes_) busiest = std::max(busiest, bytes * *m_.node_injection);
    for (std::size_t level = 0; level < link_bytes_.size(); ++level)
      for (const auto& [link, bytes] : link_bytes_[level])
        busiest = std::max(busiest, bytes * m_.shared_links[level].beta);
    seconds_ += busiest + m_.phase_overhead * sharing_;
    ++phases_;
  }

  // Adds the call's fixed cost. No algorithm pays an agreement allreduce: they agree on
  // errors in band, or (vendor) not at all.
  Prediction result() const {
    Prediction p{seconds_ + m_.call_overhead, phases_, 0, 0};
    p.messages = *std::max_element(messages_.begin(), messages_.end());
    p.bytes = *std::max_element(bytes_.begin(), bytes_.end());
    return p;
  }

 private:
  // Adds a message's bytes to what its node's interface and the links between its units
  // (switches, groups) carry. With mean blocks the followed rank 0 stands for every rank i
  // sending to i + shift: of a group of consecutive ranks (a node, a unit's nodes), some land
  // `ahead` groups on and the rest one further, and every group does the same.
  void count_crossings(int from, int to, double bytes) {
    if (followed_ > 1) {
      if (from / q_ != to / q_) node_bytes_[from / q_] += bytes;
      for (std::size_t level = 0; level < link_bytes_.size(); ++level) {
        const int per_unit = ranks_per_unit(level);
        if (from / per_unit != to / per_unit)
          link_bytes_[level][{from / per_unit, to / per_unit}] += bytes;
      }
      return;
    }
    const int shift = ((to - from) % w_.size + w_.size) % w_.size;
    shifted_crossings(shift, q_, [&](int, int ranks) { node_bytes_[0] += ranks * bytes; });
    for (std::size_t level = 0; level < link_bytes_.size(); ++level)
      shifted_crossings(shift, ranks_per_unit(level), [&](int ahead, int ranks) {
        link_bytes_[level][{0, ahead}] += ranks * bytes;
      });
  }

  int ranks_per_unit(std::size_t level) const { return q_ * m_.shared_links[level].nodes; }

  // Calls f(groups ahead, ranks) for the ranks of a group of `per_group` that a shift takes
  // to another group.
  template <class F>
  void shifted_crossings(int shift, int per_group, F f) const {
    const int groups = (w_.size + per_group - 1) / per_group;
    const int ahead = shift / per_group, spill = shift % per_group;
    if (ahead % groups != 0) f(ahead % groups, per_group - spill);
    if (spill > 0 && (ahead + 1) % groups != 0) f((ahead + 1) % groups, spill);
  }

  const Workload& w_;
  const Machine& m_;
  int q_;
  double sharing_;  // ranks per core on a node, at least 1
  int followed_;
  std::vector<double> cost_, phase_start_;
  std::vector<double> node_bytes_;  // this phase's off-node bytes per node of followed ranks
  // This phase's bytes per level of shared links, by (from, to) unit.
  std::vector<std::map<std::pair<int, int>, double>> link_bytes_;
  std::vector<std::int64_t> messages_;
  std::vector<double> bytes_;
  double phase_max_ = 0, seconds_ = 0;
  int phases_ = 0;
};

int mod(int v, int n) {
  return ((v % n) + n) % n;
}

// Peers at distances [first, last) of every followed rank, in one phase.
void direct_phase(Timeline& t, int first, int last, bool in_band) {
  t.begin_phase();
  for (int q = 0; q < t.followed(); ++q)
    for (int d = first; d < last; ++d)
      t.send(q, mod(q + d, t.size()), t.workload().block(q, mod(q + d, t.size())), in_band);
  t.end_phase();
}

// The bound on requests in flight a spec runs under (core/p2p.hpp).
int in_flight_limit(const Spec& spec) {
  return spec.in_flight > 0 ? spec.in_flight : InFlight::default_limit();
}

// Peers per phase of a direct algorithm: all, one, or its batch parameter's value; under the
// bound on requests in flight, at most half the bound (a receive and a send each), the
// sliding window taken as phases of that many peers.
int direct_batch(const Spec& spec, int size) {
  const CostModel& model = spec.algorithm->model;
  if (model.one_at_a_time) return 1;
  int batch = model.batch
                  ? static_cast<int>(std::min<std::int64_t>(spec.params[*model.batch], size))
                  : size;
  if (spec.algorithm->bounds_in_flight)
    batch = std::min(batch, std::max(1, in_flight_limit(spec) / 2));
  return batch;
}

// TuNA's shape as it runs under the bound: fewer rounds in flight where the bound is smaller.
TunaShape bounded_tuna_shape(const Spec& spec, int size) {
  TunaShape shape = tuna_shape(spec.params, size);
  shape.batch = tuna_rounds_in_flight(shape.batch, in_flight_limit(spec));
  return shape;
}

void linear_phases(Timeline& t, int batch, bool in_band) {
  for (int first = 1; first < t.size(); first += batch)
    direct_phase(t, first, std::min(t.size(), first + batch), in_band);
}

// shared_memory on one node: one phase; a block within a cell costs the machine's
// shared_memory figures, a larger one a message.
void shared_memory_phase(Timeline& t, const Machine& m, int ranks_per_node) {
  if (!m.shared_memory) fail(A2AV_ERR_ALGORITHM, "machine {} has no shared_memory figures", m.name);
  if (t.size() > ranks_per_node)
    fail(A2AV_ERR_ALGORITHM, "shared_memory needs all {} ranks on one node", t.size());
  const double capacity = static_cast<double>(shared_memory_capacity(t.size()));
  t.begin_phase();
  for (int q = 0; q < t.followed(); ++q)
    for (int d = 1; d < t.size(); ++d) {
      const int to = mod(q + d, t.size());
      const double bytes = t.workload().block(q, to);
      t.send(q, to, bytes, true, bytes <= capacity ? &*m.shared_memory : nullptr);
    }
  t.end_phase();
}

// TuNA as tuna.cpp runs it, inside groups of `group` consecutive ranks (all P for flat
// TuNA, a node for hierarchical phase 1): per round a direct message (sent even when empty)
// and, if the round forwards blocks, one message of its header, sizes and bytes; the rounds
// of a digit in batches. Blocks above direct_above bytes leave as messages of their own in
// the first phase. block(s, d) is what group member s has for group member d.
template <class Block>
void tuna_phases(Timeline& t, int group, const TunaShape& o, Block block) {
  const auto rounds = tuna_rounds(group, o.radix);
  std::vector<bool> round_distance(group, false);
  for (const TunaRound& round : rounds) round_distance[round.distance] = true;
  bool first_phase = true;
  for (const auto& [first, last] : tuna_batches(rounds, o.batch)) {
    t.begin_phase();
    for (int me = 0; first_phase && me < t.followed(); ++me) {
      const int base = me / group * group, g = me % group;
      for (int d = 1; d < group; ++d) {
        const int to = base + mod(g + d, group);
        if (!round_distance[d] && block(me, to) > o.direct_above) t.send(me, to, block(me, to));
      }
    }
    first_phase = false;
    for (std::size_t r = first; r < last; ++r) {
      const TunaRound& round = rounds[r];
      const int place = round.distance / round.value;  // radix^digit
      for (int me = 0; me < t.followed(); ++me) {
        const int base = me / group * group, g = me % group;
        const int to = base + mod(g + round.distance, group);
        t.send(me, to, block(me, to), true);
        if (round.forwarded.empty()) continue;
        double bytes = static_cast<double>(tuna_header_bytes(round.forwarded.size()));
        for (int d : round.forwarded) {
          const int source = mod(g - static_cast<int>(d % place), group);
          const double b = block(base + source, base + mod(source + d, group));
          if (b <= o.direct_above) bytes += b;
        }
        t.send(me, to, bytes);
      }
    }
    t.end_phase();
  }
}

// Phase 1: TuNA inside every node on aggregated blocks (local rank g sends local rank h
// all its blocks for ranks {k*Q + h}); blocks above direct_above leave as messages of their
// own alongside it. Phase 2: node pairs in batches of block_count (fewer under the bound:
// hierarchical_shares), a coalesced pair's header front (3 words) and small blocks in one
// message (its Q sizes in another where a block is large), a staggered pair's header (Q + 3
// words), then, once the batch's headers have come, its nonempty blocks one message each,
// through their window.
void hierarchical_phases(Timeline& t, const Spec& spec, int q, bool coalesced) {
  const ParamValues& p = spec.params;
  const int nodes = t.size() / q;
  const HierarchicalShares shares =
      hierarchical_shares(in_flight_limit(spec), static_cast<int>(p[kNodesPerBatch]));
  const Workload& w = t.workload();
  const auto direct_above = static_cast<double>(p[kDirectAbove]);
  auto small = [&](int from, int to) {
    const double b = w.block(from, to);
    return b > direct_above ? 0.0 : b;
  };
  auto aggregated = [&](int from, int to) {
    double bytes = 0;
    for (int k = 0; k < nodes; ++k) bytes += small(from, k * q + to % q);
    return bytes;
  };
  auto large = [&](int me, int d) { return w.block(me, mod(me + d, t.size())) > direct_above; };
  bool any_large = false;
  for (int me = 0; me < t.followed(); ++me)
    for (int d = 1; d < t.size(); ++d) any_large |= large(me, d);
  if (any_large) {
    t.begin_phase();
    for (int me = 0; me < t.followed(); ++me)
      for (int d = 1; d < t.size(); ++d)
        if (large(me, d)) t.send(me, mod(me + d, t.size()), w.block(me, mod(me + d, t.size())));
    t.end_phase();
  }
  if (q > 1) {
    TunaShape phase1 = tuna_shape(p, q);
    phase1.batch = tuna_rounds_in_flight(phase1.batch, shares.rest);
    tuna_phases(t, q, phase1, aggregated);
  }
  const int batch = shares.batch;
  auto partner = [&](int me, int i) { return mod(me / q + i, nodes) * q + me % q; };
  for (int first = 1; first < nodes; first += batch) {
    const int last = std::min(nodes, first + batch);
    t.begin_phase();
    for (int me = 0; me < t.followed(); ++me)
      for (int i = first; i < last; ++i) {
        const int to = partner(me, i);
        double total = 0;
        bool large = false;
        for (int s = 0; s < q; ++s) {
          const int source = me / q * q + s;
          large |= w.block(source, to) > direct_above;
          total += small(source, to);
        }
        if (!coalesced) {
          t.send(me, to, 8.0 * (q + 3));  // the header
          continue;
        }
        t.send(me, to, 24.0 + total);        // the header's front and the blocks
        if (large) t.send(me, to, 8.0 * q);  // the sizes, news where a block is large
      }
    t.end_phase();
    if (coalesced) continue;
    // The blocks slide through their window, a send and a receive per step: phases of half
    // the window's steps.
    const int steps = (last - first) * q, window = std::max(1, shares.rest / 2);
    for (int step = 0; step < steps; step += window) {
      t.begin_phase();
      for (int me = 0; me < t.followed(); ++me)
        for (int k = step; k < std::min(steps, step + window); ++k) {
          const int to = partner(me, first + k / q);
          t.send(me, to, small(me / q * q + k % q, to));
        }
      t.end_phase();
    }
  }
}

// node_aware:radix=R between nodes of q ranks (node_aware_rounds.hpp): rank (k, c) runs
// TuNA's rounds over the nodes with the ranks (*, c); a round's message carries its header
// and the column blocks it moves, each the q blocks (of at most `small` bytes) one node has
// for one rank, with a word of size each.
void column_rounds_phases(Timeline& t, int radix, int q, double small) {
  const Workload& w = t.workload();
  const int nodes = t.size() / q;
  auto column_block = [&](int from_node, int to) {
    double bytes = static_cast<double>(column_header_bytes(q));
    for (int s = from_node * q; s < (from_node + 1) * q; ++s)
      if (w.block(s, to) <= small) bytes += w.block(s, to);
    return bytes;
  };
  radix = tuna_radix(radix, nodes);
  const auto& rounds = cached_tuna_rounds(nodes, radix);
  for (const auto& [first, last] : tuna_batches(rounds, radix - 1)) {
    t.begin_phase();
    for (std::size_t r = first; r < last; ++r) {
      const TunaRound& round = rounds[r];
      const int place = round.distance / round.value;
      for (int me = 0; me < t.followed(); ++me) {
        const int node = me / q, c = me % q;
        double bytes = 8.0 * (2 + round.forwarded.size());
        auto add = [&](int d) {
          const int origin = mod(node - d % place, nodes);
          bytes += column_block(origin, mod(origin + d, nodes) * q + c);
        };
        add(round.distance);
        for (int d : round.forwarded) add(d);
        t.send(me, mod(node + round.distance, nodes) * q + c, bytes);
      }
    }
    t.end_phase();
  }
}

// node_aware on nodes of q consecutive ranks: phase 1 stages the small blocks (copied into
// the segment; those for the node's ranks through it, like shared_memory's cells); phase 2
// sends one message per pair of nodes, from the remote node's agent (remote nodes dealt
// round-robin over the node's first `agents` ranks), and the large blocks directly (with
// radix=R the large blocks alone, then the column rounds); phase 3 copies the small blocks
// from other nodes out.
void node_aware_phases(Timeline& t, const Machine& m, const ParamValues& p, int q) {
  if (!m.shared_memory) fail(A2AV_ERR_ALGORITHM, "machine {} has no shared_memory figures", m.name);
  const Workload& w = t.workload();
  const int n = t.size(), nodes = (n + q - 1) / q;
  const double small = static_cast<double>(node_aware_threshold(p[kAggregateAbove], n));
  const double copy_beta = m.shared_memory->beta;  // a copy into or out of the segment
  auto ranks_of = [&](int node) { return std::min(q, n - node * q); };
  auto agent_of = [&](int node, int remote) {
    return node_aware_agent(node, remote, nodes, ranks_of(node), p[kAgents]);
  };
  t.begin_phase();
  for (int me = 0; me < t.followed(); ++me)
    for (int d = 1; d < n; ++d) {
      const int to = mod(me + d, n);
      const double b = w.block(me, to);
      if (b > small) continue;
      if (to / q == me / q)
        t.send(me, to, b, true, &*m.shared_memory);
      else
        t.work(me, copy_beta * b);
    }
  t.end_phase();
  const bool rounds = p[kNodeRadix] != 0 && n % q == 0;
  t.begin_phase();
  for (int me = 0; me < t.followed(); ++me) {
    const int node = me / q;
    for (int d = 1; d < n; ++d) {
      const int to = mod(me + d, n);
      if (w.block(me, to) > small) t.send(me, to, w.block(me, to));
    }
    for (int remote = 0; !rounds && remote < nodes; ++remote) {
      if (remote == node || agent_of(node, remote) != me % q) continue;
      double bytes = 8.0 * ranks_of(node) * (1 + ranks_of(remote));
      for (int s = node * q; s < node * q + ranks_of(node); ++s)
        for (int d = remote * q; d < remote * q + ranks_of(remote); ++d)
          if (w.block(s, d) <= small) bytes += w.block(s, d);
      t.send(me, remote * q + agent_of(remote, node), bytes);
    }
  }
  t.end_phase();
  if (rounds) column_rounds_phases(t, static_cast<int>(p[kNodeRadix]), q, small);
  t.begin_phase();
  for (int me = 0; me < t.followed(); ++me)
    for (int s = 0; s < n; ++s)
      if (s / q != me / q && w.block(s, me) <= small) t.work(me, copy_beta * w.block(s, me));
  t.end_phase();
}

}  // namespace

Machine Machine::load(const std::string& name_or_path) {
  const std::string path = find_data_file(kMachineFiles, name_or_path);
  std::ifstream in(path);
  if (!in) fail(A2AV_ERR_ARG, "machine file {}: cannot be read", path);
  try {
    const auto j = nlohmann::json::parse(in);
    Machine m;
    m.name = j.at("name").get<std::string>();
    m.source = j.value("source", "");
    m.intra = {j.at("intra").at("alpha_s").get<double>(),
               j.at("intra").at("beta_s_per_byte").get<double>()};
    m.inter = {j.at("inter").at("alpha_s").get<double>(),
               j.at("inter").at("beta_s_per_byte").get<double>()};
    m.phase_overhead = j.at("phase_overhead_s").get<double>();
    m.call_overhead = j.at("call_overhead_s").get<double>();
    m.ranks_per_node = j.at("ranks_per_node").get<int>();
    m.cores_per_node = j.value("cores_per_node", 0);
    if (j.contains("node_injection"))
      m.node_injection = j["node_injection"].at("beta_s_per_byte").get<double>();
    for (const auto& level : j.value("shared_links", nlohmann::json::array()))
      m.shared_links.push_back({std::max(1, level.at("nodes_per_unit").get<int>()),
                                level.at("beta_s_per_byte").get<double>()});
    if (j.contains("shared_memory"))
      m.shared_memory = LinkCost{j["shared_memory"].at("alpha_s").get<double>(),
                                 j["shared_memory"].at("beta_s_per_byte").get<double>()};
    return m;
  } catch (const nlohmann::json::exception& e) {
    fail(A2AV_ERR_ARG, "machine file {}: {}", path, e.what());
  }
}

Prediction predict(const Spec& spec, const Workload& w, const Machine& m) {
  const ModelShape shape = spec.algorithm->model.shape;
  const ParamValues& p = spec.params;
  const int n = w.size;
  int q = m.ranks_per_node;
  if (p.has(kRanksPerNode) && p[kRanksPerNode] > 0) q = static_cast<int>(p[kRanksPerNode]);
  Timeline t(w, m, q);
  if (n == 1) return t.result();
  // The direct algorithms send even empty blocks, to agree on errors in band; vendor does
  // not (MPI's semantics).
  const bool in_band = spec.algorithm->announce != nullptr;
  switch (shape) {
    case ModelShape::none:
      fail(A2AV_ERR_ALGORITHM, "the model predicts fixed algorithms, not {}", spec.algorithm->name);
    case ModelShape::direct:
      linear_phases(t, direct_batch(spec, n), in_band);
      break;
    case ModelShape::shared_memory:
      shared_memory_phase(t, m, q);
      break;
    case ModelShape::node_aware:
      node_aware_phases(t, m, p, q);
      break;
    case ModelShape::tuna:
      tuna_phases(t, n, bounded_tuna_shape(spec, n), [&](int s, int d) { return w.block(s, d); });
      break;
    case ModelShape::bruck: {  // as TuNA's rounds (less its size headers), no block direct
      const int radix = tuna_radix(p[kRadix], n);
      const TunaShape shape{radix, radix - 1, std::numeric_limits<std::int64_t>::max()};
      tuna_phases(t, n, shape, [&](int s, int d) { return w.block(s, d); });
      break;
    }
    case ModelShape::tuna_coalesced:
    case ModelShape::tuna_staggered: {
      const int group = hierarchical_node_size(p[kRanksPerNode], n, q, true);
      if (group == 0 || group == n)
        tuna_phases(t, n, bounded_tuna_shape(spec, n), [&](int s, int d) { return w.block(s, d); });
      else
        hierarchical_phases(t, spec, group, shape == ModelShape::tuna_coalesced);
      break;
    }
  }
  return t.result();
}

}  // namespace a2av
