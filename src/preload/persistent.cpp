// Persistent all-to-all exchanges (MPI-4's MPI_Alltoallv_init, MPI_Alltoall_init,
// MPI_Neighbor_alltoallv_init and the first two's _c forms; Open MPI 4.1's MPIX_ ones). The
// init call only keeps the arguments (the arrays copied), waiting for no other rank: MPI 4.1,
// Section 7.13, would let it wait, the MPI libraries' own do not, and programs rely on that.
// Starting is local (Section 7.13), and so is a2av's: MPI_Start starts the exchange as
// MPI_Ialltoallv (MPI_Ineighbor_alltoallv) would on the kept arguments, through the same route
// (the MPI library's nonblocking form where a2av rejects the arguments or the communicator is
// not set up for a start), and returns. Its completion reaches the program's request from the
// MPI library's progress (Open MPI runs a2av's progress callback in every MPI call) or, under
// MPICH, whose generalized requests advance only in a test or wait on them, from the program's
// tests and waits, which waits.cpp and fortran_mpich.cpp take (core/progress_request.hpp). The
// _c forms start the MPI library's nonblocking form, as the preload's MPI_Ialltoallv_c does
// (whether their counts fit a2av's nonblocking exchange each rank knows only of its own).
// Under A2AV_PRELOAD_PLAN_STARTS=1 (the blocking algorithms' speed, node_aware's across nodes,
// at the risk below), the start runs the exchange to completion: the first
// MPI_Start makes a plan (the checks, the agreement, the choice of algorithm and the layout;
// collective), every MPI_Start runs it, and where a2av rejects the arguments (on every rank
// alike: the plan agrees) the MPI library's nonblocking form, waited for, runs instead from that
// start on. A program that starts a persistent exchange there and then waits on point-to-point
// traffic that a peer sends only after its own start can hang (docs/design.md, "Persistent").
//
// The request the program gets is the MPI library's own: a persistent receive from this rank on
// a private communicator, with a tag of its own among the live requests. MPI_Start starts it
// and the exchange; when the exchange completes, from inside whatever MPI call progresses it,
// the preload sends it its message: zero bytes, or one byte where the exchange failed, so that
// the program's MPI_Wait returns MPI_ERR_TRUNCATE after the exchange's own error has gone to the
// communicator's error handler. MPI_Wait, MPI_Test and all their kin complete it natively, and
// only MPI_Start, MPI_Startall and MPI_Request_free need to know the request is a2av's (and
// MPI_Comm_free: a communicator freed while such requests live is freed after the last, since
// their starts use its handle, as the MPI library's own requests keep theirs). A
// request started by a route that bypasses these (a binding calling PMPI_Start), or under MPICH
// waited for by one (PMPI_Wait), never completes rather than completing with wrong data.
#include <a2av/a2av.h>

#include "core/environment.hpp"
#include "core/progress_request.hpp"
#include "core/tags.hpp"
#include "preload/routes.hpp"
#include "preload/shapes.hpp"

#include <algorithm>
#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <vector>

#ifdef OPEN_MPI
#include <mpi-ext.h>  // MPIX_Alltoallv_init, ... (the pcollreq extension)
#endif

namespace a2av::preload {
namespace {

constexpr int kSelf = 0;  // the one rank of done_comm()
// What an init call did, in the statistics.
constexpr const char* kKept = "arguments kept (exchange at each MPI_Start)";

// Starts an exchange nonblocking into its request; an A2AV_ code for a2av's, an MPI code for
// the MPI library's.
using StartFn = std::function<int(MPI_Request*)>;

// An A2AV_ code as MPI reports it: through the communicator's error handler.
int reported(int code, MPI_Comm comm) {
  if (code == A2AV_SUCCESS) return MPI_SUCCESS;
  MPI_Comm_call_errhandler(comm, mpi_error_for(code));
  return mpi_error_for(code);
}

// The MPI library's nonblocking form, run to completion.
int waited(const StartFn& vendor) {
  MPI_Request request = MPI_REQUEST_NULL;
  const int rc = vendor(&request);
  return rc == MPI_SUCCESS ? PMPI_Wait(&request, MPI_STATUS_IGNORE) : rc;
}

// An alltoallv plan made at the first start, where the start runs the exchange to completion.
// `vendor` starts the MPI library's nonblocking form of the init call's arguments,
// `vendor_route` names its blocking form.
class DeferredPlan {
 public:
  DeferredPlan(const void* sendbuf, Side send, void* recvbuf, Side recv, MPI_Comm comm,
               const char* vendor_route, StartFn vendor)
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
  int run() const { return vendor_only_ ? waited(vendor_) : reported(A2AV_Start(plan_), comm_); }

  // The exchange started as A2AV_Ialltoallv_c starts it (an A2AV_ code).
  int start_nonblocking(MPI_Request* request) const {
    return A2AV_Ialltoallv_c(sendbuf_, send_.counts_or_null(), send_.displs_or_null(), send_.type,
                             recvbuf_, recv_.counts_or_null(), recv_.displs_or_null(), recv_.type,
                             comm_, request);
  }

 private:
  const void* sendbuf_;
  Side send_;
  void* recvbuf_;
  Side recv_;
  MPI_Comm comm_;
  const char* vendor_route_;
  StartFn vendor_;
  A2AV_Plan plan_ = nullptr;
  bool vendor_only_ = false;
};

// How a start that returns at once starts the exchange: as route_start() would the
// nonblocking entry point `pmpi_name` names; with no `a2av`, as the preload's MPI_Ialltoallv_c
// does, by the MPI library's always (whether a count fits a2av's nonblocking exchange each
// rank knows of its own only).
struct LocalStart {
  const char* pmpi_name;
  MPI_Comm comm;
  StartFn a2av;    // an A2AV_ code; empty for the large-count forms
  StartFn vendor;  // an MPI code
};

struct Persistent {
  const char* started;  // its name in the statistics: "MPI_Start (persistent ...)"
  MPI_Comm comm;
  std::function<int()> run;  // the exchange to completion, an MPI code (its error handler called)
  std::shared_ptr<DeferredPlan> plan;  // an alltoallv's, made before the first run
  LocalStart local;                    // where the start returns at once
  int tag = 0;                         // of its done message
};

// Errors of the done messages come back to the program's wait (see the file comment).
MPI_Comm done_comm() {
  static const MPI_Comm comm = [] {
    MPI_Comm c = MPI_COMM_NULL;
    PMPI_Comm_dup(MPI_COMM_SELF, &c);
    PMPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
    return c;
  }();
  return comm;
}

// The done messages' tags of the live requests, each its own: exchanges started one after the
// other may complete in the other order.
class DoneTags {
 public:
  // A free tag; nullopt when every tag is taken.
  std::optional<int> take() {
    if (!free_.empty()) {
      const int tag = free_.back();
      free_.pop_back();
      return tag;
    }
    if (next_ == tags::kPersistentDone.count) return std::nullopt;
    return tags::kPersistentDone.at(next_++);
  }
  void give_back(int tag) { free_.push_back(tag); }

 private:
  std::vector<int> free_;
  int next_ = 0;
};

// The program's persistent requests that are a2av's, and their done tags, for any thread: one
// lock, taken under MPI_THREAD_MULTIPLE only (a sixteenth of a 16 B start at P = 2), held for
// a look-up or a change alone, never across an MPI call (a failed exchange's request is
// forgotten from inside whatever MPI call of any thread completes it). An entry stays where it
// is (unordered_map's nodes do) until its request is freed, which the program does not do
// while it starts the request. Used only after MPI_Init (an init call comes first).
class Registry {
 public:
  // The request's entry; null if it is not a2av's. Without a lock while there are none.
  const Persistent* find(MPI_Request request) {
    if (count_.load(std::memory_order_acquire) == 0) return nullptr;
    const auto lock = lock_if_threads(mutex_);
    const auto found = table_.find(request);
    return found == table_.end() ? nullptr : &found->second;
  }
  // A done tag for a new request; nullopt when every tag is taken.
  std::optional<int> take_tag() {
    const auto lock = lock_if_threads(mutex_);
    return tags_.take();
  }
  void give_back(int tag) {
    const auto lock = lock_if_threads(mutex_);
    tags_.give_back(tag);
  }
  void add(MPI_Request request, Persistent p) {
    const auto lock = lock_if_threads(mutex_);
    table_.emplace(request, std::move(p));
    count_.store(table_.size(), std::memory_order_release);
  }
  // Takes the request's entry out (its tag given back where `give_back_tag`); where `tag` is
  // given, only if the entry still has it (a handle freed and made anew has another). The
  // entry (its plan) ends in the caller, outside the lock. `comm_to_free`: the entry's
  // communicator, where the program freed it (defer_free) and this was its last request.
  std::optional<Persistent> remove(MPI_Request request, std::optional<int> tag, bool give_back_tag,
                                   MPI_Comm* comm_to_free = nullptr) {
    const auto lock = lock_if_threads(mutex_);
    const auto found = table_.find(request);
    if (found == table_.end() || (tag && found->second.tag != *tag)) return std::nullopt;
    std::optional<Persistent> removed(std::move(found->second));
    table_.erase(found);
    count_.store(table_.size(), std::memory_order_release);
    if (give_back_tag) tags_.give_back(removed->tag);
    const auto freed = std::find(freed_.begin(), freed_.end(), removed->comm);
    if (comm_to_free && freed != freed_.end() && !used(removed->comm)) {
      freed_.erase(freed);
      *comm_to_free = removed->comm;
    }
    return removed;
  }
  // Whether `comm`, which the program frees, has requests here: MPI lets them outlive the
  // free (they refer to the communicator, as MPI's own persistent requests do), and their
  // starts use its handle, so the free waits for the last of them.
  bool defer_free(MPI_Comm comm) {
    if (count_.load(std::memory_order_acquire) == 0) return false;
    const auto lock = lock_if_threads(mutex_);
    if (!used(comm)) return false;
    freed_.push_back(comm);
    return true;
  }

 private:
  bool used(MPI_Comm comm) const {
    return std::any_of(table_.begin(), table_.end(),
                       [comm](const auto& entry) { return entry.second.comm == comm; });
  }

  std::mutex mutex_;
  std::unordered_map<MPI_Request, Persistent> table_;
  std::vector<MPI_Comm> freed_;  // by the program, with requests here (defer_free)
  DoneTags tags_;
  std::atomic<std::size_t> count_{0};
};

Registry& registry() {
  static Registry kept;
  return kept;
}

// Completes the program's request of tag `tag` (started), `error` having gone to `comm`'s error
// handler first.
void send_done(MPI_Comm comm, int tag, int error) {
  static const char kPayload = 0;
  if (error != MPI_SUCCESS) MPI_Comm_call_errhandler(comm, error);
  PMPI_Send(&kPayload, error == MPI_SUCCESS ? 0 : 1, MPI_BYTE, kSelf, tag, done_comm());
}

// `request` (of tag `tag`) completes with an error: Open MPI frees a request whose wait or test
// reports one, persistent ones too, and may hand its handle out again, so it is a2av's no more.
// (MPICH keeps it.)
void forget_failing([[maybe_unused]] MPI_Request request, [[maybe_unused]] int tag) {
#ifdef OPEN_MPI
  MPI_Comm comm_to_free = MPI_COMM_NULL;
  registry().remove(request, tag, true, &comm_to_free);
  if (comm_to_free != MPI_COMM_NULL) PMPI_Comm_free(&comm_to_free);
#endif
}

// The program's request for `p` (see the file comment); A2AV_ERR_ARG, which sends the call to
// the MPI library, when every done tag is taken (32768 live requests).
int make_request(Persistent p, MPI_Request* request) {
  const std::optional<int> tag = registry().take_tag();
  if (!tag) return A2AV_ERR_ARG;
  MPI_Request done = MPI_REQUEST_NULL;
  if (PMPI_Recv_init(nullptr, 0, MPI_BYTE, kSelf, *tag, done_comm(), &done) != MPI_SUCCESS) {
    registry().give_back(*tag);
    return A2AV_ERR_MPI;
  }
  p.tag = *tag;
  registry().add(done, std::move(p));
  *request = done;
  return A2AV_SUCCESS;
}

// Starts the exchange, completing `done` from the progress that completes the exchange;
// returns at once.
int start_local(MPI_Request done, const Persistent& p) {
  const LocalStart& local = p.local;
  MPI_Request exchange = MPI_REQUEST_NULL;
  const auto vendor = [&] { return local.vendor(&exchange); };
  int rc = local.a2av ? route_start(
                            p.started, local.pmpi_name, local.comm,
                            [&] { return local.a2av(&exchange); }, vendor)
                      : timed(p.started, kLargeCounts, vendor, Record::all);
  if (rc == MPI_SUCCESS) rc = PMPI_Start(&done);
  if (rc != MPI_SUCCESS) return rc;
  when_complete(exchange, [done, comm = p.comm, tag = p.tag](int error) {
    send_done(comm, tag, error);
    if (error != MPI_SUCCESS) forget_failing(done, tag);
  });
  return MPI_SUCCESS;
}

// Whether starts return at once where they can (A2AV_PRELOAD_PLAN_STARTS unset, and the MPI
// library's progress or its waits reach when_complete).
bool starts_locally() {
  static const bool local = !env_flag("A2AV_PRELOAD_PLAN_STARTS") && when_complete_available();
  return local;
}

// Runs the exchange, then completes `done`.
int start(MPI_Request done, const Persistent& p) {
  if (starts_locally()) return start_local(done, p);
  int rc = p.plan ? p.plan->make() : MPI_SUCCESS;
  if (rc == MPI_SUCCESS) rc = timed(p.started, p.plan ? p.plan->route() : nullptr, p.run);
  if (rc != MPI_SUCCESS) return rc;
  rc = PMPI_Start(&done);
  if (rc == MPI_SUCCESS) send_done(p.comm, p.tag, MPI_SUCCESS);
  return rc;
}

// An alltoallv: started locally from the plan's kept arguments, by a2av's nonblocking exchange
// where `counts_fit_a2av` (the int forms, whose counts every rank's a2av takes), else by the MPI
// library's; run by the plan made at the first start under A2AV_PRELOAD_PLAN_STARTS.
int init_alltoallv(const char* started, const void* sendbuf, Side send, void* recvbuf, Side recv,
                   MPI_Comm comm, const char* vendor_route, const char* vendor_start_name,
                   StartFn vendor, bool counts_fit_a2av, MPI_Request* request) {
  auto plan = std::make_shared<DeferredPlan>(sendbuf, std::move(send), recvbuf, std::move(recv),
                                             comm, vendor_route, vendor);
  StartFn a2av;
  if (counts_fit_a2av) a2av = [plan](MPI_Request* r) { return plan->start_nonblocking(r); };
  return make_request({started, comm, [plan] { return plan->run(); }, plan,
                       LocalStart{vendor_start_name, comm, std::move(a2av), std::move(vendor)}},
                      request);
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

  int run() const {
    return reported(
        A2AV_Neighbor_alltoallv(sendbuf, sendcounts.data(), sdispls.data(), sendtype, recvbuf,
                                recvcounts.data(), rdispls.data(), recvtype, comm),
        comm);
  }
  int start_nonblocking(MPI_Request* request) const {
    return A2AV_Ineighbor_alltoallv(sendbuf, sendcounts.data(), sdispls.data(), sendtype, recvbuf,
                                    recvcounts.data(), rdispls.data(), recvtype, comm, request);
  }
  int start_vendor(MPI_Request* request) const {
    return PMPI_Ineighbor_alltoallv(sendbuf, sendcounts.data(), sdispls.data(), sendtype, recvbuf,
                                    recvcounts.data(), rdispls.data(), recvtype, comm, request);
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
  auto args = std::make_shared<const NeighborArgs>(
      NeighborArgs{sendbuf, copied(sendcounts, out), copied(sdispls, out), sendtype, recvbuf,
                   copied(recvcounts, in), copied(rdispls, in), recvtype, comm});
  LocalStart local{"PMPI_Ineighbor_alltoallv", comm,
                   [args](MPI_Request* r) { return args->start_nonblocking(r); },
                   [args](MPI_Request* r) { return args->start_vendor(r); }};
  return make_request({"MPI_Start (persistent MPI_Neighbor_alltoallv)", comm,
                       [args] { return args->run(); }, nullptr, std::move(local)},
                      request);
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
            "PMPI_Ialltoallv",
            [=](MPI_Request* r) {
              return PMPI_Ialltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                                     rdispls, recvtype, comm, r);
            },
            true, request);
      },
      [&] {
        return A2AV_INIT(PMPI, Alltoallv)(sendbuf, sendcounts, sdispls, sendtype, recvbuf,
                                          recvcounts, rdispls, recvtype, comm, info, request);
      },
      kKept);
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
            recvbuf, uniform_side(recvcount, recvtype, n), comm, "PMPI_Alltoall", "PMPI_Ialltoall",
            [=](MPI_Request* r) {
              return PMPI_Ialltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                                    comm, r);
            },
            true, request);
      },
      [&] {
        return A2AV_INIT(PMPI, Alltoall)(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                                         comm, info, request);
      },
      kKept);
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
      kKept);
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
            "PMPI_Ialltoallv_c",
            [=](MPI_Request* r) {
              return PMPI_Ialltoallv_c(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                                       rdispls, recvtype, comm, r);
            },
            false, request);
      },
      [&] {
        return PMPI_Alltoallv_init_c(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                                     rdispls, recvtype, comm, info, request);
      },
      kKept);
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
            "PMPI_Ialltoall_c",
            [=](MPI_Request* r) {
              return PMPI_Ialltoall_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                                      comm, r);
            },
            false, request);
      },
      [&] {
        return PMPI_Alltoall_init_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                                    comm, info, request);
      },
      kKept);
}

// To the MPI library, as the other large-count neighbourhood forms (c_bindings.cpp).
int MPI_Neighbor_alltoallv_init_c(const void* sendbuf, const MPI_Count sendcounts[],
                                  const MPI_Aint sdispls[], MPI_Datatype sendtype, void* recvbuf,
                                  const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                                  MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                  MPI_Request* request) {
  return timed(
      "MPI_Neighbor_alltoallv_init_c", kLargeCounts,
      [&] {
        return PMPI_Neighbor_alltoallv_init_c(sendbuf, sendcounts, sdispls, sendtype, recvbuf,
                                              recvcounts, rdispls, recvtype, comm, info, request);
      },
      Record::all);
}
#endif  // MPI_VERSION >= 4

int MPI_Start(MPI_Request* request) {
  const Persistent* p = request ? registry().find(*request) : nullptr;
  return p ? start(*request, *p) : PMPI_Start(request);
}

// The MPI library's requests first: a start that runs its exchange to completion must not
// keep them waiting.
int MPI_Startall(int count, MPI_Request requests[]) {
  std::vector<MPI_Request> theirs;
  std::vector<const Persistent*> ours(static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i)
    if (!(ours[i] = registry().find(requests[i]))) theirs.push_back(requests[i]);
  if (!theirs.empty())
    if (const int rc = PMPI_Startall(static_cast<int>(theirs.size()), theirs.data()); rc) return rc;
  for (int i = 0; i < count; ++i)
    if (ours[i])
      if (const int rc = start(requests[i], *ours[i]); rc != MPI_SUCCESS) return rc;
  return MPI_SUCCESS;
}

// A request freed while its exchange runs keeps its tag: its done message is still to come,
// and so does its communicator, if the program freed it: that one is then never freed.
int MPI_Request_free(MPI_Request* request) {
  MPI_Comm comm_to_free = MPI_COMM_NULL;
  if (request && registry().find(*request)) {
    int inactive = 0;
    PMPI_Request_get_status(*request, &inactive, MPI_STATUS_IGNORE);
    // Frees the plan or the arguments.
    registry().remove(*request, std::nullopt, inactive, inactive ? &comm_to_free : nullptr);
  }
  const int rc = PMPI_Request_free(request);
  if (comm_to_free != MPI_COMM_NULL) PMPI_Comm_free(&comm_to_free);
  return rc;
}

// Deferred while the program's persistent requests on it live (Registry::defer_free).
int MPI_Comm_free(MPI_Comm* comm) {
  if (!comm || !registry().defer_free(*comm)) return PMPI_Comm_free(comm);
  *comm = MPI_COMM_NULL;
  return MPI_SUCCESS;
}

}  // extern "C"
