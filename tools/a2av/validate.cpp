#include "validate.hpp"

#include <a2av/a2av.h>
#include <a2av/alltoallv.hpp>

#include <fmt/core.h>
#include <fmt/ranges.h>
#include <mpi.h>

#include <string>
#include <vector>

namespace a2av::bench {
namespace {

// Every rank learns which ranks failed; those print why, rank 0 names them all, and every
// rank throws, so no rank waits in a collective the others have left.
void agree(const std::string& local_failure, const std::string& what, std::int64_t bytes,
           const World& world) {
  int failed = !local_failure.empty();
  std::vector<int> all(world.size);
  MPI_Allgather(&failed, 1, MPI_INT, all.data(), 1, MPI_INT, MPI_COMM_WORLD);
  std::vector<int> ranks;
  for (int r = 0; r < world.size; ++r)
    if (all[r]) ranks.push_back(r);
  if (ranks.empty()) return;
  if (failed)
    fmt::print(stderr, "a2av bench: rank {}: {} at {} bytes {}\n", world.rank, what, bytes,
               local_failure);
  const std::string summary = fmt::format("VALIDATION FAILED: {} at {} bytes on rank(s) {}", what,
                                          bytes, fmt::join(ranks, ", "));
  if (world.rank == 0) fmt::print(stderr, "a2av bench: {}\n", summary);
  throw ValidationFailure(summary);
}

}  // namespace

void make_reference(Buffers& buffers, bool check, std::int64_t bytes, const World& world) {
  buffers.poison();
  std::string failure;
  if (const int rc = buffers.run_baseline())
    failure = fmt::format("returned MPI error {}", rc);
  else if (const std::int64_t wrong = check ? buffers.first_wrong_byte() : -1; wrong >= 0)
    failure = fmt::format("left receive byte {} different from what was sent", wrong);
  agree(failure, "MPI_Alltoallv", bytes, world);
  buffers.keep_as_reference();
}

void probe(Entry& entry, Buffers& buffers, bool check, bool against_reference, std::int64_t bytes,
           const World& world) {
  buffers.poison();
  std::string failure;
  if (const int rc = buffers.run(entry.requested))
    failure = fmt::format("returned {}: {}", A2AV_Error_string(rc), A2AV_Last_error_message());
  else if (const std::int64_t wrong = !check              ? -1
                                      : against_reference ? buffers.first_difference()
                                                          : buffers.first_wrong_byte();
           wrong >= 0)
    failure = fmt::format("left receive byte {} different from {}", wrong,
                          against_reference ? "MPI_Alltoallv" : "what was sent");
  agree(failure, entry.requested, bytes, world);

  entry.algorithm = A2AV_Last_algorithm();
  std::int64_t measured[3] = {
      A2AV_Last_peak_bytes(),
      a2av::temp_memory_bound(entry.algorithm, world.size, world.ranks_per_node,
                              buffers.max_block_bytes(), buffers.send_total_bytes()),
      A2AV_Last_in_flight()};
  MPI_Allreduce(MPI_IN_PLACE, measured, 3, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD);
  entry.peak_bytes = measured[0];
  entry.bound_bytes = measured[1];
  entry.max_in_flight = measured[2];
}

}  // namespace a2av::bench
