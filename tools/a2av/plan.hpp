// What `a2av bench` will run, derived from its options: every check that can fail on
// arguments happens here, identically on every rank, before anything is timed.
#pragma once

#include "datatype.hpp"
#include "options.hpp"
#include "patterns.hpp"
#include "world.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace a2av::bench {

struct BenchPlan {
  std::vector<std::int64_t> sizes;  // message sizes S in bytes
  std::vector<std::string> specs;   // algorithm specs, without the MPI_Alltoallv baseline
  PatternSpec pattern;
  Datatype datatype;
};

// "[min:]max" -> min, 2 min, 4 min, ... <= max (0 is followed by 1). min defaults to 16, or to
// max when that is smaller. Throws std::invalid_argument.
std::vector<std::int64_t> message_sizes(std::string_view text);

// Throws std::invalid_argument with a message that names the option at fault.
BenchPlan make_plan(const BenchOptions& options, const World& world);

// The count matrix of one sweep point, in bytes. make_plan has checked that it can be made.
CountMatrix counts_at(const BenchPlan& plan, const BenchOptions& options, int size,
                      std::int64_t bytes);

}  // namespace a2av::bench
