// Distributed transitive closure by semi-naive evaluation (TuNA paper, Section VI-B):
//   G(b, c) lives on owner(b); the closure T and the new pairs D (a, b) live on owner(b).
//   Each iteration joins D(a, b) with G(b, c) where b lives, sends each (a, c) to owner(c)
//   in one all-to-all, and keeps there the pairs not yet in T: they are the next D.
//   It stops at the fixed point, when no rank found a new pair.
#pragma once

#include "serial.hpp"
#include "tuples.hpp"

#include <mpi.h>

#include <string>
#include <vector>

namespace tc {

struct ClosureRun {
  ClosureSummary summary;       // over all ranks
  int iterations = 0;           // joins until the fixed point
  double seconds = 0;           // the whole evaluation, edge distribution included
  double exchange_seconds = 0;  // inside a2av's all-to-all calls, this rank
  std::string ran;              // what the last exchange ran
};

// my_edges: any share of the edges (each edge on some rank, repeats allowed). algorithm: an
// a2av spec for a2av::alltoallv ("vendor", "auto", ...), or "inplace", "inplace_bitonic",
// "inplace_pairwise" for a2av::exchange_inplace.
ClosureRun distributed_closure(const std::vector<Tuple>& my_edges, const std::string& algorithm,
                               MPI_Comm comm);

}  // namespace tc
