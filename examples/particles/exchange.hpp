// Moving particles to their owners. Every rank keeps its particles at the front of one array
// of fixed capacity (the memory budget). The census tells every rank where all particles go;
// the Router then moves them with one of the exchanges compared by this example:
//  - vendor: MPI_Alltoallv; the leavers are sent from the array, arrivals land in a second
//    (receive) buffer and are copied back;
//  - auto:   the same with a2av's out-of-place exchange, algorithm chosen by a2av;
//  - inplace: a2av::exchange_inplace on the array itself, no second buffer;
// and, for rebalancing only, a2av::Redistributor treating every slot of the array as a block.
#pragma once

#include "decomposition.hpp"
#include "particles.hpp"

#include <a2av/redistribute.hpp>

#include <mpi.h>

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace particles {

enum class Exchange { vendor, automatic, inplace };

// Where the particles go, known on every rank after one MPI_Allreduce.
struct Census {
  std::vector<std::int64_t> to;      // this rank's particles per destination rank
  std::vector<std::int64_t> totals;  // every rank's particle count after the exchange
  std::vector<std::int64_t> stays;   // every rank's particles that keep their rank
  std::vector<std::int64_t> counts;  // every rank's particle count now
  std::uint64_t state_sum = 0;       // sum of state_hash over all particles
  std::int64_t max_total() const;
  std::int64_t leavers() const;  // particles that change rank, all ranks
};

// Collective. local_state_sum: this rank's sum of state hashes, added up in the same call.
Census take_census(std::span<const Particle> parts, const Decomposition& decomposition,
                   std::uint64_t local_state_sum, MPI_Comm comm);

struct RouteStats {
  double exchange_seconds = 0;            // communication: counts, data, copying arrivals in
  double sort_seconds = 0;                // ordering the array by destination, building block maps
  std::int64_t peak_extra_bytes = 0;      // beyond the array: receive buffer or block map,
                                          // plus the library's temporary memory
  std::int64_t peak_library_bytes = 0;    // the library's part of it
  std::map<std::string, int> algorithms;  // what ran, and how often
};

class Router {
 public:
  // slots: the whole array (its size is the capacity). redistribute_spec: empty to rebalance
  // with the exchange too, else the Redistributor's algorithm (collective construction).
  Router(Exchange exchange, std::string inplace_spec, const std::string& redistribute_spec,
         std::span<Particle> slots, MPI_Comm comm);
  ~Router();

  // Collective: moves every particle to its owner under `decomposition`, which `census` was
  // taken with; returns this rank's new particle count. rebalance: the Redistributor moves
  // them if there is one.
  std::int64_t route(std::int64_t n, const Decomposition& decomposition, const Census& census,
                     bool rebalance);

  const RouteStats& stats() const { return stats_; }

 private:
  std::int64_t out_of_place(std::int64_t n, const Decomposition& decomposition,
                            const Census& census);
  std::int64_t in_place(std::int64_t n, const Decomposition& decomposition, const Census& census);
  std::int64_t redistribute(std::int64_t n, const Decomposition& decomposition,
                            const Census& census);
  void note_extra(std::int64_t buffer_bytes, std::int64_t library_bytes);

  Exchange exchange_;
  std::string inplace_spec_;
  std::span<Particle> slots_;
  MPI_Comm comm_;
  int rank_ = 0, size_ = 1;
  std::unique_ptr<a2av::Redistributor> redistributor_;
  RouteStats stats_;
};

}  // namespace particles
