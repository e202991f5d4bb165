// `a2av bench --sparse`: the sparse exchange (a2av::sparse_exchange) on patterns where ranks
// send to few peers they choose: k random peers ("random:K"), the periodic 2-D and 3-D
// stencils, and a power-law spread of peer counts. Each a2av algorithm against plain MPI as
// users write it ("mpi": pack per destination, MPI_Alltoall of the counts, MPI_Alltoallv),
// timed the same way (median over iterations of the max over ranks), with peak temporary
// memory; every a2av result checked against plain MPI's on its first run.
#pragma once

#include "options.hpp"

#include <string>

namespace a2av::bench {

int run_sparse_bench(const BenchOptions& options, const std::string& command);

}  // namespace a2av::bench
