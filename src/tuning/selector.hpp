// What "auto" runs. Authority, first that answers: a tuning table (A2AV_TUNING_FILE), then
// the cost model with a machine file (A2AV_MACHINE_FILE), then the built-in heuristic. (An
// explicit spec and A2AV_ALGORITHM come before auto is reached.)
#pragma once

#include "tuning/stats.hpp"

#include <string>
#include <string_view>

namespace a2av {

struct Choice {
  std::string_view spec;  // stable storage: a table rule, a cache entry, a literal
  std::string reason;     // only when asked to explain (A2AV_VERBOSE)
};

// Loads A2AV_TUNING_FILE and A2AV_MACHINE_FILE once per process; throws a load error
// (A2AV_ERR_ALGORITHM) on every call if a file is bad, so it is never silently ignored.
void check_tuning_file();

// With explain, Choice::reason says which authority decided; without, nothing is
// formatted or allocated (this runs on every auto call).
Choice choose_algorithm(const ExchangeStats& stats, bool explain);

struct Machine;

// The cost model's fastest candidate (linear algorithms, shared_memory on one node if the
// machine has figures for it, TuNA at radices 2, 4, 8, 16, ceil(sqrt P) and P, hierarchical
// TuNA when nodes divide P) for blocks of the mean size.
Choice model_choice(const Machine& machine, const ExchangeStats& stats);

// Whether the choice for P ranks, Q per node (agreed_node_size), can depend on block
// statistics (a tuning table or machine file is loaded, or the heuristic looks at block
// sizes there); if not, no allreduce is needed for it.
bool choice_needs_statistics(int size, int ranks_per_node);

}  // namespace a2av
