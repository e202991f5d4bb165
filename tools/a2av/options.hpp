// The settings of `a2av bench`, as given on the command line (defaults documented in
// docs/bench.md); plan.hpp turns them into what to run.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace a2av::bench {

struct BenchOptions {
  std::string algorithms = "all";
  std::vector<std::string> radices;  // integers, "sqrtP", "P"
  std::vector<std::int64_t> block_counts;
  std::string message_sizes = "16:1048576";  // [min:]max bytes
  int iterations = 100;
  int warmup = 10;
  std::string pattern = "uniform";
  std::uint64_t seed = 1;
  std::string datatype = "char";
  bool validate = true;
  // --no-baseline: no MPI_Alltoallv row (too slow to simulate at thousands of ranks); the
  // first algorithm is the reference for ratios, and each result is checked by its content.
  bool baseline = true;
  // --copy-bound: a memcpy_bound row, each rank copying its receive volume once with memcpy,
  // all ranks at once: what one copy per byte costs on this machine, with no exchange.
  bool copy_bound = false;
  std::string format = "table";  // table, csv or json
  std::string output;            // empty: standard output
  std::string json;              // a JSON copy of the results, besides --format
  bool progress = false;         // show the progress line even when stderr is no terminal
  // --inplace: the in-place exchange instead (inplace_bench.hpp)
  bool inplace = false;
  std::int64_t elements = std::int64_t{1} << 20;  // N per rank
  int element_bytes = 16;
  // --redistribute: the block redistribution engine instead (redistribute_bench.hpp)
  bool redistribute = false;
  std::int64_t blocks = 2500;  // per rank
  std::int64_t block_bytes = 16000;
  std::string experiments = "1,2,3,4,5";
  // --collectives: the textbook collectives instead (collectives_bench.hpp); model
  // parameters, 0: measured by a ping-pong at startup
  // --sparse: the sparse exchange instead (sparse_bench.hpp)
  bool sparse = false;
  bool collectives = false;
  double alpha = 0;  // seconds per message
  double beta = 0;   // seconds per byte
};

}  // namespace a2av::bench
