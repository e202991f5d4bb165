// The built-in heuristic comes from measurements on the development machine (2 cores,
// shared memory, docs/algorithms.md) and the TuNA paper's Section V findings for large P:
// with few ranks, one round of direct messages wins at every size; logarithmic rounds pay
// off only when P is large and blocks are small, where radix ~sqrt(P) balances rounds
// against bytes.
#include "tuning/selector.hpp"

#include "core/check.hpp"
#include "tuning/table.hpp"

#include <cstdlib>
#include <memory>
#include <optional>

namespace a2av {
namespace {

struct LoadedTable {
  std::optional<TuningTable> table;
  std::optional<Error> error;
};

const LoadedTable& loaded_table() {
  static const LoadedTable loaded = [] {
    LoadedTable result;
    const char* path = std::getenv("A2AV_TUNING_FILE");
    if (!path || !*path) return result;
    try {
      result.table = TuningTable::load(path);
    } catch (const Error& e) {
      result.error = e;
    }
    return result;
  }();
  return loaded;
}

constexpr int kLogarithmicFrom = 64;  // ranks from which the heuristic considers TuNA

Choice heuristic(const ExchangeStats& s) {
  if (s.size >= kLogarithmicFrom && s.max_block <= 1024) {
    int root = 2;
    while (root * root < s.size) ++root;
    return {fmt::format("tuna:radix={}", root), "heuristic: P >= 64 and blocks <= 1 KiB"};
  }
  return {"spread_out", "heuristic: one round of direct messages"};
}

}  // namespace

bool choice_needs_statistics(int size) {
  return loaded_table().table || loaded_table().error || size >= kLogarithmicFrom;
}

void check_tuning_file() {
  if (loaded_table().error) throw *loaded_table().error;
}

Choice choose_algorithm(const ExchangeStats& stats) {
  if (const auto& table = loaded_table().table) {
    if (const TuningRule* rule = table->match(stats))
      return {rule->algorithm,
              fmt::format("tuning file {}, rule at line {}", table->name(), rule->line)};
  }
  return heuristic(stats);
}

}  // namespace a2av
