// What the preload's entry points did: calls and time per (MPI function, route), printed by
// rank 0 of MPI_COMM_WORLD at MPI_Finalize when A2AV_PRELOAD_STATS is set.
#pragma once

namespace a2av::preload {

bool stats_enabled();
// `route`: the algorithm that ran (A2AV_Last_algorithm) or the PMPI function called.
void record(const char* function, const char* route, double seconds);
void print_stats();

}  // namespace a2av::preload
