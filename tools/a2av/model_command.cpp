#include "model_command.hpp"

#include "patterns.hpp"
#include "plan.hpp"
#include "specs.hpp"
#include "tuning/cost_model.hpp"

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <fstream>
#include <map>

namespace a2av::bench {
namespace {

// Exact matrices up to this P; beyond it every block has the pattern's mean size, taken
// from a matrix of this many ranks (the expected cost of i.i.d. sizes).
constexpr int kExactUpTo = 1024;

struct ModelWorkload {
  int size;
  CountMatrix matrix;
  double mean_block = 0;

  Workload view() const { return {size, size <= kExactUpTo ? &matrix : nullptr, mean_block}; }
};

ModelWorkload make_workload(const PatternSpec& pattern, int size, std::int64_t bytes,
                            std::uint64_t seed) {
  ModelWorkload m{size, make_counts(pattern, std::min(size, kExactUpTo), bytes, seed)};
  double total = 0;
  for (const auto& row : m.matrix)
    for (auto b : row) total += static_cast<double>(b);
  m.mean_block = total / (static_cast<double>(m.matrix.size()) * m.matrix.size());
  return m;
}

int radix_of(const std::string& spec) {
  const auto at = spec.find("radix=");
  return at == std::string::npos ? 0 : std::stoi(spec.substr(at + 6));
}

int predict_table(const ModelOptions& o) {
  const Machine machine = Machine::load(o.machine);
  const PatternSpec pattern = parse_pattern(o.pattern);
  fmt::print("# a2av model: machine {} ({}), pattern {}, seed {}\n", machine.name, o.machine,
             o.pattern, o.seed);
  fmt::print("{:>6} {:>7} {:<34} {:>12} {:>7} {:>9}\n", "P", "S", "spec", "predicted_us", "phases",
             "messages");
  std::vector<std::string> best_lines;
  for (int size : o.ranks) {
    std::vector<int> radices;
    for (const auto& r : o.radices) radices.push_back(radix_value(r, size));
    const auto specs = expand_specs(o.algorithms, radices, {}, size, machine.ranks_per_node);
    for (std::int64_t bytes : message_sizes(o.message_sizes)) {
      const ModelWorkload w = make_workload(pattern, size, bytes, o.seed);
      std::pair<double, std::string> best{INFINITY, ""};
      for (const auto& spec : specs) {
        const Prediction p = predict(parse_spec(spec), w.view(), machine);
        fmt::print("{:>6} {:>7} {:<34} {:>12.2f} {:>7} {:>9}\n", size, bytes, spec, p.seconds * 1e6,
                   p.phases, p.messages);
        if (radix_of(spec) > 0) best = std::min(best, {p.seconds, spec});
      }
      if (!best.second.empty())
        best_lines.push_back(fmt::format("{:>6} {:>7} {:>10} {:>12.2f}", size, bytes,
                                         std::min(radix_of(best.second), size), best.first * 1e6));
    }
  }
  fmt::print("\n# best TuNA radix per point\n{:>6} {:>7} {:>10} {:>12}\n", "P", "S", "radix",
             "predicted_us");
  for (const auto& line : best_lines) fmt::print("{}\n", line);
  return 0;
}

// One measured point of a bench JSON file (fixed algorithms only).
struct Measured {
  std::string spec;
  int size, ranks_per_node;
  std::int64_t bytes;
  std::string pattern;
  std::uint64_t seed;
  double seconds;
};

std::vector<Measured> read_points(const std::vector<std::string>& files) {
  std::vector<Measured> points;
  for (const auto& file : files) {
    std::ifstream in(file);
    if (!in) throw std::invalid_argument(fmt::format("cannot read {}", file));
    try {
      const auto doc = nlohmann::json::parse(in);
      for (const auto& r : doc.at("results")) {
        const std::string spec = r.at("algorithm");
        // Not a2av's algorithms: the baseline and --copy-bound's memcpy_bound; auto's choices.
        if (spec == "MPI_Alltoallv" || spec == "memcpy_bound" || r.at("requested") == "auto")
          continue;
        const int element = r.value("datatype_bytes", 1);  // scale_probe records are bytes
        points.push_back({spec, r.at("ranks"), r.at("ranks_per_node"),
                          r.at("size").get<std::int64_t>() / element * element, r.at("pattern"),
                          r.at("seed"), r.at("median_s")});
      }
    } catch (const nlohmann::json::exception& e) {
      throw std::invalid_argument(fmt::format("{}: not a2av bench JSON: {}", file, e.what()));
    }
  }
  return points;
}

Prediction predict_point(const Measured& m, Machine machine) {
  machine.ranks_per_node = m.ranks_per_node;
  const ModelWorkload w = make_workload(parse_pattern(m.pattern), m.size, m.bytes, m.seed);
  return predict(parse_spec(m.spec), w.view(), machine);
}

int compare(const ModelOptions& o) {
  const Machine machine = Machine::load(o.machine);
  std::vector<double> errors;
  fmt::print("{:>4} {:>7} {:<34} {:>12} {:>12} {:>8}\n", "P", "S", "spec", "measured_us",
             "predicted_us", "rel_err");
  for (const auto& m : read_points(o.compare)) {
    const double predicted = predict_point(m, machine).seconds;
    errors.push_back((predicted - m.seconds) / m.seconds);
    fmt::print("{:>4} {:>7} {:<34} {:>12.2f} {:>12.2f} {:>+8.2f}\n", m.size, m.bytes, m.spec,
               m.seconds * 1e6, predicted * 1e6, errors.back());
  }
  if (errors.empty()) return 0;
  std::vector<double> magnitude;
  for (double e : errors) magnitude.push_back(std::abs(e));
  std::sort(magnitude.begin(), magnitude.end());
  fmt::print("# {} points: median |relative error| {:.2f}, 90th percentile {:.2f}\n",
             magnitude.size(), magnitude[magnitude.size() / 2],
             magnitude[magnitude.size() * 9 / 10]);
  return 0;
}

// The fitted parameters: intra-node alpha and beta, inter-node alpha and beta, phase and
// call overheads.
constexpr int kParameters = 6;
using Features = std::array<double, kParameters>;

// Minimises sum (row . x - 1)^2 over the active parameters (normal equations,
// Gauss-Jordan with partial pivoting); inactive parameters are 0.
Features solve_least_squares(const std::vector<Features>& rows,
                             const std::array<bool, kParameters>& active) {
  std::array<std::array<double, kParameters + 1>, kParameters> a{};  // augmented equations
  for (const auto& r : rows)
    for (int i = 0; i < kParameters; ++i) {
      if (!active[i]) continue;
      for (int j = 0; j < kParameters; ++j) a[i][j] += active[j] ? r[i] * r[j] : 0;
      a[i][kParameters] += r[i];
    }
  for (int i = 0; i < kParameters; ++i)
    if (!active[i]) a[i][i] = 1;
  for (int c = 0; c < kParameters; ++c) {
    int pivot = c;
    for (int r = c + 1; r < kParameters; ++r)
      if (std::abs(a[r][c]) > std::abs(a[pivot][c])) pivot = r;
    std::swap(a[c], a[pivot]);
    if (a[c][c] == 0) continue;
    for (int r = 0; r < kParameters; ++r) {
      if (r == c) continue;
      const double f = a[r][c] / a[c][c];
      for (int k = c; k <= kParameters; ++k) a[r][k] -= f * a[c][k];
    }
  }
  Features x{};
  for (int i = 0; i < kParameters; ++i)
    x[i] = active[i] && a[i][i] != 0 ? a[i][kParameters] / a[i][i] : 0;
  return x;
}

// One point's features: the model's time with one parameter 1 and the others 0, each
// relative to the measured time.
Features features(const Measured& m, int cores) {
  Features row{};
  for (int i = 0; i < kParameters; ++i) {
    Machine unit;
    unit.cores_per_node = cores;
    unit.intra = {i == 0 ? 1.0 : 0.0, i == 1 ? 1.0 : 0.0};
    unit.inter = {i == 2 ? 1.0 : 0.0, i == 3 ? 1.0 : 0.0};
    unit.phase_overhead = i == 4;  // phases, each slowed by time-sharing like everything else
    row[i] = (i == 5 ? 1.0 : predict_point(m, unit).seconds) / m.seconds;
  }
  return row;
}

// time = intra (alpha*A + beta*B) + inter (alpha*A + beta*B) + phase_overhead*phases +
// call_overhead, with A and B the model's latency and byte terms on each kind of link; least
// squares on relative error, refitting without any parameter that comes out negative. Points
// on one node (the development machine) have no inter-node terms: inter takes intra's figures.
Features fit_parameters(const std::vector<Measured>& points, int cores) {
  std::vector<Features> rows;
  for (const auto& m : points) rows.push_back(features(m, cores));
  // Columns scaled to unit RMS: the features differ by many orders of magnitude.
  Features scale{};
  for (const auto& r : rows)
    for (int i = 0; i < kParameters; ++i) scale[i] += r[i] * r[i];
  std::array<bool, kParameters> active{};
  for (int i = 0; i < kParameters; ++i) {
    active[i] = scale[i] > 0;
    scale[i] = scale[i] > 0 ? std::sqrt(scale[i] / rows.size()) : 1;
  }
  for (auto& r : rows)
    for (int i = 0; i < kParameters; ++i) r[i] /= scale[i];
  const bool one_node = !active[2] && !active[3];
  Features x{};
  for (int attempt = 0; attempt < kParameters; ++attempt) {
    x = solve_least_squares(rows, active);
    bool negative = false;
    for (int i = 0; i < kParameters; ++i)
      if (x[i] < 0) {
        active[i] = false;
        negative = true;
      }
    if (!negative) break;
  }
  for (int i = 0; i < kParameters; ++i) x[i] = std::max(0.0, x[i]) / scale[i];
  if (one_node) x[2] = x[0], x[3] = x[1];
  return x;
}

// shared_memory's cell figures, the message figures in `machine` already fitted: time =
// base + alpha*A + beta*B, least squares on relative error; a negative one is dropped.
LinkCost fit_shared_memory(const std::vector<Measured>& points, Machine machine) {
  double aa = 0, ab = 0, bb = 0, ay = 0, by = 0;
  for (const auto& m : points) {
    machine.shared_memory = LinkCost{0, 0};
    const double base = predict_point(m, machine).seconds;
    machine.shared_memory = LinkCost{1, 0};
    const double a = (predict_point(m, machine).seconds - base) / m.seconds;
    machine.shared_memory = LinkCost{0, 1};
    const double b = (predict_point(m, machine).seconds - base) / m.seconds;
    const double y = 1 - base / m.seconds;
    aa += a * a, ab += a * b, bb += b * b, ay += a * y, by += b * y;
  }
  const double det = aa * bb - ab * ab;
  LinkCost cost{det != 0 ? (ay * bb - by * ab) / det : 0, det != 0 ? (by * aa - ay * ab) / det : 0};
  if (cost.alpha < 0 || cost.beta < 0)
    cost = cost.alpha < 0 ? LinkCost{0, bb > 0 ? std::max(0.0, by / bb) : 0}
                          : LinkCost{aa > 0 ? std::max(0.0, ay / aa) : 0, 0};
  return cost;
}

int fit(const ModelOptions& o) {
  std::vector<Measured> messages, cells;
  for (auto& m : read_points(o.fit))
    (m.spec.starts_with("shared_memory") ? cells : messages).push_back(std::move(m));
  if (messages.empty()) throw std::invalid_argument("no fixed-algorithm points to fit");
  const auto x = fit_parameters(messages, o.cores);
  int ranks_per_node = 1;
  for (const auto& m : messages) ranks_per_node = std::max(ranks_per_node, m.ranks_per_node);
  nlohmann::json machine = {{"name", o.name},
                            {"source", fmt::format("fitted by a2av model --fit to {} points",
                                                   messages.size() + cells.size())},
                            {"intra", {{"alpha_s", x[0]}, {"beta_s_per_byte", x[1]}}},
                            {"inter", {{"alpha_s", x[2]}, {"beta_s_per_byte", x[3]}}},
                            {"phase_overhead_s", x[4]},
                            {"call_overhead_s", x[5]},
                            {"ranks_per_node", ranks_per_node},
                            {"cores_per_node", o.cores}};
  if (!cells.empty()) {
    Machine fitted;
    fitted.intra = {x[0], x[1]};
    fitted.inter = {x[2], x[3]};
    fitted.phase_overhead = x[4];
    fitted.call_overhead = x[5];
    fitted.cores_per_node = o.cores;
    const LinkCost cost = fit_shared_memory(cells, fitted);
    machine["shared_memory"] = {{"alpha_s", cost.alpha}, {"beta_s_per_byte", cost.beta}};
  }
  std::ofstream out(o.output);
  if (!out) throw std::invalid_argument(fmt::format("cannot write {}", o.output));
  out << machine.dump(2) << "\n";
  fmt::print("{}\n", machine.dump(2));
  return 0;
}

}  // namespace

CLI::App* add_model_command(CLI::App& app, ModelOptions& o) {
  CLI::App* cmd = app.add_subcommand(
      "model", "predict algorithm times with the alpha-beta cost model (no communication)");
  cmd->add_option("--machine", o.machine,
                  "a machine by name (`a2av machines` lists them) or a machine file's path");
  cmd->add_option("-P,--ranks", o.ranks, "rank counts (default 2048,4096,8192,16384)")
      ->delimiter(',');
  cmd->add_option("-m,--message-size", o.message_sizes, "[min:]max bytes (default 16:16384)");
  cmd->add_option("--algorithms", o.algorithms, "specs, as for bench (default tuna)");
  cmd->add_option("--radix", o.radices, "radix sweep, as for bench")->delimiter(',');
  cmd->add_option("--pattern", o.pattern, "count pattern (default uniform)");
  cmd->add_option("--seed", o.seed, "pattern seed (default 1)");
  cmd->add_option("--compare", o.compare, "bench JSON files: predicted against measured")
      ->delimiter(',');
  cmd->add_option("--fit", o.fit, "bench JSON files to fit a machine file to")->delimiter(',');
  cmd->add_option("-o,--output", o.output, "where --fit writes the machine file");
  cmd->add_option("--name", o.name, "name of the fitted machine");
  cmd->add_option("--cores", o.cores, "cores per node of the fitted machine (0: not limited)");
  return cmd;
}

int run_model(const ModelOptions& o) {
  if (!o.fit.empty()) {
    if (o.output.empty()) throw std::invalid_argument("--fit needs -o/--output");
    return fit(o);
  }
  if (o.machine.empty()) throw std::invalid_argument("--machine is required");
  return o.compare.empty() ? predict_table(o) : compare(o);
}

}  // namespace a2av::bench
