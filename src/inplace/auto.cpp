// inplace_auto: the switch between the two in-place algorithms that Zhuang et al. leave as
// future work (zhuang-memory-efficient-alltoallv.txt, Section 3.3 and 5).
//
// Each rank knows its row s(i, .) and its column s(., i) of the count matrix, so with one
// MPI_Allreduce of two numbers every rank evaluates the same estimates, in elements moved
// on the critical path:
//  - bitonic: L(L+1)/2 compare-split steps, each swapping and merging up to C elements;
//  - pairwise: the meetings form a dependency chain of 2P-3 meetings (rank i meets 0..i-1
//    then i+1..P-1), so balanced rows cost about 2 * max_i V_i with
//    V_i = sum_j max(s(i,j), s(j,i)) (each pair swaps the larger direction); and elements
//    that cannot go directly (A_i = sum_j |s(i,j) - s(j,i)|, zero for a symmetric matrix)
//    are forwarded along chains up to P-2 meetings long (Zhuang case 4 serializes).
#include "inplace/algorithms.hpp"

#include "core/check.hpp"

#include <cstdlib>

namespace a2av::inplace {

AutoChoice choose_algorithm(const State& state) {
  const Layout& layout = state.layout;
  const int p = state.ctx.size;
  std::int64_t v[2] = {0, 0};  // V_i, A_i
  for (int j = 0; j < p; ++j) {
    if (j == state.ctx.rank) continue;
    v[0] += std::max(layout.send[j], layout.recv[j]);
    v[1] += std::abs(layout.send[j] - layout.recv[j]);
  }
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, v, 2, MPI_INT64_T, MPI_MAX, state.ctx.comm),
            "MPI_Allreduce");
  const double c = static_cast<double>(layout.length);
  AutoChoice choice{};
  choice.bitonic_cost = bitonic_steps(p) * c;
  choice.pairwise_cost = 2.0 * v[0] + std::max(0, p - 2) * 0.5 * v[1];
  choice.pairwise = choice.pairwise_cost <= choice.bitonic_cost;
  return choice;
}

}  // namespace a2av::inplace
