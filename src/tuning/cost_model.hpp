// The cost model: predicts each algorithm's time from the block sizes under an alpha-beta
// model with separate intra-node and inter-node links, a cost per dependent phase and a
// fixed cost per call. Rounds, messages and bytes per rank per round are counted as the
// implementation sends them (TuNA from the same round schedule, with its size headers).
//
// A phase is a set of messages in flight together; a rank's time in a phase is the sum of
// alpha + beta * bytes over the messages it sends (one injection port); the phase takes
// as long as its slowest rank, plus the per-phase cost; phases add up. Every call also pays
// its fixed cost and the agreement allreduce, modelled as ceil(log2 P) latencies.
#pragma once

#include "alltoallv/registry.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace a2av {

struct LinkCost {
  double alpha = 0;  // seconds per message
  double beta = 0;   // seconds per byte
};

struct Machine {
  std::string name;
  std::string source;  // where the figures come from
  LinkCost intra, inter;
  double phase_overhead = 0;  // seconds per dependent phase (synchronisation)
  double call_overhead = 0;   // seconds per call (argument checks, agreement)
  int ranks_per_node = 1;
  // When more ranks than this share a node they time-share its cores, and everything done
  // on the node (intra-node messages, phases) slows by ranks/cores. 0: not limited.
  int cores_per_node = 0;
  // What a block costs through shared_memory's cells (copy in, flag, copy out); absent: the
  // model does not predict shared_memory.
  std::optional<LinkCost> shared_memory;
  // Seconds per byte through a node's network interface, which all its ranks share: in a
  // phase, the bytes a node's ranks send off the node take at least this long. Absent: no
  // limit beyond each rank's own inter-node beta.
  std::optional<double> node_injection;
  // Levels of a network where consecutive nodes form units (a dragonfly's switches of 4
  // nodes, its groups of 32) and two units are joined by one link of `beta` seconds per
  // byte: in a phase, the bytes from one unit's nodes to another's take at least this long.
  // None: no limit beyond the nodes' interfaces.
  struct SharedLinks {
    int nodes = 1;  // per unit, numbered contiguously
    double beta = 0;
  };
  std::vector<SharedLinks> shared_links;

  // A JSON file, by path or by name (data/machines/<name>.json); throws a2av::Error.
  static Machine load(const std::string& name_or_path);
};

// Block sizes: an exact P x P matrix (row i: what rank i sends), or, for P too large for
// one, every block of the mean size (the expected cost of i.i.d. block sizes).
struct Workload {
  int size = 1;
  const std::vector<std::vector<std::int64_t>>* matrix = nullptr;
  double mean_block = 0;

  double block(int source, int dest) const {
    return matrix ? static_cast<double>((*matrix)[source][dest]) : mean_block;
  }
};

struct Prediction {
  double seconds = 0;
  int phases = 0;             // dependent phases
  std::int64_t messages = 0;  // messages the busiest rank sends, all phases
  double bytes = 0;           // bytes the busiest rank sends, all phases
};

// Throws a2av::Error for "auto" (predict the algorithms it chooses from instead), and for
// shared_memory where the machine has no figures for it or P spans nodes.
Prediction predict(const Spec& spec, const Workload& workload, const Machine& machine);

}  // namespace a2av
