#include "preload/routes.hpp"

#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <utility>

namespace a2av::preload {
namespace {

struct Route {
  long calls = 0;
  double seconds = 0;
};

std::map<std::pair<std::string, std::string>, Route>& routes() {
  static std::map<std::pair<std::string, std::string>, Route> table;
  return table;
}

}  // namespace

bool stats_enabled() {
  static const bool enabled = [] {
    const char* v = std::getenv("A2AV_PRELOAD_STATS");
    return v && std::strcmp(v, "0") != 0 && *v;
  }();
  return enabled;
}

void record(const char* function, const char* route, double seconds) {
  Route& r = routes()[{function, route}];
  ++r.calls;
  r.seconds += seconds;
}

void print_stats() {
  int rank = 0;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank != 0) return;
  for (const auto& [key, r] : routes())
    std::fprintf(stderr, "a2av preload (rank 0): %ld %s calls via %s, %.6f s\n", r.calls,
                 key.first.c_str(), key.second.c_str(), r.seconds);
  if (routes().empty()) std::fprintf(stderr, "a2av preload (rank 0): no all-to-all calls\n");
}

}  // namespace a2av::preload
