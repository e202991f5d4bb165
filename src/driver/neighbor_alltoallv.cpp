// MPI_Neighbor_alltoallv, direct: one message per edge, all receives then all sends posted,
// completed together, in the caller's datatypes. Which received block is which follows
// MPI-4.1 Section 8.6 (Example 8.10 and the advice to implementors there):
// - Cartesian: the neighbours are, per dimension d, the one below then the one above
//   (MPI_Cart_shift); the block a rank sends downwards arrives in its lower neighbour's
//   block from above, and the other way round: block s lands in block s^1. In a periodic
//   dimension of one or two processes both neighbours are the same rank (or the rank
//   itself), which MPI libraries have long got wrong (MPI Forum issue 153): each direction
//   has its own tag here, so nothing depends on message order.
// - graph and distributed graph: the k-th edge from rank a to rank b carries the block to
//   b's k-th edge from a (duplicate edges): sends and receives posted in list order on one
//   tag, which MPI's non-overtaking rule matches in that order.
// Tags: kNeighborCartesian and kNeighborGraph (core/tags.hpp), on the private communicator.
// Memory: the neighbour lists and one request and status per edge, O(degree), never O(P).
// start_ineighbor_alltoallv posts the same messages behind a request (MPI_Ineighbor_alltoallv),
// once the communicator's duplicates exist, in start order (nonblocking_setup.hpp): its start
// waits for no other rank. A blocking call lets every such exchange begin first. On a
// communicator whose setup would wait (setup_waits) the MPI library's own runs behind it, but
// where that one pairs blocks wrongly (library_pairs_blocks_right) the start sets a2av up,
// waiting for the other ranks: call A2AV_Comm_prepare on such a topology.
#include "driver/neighbor_alltoallv.hpp"

#include "core/call.hpp"
#include "core/check.hpp"
#include "core/comm_context.hpp"
#include "core/p2p.hpp"
#include "core/per_thread.hpp"
#include "core/tags.hpp"
#include "driver/nonblocking_operation.hpp"
#include "driver/nonblocking_setup.hpp"

#include <vector>

namespace a2av {
namespace {

struct Neighbours {
  std::vector<int> sources, destinations;
  bool cartesian = false;
};

Neighbours cartesian_neighbours(MPI_Comm comm) {
  int dims = 0;
  check_mpi(MPI_Cartdim_get(comm, &dims), "MPI_Cartdim_get");
  Neighbours n;
  n.cartesian = true;
  for (int d = 0; d < dims; ++d) {
    int below = MPI_PROC_NULL, above = MPI_PROC_NULL;
    check_mpi(MPI_Cart_shift(comm, d, 1, &below, &above), "MPI_Cart_shift");
    n.sources.push_back(below);
    n.sources.push_back(above);
  }
  n.destinations = n.sources;
  return n;
}

Neighbours graph_neighbours(MPI_Comm comm) {
  int rank = 0, degree = 0;
  check_mpi(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
  check_mpi(MPI_Graph_neighbors_count(comm, rank, &degree), "MPI_Graph_neighbors_count");
  Neighbours n;
  n.sources.resize(degree);
  check_mpi(MPI_Graph_neighbors(comm, rank, degree, n.sources.data()), "MPI_Graph_neighbors");
  n.destinations = n.sources;
  return n;
}

Neighbours distributed_graph_neighbours(MPI_Comm comm) {
  int in = 0, out = 0, weighted = 0;
  check_mpi(MPI_Dist_graph_neighbors_count(comm, &in, &out, &weighted),
            "MPI_Dist_graph_neighbors_count");
  Neighbours n;
  n.sources.resize(in);
  n.destinations.resize(out);
  // The weights are not used, but a weighted graph must be given room for them.
  std::vector<int> in_weights(weighted ? in + 1 : 0), out_weights(weighted ? out + 1 : 0);
  check_mpi(MPI_Dist_graph_neighbors(
                comm, in, n.sources.data(), weighted ? in_weights.data() : MPI_UNWEIGHTED, out,
                n.destinations.data(), weighted ? out_weights.data() : MPI_UNWEIGHTED),
            "MPI_Dist_graph_neighbors");
  return n;
}

Neighbours neighbours_of(MPI_Comm comm) {
  int kind = MPI_UNDEFINED;
  check_mpi(MPI_Topo_test(comm, &kind), "MPI_Topo_test");
  switch (kind) {
    case MPI_CART:
      return cartesian_neighbours(comm);
    case MPI_GRAPH:
      return graph_neighbours(comm);
    case MPI_DIST_GRAPH:
      return distributed_graph_neighbours(comm);
    default:
      fail(A2AV_ERR_ARG,
           "the communicator has no process topology (MPI_Cart_create, "
           "MPI_Graph_create or MPI_Dist_graph_create make one)");
  }
}

void check_side(const char* side, const void* buffer, const int* counts, const int* displs,
                std::size_t degree, const TypeInfo& type) {
  if (degree > 0 && (!counts || !displs))
    fail(A2AV_ERR_ARG, "the {} counts or displacements are null", side);
  for (std::size_t k = 0; k < degree; ++k) {
    if (counts[k] < 0) fail(A2AV_ERR_ARG, "{} count {} is negative ({})", side, k, counts[k]);
    if (counts[k] > 0 && type.lacks(buffer))
      fail(A2AV_ERR_ARG, "the {} buffer is null but block {} has data", side, k);
  }
}

// The byte spans of one side's blocks, sorted, into `spans`; empty where the type is not
// contiguous (blocks of others may interleave without sharing a byte) or an offset does not
// fit 64 bits.
void spans_of(const int* counts, const int* displs, std::size_t degree, const TypeInfo& type,
              std::vector<ByteSpan>& spans) {
  spans.clear();
  if (!type.contiguous || type.size == 0) return;
  for (std::size_t k = 0; k < degree; ++k) {
    if (counts[k] == 0) continue;
    const std::optional<ByteSpan> span =
        block_span(counts[k], displs[k], type, static_cast<int>(k));
    if (!span) return spans.clear();
    spans.push_back(*span);
  }
  sort_by_begin(spans);
}

// Send and receive blocks must not share a byte (first_shared_byte). The spans are kept
// between calls on each thread: no allocation per call.
void check_apart(const NeighborCall& call, const Neighbours& n, const TypeInfo& send_type,
                 const TypeInfo& recv_type) {
  A2AV_THREAD_LOCAL std::vector<ByteSpan> send_spans, recv_spans;
  spans_of(call.sendcounts, call.sdispls, n.destinations.size(), send_type, send_spans);
  spans_of(call.recvcounts, call.rdispls, n.sources.size(), recv_type, recv_spans);
  const auto shared = first_shared_byte(send_spans, call.sendbuf, recv_spans, call.recvbuf);
  if (shared)
    fail(A2AV_ERR_ARG,
         "the send and receive buffers overlap (send block {} and receive block {} share "
         "bytes)",
         shared->first, shared->second);
}

std::byte* block(const void* base, int displ, std::int64_t extent) {
  return static_cast<std::byte*>(const_cast<void*>(base)) + displ * extent;
}

// This rank's checks (nothing is agreed across ranks), and the neighbours.
Neighbours checked_neighbours(const NeighborCall& call, bool is_intercomm) {
  if (call.sendbuf == MPI_IN_PLACE)
    fail(A2AV_ERR_ARG, "MPI_IN_PLACE is not allowed in neighbourhood collectives");
  if (is_intercomm) fail(A2AV_ERR_ARG, "intercommunicators are not supported");
  Neighbours n = neighbours_of(call.comm);
  const TypeInfo send_type = type_info(call.sendtype), recv_type = type_info(call.recvtype);
  check_side("send", call.sendbuf, call.sendcounts, call.sdispls, n.destinations.size(), send_type);
  check_side("receive", call.recvbuf, call.recvcounts, call.rdispls, n.sources.size(), recv_type);
  check_apart(call, n, send_type, recv_type);
  return n;
}

// Posts every receive, then every send: `add(expected)` gives the request to post into (the
// count the receive must get, -1 for a send or a receive from MPI_PROC_NULL), `posted(rc,
// what)` handles a failed post.
template <class Add, class Posted>
void post_messages(const NeighborCall& call, const Neighbours& n, MPI_Comm comm, Add add,
                   Posted posted) {
  const std::int64_t send_extent = type_info(call.sendtype).extent,
                     recv_extent = type_info(call.recvtype).extent;
  for (std::size_t k = 0; k < n.sources.size(); ++k) {
    const int tag = n.cartesian ? tags::kNeighborCartesian.cycle(k) : tags::kNeighborGraph.tag();
    const int expected = n.sources[k] == MPI_PROC_NULL ? -1 : call.recvcounts[k];
    posted(MPI_Irecv(block(call.recvbuf, call.rdispls[k], recv_extent), call.recvcounts[k],
                     call.recvtype, n.sources[k], tag, comm, &add(expected)),
           "MPI_Irecv");
  }
  for (std::size_t s = 0; s < n.destinations.size(); ++s) {
    const int tag =
        n.cartesian ? tags::kNeighborCartesian.cycle(s ^ 1) : tags::kNeighborGraph.tag();
    posted(MPI_Isend(block(call.sendbuf, call.sdispls[s], send_extent), call.sendcounts[s],
                     call.sendtype, n.destinations[s], tag, comm, &add(-1)),
           "MPI_Isend");
  }
}

// The nonblocking form: the same messages, completed by the caller's MPI_Wait or MPI_Test
// (a receive of another count than expected shows there as MPI_ERR_TRUNCATE). Several may be
// outstanding on one communicator: every rank posts them in the same order, and MPI matches
// messages of one source and tag in posting order. The arrays are copied: the caller's may be
// gone when it begins.
class NeighborExchange : public StagedOperation {
 public:
  NeighborExchange(const NeighborCall& call, Neighbours n, NonblockingSetup& setup)
      : StagedOperation(setup, false),
        n_(std::move(n)),
        sendcounts_(call.sendcounts, call.sendcounts + n_.destinations.size()),
        sdispls_(call.sdispls, call.sdispls + n_.destinations.size()),
        recvcounts_(call.recvcounts, call.recvcounts + n_.sources.size()),
        rdispls_(call.rdispls, call.rdispls + n_.sources.size()),
        call_(call) {
    call_.sendcounts = sendcounts_.data();
    call_.sdispls = sdispls_.data();
    call_.recvcounts = recvcounts_.data();
    call_.rdispls = rdispls_.data();
    reserve_requests(n_.sources.size() + n_.destinations.size());
  }

  void begin() override {
    post_messages(
        call_, n_, setup_.context().comm,
        [&](int expected) -> MPI_Request& { return add(expected); },
        [&](int rc, const char* what) { posted(rc, what); });
  }
  bool advance() override { return all_tested(call_.recvtype); }
  std::int64_t temp_bytes() const override {
    const std::size_t ints = n_.sources.capacity() + n_.destinations.capacity() +
                             sendcounts_.capacity() + sdispls_.capacity() + recvcounts_.capacity() +
                             rdispls_.capacity();
    return request_bytes() + static_cast<std::int64_t>(ints * sizeof(int));
  }

 private:
  Neighbours n_;
  std::vector<int> sendcounts_, sdispls_, recvcounts_, rdispls_;
  NeighborCall call_;  // the caller's, on the copies
};

}  // namespace

std::int64_t neighbor_alltoallv(const NeighborCall& call) {
  const CommContext& ctx = comm_context(call.comm);
  const Neighbours n = checked_neighbours(call, ctx.is_intercomm);
  if (NonblockingSetup* setup = ctx.kept.find<NonblockingSetup>())
    setup->begin_all();  // the nonblocking exchanges' messages before these, as on every rank
  std::vector<MPI_Request> requests;
  requests.reserve(n.sources.size() + n.destinations.size());
  auto posted = [&](int rc, const char* what) {
    if (rc == MPI_SUCCESS) return;
    for (MPI_Request& r : requests)  // nothing is left behind in flight
      if (r != MPI_REQUEST_NULL && MPI_Cancel(&r) == MPI_SUCCESS) MPI_Request_free(&r);
    check_mpi(rc, what);
  };
  post_messages(
      call, n, ctx.comm, [&](int) -> MPI_Request& { return requests.emplace_back(); }, posted);
  std::vector<MPI_Status> statuses;
  [[maybe_unused]] const WorldErrorsReturn guard;  // a truncated receive is a count error
  const int rc = wait_all_settled(requests, statuses);
  if (rc == MPI_ERR_IN_STATUS) {
    for (std::size_t k = 0; k < n.sources.size(); ++k) {
      int error_class = MPI_SUCCESS;
      MPI_Error_class(statuses[k].MPI_ERROR, &error_class);
      if (error_class == MPI_ERR_TRUNCATE)
        fail(A2AV_ERR_COUNTS, "block {} from rank {} is longer than the {} elements expected", k,
             n.sources[k], call.recvcounts[k]);
    }
  }
  check_mpi(rc, "MPI_Waitall");
  for (std::size_t k = 0; k < n.sources.size(); ++k) {
    int count = 0;
    MPI_Get_count(&statuses[k], call.recvtype, &count);
    if (n.sources[k] != MPI_PROC_NULL && count != call.recvcounts[k])
      fail(A2AV_ERR_COUNTS, "block {} from rank {}: {} elements arrived, {} expected", k,
           n.sources[k], count, call.recvcounts[k]);
  }
  return static_cast<std::int64_t>(
      (n.sources.capacity() + n.destinations.capacity()) * sizeof(int) +
      requests.capacity() * sizeof(MPI_Request) + statuses.capacity() * sizeof(MPI_Status));
}

// Whether the MPI library's neighbourhood exchange gets every block right on `comm`: not on
// a Cartesian topology with a periodic dimension of one or two processes, where a neighbour is
// met twice and Open MPI 4.1 pairs the blocks the other way round (MPI Forum issue 153;
// checked with MPI_Ineighbor_alltoallv on 1 and 2 ranks). The same on every rank.
bool library_pairs_blocks_right(MPI_Comm comm) {
  int kind = MPI_UNDEFINED, ndims = 0;
  check_mpi(MPI_Topo_test(comm, &kind), "MPI_Topo_test");
  if (kind != MPI_CART) return true;
  check_mpi(MPI_Cartdim_get(comm, &ndims), "MPI_Cartdim_get");
  std::vector<int> dims(ndims), periods(ndims), coords(ndims);
  check_mpi(MPI_Cart_get(comm, ndims, dims.data(), periods.data(), coords.data()), "MPI_Cart_get");
  for (int d = 0; d < ndims; ++d)
    if (periods[d] && dims[d] <= 2) return false;
  return true;
}

// The MPI library's MPI_Ineighbor_alltoallv behind the request.
class VendorNeighborExchange : public NonblockingOperation {
 public:
  explicit VendorNeighborExchange(const NeighborCall& call) {
    posted(MPI_Ineighbor_alltoallv(call.sendbuf, call.sendcounts, call.sdispls, call.sendtype,
                                   call.recvbuf, call.recvcounts, call.rdispls, call.recvtype,
                                   call.comm, &add()),
           "MPI_Ineighbor_alltoallv");
  }
  bool progress() override { return all_tested(MPI_BYTE); }
};

NonblockingStart start_ineighbor_alltoallv(const NeighborCall& call) {
  const CommContext* started = context_for_start(call.comm);
  if (!started && library_pairs_blocks_right(call.comm)) {
    int inter = 0;
    check_mpi(MPI_Comm_test_inter(call.comm, &inter), "MPI_Comm_test_inter");
    checked_neighbours(call, inter != 0);
    return {start_request(std::make_unique<VendorNeighborExchange>(call)),
            "vendor (communicator not set up)", 0};
  }
  const CommContext& ctx = started ? *started : started_context(call.comm);
  Neighbours n = checked_neighbours(call, ctx.is_intercomm);
  NonblockingSetup& setup = nonblocking_setup(ctx);
  auto exchange = std::make_unique<NeighborExchange>(call, std::move(n), setup);
  const std::int64_t temp = exchange->temp_bytes();
  setup.start(*exchange);
  return {start_request(std::move(exchange)), "direct", temp};
}

}  // namespace a2av
