// What "auto" runs. Authority, first that answers: a tuning table (A2AV_TUNING_FILE), then
// the built-in heuristic. (An explicit spec and A2AV_ALGORITHM come before auto is reached.)
#pragma once

#include "tuning/stats.hpp"

#include <string>

namespace a2av {

struct Choice {
  std::string spec;
  std::string reason;  // for A2AV_VERBOSE
};

// Loads A2AV_TUNING_FILE once per process; throws its load error (A2AV_ERR_ALGORITHM) on
// every call if the file is bad, so a broken table is never silently ignored.
void check_tuning_file();

Choice choose_algorithm(const ExchangeStats& stats);

// Whether the choice for P ranks can depend on block statistics (a tuning table is loaded,
// or the heuristic looks at block sizes at this P); if not, no allreduce is needed for it.
bool choice_needs_statistics(int size);

}  // namespace a2av
