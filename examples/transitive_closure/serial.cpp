// Serial transitive closure by depth-first search from each vertex (TuNA paper, Section
// VI-B: the fixed point the distributed evaluation must reach).
#include "serial.hpp"

#include <algorithm>
#include <unordered_map>

namespace tc {

namespace {

// Compressed adjacency over dense local numbers; `ids` maps them back.
struct Adjacency {
  std::vector<Vertex> ids;
  std::vector<std::size_t> begin;  // out-edges of u: targets[begin[u] .. begin[u+1])
  std::vector<std::uint32_t> targets;
};

Adjacency build(std::vector<Tuple>& edges) {
  std::sort(edges.begin(), edges.end());
  edges.erase(std::unique(edges.begin(), edges.end()), edges.end());
  Adjacency g;
  std::unordered_map<Vertex, std::uint32_t> dense;
  auto number = [&](Vertex v) {
    auto [it, added] = dense.try_emplace(v, static_cast<std::uint32_t>(g.ids.size()));
    if (added) g.ids.push_back(v);
    return it->second;
  };
  std::vector<std::pair<std::uint32_t, std::uint32_t>> local;
  for (Tuple e : edges) local.emplace_back(number(source(e)), number(target(e)));
  g.begin.assign(g.ids.size() + 1, 0);
  for (const auto& [u, v] : local) ++g.begin[u + 1];
  for (std::size_t u = 0; u < g.ids.size(); ++u) g.begin[u + 1] += g.begin[u];
  g.targets.resize(local.size());
  std::vector<std::size_t> next(g.begin.begin(), g.begin.end() - 1);
  for (const auto& [u, v] : local) g.targets[next[u]++] = v;
  return g;
}

}  // namespace

ClosureSummary serial_closure(std::vector<Tuple> edges) {
  const Adjacency g = build(edges);
  const std::size_t n = g.ids.size();
  ClosureSummary summary;
  std::vector<std::uint32_t> seen(n, 0);  // seen[v] == s + 1: reached from s
  std::vector<std::uint32_t> stack;
  for (std::uint32_t s = 0; s < n; ++s) {
    stack.assign(g.targets.begin() + g.begin[s], g.targets.begin() + g.begin[s + 1]);
    while (!stack.empty()) {
      const std::uint32_t v = stack.back();
      stack.pop_back();
      if (seen[v] == s + 1) continue;
      seen[v] = s + 1;
      ++summary.size;
      summary.hash += mix(make_tuple(g.ids[s], g.ids[v]));
      stack.insert(stack.end(), g.targets.begin() + g.begin[v], g.targets.begin() + g.begin[v + 1]);
    }
  }
  return summary;
}

}  // namespace tc
