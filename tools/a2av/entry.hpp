// One algorithm being measured at one sweep point.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace a2av::bench {

// The name of the --copy-bound row: no exchange, each rank copies its receive volume once.
inline constexpr const char* kCopyBound = "memcpy_bound";

struct Entry {
  std::string requested;           // the spec as listed; empty for the MPI_Alltoallv baseline
  std::string algorithm;           // the spec that ran (A2AV_Last_algorithm), "MPI_Alltoallv"
  std::int64_t peak_bytes = 0;     // temporary bytes, max over ranks
  std::int64_t bound_bytes = 0;    // a2av::temp_memory_bound of `algorithm`, max over ranks
  std::int64_t max_in_flight = 0;  // A2AV_Last_in_flight, max over ranks
  std::vector<double> seconds;     // per timed iteration, max over ranks

  bool baseline() const { return requested.empty(); }
  bool copy_bound() const { return requested == kCopyBound; }
  bool a2av() const { return !baseline() && !copy_bound(); }
};

}  // namespace a2av::bench
