// `a2av bench --redistribute`: the five experiments of the MADRE paper ([Siegel10],
// Section 4), scaled by --blocks and --block-bytes: (1) a global cycle with no free space,
// (2) the cycle with 20% free, (3) decreasing free space at fixed P, (4) all free space on
// one rank, (5) a global transpose with 20% free. Each algorithm's time (median over
// iterations of the max over ranks), blocks moved, steps (phases or actions) and peak
// extra memory; every result checked block by block after its first run.
#pragma once

#include "options.hpp"

#include <string>

namespace a2av::bench {

int run_redistribute_bench(const BenchOptions& options, const std::string& command);

}  // namespace a2av::bench
