// Persistent all-to-all-v (MPI-4's MPI_Alltoallv_init; Open MPI 4.1's MPIX_Alltoallv_init) as
// a2av plans: the checks, the agreement, the choice of algorithm and the layout happen once,
// in the init call; MPI_Start runs the plan.
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

#include <unordered_map>
#include <vector>

#ifdef OPEN_MPI
#include <mpi-ext.h>  // MPIX_Alltoallv_init (the pcollreq extension)
#endif

namespace a2av::preload {
namespace {

// The done message's tag is kPersistentDone (core/tags.hpp): one started request is matched
// at a time (see start()).
constexpr int kSelf = 0;  // the one rank of done_comm()

struct Persistent {
  A2AV_Plan plan = nullptr;
  MPI_Comm comm = MPI_COMM_NULL;  // the program's, for its error handler
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

// Widens MPI_Alltoallv's int arrays for A2AV_Alltoallv_init (which keeps its own copies).
template <class To>
std::vector<To> widened(const int* values, int n) {
  return values ? std::vector<To>(values, values + n) : std::vector<To>();
}

int init(const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
         void* recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
         MPI_Comm comm, MPI_Request* request) {
  int size = 0;
  PMPI_Comm_size(comm, &size);
  const auto sc = widened<MPI_Count>(sendcounts, size), rc = widened<MPI_Count>(recvcounts, size);
  const auto sd = widened<MPI_Aint>(sdispls, size), rd = widened<MPI_Aint>(rdispls, size);
  auto data = [](const auto& v) { return v.empty() ? nullptr : v.data(); };
  Persistent p{.comm = comm};
  const int code =
      A2AV_Alltoallv_init(sendbuf, data(sc), data(sd), sendtype, recvbuf, data(rc), data(rd),
                          recvtype, comm, nullptr /* A2AV_ALGORITHM, else auto */, &p.plan);
  if (code != A2AV_SUCCESS) return code;
  MPI_Request done = MPI_REQUEST_NULL;
  if (PMPI_Recv_init(nullptr, 0, MPI_BYTE, kSelf, tags::kPersistentDone.tag(), done_comm(),
                     &done) != MPI_SUCCESS) {
    A2AV_Plan_free(&p.plan);
    return A2AV_ERR_MPI;
  }
  persistent().emplace(done, p);
  *request = done;
  return A2AV_SUCCESS;
}

// Runs the plan, then completes `done`. Its zero-byte receive is the only one posted when
// the message is sent (it was just started, and every earlier one was matched the same
// way), so one tag serves all requests.
int start(MPI_Request done, const Persistent& p) {
  const int code =
      timed("MPI_Start (persistent MPI_Alltoallv)", nullptr, [&] { return A2AV_Start(p.plan); });
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

// Open MPI 4.1 names it MPIX_Alltoallv_init (and PMPIX_); MPI-4 libraries MPI_Alltoallv_init.
#ifdef OPEN_MPI
#define A2AV_ALLTOALLV_INIT(prefix) prefix##X_Alltoallv_init
#elif MPI_VERSION >= 4
#define A2AV_ALLTOALLV_INIT(prefix) prefix##_Alltoallv_init
#endif
#ifdef A2AV_ALLTOALLV_INIT
#define A2AV_NAME(function) A2AV_NAME_TEXT(function)
#define A2AV_NAME_TEXT(function) #function
int A2AV_ALLTOALLV_INIT(MPI)(const void* sendbuf, const int sendcounts[], const int sdispls[],
                             MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                             const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                             MPI_Info info, MPI_Request* request) {
  return route(
      A2AV_NAME(A2AV_ALLTOALLV_INIT(MPI)), A2AV_NAME(A2AV_ALLTOALLV_INIT(PMPI)), comm,
      [&] {
        return init(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype,
                    comm, request);
      },
      [&] {
        return A2AV_ALLTOALLV_INIT(PMPI)(sendbuf, sendcounts, sdispls, sendtype, recvbuf,
                                         recvcounts, rdispls, recvtype, comm, info, request);
      });
}
#endif

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
      A2AV_Plan_free(&found->second.plan);
      persistent().erase(found);
    }
  }
  return PMPI_Request_free(request);
}

}  // extern "C"
