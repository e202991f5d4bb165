// The timed loop, as OSU and the TuNA paper measure: a barrier outside the timed region,
// warm-up iterations discarded, per-iteration time = max over ranks. Entries take turns
// within each iteration, in an order shuffled every iteration, so drifting machine noise and
// the cost of following another algorithm fall on every algorithm alike.
#pragma once

#include "buffers.hpp"
#include "entry.hpp"
#include "progress.hpp"

#include <string>
#include <vector>

namespace a2av::bench {

// Appends `iterations` times, max over ranks, to each entry's `seconds`. `label` says which
// sweep point the progress line is about.
void time_entries(std::vector<Entry>& entries, Buffers& buffers, int iterations, int warmup,
                  Progress& progress, const std::string& label);

}  // namespace a2av::bench
