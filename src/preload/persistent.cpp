// Persistent all-to-all exchanges (MPI-4's MPI_Alltoallv_init, MPI_Alltoall_init,
// MPI_Neighbor_alltoallv_init and the first two's _c forms; Open MPI 4.1's MPIX_ ones) as
// a2av plans:
// the checks, the agreement, the choice of algorithm and the layout happen once, in the init
// call; MPI_Start runs the plan. The neighbourhood exchange has no plan: its init call keeps
// the arguments (the arrays copied) and MPI_Start runs A2AV_Neighbor_alltoallv on them.
//
// The request the program gets is the MPI library's own: a persistent receive of zero bytes
// from this rank on a private communicator. MPI_Start (and MPI_Startall) run the plan, start
// that receive and send it its zero-byte message, so MPI_Wait, MPI_Test and all their kin
// complete it natively, and only MPI_Start, MPI_Startall and MPI_Request_free need to know
// the request is a2av's. The exchange is therefore complete when MPI_Start returns (which
// MPI allows; it overlaps nothing). A request started by a route that bypasses these (a
// binding calling PMPI_Start) never completes rather than completing with wrong data.
#include <a2av/a2av.h>

#include "core/tags.hpp"
#include "preload/routes.hpp"
#include "preload/shapes.hpp"

#include <functional>
#include <memory>
#include <unordered_map>
#include <vector>

#ifdef OPEN_MPI
#include <mpi-ext.h>  // MPIX_Alltoallv_init, ... (the pcollreq extension)
#endif

namespace a2av::preload {
namespace {

// The done message's tag is kPersistentDone (core/tags.hpp): one started request is matched
// at a time (see start()).
constexpr int kSelf = 0;  // the one rank of done_comm()

struct Persistent {
  const char* started;       // its name in the statistics: "MPI_Start (persistent ...)"
  std::function<int()> run;  // the exchange, returning an A2AV_ code
  MPI_Comm comm;             // the program's, for its error handler
};

std::unordered_map<MPI_Request, Persistent>& persistent() {
  static std::unordered_map<MPI_Request, Persistent> table;
  return table;
}

MPI_Comm done_comm() {
  static const MPI_Comm comm = [] {
    MPI_Comm c = MPI_COMM_NULL;
    PMPI_Comm_dup(MPI_COMM_SELF, &c);
    return c;
  }();
  return comm;
}

// The program's request for `p` (see the file comment).
int make_request(Persistent p, MPI_Request* request) {
  MPI_Request done = MPI_REQUEST_NULL;
  if (PMPI_Recv_init(nullptr, 0, MPI_BYTE, kSelf, tags::kPersistentDone.tag(), done_comm(),
                     &done) != MPI_SUCCESS)
    return A2AV_ERR_MPI;
  persistent().emplace(done, std::move(p));
  *request = done;
  return A2AV_SUCCESS;
}

// An alltoallv plan (A2AV_Alltoallv_init keeps its own copies of the arrays).
int init_alltoallv(const char* started, const void* sendbuf, const Side& send, void* recvbuf,
                   const Side& recv, MPI_Comm comm, MPI_Request* request) {
  A2AV_Plan plan = nullptr;
  const int code =
      A2AV_Alltoallv_init(sendbuf, send.counts_or_null(), send.displs_or_null(), send.type, recvbuf,
                          recv.counts_or_null(), recv.displs_or_null(), recv.type, comm,
                          nullptr /* A2AV_ALGORITHM, else auto */, &plan);
  if (code != A2AV_SUCCESS) return code;
  std::shared_ptr<A2AV_Plan_s> owned(plan, [](A2AV_Plan p) { A2AV_Plan_free(&p); });
  return make_request({started, [owned] { return A2AV_Start(owned.get()); }, comm}, request);
}

// A neighbourhood exchange's arguments, kept for every start (the arrays copied).
struct NeighborArgs {
  const void* sendbuf;
  std::vector<int> sendcounts, sdispls;
  MPI_Datatype sendtype;
  void* recvbuf;
  std::vector<int> recvcounts, rdispls;
  MPI_Datatype recvtype;
  MPI_Comm comm;

  int operator()() const {
    return A2AV_Neighbor_alltoallv(sendbuf, sendcounts.data(), sdispls.data(), sendtype, recvbuf,
                                   recvcounts.data(), rdispls.data(), recvtype, comm);
  }
};

std::vector<int> copied(const int* values, int n) {
  return values ? std::vector<int>(values, values + n) : std::vector<int>();
}

// A communicator without a process topology is left to the MPI library (A2AV_ERR_ARG: see
// route()).
int init_neighbor(const void* sendbuf, const int* sendcounts, const int* sdispls,
                  MPI_Datatype sendtype, void* recvbuf, const int* recvcounts, const int* rdispls,
                  MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  int topology = MPI_UNDEFINED, in = 0, out = 0;
  PMPI_Topo_test(comm, &topology);
  if (topology == MPI_UNDEFINED) return A2AV_ERR_ARG;
  neighbour_degrees(comm, in, out);
  NeighborArgs args{sendbuf, copied(sendcounts, out), copied(sdispls, out), sendtype,
                    recvbuf, copied(recvcounts, in),  copied(rdispls, in),  recvtype,
                    comm};
  return make_request({"MPI_Start (persistent MPI_Neighbor_alltoallv)", std::move(args), comm},
                      request);
}

// Runs the exchange, then completes `done`. Its zero-byte receive is the only one posted when
// the message is sent (it was just started, and every earlier one was matched the same
// way), so one tag serves all requests.
int start(MPI_Request done, const Persistent& p) {
  const int code = timed(p.started, nullptr, p.run);
  if (code != A2AV_SUCCESS) {
    MPI_Comm_call_errhandler(p.comm, mpi_error_for(code));
    return mpi_error_for(code);
  }
  int rc = PMPI_Start(&done);
  if (rc == MPI_SUCCESS)
    rc = PMPI_Send(nullptr, 0, MPI_BYTE, kSelf, tags::kPersistentDone.tag(), done_comm());
  return rc;
}

}  // namespace
}  // namespace a2av::preload

using namespace a2av::preload;

extern "C" {

// Open MPI 4.1 names them MPIX_Alltoallv_init (and PMPIX_); MPI-4 libraries MPI_Alltoallv_init.
#ifdef OPEN_MPI
#define A2AV_INIT(prefix, name) prefix##X_##name##_init
#elif MPI_VERSION >= 4
#define A2AV_INIT(prefix, name) prefix##_##name##_init
#endif
#ifdef A2AV_INIT
#define A2AV_NAME(function) A2AV_NAME_TEXT(function)
#define A2AV_NAME_TEXT(function) #function
int A2AV_INIT(MPI, Alltoallv)(const void* sendbuf, const int sendcounts[], const int sdispls[],
                              MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                              const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                              MPI_Info info, MPI_Request* request) {
  return route(
      A2AV_NAME(A2AV_INIT(MPI, Alltoallv)), A2AV_NAME(A2AV_INIT(PMPI, Alltoallv)), comm,
      [&] {
        const int n = peers(comm);
        return init_alltoallv("MPI_Start (persistent MPI_Alltoallv)", sendbuf,
                              widened_side(sendcounts, sdispls, sendtype, n), recvbuf,
                              widened_side(recvcounts, rdispls, recvtype, n), comm, request);
      },
      [&] {
        return A2AV_INIT(PMPI, Alltoallv)(sendbuf, sendcounts, sdispls, sendtype, recvbuf,
                                          recvcounts, rdispls, recvtype, comm, info, request);
      });
}

int A2AV_INIT(MPI, Alltoall)(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                             void* recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                             MPI_Info info, MPI_Request* request) {
  return route(
      A2AV_NAME(A2AV_INIT(MPI, Alltoall)), A2AV_NAME(A2AV_INIT(PMPI, Alltoall)), comm,
      [&] {
        const int n = peers(comm);
        return init_alltoallv("MPI_Start (persistent MPI_Alltoall)", sendbuf,
                              uniform_side(sendcount, sendtype, n), recvbuf,
                              uniform_side(recvcount, recvtype, n), comm, request);
      },
      [&] {
        return A2AV_INIT(PMPI, Alltoall)(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                                         comm, info, request);
      });
}

int A2AV_INIT(MPI, Neighbor_alltoallv)(const void* sendbuf, const int sendcounts[],
                                       const int sdispls[], MPI_Datatype sendtype, void* recvbuf,
                                       const int recvcounts[], const int rdispls[],
                                       MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                       MPI_Request* request) {
  return route(
      A2AV_NAME(A2AV_INIT(MPI, Neighbor_alltoallv)), A2AV_NAME(A2AV_INIT(PMPI, Neighbor_alltoallv)),
      comm,
      [&] {
        return init_neighbor(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                             recvtype, comm, request);
      },
      [&] {
        return A2AV_INIT(PMPI, Neighbor_alltoallv)(sendbuf, sendcounts, sdispls, sendtype, recvbuf,
                                                   recvcounts, rdispls, recvtype, comm, info,
                                                   request);
      },
      "neighbor:direct (at each MPI_Start)");
}
#endif

#if MPI_VERSION >= 4
int MPI_Alltoallv_init_c(const void* sendbuf, const MPI_Count sendcounts[],
                         const MPI_Aint sdispls[], MPI_Datatype sendtype, void* recvbuf,
                         const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                         MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                         MPI_Request* request) {
  return route(
      "MPI_Alltoallv_init_c", "PMPI_Alltoallv_init_c", comm,
      [&] {
        const int n = peers(comm);
        return init_alltoallv("MPI_Start (persistent MPI_Alltoallv_c)", sendbuf,
                              widened_side(sendcounts, sdispls, sendtype, n), recvbuf,
                              widened_side(recvcounts, rdispls, recvtype, n), comm, request);
      },
      [&] {
        return PMPI_Alltoallv_init_c(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                                     rdispls, recvtype, comm, info, request);
      });
}

int MPI_Alltoall_init_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                        void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                        MPI_Info info, MPI_Request* request) {
  return route(
      "MPI_Alltoall_init_c", "PMPI_Alltoall_init_c", comm,
      [&] {
        const int n = peers(comm);
        return init_alltoallv("MPI_Start (persistent MPI_Alltoall_c)", sendbuf,
                              uniform_side(sendcount, sendtype, n), recvbuf,
                              uniform_side(recvcount, recvtype, n), comm, request);
      },
      [&] {
        return PMPI_Alltoall_init_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                                    comm, info, request);
      });
}

// To the MPI library, as the other large-count neighbourhood forms (c_bindings.cpp).
int MPI_Neighbor_alltoallv_init_c(const void* sendbuf, const MPI_Count sendcounts[],
                                  const MPI_Aint sdispls[], MPI_Datatype sendtype, void* recvbuf,
                                  const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                                  MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                  MPI_Request* request) {
  return timed("MPI_Neighbor_alltoallv_init_c", "large counts:PMPI", [&] {
    return PMPI_Neighbor_alltoallv_init_c(sendbuf, sendcounts, sdispls, sendtype, recvbuf,
                                          recvcounts, rdispls, recvtype, comm, info, request);
  });
}
#endif  // MPI_VERSION >= 4

int MPI_Start(MPI_Request* request) {
  const auto found = request ? persistent().find(*request) : persistent().end();
  if (found == persistent().end()) return PMPI_Start(request);
  return start(found->first, found->second);
}

// The MPI library's requests first: a2av's run to completion inside start(), and a program
// may rely on the others being under way meanwhile.
int MPI_Startall(int count, MPI_Request requests[]) {
  std::vector<MPI_Request> theirs;
  for (int i = 0; i < count; ++i)
    if (!persistent().contains(requests[i])) theirs.push_back(requests[i]);
  if (!theirs.empty())
    if (const int rc = PMPI_Startall(static_cast<int>(theirs.size()), theirs.data()); rc) return rc;
  for (int i = 0; i < count; ++i) {
    const auto found = persistent().find(requests[i]);
    if (found == persistent().end()) continue;
    if (const int rc = start(found->first, found->second); rc != MPI_SUCCESS) return rc;
  }
  return MPI_SUCCESS;
}

int MPI_Request_free(MPI_Request* request) {
  if (request) {
    const auto found = persistent().find(*request);
    if (found != persistent().end()) {
      persistent().erase(found);  // frees the plan or the kept arguments
    }
  }
  return PMPI_Request_free(request);
}

}  // extern "C"
