// `a2av bench --collectives`: every textbook collective (a2av/collectives.hpp) and each of
// its algorithms against the vendor MPI call, per message size: median over iterations of
// the max over ranks (barrier outside the timed region, entries interleaved), the ratio to
// the vendor, and the lecture's alpha-beta prediction beside it, with alpha and beta from a
// ping-pong between ranks 0 and 1 at startup (or --alpha/--beta) and gamma from timing
// MPI_Reduce_local. Every algorithm is checked byte for byte against the vendor first.
#pragma once

#include "options.hpp"

#include <string>

namespace a2av::bench {

int run_collectives_bench(const BenchOptions& options, const std::string& command);

}  // namespace a2av::bench
