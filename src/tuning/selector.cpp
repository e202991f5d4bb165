// The built-in heuristic comes from measurements on the development machine (2 cores,
// shared memory, docs/algorithms.md) and the TuNA paper's Section V findings for large P:
// with few ranks, one round of direct messages wins at every size; logarithmic rounds pay
// off only when P is large and blocks are small, where radix ~sqrt(P) balances rounds
// against bytes.
#include "tuning/selector.hpp"

#include "alltoallv/node_aware.hpp"
#include "alltoallv/registry.hpp"
#include "core/check.hpp"
#include "core/environment.hpp"
#include "core/per_thread.hpp"
#include "tuning/cost_model.hpp"
#include "tuning/table.hpp"

#include <cmath>
#include <cstdlib>
#include <map>
#include <memory>
#include <optional>
#include <tuple>

namespace a2av {
namespace {

// A file named by an environment variable, loaded once; its error kept to report on
// every call.
template <class T>
struct Loaded {
  std::optional<T> value;
  std::optional<Error> error;
};

template <class T>
Loaded<T> load_from_env(EnvVar<EnvType::path> variable) {
  Loaded<T> result;
  const char* path = env_text(variable);
  if (!path || !*path) return result;
  try {
    result.value = T::load(path);
  } catch (const Error& e) {
    result.error = Error(A2AV_ERR_ALGORITHM, fmt::format("{}: {}", variable.name(), e.what()));
  }
  return result;
}

const Loaded<TuningTable>& loaded_table() {
  static const auto loaded = load_from_env<TuningTable>("A2AV_TUNING_FILE");
  return loaded;
}

const Loaded<Machine>& loaded_machine() {
  static const auto loaded = load_from_env<Machine>("A2AV_MACHINE_FILE");
  return loaded;
}

// The candidates the cost model compares for P ranks and Q per node: what each algorithm's
// descriptor offers.
std::vector<std::string> model_candidates(const Machine& machine, int size, int ranks_per_node) {
  std::vector<std::string> specs;
  const CandidateScope scope{size, ranks_per_node, machine.shared_memory.has_value()};
  for (const AlgorithmDescriptor* a : algorithm_table())
    if (a->candidates) a->candidates(scope, specs);
  return specs;
}

constexpr int kLogarithmicFrom = 64;         // ranks from which the heuristic considers TuNA
constexpr std::int64_t kTunaLargest = 1024;  // the largest block the heuristic gives TuNA

// Across nodes the heuristic takes node_aware whatever the blocks below 64 ranks, and as
// long as node_aware aggregates every block TuNA would be given (P <= 1024): blocks above
// its staging cap go directly, as spread_out's do. Beyond, it must know the largest block.
bool node_aware_whatever_the_blocks(int size) {
  return size < kLogarithmicFrom ||
         node_aware_threshold(kAggregateAbove.fallback, size) >= kTunaLargest;
}

Choice heuristic(const ExchangeStats& s) {
  // Across nodes, one message per pair of nodes; its large blocks go directly. Every rank
  // decides alike: all see ranks_per_node < size, or none does. Where node_aware's staging
  // cap is below TuNA's blocks (P > 1024), node_aware only where it aggregates every block
  // (the cost model finds TuNA better where the cap sends them directly).
  // One rank per node: no agents to share the remote nodes, so TuNA's rounds over the nodes
  // (16 emulated nodes of 1 over TCP: 0.80-0.87x MPI_Alltoallv's time, one message per pair
  // of nodes 1.14-1.23x; docs/bench.md).
  if (s.ranks_per_node < s.size &&
      (node_aware_whatever_the_blocks(s.size) ||
       s.max_block <= node_aware_threshold(kAggregateAbove.fallback, s.size)))
    return s.ranks_per_node == 1 ? Choice{"node_aware:radix=4", "heuristic: one rank per node"}
                                 : Choice{"node_aware", "heuristic: ranks on several nodes"};
  if (s.size >= kLogarithmicFrom && s.max_block <= kTunaLargest) {
    A2AV_THREAD_LOCAL std::map<int, std::string> by_size;  // "tuna:radix=ceil(sqrt P)"
    auto [it, inserted] = by_size.try_emplace(s.size);
    if (inserted) {
      int root = 2;
      while (root * root < s.size) ++root;
      it->second = fmt::format("tuna:radix={}", root);
    }
    return {it->second, "heuristic: P >= 64 and blocks <= 1 KiB"};
  }
  if (s.size > 1 && s.ranks_per_node == s.size)
    return {"shared_memory", "heuristic: all ranks on one node"};
  return {"spread_out", "heuristic: one round of direct messages"};
}

}  // namespace

bool choice_needs_statistics(int size, int ranks_per_node) {
  return loaded_table().value || loaded_table().error || loaded_machine().value ||
         loaded_machine().error ||
         (size >= kLogarithmicFrom &&
          !(ranks_per_node < size && node_aware_whatever_the_blocks(size)));
}

void check_tuning_file() {
  if (loaded_table().error) throw *loaded_table().error;
  if (loaded_machine().error) throw *loaded_machine().error;
}

// The model's choice for mean block sizes, cached per (P, Q, power of two of the mean):
// predictions at P = 16384 take about a millisecond, too much for every call.
Choice model_choice(const Machine& machine, const ExchangeStats& s) {
  A2AV_THREAD_LOCAL std::map<std::tuple<int, int, int>, std::pair<std::string, std::string>> cache;
  const int bucket = s.mean_block < 1 ? -1 : static_cast<int>(std::log2(s.mean_block));
  const auto key = std::make_tuple(s.size, s.ranks_per_node, bucket);
  if (auto it = cache.find(key); it != cache.end()) return {it->second.first, it->second.second};
  Machine m = machine;
  m.ranks_per_node = s.ranks_per_node;
  const Workload workload{s.size, nullptr, bucket < 0 ? 0.0 : std::exp2(bucket + 0.5)};
  std::pair<std::string, std::string> best;
  double best_time = INFINITY;
  for (const auto& spec : model_candidates(machine, s.size, s.ranks_per_node)) {
    const double t = predict(parse_spec(spec), workload, m).seconds;
    if (t < best_time) {
      best_time = t;
      best = {spec,
              fmt::format("cost model, machine {}: {:.1f} us predicted", machine.name, t * 1e6)};
    }
  }
  const auto& stored = cache[key] = std::move(best);
  return {stored.first, stored.second};
}

// The model needs nodes of one size; elsewhere the heuristic decides.
Choice choose_algorithm(const ExchangeStats& stats, bool explain) {
  if (const auto& table = loaded_table().value) {
    if (const TuningRule* rule = table->match(stats))
      return {rule->algorithm,
              explain ? fmt::format("tuning file {}, rule at line {}", table->name(), rule->line)
                      : std::string()};
  }
  Choice choice = loaded_machine().value && stats.ranks_per_node > 0
                      ? model_choice(*loaded_machine().value, stats)
                      : heuristic(stats);
  if (!explain) choice.reason.clear();
  return choice;
}

}  // namespace a2av
