// How the preload's entry points decide between a2av and the MPI library's own function, and
// what they did: calls and time per (MPI function, route), printed by rank 0 of
// MPI_COMM_WORLD at MPI_Finalize when A2AV_PRELOAD_STATS is set.
#pragma once

#include <a2av/a2av.h>

namespace a2av::preload {

bool stats_enabled();
// `route`: the algorithm that ran (A2AV_Last_algorithm) or the PMPI function called.
void record(const char* function, const char* route, double seconds);
void print_stats();

// The route of the large-count forms a2av leaves to the MPI library, in the statistics.
constexpr const char* kLargeCounts = "large counts:PMPI";
// A call a2av took and failed with an error the ranks agreed on (counts that disagree, memory),
// reported to the communicator's error handler.
constexpr const char* kFailedInA2av = "a2av, failed:error handler";

// The MPI error class that stands for an a2av error code.
int mpi_error_for(int a2av_code);
// A bad A2AV_ALGORITHM should not pass unnoticed, nor flood the output.
void warn_once(const char* message);
bool intracommunicator(MPI_Comm comm);
// a2av's own "vendor" algorithm must call the MPI library, never come back to the preload.
void use_pmpi_as_vendor();

// Runs `body` (returning an MPI or A2AV_ code) and records its time under route_for(its code),
// unless that is null.
template <class Body, class RouteFor>
int recorded(const char* function, Body body, RouteFor route_for) {
  const bool stats = stats_enabled();
  const double start = stats ? PMPI_Wtime() : 0;
  const int rc = body();
  if (stats)
    if (const char* route = route_for(rc)) record(function, route, PMPI_Wtime() - start);
  return rc;
}

// Which calls timed() records: a2av's only where they succeed (one that fails goes on to the
// MPI library or the error handler), the MPI library's whatever they return (a program's
// erroneous call is still a call, and the statistics say where it went).
enum class Record { successes, all };

// Runs `body` (returning an MPI code), recording its time under `route_or_null`, or under
// A2AV_Last_algorithm() when null.
template <class Body>
int timed(const char* function, const char* route_or_null, Body body,
          Record which = Record::successes) {
  return recorded(function, body, [&](int rc) -> const char* {
    if (rc != MPI_SUCCESS && which == Record::successes) return nullptr;
    return route_or_null ? route_or_null : A2AV_Last_algorithm();
  });
}

// One entry point: `a2av` (returning an A2AV_ code) where a2av takes the call, else `pmpi`.
// Arguments a2av rejects (ARG, DATATYPE, ALGORITHM errors) go to `pmpi` as well, so the
// program sees its MPI's own error behaviour; other errors go to the communicator's handler.
// Intercommunicators, which a2av leaves to the MPI library, are counted apart from those
// fallbacks ("via intercommunicator:PMPI"), so that the statistics tell the two apart.
// `a2av_route` names what a2av did where A2AV_Last_algorithm does not (a call that only
// keeps its arguments).
template <class A2av, class Pmpi>
int route(const char* function, const char* pmpi_name, MPI_Comm comm, A2av a2av, Pmpi pmpi,
          const char* a2av_route = nullptr) {
  use_pmpi_as_vendor();
  if (!intracommunicator(comm)) return timed(function, "intercommunicator:PMPI", pmpi, Record::all);
  const auto refused = [](int rc) {
    return rc == A2AV_ERR_ARG || rc == A2AV_ERR_DATATYPE || rc == A2AV_ERR_ALGORITHM;
  };
  const int rc = recorded(function, a2av, [&](int rc) -> const char* {
    if (rc == A2AV_SUCCESS) return a2av_route ? a2av_route : A2AV_Last_algorithm();
    return refused(rc) ? nullptr : kFailedInA2av;  // refused: counted on its way to `pmpi`
  });
  if (rc == A2AV_SUCCESS) return MPI_SUCCESS;
  if (rc == A2AV_ERR_ALGORITHM) warn_once(A2AV_Last_error_message());
  if (refused(rc)) return timed(function, pmpi_name, pmpi, Record::all);
  MPI_Comm_call_errhandler(comm, mpi_error_for(rc));
  return mpi_error_for(rc);
}

// Whether a2av may take a nonblocking start on `comm` (communicators.cpp): not where a2av would
// set it up inside the start, waiting for the other ranks (a2av::setup_waits): under
// A2AV_PRELOAD_PREPARE only MPI_Comm_idup's communicators, which it cannot set up as made.
bool ready_for_start(MPI_Comm comm);

// A nonblocking start: as route, but the MPI library's own on a communicator not ready for one
// (ready_for_start), until a blocking a2av call on it has set it up.
template <class A2av, class Pmpi>
int route_start(const char* function, const char* pmpi_name, MPI_Comm comm, A2av a2av, Pmpi pmpi) {
  if (!ready_for_start(comm))
    return timed(function, "communicator not set up:PMPI", pmpi, Record::all);
  return route(function, pmpi_name, comm, a2av, pmpi);
}

// The size of `comm`'s (remote) group: the length of an alltoall's arrays.
int peers(MPI_Comm comm);

}  // namespace a2av::preload
