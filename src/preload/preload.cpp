// liba2av_preload.so: LD_PRELOAD it under mpiexec and every MPI_Alltoallv of an unmodified
// program goes through a2av's selection (PMPI interposition; the vendor algorithm becomes
// PMPI_Alltoallv). What a2av does not take (intercommunicators) goes straight to
// PMPI_Alltoallv; an argument a2av rejects is handed to PMPI_Alltoallv as well, so the
// program sees its MPI's own error behaviour. A2AV_PRELOAD_STATS=1 prints, at MPI_Finalize
// on rank 0 of MPI_COMM_WORLD, how many calls went where and the time spent.
#include <a2av/a2av.h>

#include "alltoallv/algorithm.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>

namespace {

struct Route {
  long calls = 0;
  double seconds = 0;
};

std::map<std::string, Route>& routes() {
  static std::map<std::string, Route> table;  // by resolved algorithm, or "PMPI_Alltoallv"
  return table;
}

bool stats_enabled() {
  static const bool enabled = [] {
    const char* v = std::getenv("A2AV_PRELOAD_STATS");
    return v && std::strcmp(v, "0") != 0 && *v;
  }();
  return enabled;
}

void record(const char* route, double seconds) {
  Route& r = routes()[route];
  ++r.calls;
  r.seconds += seconds;
}

int vendor(const void* sendbuf, const int* sendcounts, const int* sdispls, MPI_Datatype sendtype,
           void* recvbuf, const int* recvcounts, const int* rdispls, MPI_Datatype recvtype,
           MPI_Comm comm) {
  const double start = stats_enabled() ? MPI_Wtime() : 0;
  const int rc = PMPI_Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                                rdispls, recvtype, comm);
  if (stats_enabled()) record("PMPI_Alltoallv", MPI_Wtime() - start);
  return rc;
}

int mpi_error_for(int code) {
  switch (code) {
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

// A bad A2AV_ALGORITHM should not pass unnoticed, nor flood the output.
void warn_once(const char* message) {
  static bool warned = false;
  if (!warned) std::fprintf(stderr, "a2av preload: %s; using PMPI_Alltoallv\n", message);
  warned = true;
}

void print_stats() {
  int rank = 0;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank != 0) return;
  for (const auto& [route, r] : routes())
    std::fprintf(stderr, "a2av preload (rank 0): %ld MPI_Alltoallv calls via %s, %.6f s\n", r.calls,
                 route.c_str(), r.seconds);
  if (routes().empty()) std::fprintf(stderr, "a2av preload (rank 0): no MPI_Alltoallv calls\n");
}

}  // namespace

extern "C" {

int MPI_Alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[],
                  MPI_Datatype sendtype, void* recvbuf, const int recvcounts[], const int rdispls[],
                  MPI_Datatype recvtype, MPI_Comm comm) {
  a2av::set_vendor_alltoallv(&PMPI_Alltoallv);  // a2av's own "vendor" must not come back here
  int inter = 0;
  if (comm == MPI_COMM_NULL || PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter)
    return vendor(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype,
                  comm);
  const double start = stats_enabled() ? MPI_Wtime() : 0;
  const int rc = A2AV_Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                                rdispls, recvtype, comm);
  if (rc == A2AV_SUCCESS) {
    if (stats_enabled()) record(A2AV_Last_algorithm(), MPI_Wtime() - start);
    return MPI_SUCCESS;
  }
  if (rc == A2AV_ERR_ALGORITHM) warn_once(A2AV_Last_error_message());
  if (rc == A2AV_ERR_ARG || rc == A2AV_ERR_DATATYPE || rc == A2AV_ERR_ALGORITHM)
    return vendor(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype,
                  comm);  // agreed by every rank: let MPI report it its way
  MPI_Comm_call_errhandler(comm, mpi_error_for(rc));
  return mpi_error_for(rc);
}

int MPI_Finalize(void) {
  if (stats_enabled()) print_stats();
  return PMPI_Finalize();
}

}  // extern "C"
