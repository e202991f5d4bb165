// `a2av bench --inplace`: the in-place algorithms (A2AV_Exchange_inplace) on N elements per
// rank, the four Zhuang cases by default, against the out-of-place vendor MPI_Alltoallv.
// Reports time (median/min/max over iterations of the max over ranks), the ratio against
// the vendor, the extra bytes at peak (the library's accounting) as a fraction of the data,
// and peak RSS. The in-place runs come first in the process, so their peak RSS has never
// seen the vendor's two buffers; the input is regenerated before each iteration, outside
// the timed region, rather than restored from a copy.
#pragma once

#include "options.hpp"

#include <string>

namespace a2av::bench {

int run_inplace_bench(const BenchOptions& options, const std::string& command);

}  // namespace a2av::bench
