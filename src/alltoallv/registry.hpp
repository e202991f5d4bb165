// Algorithm names, their parameters (with ranges and defaults) and spec parsing:
// "name[:key=value[,key=value...]]". Every name, key and value is checked.
#pragma once

#include "alltoallv/algorithm.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace a2av {

struct ParamSpec {
  std::string_view key;
  std::int64_t min;
  std::int64_t max;
  std::int64_t fallback;  // default; 0 may mean "chosen at run time" (documented per key)
  std::string_view doc;
};

// What a memory bound depends on, all agreed across ranks except send_total.
struct BoundInput {
  int size;
  int node_size;
  std::int64_t max_block;   // largest block of any rank, bytes
  std::int64_t send_total;  // this rank's send bytes
};

struct AlgorithmInfo {
  std::string_view name;
  std::string_view summary;
  std::vector<ParamSpec> params;
  AlgorithmFn run;  // null for "auto", which is resolved before running
  std::int64_t (*memory_bound)(const BoundInput&, const Params&);
  // How a rank that rejected its arguments takes part while its peers run the algorithm,
  // so that errors are agreed in band (docs/errors.md); null for vendor, which keeps MPI's
  // semantics (no agreement).
  AnnounceFn announce = nullptr;

  bool agrees_in_band() const { return announce != nullptr; }
};

const std::vector<AlgorithmInfo>& algorithm_table();

struct Spec {
  const AlgorithmInfo* algorithm = nullptr;
  Params params;          // every key of the algorithm, defaults filled in
  bool validate = false;  // the common key validate=0|1
};

// Throws A2AV_ERR_ALGORITHM with a message listing what is accepted.
Spec parse_spec(std::string_view text);

// What runs for `spec` on `size` ranks, as "name:key=value,...", with run-time defaults
// (radix=0, ...) resolved; a hierarchical spec that falls back shows the flat tuna it runs.
std::string describe(const Spec& spec, int size, int node_size, bool uniform_nodes);

}  // namespace a2av
