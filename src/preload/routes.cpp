#include "preload/routes.hpp"

#include "alltoallv/algorithm.hpp"
#include "core/environment.hpp"

#include <mpi.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <utility>

namespace a2av::preload {
namespace {

struct Route {
  long calls = 0;
  double seconds = 0;
};

// Any thread's calls are counted: under routes_mutex().
std::map<std::pair<std::string, std::string>, Route>& routes() {
  static std::map<std::pair<std::string, std::string>, Route> table;
  return table;
}

std::mutex& routes_mutex() {
  static std::mutex mutex;
  return mutex;
}

}  // namespace

bool stats_enabled() {
  static const bool enabled = env_flag("A2AV_PRELOAD_STATS");
  return enabled;
}

void record(const char* function, const char* route, double seconds) {
  const std::lock_guard lock(routes_mutex());
  Route& r = routes()[{function, route}];
  ++r.calls;
  r.seconds += seconds;
}

void print_stats() {
  int rank = 0;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank != 0) return;
  const std::lock_guard lock(routes_mutex());
  for (const auto& [key, r] : routes())
    std::fprintf(stderr, "a2av preload (rank 0): %ld %s calls via %s, %.6f s\n", r.calls,
                 key.first.c_str(), key.second.c_str(), r.seconds);
  if (routes().empty()) std::fprintf(stderr, "a2av preload (rank 0): no all-to-all calls\n");
}

int mpi_error_for(int a2av_code) {
  switch (a2av_code) {
    case A2AV_ERR_COUNTS:
      return MPI_ERR_TRUNCATE;
    case A2AV_ERR_DATATYPE:
      return MPI_ERR_TYPE;
    case A2AV_ERR_CAPACITY:
      return MPI_ERR_NO_MEM;
    default:
      return MPI_ERR_OTHER;
  }
}

void warn_once(const char* message) {
  static std::atomic<bool> warned{false};
  if (!warned.exchange(true))
    std::fprintf(stderr, "a2av preload: %s; using the MPI library's own\n", message);
}

bool intracommunicator(MPI_Comm comm) {
  int inter = 0;
  return comm != MPI_COMM_NULL && PMPI_Comm_test_inter(comm, &inter) == MPI_SUCCESS && !inter;
}

int peers(MPI_Comm comm) {
  int size = 0;
  if (intracommunicator(comm))
    PMPI_Comm_size(comm, &size);
  else
    PMPI_Comm_remote_size(comm, &size);
  return size;
}

void use_pmpi_as_vendor() {
  [[maybe_unused]] static const bool pointed = (set_vendor_alltoallv(&PMPI_Alltoallv), true);
}

}  // namespace a2av::preload
