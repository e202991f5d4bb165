// Validation before timing: every algorithm runs once on poisoned receive buffers and must
// leave them byte for byte as the MPI library's MPI_Alltoallv does. Failures are agreed over
// all ranks, printed by the ranks that saw them, and end the run on every rank alike.
#pragma once

#include "buffers.hpp"
#include "entry.hpp"
#include "world.hpp"

#include <cstdint>
#include <stdexcept>

namespace a2av::bench {

// Thrown on every rank when any rank saw a wrong result or an error return.
class ValidationFailure : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Runs MPI_Alltoallv and, when `check`, verifies it against the data encoding (so a harness
// mistake cannot pass as agreement); keeps its result as the reference.
void make_reference(Buffers& buffers, bool check, std::int64_t bytes, const World& world);

// Runs `entry` once, compares with the reference when `check`, and fills in the spec that ran
// and its peak temporary bytes and documented bound (max over ranks).
void probe(Entry& entry, Buffers& buffers, bool check, bool against_reference, std::int64_t bytes,
           const World& world);

}  // namespace a2av::bench
