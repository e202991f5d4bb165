// The nonblocking exchange's schedules, the same on every rank: chosen from A2AV_ALGORITHM
// (the same everywhere), MPI_IN_PLACE (given on all ranks or none, as MPI requires) and the
// node layout, never from this rank's counts or datatypes:
//  - direct (here): every block its own message, in spread_out's order (receive from
//    rank - i, send to rank + i; Fan et al. [Fan24], Section II(d)), in the caller's
//    datatypes (MPI handles derived types, nothing is packed). Where 2P requests fit under
//    the bound on requests in flight, all receives then all sends are posted when the
//    exchange begins; beyond it, step by step, each completed request making room for the
//    next step's (the blocking algorithms' window, docs/design.md "Messages in flight"), so
//    each operation has a tag of its own. With MPI_IN_PLACE the blocks to send are packed
//    first (MPI_Pack), the only temporary memory. Calls in place, and on ranks of several
//    nodes unless A2AV_ALGORITHM names tuna.
//  - shared_memory (ialltoallv_shared_memory.cpp): ranks that may share one node, unless
//    A2AV_ALGORITHM names another algorithm than shared_memory or auto. Whether they do, and
//    whether its cells can be made, is found without waiting for the other ranks
//    (nonblocking_setup.hpp): an exchange started before that is known is reported as
//    shared_memory and runs direct where the cells turn out impossible, as every rank decides
//    once it knows.
//  - tuna (ialltoallv_tuna.cpp): A2AV_ALGORITHM names tuna.
// Every schedule but the intercommunicator's begins once the communicator's setup allows, in
// start order (nonblocking_setup.hpp); the start waits for no other rank. Where the setup
// itself would wait (setup_waits: no context yet, A2AV_COMM_IDUP off), the MPI library's
// MPI_Ialltoallv runs behind the request instead, until a blocking call or A2AV_Comm_prepare
// has set the communicator up.
// The operation behind the request advances whenever the MPI library progresses.
// Counts that disagree with the sender's show on the receiving rank as MPI_ERR_TRUNCATE from
// MPI_Wait (a longer message) or as its own MPI_ERR_TRUNCATE (a shorter one).
#include "driver/ialltoallv.hpp"

#include "alltoallv/registry.hpp"
#include "core/check.hpp"
#include "core/comm_context.hpp"
#include "core/environment.hpp"
#include "core/per_thread.hpp"
#include "core/tags.hpp"
#include "driver/ialltoallv_shared_memory.hpp"
#include "driver/ialltoallv_tuna.hpp"
#include "driver/nonblocking_blocks.hpp"
#include "driver/nonblocking_operation.hpp"
#include "driver/nonblocking_setup.hpp"
#include "driver/recent_calls.hpp"

#include <cstdlib>
#include <cstring>
#include <optional>
#include <vector>

namespace a2av {
namespace {

// Tags: core/tags.hpp, kNonblockingDirect.cycle(sequence), on the nonblocking exchanges'
// communicator: operations begun in the same order on every rank keep apart while their
// posts interleave.
class DirectExchange : public StagedOperation {
 public:
  explicit DirectExchange(NonblockingSetup& setup) : StagedOperation(setup, false) {}

  void prepare(const Call& call, const CheckedCall& checked, std::uint64_t sequence) {
    prepare(call, checked.send_type, checked.recv_type, sequence);
  }

  // Sets every member that depends on the call: a kept exchange serves the next call.
  void prepare(const Call& call, const TypeInfo& send_type, const TypeInfo& recv_type,
               std::uint64_t sequence) {
    copy_.assign(call, setup_.context().size, send_type, recv_type);
    send_extent_ = send_type.extent;
    recv_extent_ = recv_type.extent;
    own_bytes_.reset();
    if (!call.in_place() && send_type.contiguous && recv_type.contiguous)
      own_bytes_ = own_block(call, send_type, recv_type);
    packed_.clear();
    if (call.in_place()) pack_in_place(recv_extent_);
    again(sequence);
  }

  // Ready to run its call again (CallCopy::repeats), as the operation started `sequence`-th.
  void again(std::uint64_t sequence) {
    restart_stage();
    tag_ = tags::kNonblockingDirect.cycle(sequence);
    limit_ = nonblocking_in_flight();
    next_step_ = 0;
    reserve_requests(2 * setup_.context().size);
  }

  bool repeats(const Call& call) const { return copy_.repeats(call, setup_.context().size); }

  void begin() override {
    const int size = setup_.context().size;
    if (own_bytes_) copy_own_block();
    if (2 * size > limit_) return post_steps();
    for (int i = 0; i < size; ++i) post_receive(i);
    for (int i = 0; i < size; ++i) post_send(i);
    next_step_ = size;
  }

  // Tests in order; every completion makes room for more steps.
  bool advance() override {
    for (;;) {
      const bool tested = all_tested(copy_.call().recvtype);
      const int before = next_step_;
      post_steps();
      if (next_step_ == before) return tested && next_step_ == setup_.context().size;
    }
  }

  std::int64_t temp_bytes() const override {
    return static_cast<std::int64_t>(packed_.size()) + request_bytes() + copy_.bytes();
  }

  bool reusable() const override { return !copy_.call().in_place(); }

 private:
  // The own block of contiguous datatypes, copied here: a message to itself costs more.
  struct OwnBlock {
    std::int64_t send_offset, send_bytes, recv_offset, recv_bytes;
  };
  OwnBlock own_block(const Call& call, const TypeInfo& send_type, const TypeInfo& recv_type) {
    const int me = setup_.context().rank;
    return {block_start(call.sdispls[me], send_type), call.sendcounts[me] * send_type.size,
            block_start(call.rdispls[me], recv_type), call.recvcounts[me] * recv_type.size};
  }

  // As MPI's message to itself: what fits, and MPI_ERR_TRUNCATE where the sizes differ.
  void copy_own_block() {
    const Call& call = copy_.call();
    const std::int64_t bytes = std::min(own_bytes_->send_bytes, own_bytes_->recv_bytes);
    if (bytes > 0)
      std::memcpy(static_cast<std::byte*>(call.recvbuf) + own_bytes_->recv_offset,
                  static_cast<const std::byte*>(call.sendbuf) + own_bytes_->send_offset,
                  static_cast<std::size_t>(bytes));
    if (own_bytes_->send_bytes != own_bytes_->recv_bytes) note(MPI_ERR_TRUNCATE);
  }

  // Step i's receive, from rank - i (none from itself in place, or where it is copied).
  void post_receive(int i) {
    const Call& call = copy_.call();
    const CommContext& ctx = setup_.context();
    const int from = (ctx.rank - i + ctx.size) % ctx.size;
    if (i == 0 && (call.in_place() || own_bytes_)) return;
    const int count = static_cast<int>(call.recvcounts[from]);
    posted(MPI_Irecv(at(call.recvbuf, call.rdispls[from], recv_extent_), count, call.recvtype, from,
                     tag_, ctx.nonblocking, &add(count)),
           "MPI_Irecv");
  }

  // Step i's send, to rank + i.
  void post_send(int i) {
    const Call& call = copy_.call();
    const CommContext& ctx = setup_.context();
    const int to = (ctx.rank + i) % ctx.size;
    if (i == 0 && (call.in_place() || own_bytes_)) return;
    if (call.in_place()) {
      posted(MPI_Isend(packed_.data() + packed_offset_[to], packed_bytes_[to], MPI_PACKED, to, tag_,
                       ctx.nonblocking, &add()),
             "MPI_Isend");
    } else {
      posted(MPI_Isend(at(call.sendbuf, call.sdispls[to], send_extent_),
                       static_cast<int>(call.sendcounts[to]), call.sendtype, to, tag_,
                       ctx.nonblocking, &add()),
             "MPI_Isend");
    }
  }

  // The next steps, their receive and send together, while they fit under the bound: the
  // earliest pending step of all ranks is then posted on both sides, so the window slides.
  void post_steps() {
    while (next_step_ < setup_.context().size && in_flight() + 2 <= limit_) {
      post_receive(next_step_);
      post_send(next_step_);
      ++next_step_;
    }
  }

  // Where a block starts: displacements count extents of the datatype, as in MPI.
  static std::byte* at(const void* base, MPI_Aint displ, std::int64_t extent) {
    return static_cast<std::byte*>(const_cast<void*>(base)) + displ * extent;
  }

  // The send side of MPI_IN_PLACE is the receive buffer, which the receives overwrite. Packed
  // for the caller's communicator: the duplicates may not be made yet, and have its group.
  void pack_in_place(std::int64_t extent) {
    const Call& call = copy_.call();
    const int rank = setup_.context().rank, size = setup_.context().size;
    packed_bytes_.assign(size, 0);
    packed_offset_.assign(size, 0);
    int total = 0;
    for (int j = 0; j < size; ++j) {
      if (j == rank) continue;  // the own block stays where it is
      check_mpi(MPI_Pack_size(static_cast<int>(call.recvcounts[j]), call.recvtype, call.comm,
                              &packed_bytes_[j]),
                "MPI_Pack_size");
      packed_offset_[j] = total;
      total += packed_bytes_[j];
    }
    packed_.resize(total);
    for (int j = 0; j < size; ++j) {
      if (packed_bytes_[j] == 0) continue;  // MPI_Pack may reject an empty output buffer
      int position = packed_offset_[j];
      check_mpi(
          MPI_Pack(at(call.recvbuf, call.rdispls[j], extent), static_cast<int>(call.recvcounts[j]),
                   call.recvtype, packed_.data(), total, &position, call.comm),
          "MPI_Pack");
    }
  }

  CallCopy copy_;
  std::int64_t send_extent_ = 0, recv_extent_ = 0;
  int tag_ = 0;
  int limit_ = 0;                      // requests in flight at most, where 2P exceed it
  int next_step_ = 0;                  // the first step not posted
  std::optional<OwnBlock> own_bytes_;  // where the own block is copied, not sent
  std::vector<std::byte> packed_;      // MPI_IN_PLACE: the blocks to send
  std::vector<int> packed_bytes_, packed_offset_;
};

// What A2AV_ALGORITHM names; null if it is unset or empty.
const Spec* requested_spec() {
  static const char* env = env_text("A2AV_ALGORITHM");
  static const std::optional<Spec> spec =
      env && *env ? std::optional<Spec>(parse_spec(env)) : std::nullopt;
  return spec ? &*spec : nullptr;
}

const ParamValues* spec_params(const Spec* spec) {
  return spec ? &spec->params : nullptr;
}

// The requested algorithm's schedule (auto's where none is requested).
NonblockingSchedule schedule_of(const Spec* spec) {
  return (spec ? *spec->algorithm : auto_algorithm()).nonblocking;
}

// The MPI library's MPI_Ialltoallv (as vendor serves the blocking one), for an
// intercommunicator or a communicator not set up: on int counts, which MPI reads until the
// exchange completes.
class VendorExchange : public NonblockingOperation {
 public:
  VendorExchange(const Call& call, int peers) {
    if (!vendor_int_arrays(call, peers, ints_))
      fail(A2AV_ERR_ARG, "a count or displacement beyond int where the MPI library exchanges");
    const int* at = ints_.data();
    const std::size_t n = ints_.size() / 4;
    posted(MPI_Ialltoallv(call.sendbuf, at, at + n, call.sendtype, call.recvbuf, at + 2 * n,
                          at + 3 * n, call.recvtype, call.comm, &add()),
           "MPI_Ialltoallv");
  }
  bool progress() override { return all_tested(MPI_BYTE); }

 private:
  std::vector<int> ints_;
};

// Whether the ranks may all share this node, as far as this rank knows without asking them:
// the node layout a blocking call found, else A2AV_EMULATE_NODES's groups.
bool may_share_node(const CommContext& ctx) {
  if (ctx.nodes_found) return ctx.size == ctx.node_size;
  const int q = emulated_node_size();
  return q == 0 || q >= ctx.size;
}

// The schedule that runs (shared_memory: unless its cells turn out impossible). Asking for
// the cells comes before the checks: every rank asks at the same start, whatever its arguments.
NonblockingSchedule choose(const Call& call, const CommContext& ctx, NonblockingSetup& setup) {
  const NonblockingSchedule schedule =
      call.in_place() ? NonblockingSchedule::direct : schedule_of(requested_spec());
  if (schedule == NonblockingSchedule::tuna) return schedule;
  if (schedule != NonblockingSchedule::shared_memory || ctx.size == 1 || !may_share_node(ctx))
    return NonblockingSchedule::direct;
  setup.want_cells(nonblocking_cell_bytes(ctx.size));
  return setup.cells_refused() ? NonblockingSchedule::direct : schedule;
}

// The schedule's exchange, made at the start (not begun), and its name.
struct Made {
  std::unique_ptr<StagedOperation> exchange;
  const char* name = nullptr;
};

Made make_exchange(NonblockingSchedule schedule, const Call& call, NonblockingSetup& setup,
                   std::uint64_t sequence) {
  const int size = setup.context().size;
  if (schedule == NonblockingSchedule::tuna) {
    CheckedCall fresh;
    return {make_tuna_exchange(call, checked_call(call, size, fresh), setup,
                               tuna_shape(requested_spec()->params, size), sequence),
            "tuna"};
  }
  if (schedule == NonblockingSchedule::shared_memory)
    return {
        make_shared_memory_exchange(call, setup, sequence,
                                    shared_memory_single_copy_above(spec_params(requested_spec()))),
        "shared_memory"};
  return {ready_exchange<DirectExchange>(call, setup, sequence), "direct"};
}

}  // namespace

int nonblocking_in_flight() {
  const Spec* spec = requested_spec();
  return spec && spec->in_flight ? spec->in_flight : InFlight::default_limit();
}

const CheckedCall& checked_call(const Call& call, int size, CheckedCall& fresh) {
  CheckedCall& checked = size <= RecentCalls::kMaxRecentSize ? per_thread<CheckedCall>() : fresh;
  check_call(call, size, checked);
  if (checked.code != 0) throw Error(checked.code, checked.message);
  return checked;
}

std::unique_ptr<StagedOperation> make_direct_exchange(const Call& call, const TypeInfo& send_type,
                                                      const TypeInfo& recv_type,
                                                      NonblockingSetup& setup,
                                                      std::uint64_t sequence) {
  std::unique_ptr<DirectExchange> exchange = setup.exchange<DirectExchange>(call).exchange;
  exchange->prepare(call, send_type, recv_type, sequence);
  return exchange;
}

// The MPI library's MPI_Ialltoallv behind the request (on `ints` where given: see
// start_ialltoallv), `call` checked first.
NonblockingStart start_vendor(const Call& call, int size, const char* name, const IntArrays* ints) {
  CheckedCall fresh;
  checked_call(call, size, fresh);
  if (!ints) return {start_request(std::make_unique<VendorExchange>(call, size)), name, 0};
  MPI_Request request = MPI_REQUEST_NULL;
  check_mpi(
      MPI_Ialltoallv(call.sendbuf, ints->sendcounts, ints->sdispls, call.sendtype, call.recvbuf,
                     ints->recvcounts, ints->rdispls, call.recvtype, call.comm, &request),
      "MPI_Ialltoallv");
  return {request, name, 0};
}

NonblockingStart start_ialltoallv(const Call& call, const IntArrays* ints) {
  const CommContext* started = context_for_start(call.comm);
  if (!started)
    return start_vendor(call, group_size(call.comm), "vendor (communicator not set up)", ints);
  const CommContext& ctx = *started;
  if (ctx.is_intercomm) return start_vendor(call, ctx.size, "vendor", ints);
  NonblockingSetup& setup = nonblocking_setup(ctx);
  Made made;
  std::int64_t temp = 0;
  {
    // Once for the whole start (each step would take it for itself): no MPI call here blocks.
    const ProgressHold hold;
    const NonblockingSchedule schedule = choose(call, ctx, setup);
    made = make_exchange(schedule, call, setup, ctx.nonblocking_started++);
    temp = made.exchange->temp_bytes();
    setup.start(*made.exchange);
  }
  return {start_request(std::move(made.exchange)), made.name, temp};
}

}  // namespace a2av
