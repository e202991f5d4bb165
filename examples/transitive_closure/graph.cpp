// Edge-list reading and the R-MAT generator (Chakrabarti et al.; TuNA paper, Section VI-B).
#include "graph.hpp"

#include <charconv>
#include <fstream>
#include <stdexcept>
#include <string_view>

namespace tc {

namespace {

// Parses one vertex id at the front of `s`, skipping blanks first; advances s past it.
bool parse_vertex(std::string_view& s, Vertex& v) {
  const std::size_t start = s.find_first_not_of(" \t\r");
  if (start == std::string_view::npos) return false;
  s.remove_prefix(start);
  std::uint64_t value = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc() || value > kMaxVertex) return false;
  s.remove_prefix(static_cast<std::size_t>(end - s.data()));
  v = static_cast<Vertex>(value);
  return true;
}

bool is_skipped(std::string_view line) {
  const std::size_t start = line.find_first_not_of(" \t\r");
  return start == std::string_view::npos || line[start] == '#' || line[start] == '%';
}

double uniform(std::uint64_t& state) {
  state = mix(state);
  return static_cast<double>(state >> 11) * 0x1.0p-53;
}

}  // namespace

std::vector<Tuple> read_edge_list(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open edge list '" + path + "'");
  std::vector<Tuple> edges;
  std::string line;
  for (std::int64_t number = 1; std::getline(in, line); ++number) {
    if (is_skipped(line)) continue;
    std::string_view rest = line;
    Vertex from = 0, to = 0;
    if (!parse_vertex(rest, from) || !parse_vertex(rest, to) || !is_skipped(rest))
      throw std::runtime_error("edge list '" + path + "' line " + std::to_string(number) +
                               ": expected two vertex ids (0.." + std::to_string(kMaxVertex) +
                               "), got '" + line + "'");
    edges.push_back(make_tuple(from, to));
  }
  return edges;
}

std::vector<Tuple> rmat_edges(const RmatParameters& p, std::int64_t first, std::int64_t last) {
  std::vector<Tuple> edges;
  for (std::int64_t i = first; i < last; ++i) {
    std::uint64_t state = mix(p.seed ^ mix(static_cast<std::uint64_t>(i)));
    Vertex from = 0, to = 0;
    for (int level = 0; level < p.scale; ++level) {  // one quadrant per bit
      const double r = uniform(state);
      const Vertex row = r >= p.a + p.b,
                   column = (r >= p.a && r < p.a + p.b) || r >= p.a + p.b + p.c;
      from = (from << 1) | row;
      to = (to << 1) | column;
    }
    if (from != to) edges.push_back(make_tuple(from, to));
  }
  return edges;
}

}  // namespace tc
