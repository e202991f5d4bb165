// Persistent all-to-all exchanges (MPI-4's MPI_Alltoallv_init, MPI_Alltoall_init,
// MPI_Neighbor_alltoallv_init and the first two's _c forms; Open MPI 4.1's MPIX_ ones) as
// a2av plans. The init call only keeps the arguments (the arrays copied), waiting for no other
// rank (MPI 4.1, Section 7.13, would let it wait); the first MPI_Start makes the plan (the checks,
// the agreement, the choice of algorithm and the layout: collective, as the start that runs it
// already is), and every MPI_Start runs it. Where a2av rejects the arguments (on every rank
// alike: the plan agrees), the MPI library's blocking form runs instead, from that start on.
// The neighbourhood exchange has no plan: MPI_Start runs A2AV_Neighbor_alltoallv on the kept
// arguments.
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
// What an alltoallv init call does, in the statistics.
constexpr const char* kPlanLater = "plan (made at the first MPI_Start)";

// An A2AV_ code as MPI reports it: through the communicator's error handler.
int reported(int code, MPI_Comm comm) {
  if (code == A2AV_SUCCESS) return MPI_SUCCESS;
  MPI_Comm_call_errhandler(comm, mpi_error_for(code));
  return mpi_error_for(code);
}

// An alltoallv plan made at the first start. `vendor` runs the MPI library's blocking form of
// the init call's arguments, `vendor_route` names it.
class DeferredPlan {
 public:
  DeferredPlan(const void* sendbuf, Side send, void* recvbuf, Side recv, MPI_Comm comm,
               const char* vendor_route, std::function<int()> vendor)
      : sendbuf_(sendbuf),
        send_(std::move(send)),
        recvbuf_(recvbuf),
        recv_(std::move(recv)),
        comm_(comm),
        vendor_route_(vendor_route),
        vendor_(std::move(vendor)) {}
  DeferredPlan(const DeferredPlan&) = delete;
  DeferredPlan& operator=(const DeferredPlan&) = delete;
  ~DeferredPlan() { A2AV_Plan_free(&plan_); }

  // Makes the plan if there is none yet (collective); an MPI code.
  int make() {
    if (plan_ || vendor_only_) return MPI_SUCCESS;
    const int code =
        A2AV_Alltoallv_init(sendbuf_, send_.counts_or_null(), send_.displs_or_null(), send_.type,
                            recvbuf_, recv_.counts_or_null(), recv_.displs_or_null(), recv_.type,
                            comm_, nullptr /* A2AV_ALGORITHM, else auto */, &plan_);
    if (code == A2AV_ERR_ALGORITHM) warn_once(A2AV_Last_error_message());
    vendor_only_ = code == A2AV_ERR_ARG || code == A2AV_ERR_DATATYPE || code == A2AV_ERR_ALGORITHM;
    return vendor_only_ ? MPI_SUCCESS : reported(code, comm_);
  }
  // Once made: what runs, for the statistics (null: the plan, which A2AV_Last_algorithm names).
  const char* route() const { return vendor_only_ ? vendor_route_ : nullptr; }
  int run() const { return vendor_only_ ? vendor_() : reported(A2AV_Start(plan_), comm_); }

 private:
  const void* sendbuf_;
  Side send_;
  void* recvbuf_;
  Side recv_;
  MPI_Comm comm_;
  const char* vendor_route_;
  std::function<int()> vendor_;
  A2AV_Plan plan_ = nullptr;
  bool vendor_only_ = false;
};

struct Persistent {
  const char* started;       // its name in the statistics: "MPI_Start (persistent ...)"
  std::function<int()> run;  // the exchange, returning an MPI code (its error handler called)
  std::shared_ptr<DeferredPlan> plan;  // an alltoallv's, made before the first run
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

// An alltoallv plan, made at the first start (the Sides own their arrays).
int init_alltoallv(const char* started, const void* sendbuf, Side send, void* recvbuf, Side recv,
                   MPI_Comm comm, const char* vendor_route, std::function<int()> vendor,
                   MPI_Request* request) {
  auto plan = std::make_shared<DeferredPlan>(sendbuf, std::move(send), recvbuf, std::move(recv),
                                             comm, vendor_route, std::move(vendor));
  return make_request({started, [plan] { return plan->run(); }, plan}, request);
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
    return reported(
        A2AV_Neighbor_alltoallv(sendbuf, sendcounts.data(), sdispls.data(), sendtype, recvbuf,
                                recvcounts.data(), rdispls.data(), recvtype, comm),
        comm);
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
  return make_request({"MPI_Start (persistent MPI_Neighbor_alltoallv)", std::move(args), nullptr},
                      request);
}

// Runs the exchange, then completes `done`. Its zero-byte receive is the only one posted when
// the message is sent (it was just started, and every earlier one was matched the same
// way), so one tag serves all requests.
int start(MPI_Request done, const Persistent& p) {
  int rc = p.plan ? p.plan->make() : MPI_SUCCESS;
  if (rc == MPI_SUCCESS) rc = timed(p.started, p.plan ? p.plan->route() : nullptr, p.run);
  if (rc != MPI_SUCCESS) return rc;
  rc = PMPI_Start(&done);
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
        return init_alltoallv(
            "MPI_Start (persistent MPI_Alltoallv)", sendbuf,
            widened_side(sendcounts, sdispls, sendtype, n), recvbuf,
            widened_side(recvcounts, rdispls, recvtype, n), comm, "PMPI_Alltoallv",
            [=] {
              return PMPI_Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                                    rdispls, recvtype, comm);
            },
            request);
      },
      [&] {
        return A2AV_INIT(PMPI, Alltoallv)(sendbuf, sendcounts, sdispls, sendtype, recvbuf,
                                          recvcounts, rdispls, recvtype, comm, info, request);
      },
      kPlanLater);
}

int A2AV_INIT(MPI, Alltoall)(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                             void* recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                             MPI_Info info, MPI_Request* request) {
  return route(
      A2AV_NAME(A2AV_INIT(MPI, Alltoall)), A2AV_NAME(A2AV_INIT(PMPI, Alltoall)), comm,
      [&] {
        const int n = peers(comm);
        return init_alltoallv(
            "MPI_Start (persistent MPI_Alltoall)", sendbuf, uniform_side(sendcount, sendtype, n),
            recvbuf, uniform_side(recvcount, recvtype, n), comm, "PMPI_Alltoall",
            [=] {
              return PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                                   comm);
            },
            request);
      },
      [&] {
        return A2AV_INIT(PMPI, Alltoall)(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                                         comm, info, request);
      },
      kPlanLater);
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
        return init_alltoallv(
            "MPI_Start (persistent MPI_Alltoallv_c)", sendbuf,
            widened_side(sendcounts, sdispls, sendtype, n), recvbuf,
            widened_side(recvcounts, rdispls, recvtype, n), comm, "PMPI_Alltoallv_c",
            [=] {
              return PMPI_Alltoallv_c(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                                      rdispls, recvtype, comm);
            },
            request);
      },
      [&] {
        return PMPI_Alltoallv_init_c(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                                     rdispls, recvtype, comm, info, request);
      },
      kPlanLater);
}

int MPI_Alltoall_init_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                        void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                        MPI_Info info, MPI_Request* request) {
  return route(
      "MPI_Alltoall_init_c", "PMPI_Alltoall_init_c", comm,
      [&] {
        const int n = peers(comm);
        return init_alltoallv(
            "MPI_Start (persistent MPI_Alltoall_c)", sendbuf, uniform_side(sendcount, sendtype, n),
            recvbuf, uniform_side(recvcount, recvtype, n), comm, "PMPI_Alltoall_c",
            [=] {
              return PMPI_Alltoall_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                                     comm);
            },
            request);
      },
      [&] {
        return PMPI_Alltoall_init_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                                    comm, info, request);
      },
      kPlanLater);
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
