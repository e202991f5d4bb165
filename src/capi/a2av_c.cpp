// The C API: converts arguments to the 64-bit call and errors to return codes.
#include <a2av/a2av.h>

#include <a2av/inplace.hpp>
#include <a2av/plan.hpp>
#include <a2av/redistribute.hpp>

#include "core/check.hpp"
#include "core/comm_context.hpp"
#include "core/p2p.hpp"
#include "core/per_thread.hpp"
#include "driver/alltoallv.hpp"
#include "driver/ialltoallv.hpp"
#include "driver/neighbor_alltoallv.hpp"
#include "sparse/sparse.hpp"

#include <algorithm>
#include <climits>
#include <string>
#include <vector>

namespace {

// What the A2AV_Last_* functions report about this thread's most recent call.
struct LastCall {
  std::string message;
  a2av::CallResult result;
  std::string algorithm;  // result described, on request
};

LastCall& last() {
  return a2av::per_thread<LastCall>();
}

template <class Body>
int guarded(Body body) {
  last().message.clear();
  try {
    body();
    return A2AV_SUCCESS;
  } catch (const a2av::Error& e) {
    last().message = e.what();
    return e.code();
  } catch (const std::bad_alloc&) {
    last().message = "out of memory for temporary buffers";
    return A2AV_ERR_CAPACITY;
  } catch (const std::exception& e) {
    last().message = e.what();
    return A2AV_ERR_MPI;
  }
}

int run(const a2av::Call& call, const char* algorithm) {
  last().result = {};
  a2av::InFlight::take_last_call();  // an earlier call's
  const int rc = guarded(
      [&] { last().result = a2av::run_alltoallv(call, algorithm ? algorithm : "", false); });
  // A failed call keeps the bound too (its error agreement's messages): it reports them.
  if (rc != A2AV_SUCCESS) last().result.max_in_flight = a2av::InFlight::take_last_call();
  return rc;
}

// The int arrays of A2AV_Alltoallv as MPI_Count / MPI_Aint, in storage kept per thread so
// that a call allocates nothing.
struct Widened {
  std::vector<MPI_Count> sendcounts, recvcounts;
  std::vector<MPI_Aint> sdispls, rdispls;
};

template <class To>
const To* widen(const int* values, int n, std::vector<To>& out) {
  if (!values) return nullptr;
  out.assign(values, values + n);
  return out.data();
}

// MPI_Alltoall's blocks as MPI_Alltoallv's arrays: `count` elements for every rank, back to
// back (a negative count stays negative, so the usual check reports it).
void uniform(int count, int n, std::vector<MPI_Count>& counts, std::vector<MPI_Aint>& displs) {
  counts.assign(n, count);
  displs.resize(n);
  for (int i = 0; i < n; ++i) displs[i] = static_cast<MPI_Aint>(i) * count;
}

// The nonblocking entry points' common start: the request pointer checked and cleared, the
// communicator's size (without waiting for the other ranks: core/comm_context.hpp).
void clear_request(MPI_Request* request) {
  if (!request) a2av::fail(A2AV_ERR_ARG, "the request pointer is null");
  *request = MPI_REQUEST_NULL;
}

int started_size(MPI_Request* request, MPI_Comm comm) {
  clear_request(request);
  return a2av::group_size(comm);
}

// The caller's request and the thread's call info for a started nonblocking exchange; `kind`
// prefixes the schedule's name ("nonblocking:direct").
void hand_out(const a2av::NonblockingStart& started, const char* kind, MPI_Request* request) {
  *request = started.request;
  last().result.peak_temp_bytes = started.peak_temp_bytes;
  last().algorithm.assign(kind).append(started.schedule);  // in the string's storage
}

void start(const a2av::Call& call, MPI_Request* request, const a2av::IntArrays* ints = nullptr) {
  hand_out(a2av::start_ialltoallv(call, ints), "nonblocking:", request);
}

bool beyond_int(const MPI_Count* counts, int n) {
  return counts && std::any_of(counts, counts + n, [](MPI_Count c) { return c > INT_MAX; });
}

}  // namespace

extern "C" {

int A2AV_Alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[],
                   MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                   const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm) {
  int size = 0;
  if (int rc = guarded([&] { size = a2av::comm_context(comm).size; })) return rc;
  Widened& w = a2av::per_thread<Widened>();
  const a2av::Call call{
      sendbuf, widen(sendcounts, size, w.sendcounts), widen(sdispls, size, w.sdispls), sendtype,
      recvbuf, widen(recvcounts, size, w.recvcounts), widen(rdispls, size, w.rdispls), recvtype,
      comm};
  return run(call, nullptr);
}

int A2AV_Alltoallv_c(const void* sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                     MPI_Datatype sendtype, void* recvbuf, const MPI_Count recvcounts[],
                     const MPI_Aint rdispls[], MPI_Datatype recvtype, MPI_Comm comm) {
  return run({sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm},
             nullptr);
}

int A2AV_Alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  int size = 0;
  if (int rc = guarded([&] { size = a2av::comm_context(comm).size; })) return rc;
  Widened& w = a2av::per_thread<Widened>();
  uniform(sendcount, size, w.sendcounts, w.sdispls);
  uniform(recvcount, size, w.recvcounts, w.rdispls);
  const a2av::Call call{sendbuf, w.sendcounts.data(), w.sdispls.data(), sendtype,
                        recvbuf, w.recvcounts.data(), w.rdispls.data(), recvtype,
                        comm};
  return run(call, nullptr);
}

int A2AV_Ialltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[],
                    MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                    const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                    MPI_Request* request) {
  last().result = {};
  return guarded([&] {
    const int size = started_size(request, comm);
    Widened& w = a2av::per_thread<Widened>();
    const a2av::IntArrays ints{sendcounts, sdispls, recvcounts, rdispls};
    start({sendbuf, widen(sendcounts, size, w.sendcounts), widen(sdispls, size, w.sdispls),
           sendtype, recvbuf, widen(recvcounts, size, w.recvcounts),
           widen(rdispls, size, w.rdispls), recvtype, comm},
          request, &ints);
  });
}

int A2AV_Ialltoallv_c(const void* sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                      MPI_Datatype sendtype, void* recvbuf, const MPI_Count recvcounts[],
                      const MPI_Aint rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                      MPI_Request* request) {
  last().result = {};
  return guarded([&] {
    const int size = started_size(request, comm);
    if (beyond_int(sendbuf == MPI_IN_PLACE ? nullptr : sendcounts, size) ||
        beyond_int(recvcounts, size))
      a2av::fail(A2AV_ERR_ARG, "the nonblocking exchange takes counts up to INT_MAX");
    start({sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm},
          request);
  });
}

int A2AV_Ialltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                   int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  last().result = {};
  return guarded([&] {
    const int size = started_size(request, comm);
    Widened& w = a2av::per_thread<Widened>();
    uniform(sendcount, size, w.sendcounts, w.sdispls);
    uniform(recvcount, size, w.recvcounts, w.rdispls);
    start({sendbuf, w.sendcounts.data(), w.sdispls.data(), sendtype, recvbuf, w.recvcounts.data(),
           w.rdispls.data(), recvtype, comm},
          request);
  });
}

int A2AV_Neighbor_alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[],
                            MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                            const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm) {
  last().result = {};
  return guarded([&] {
    last().result.peak_temp_bytes = a2av::neighbor_alltoallv(
        {sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm});
    last().algorithm = "neighbor:direct";
  });
}

int A2AV_Ineighbor_alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[],
                             MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                             const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                             MPI_Request* request) {
  last().result = {};
  return guarded([&] {
    clear_request(request);
    hand_out(a2av::start_ineighbor_alltoallv({sendbuf, sendcounts, sdispls, sendtype, recvbuf,
                                              recvcounts, rdispls, recvtype, comm}),
             "neighbor:nonblocking:", request);
  });
}

int A2AV_Alltoallv_with(const char* algorithm, const void* sendbuf, const MPI_Count sendcounts[],
                        const MPI_Aint sdispls[], MPI_Datatype sendtype, void* recvbuf,
                        const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                        MPI_Datatype recvtype, MPI_Comm comm) {
  return run({sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm},
             algorithm);
}

struct A2AV_Plan_s {
  a2av::Plan plan;
};

int A2AV_Alltoallv_init(const void* sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                        MPI_Datatype sendtype, void* recvbuf, const MPI_Count recvcounts[],
                        const MPI_Aint rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                        const char* algorithm, A2AV_Plan* plan) {
  last().result = {};
  return guarded([&] {
    if (!plan) a2av::fail(A2AV_ERR_ARG, "the plan pointer is null");
    *plan = nullptr;
    const auto size = static_cast<std::size_t>(a2av::comm_context(comm).size);
    const bool in_place = sendbuf == MPI_IN_PLACE;
    auto span_of = [&](const auto* values) { return std::span(values, values ? size : 0); };
    *plan = new A2AV_Plan_s{
        a2av::Plan(sendbuf, in_place ? std::span<const MPI_Count>() : span_of(sendcounts),
                   in_place ? std::span<const MPI_Aint>() : span_of(sdispls), sendtype, recvbuf,
                   span_of(recvcounts), span_of(rdispls), recvtype, comm,
                   {.algorithm = algorithm ? algorithm : ""})};
    last().result.peak_temp_bytes = (*plan)->plan.peak_temp_bytes();
    last().algorithm = (*plan)->plan.algorithm();
  });
}

int A2AV_Comm_prepare(MPI_Comm comm) {
  return guarded([&] { a2av::comm_context(comm); });
}

int A2AV_Start(A2AV_Plan plan) {
  last().result = {};
  return guarded([&] {
    if (!plan) a2av::fail(A2AV_ERR_ARG, "the plan is null");
    plan->plan.run();
    last().result.peak_temp_bytes = plan->plan.peak_temp_bytes();
    last().algorithm = plan->plan.algorithm();
  });
}

int A2AV_Plan_free(A2AV_Plan* plan) {
  return guarded([&] {
    if (!plan) a2av::fail(A2AV_ERR_ARG, "the plan pointer is null");
    delete *plan;
    *plan = nullptr;
  });
}

struct A2AV_Sparse_s {
  a2av::SparseResult result;
};

int A2AV_Sparse_exchange(int count, const int destinations[], const void* const buffers[],
                         const MPI_Count bytes[], MPI_Comm comm, const char* algorithm,
                         A2AV_Sparse* received) {
  last().result = {};
  return guarded([&] {
    if (!received) a2av::fail(A2AV_ERR_ARG, "the result pointer is null");
    *received = nullptr;
    std::string rejected;
    std::vector<a2av::OutgoingMessage> messages;
    if (count < 0)
      rejected = fmt::format("the message count is negative ({})", count);
    else if (count > 0 && (!destinations || !buffers || !bytes))
      rejected = "the destinations, buffers or sizes are null";
    for (int i = 0; i < count && rejected.empty(); ++i) {
      if (bytes[i] < 0) rejected = fmt::format("message {} has a negative size ({})", i, bytes[i]);
      messages.push_back({destinations[i],
                          {static_cast<const std::byte*>(buffers[i]),
                           static_cast<std::size_t>(std::max<MPI_Count>(bytes[i], 0))}});
    }
    auto result = a2av::run_sparse_exchange(messages, comm, algorithm ? algorithm : "", rejected);
    last().result.peak_temp_bytes = result.peak_temp_bytes();
    last().result.max_in_flight = result.max_in_flight();
    last().algorithm = "sparse:" + result.algorithm();
    *received = new A2AV_Sparse_s{std::move(result)};
  });
}

int A2AV_Sparse_count(A2AV_Sparse received, int* count) {
  return guarded([&] {
    if (!received || !count) a2av::fail(A2AV_ERR_ARG, "the result or the count pointer is null");
    *count = static_cast<int>(received->result.messages().size());
  });
}

int A2AV_Sparse_message(A2AV_Sparse received, int index, int* source, const void** data,
                        MPI_Count* bytes) {
  return guarded([&] {
    if (!received) a2av::fail(A2AV_ERR_ARG, "the result is null");
    const auto messages = received->result.messages();
    if (index < 0 || static_cast<std::size_t>(index) >= messages.size())
      a2av::fail(A2AV_ERR_ARG, "message {} does not exist ({} received)", index, messages.size());
    if (source) *source = messages[index].source;
    if (data) *data = messages[index].data.data();
    if (bytes) *bytes = static_cast<MPI_Count>(messages[index].data.size());
  });
}

int A2AV_Sparse_free(A2AV_Sparse* received) {
  return guarded([&] {
    if (!received) a2av::fail(A2AV_ERR_ARG, "the result pointer is null");
    delete *received;
    *received = nullptr;
  });
}

int A2AV_Exchange_inplace(void* buf, MPI_Count capacity, const MPI_Count sendcounts[],
                          MPI_Count recvcounts[], MPI_Datatype type, MPI_Comm comm,
                          const char* algorithm) {
  last().result = {};
  return guarded([&] {
    const int size = a2av::comm_context(comm).size;
    std::span<const MPI_Count> counts;
    if (sendcounts) counts = {sendcounts, static_cast<std::size_t>(size)};
    a2av::InplaceInfo info;
    const auto received = a2av::exchange_inplace(buf, capacity, counts, type, comm,
                                                 algorithm ? algorithm : "", &info);
    if (recvcounts) std::copy(received.begin(), received.end(), recvcounts);
    last().result.peak_temp_bytes = info.peak_temp_bytes;
    last().algorithm = info.algorithm;
  });
}

struct A2AV_Redist_s {
  a2av::Redistributor redistributor;
  MPI_Count nblocks;
};

int A2AV_Redist_create(void* blocks, MPI_Count nblocks, MPI_Count block_bytes, MPI_Comm comm,
                       const char* algorithm, A2AV_Redist* redist) {
  return guarded([&] {
    if (!redist) a2av::fail(A2AV_ERR_ARG, "the redist pointer is null");
    *redist = nullptr;
    *redist = new A2AV_Redist_s{
        a2av::Redistributor(blocks, nblocks, block_bytes, comm, algorithm ? algorithm : ""),
        nblocks};
  });
}

int A2AV_Redist_run(A2AV_Redist redist, const int dest_rank[], const MPI_Count dest_index[]) {
  last().result = {};
  return guarded([&] {
    if (!redist) a2av::fail(A2AV_ERR_ARG, "the redist handle is null");
    const auto n = static_cast<std::size_t>(redist->nblocks);
    const auto stats =
        redist->redistributor.run({dest_rank, dest_rank ? n : 0}, {dest_index, dest_index ? n : 0});
    last().result.peak_temp_bytes = stats.peak_temp_bytes;
    last().algorithm = stats.algorithm;
  });
}

int A2AV_Redist_free(A2AV_Redist* redist) {
  return guarded([&] {
    if (!redist) a2av::fail(A2AV_ERR_ARG, "the redist pointer is null");
    delete *redist;
    *redist = nullptr;
  });
}

const char* A2AV_Error_string(int code) {
  switch (code) {
    case A2AV_SUCCESS:
      return "A2AV_SUCCESS: no error";
    case A2AV_ERR_ARG:
      return "A2AV_ERR_ARG: invalid argument";
    case A2AV_ERR_COUNTS:
      return "A2AV_ERR_COUNTS: send and receive counts disagree across ranks";
    case A2AV_ERR_ALGORITHM:
      return "A2AV_ERR_ALGORITHM: unknown algorithm or parameter";
    case A2AV_ERR_CAPACITY:
      return "A2AV_ERR_CAPACITY: buffer or memory budget too small";
    case A2AV_ERR_DATATYPE:
      return "A2AV_ERR_DATATYPE: unusable datatype";
    case A2AV_ERR_MPI:
      return "A2AV_ERR_MPI: an MPI call failed";
    default:
      return "unknown a2av error code";
  }
}

const char* A2AV_Last_error_message(void) {
  return last().message.c_str();
}
int A2AV_Last_in_flight(void) {
  return last().result.max_in_flight;
}

MPI_Count A2AV_Last_peak_bytes(void) {
  return last().result.peak_temp_bytes;
}
const char* A2AV_Last_algorithm(void) {
  if (last().result.spec) last().algorithm = last().result.describe();  // else set by A2AV_Start
  return last().algorithm.c_str();
}

}  // extern "C"
