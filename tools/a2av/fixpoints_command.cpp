#include "fixpoints_command.hpp"

#include <a2av/route.hpp>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <numeric>
#include <stdexcept>

namespace a2av::fixpoints {
namespace {

struct Method {
  const char* name;
  const std::vector<std::uint64_t>& rounds;  // [r]: states sorted after exactly r rounds
  std::uint64_t slowest;
};

std::vector<Method> methods(const FixpointCensus& c) {
  return {{"first_phase", c.first_phase, c.slowest_first_phase},
          {"transposition", c.transposition, c.slowest_transposition}};
}

// The paper's notation: top input first, a space after every four.
std::string bits(std::uint64_t state, int size) {
  std::string text;
  for (int i = 0; i < size; ++i) {
    if (i > 0 && i % 4 == 0) text += ' ';
    text += (state >> i & 1) ? '1' : '0';
  }
  return text;
}

double mean_rounds(const Method& m, std::uint64_t states) {
  double sum = 0;
  for (std::size_t r = 0; r < m.rounds.size(); ++r) sum += static_cast<double>(r * m.rounds[r]);
  return states ? sum / static_cast<double>(states) : 0;
}

void print_row(const FixpointCensus& c, const Method& m) {
  const double share = c.incorrect ? 100.0 * m.rounds.at(1) / c.incorrect : 0;
  std::string counts;
  for (std::size_t r = 1; r < m.rounds.size(); ++r) counts += fmt::format(" {}", m.rounds[r]);
  fmt::print("{:>3} {:>10} {:<14} {:>8.3g}% {:>5} {:>6.2f} |{}\n", c.size, c.incorrect, m.name,
             share, m.rounds.size() - 1, mean_rounds(m, c.incorrect), counts);
}

nlohmann::json to_json(const FixpointCensus& c) {
  nlohmann::json row{{"N", c.size}, {"incorrect_states", c.incorrect}};
  for (const Method& m : methods(c))
    row[m.name] = {{"resolved_after_rounds", m.rounds},  // index r: after exactly r rounds
                   {"max_rounds", m.rounds.size() - 1},
                   {"mean_rounds", mean_rounds(m, c.incorrect)},
                   {"slowest_state", bits(m.slowest, c.size)}};
  return row;
}

}  // namespace

CLI::App* add_fixpoints_command(CLI::App& app, FixpointOptions& o) {
  CLI::App* cmd = app.add_subcommand(
      "fixpoints", "incorrect states of the bitonic merger and their correction rounds (no MPI)");
  cmd->add_option("N", o.sizes, "merger sizes, powers of two up to 64 (default 4 8 16 32)");
  cmd->add_option("--json", o.json, "also write the table to this JSON file");
  return cmd;
}

int run_fixpoints(const FixpointOptions& o) {
  std::vector<FixpointCensus> censuses;  // all first, so a bad N fails before any output
  for (int size : o.sizes) censuses.push_back(fixpoint_census(size));
  fmt::print(
      "# incorrect states (unsorted fixpoints) of the bitonic merger on 0-1 inputs, and the\n"
      "# rounds (correction + merge) each needs until sorted; share_1: resolved after one\n");
  fmt::print("{:>3} {:>10} {:<14} {:>9} {:>5} {:>6} | {}\n", "N", "incorrect", "correction",
             "share_1", "max", "mean", "resolved after 1, 2, 3, ... rounds");
  nlohmann::json doc{{"fixpoints", nlohmann::json::array()}};
  std::vector<std::string> slowest;
  for (const FixpointCensus& c : censuses) {
    doc["fixpoints"].push_back(to_json(c));
    if (c.incorrect == 0) fmt::print("{:>3} {:>10}\n", c.size, 0);  // N = 1, 2: nothing to correct
    for (const Method& m : c.incorrect ? methods(c) : std::vector<Method>{}) {
      print_row(c, m);
      slowest.push_back(fmt::format("{:>3} {:<14} {} rounds: ({})", c.size, m.name,
                                    m.rounds.size() - 1, bits(m.slowest, c.size)));
    }
  }
  fmt::print("\n# a slowest state per N and method\n");
  for (const auto& line : slowest) fmt::print("{}\n", line);
  if (o.json.empty()) return 0;
  std::ofstream out(o.json);
  if (!out) throw std::invalid_argument(fmt::format("cannot write {}", o.json));
  out << doc.dump(2) << "\n";
  return 0;
}

}  // namespace a2av::fixpoints
