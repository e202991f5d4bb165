// The driver every entry point calls: checks arguments, agrees on errors (and, with
// validation, on counts) across ranks, resolves the algorithm, normalises the buffers and
// runs it. Errors are agreed before any data moves, or, for the direct algorithms, in band
// while it moves (docs/errors.md).
#pragma once

#include <a2av/alltoallv.hpp>

#include "alltoallv/registry.hpp"
#include "core/call.hpp"

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace a2av {

// What ran, cheap to return; describe() turns it into the resolved spec text on demand.
struct CallResult {
  const Spec* spec = nullptr;  // held by per-thread caches, valid until the next call
  int size = 1;
  int node_size = 1;
  bool uniform_nodes = false;
  bool uniform_blocks = false;
  std::int64_t peak_temp_bytes = 0;
  int max_in_flight = 0;  // most point-to-point requests this rank had in flight at once

  std::string describe() const {
    return spec ? a2av::describe(*spec, {size, node_size, uniform_nodes, uniform_blocks}) : "";
  }
};

// A parsed spec, shared by the per-thread cache of parsed specs and what holds on to it.
using SpecRef = std::shared_ptr<const Spec>;

// A call after the checks, the agreement across ranks and the choice of algorithm: what
// does not change between exchanges with the same buffers and counts.
struct Prepared {
  const CommContext* ctx = nullptr;
  SpecRef spec;                              // the algorithm that runs (auto already resolved)
  std::optional<NormalizedCall> normalized;  // absent when vendor was asked for
  std::int64_t max_block = 0;                // agreed largest block of any rank (0 in band)
  bool uniform_blocks = false;               // agreed: every block of every rank max_block
  bool in_band = false;                      // errors are agreed while the data moves
  bool unagreed = false;                     // vendor: errors are each rank's own, as in MPI
  int in_flight = 0;                         // the spec's bound on requests in flight; 0: default
  std::vector<int> vendor_ints;  // vendor: the counts as MPI_Alltoallv's ints, if they fit

  // Depends on nothing but this rank's arguments and P (recent_calls.hpp).
  bool repeatable() const { return in_band || unagreed; }
};

// Collective; throws a2av::Error, the same code on every rank for argument errors and for
// packing buffers that cannot be allocated (they are allocated, charged to `memory`,
// before the ranks agree). With `in_band_allowed`, a direct algorithm agrees on errors
// while the data moves instead of in an allreduce before (a plan agrees once, before).
Prepared prepare_alltoallv(const Call& call, std::string_view spec, bool validate,
                           bool in_band_allowed, MemoryTracker& memory);
// The same into `out`, reusing its storage.
void prepare_into(Prepared& out, const Call& call, std::string_view spec, bool validate,
                  bool in_band_allowed, MemoryTracker& memory);

// Runs a prepared exchange; returns the most requests it had in flight at once.
int execute(const Call& call, Prepared& prepared, MemoryTracker& memory);

// The call of a span-taking entry point. A span with fewer entries than `comm` has ranks
// (the send side is not used with MPI_IN_PLACE) is an argument error that the ranks agree
// on: the call's arrays are then null and Call::rejected points to `rejected`, which must
// outlive the call.
Call call_from_spans(const void* sendbuf, std::span<const MPI_Count> sendcounts,
                     std::span<const MPI_Aint> sdispls, MPI_Datatype sendtype, void* recvbuf,
                     std::span<const MPI_Count> recvcounts, std::span<const MPI_Aint> rdispls,
                     MPI_Datatype recvtype, MPI_Comm comm, std::string& rejected);

// prepare + execute. Throws a2av::Error.
CallResult run_alltoallv(const Call& call, std::string_view spec, bool validate);

}  // namespace a2av
