// The nonblocking exchange's schedules, the same on every rank: chosen from A2AV_ALGORITHM
// (the same everywhere), MPI_IN_PLACE (given on all ranks or none, as MPI requires) and the
// node layout, never from this rank's counts or datatypes:
//  - direct (here): every block its own message, all receives then all sends posted when the
//    call starts, in spread_out's order (receive from rank - i, send to rank + i;
//    Fan et al. [Fan24], Section II(d)), in the caller's datatypes (MPI
//    handles derived types, nothing is packed). With MPI_IN_PLACE the blocks to send are
//    packed first (MPI_Pack), the only temporary memory. Calls in place, and on ranks of
//    several nodes unless A2AV_ALGORITHM names tuna.
//  - shared_memory (ialltoallv_shared_memory.cpp): every rank on one node, unless
//    A2AV_ALGORITHM names another algorithm than shared_memory or auto.
//  - tuna (ialltoallv_tuna.cpp): A2AV_ALGORITHM names tuna.
// The operation behind the request advances whenever the MPI library progresses.
// Counts that disagree with the sender's show on the receiving rank as MPI_ERR_TRUNCATE from
// MPI_Wait (a longer message) or as its own MPI_ERR_TRUNCATE (a shorter one).
#include "driver/ialltoallv.hpp"

#include "alltoallv/registry.hpp"
#include "core/check.hpp"
#include "core/comm_context.hpp"
#include "core/environment.hpp"
#include "core/tags.hpp"
#include "driver/ialltoallv_shared_memory.hpp"
#include "driver/ialltoallv_tuna.hpp"
#include "driver/nonblocking_operation.hpp"

#include <cstdlib>
#include <optional>
#include <vector>

namespace a2av {
namespace {

// Tags: core/tags.hpp, kNonblockingDirect, on the nonblocking exchanges' communicator.
class DirectExchange : public NonblockingOperation {
 public:
  DirectExchange(const Call& call, const CheckedCall& checked, const CommContext& ctx) {
    const int me = ctx.rank, size = ctx.size;
    const std::int64_t send_extent = checked.send_type.extent,
                       recv_extent = checked.recv_type.extent;
    recvtype_ = call.recvtype;
    if (call.in_place()) pack_in_place(call, recv_extent, ctx);
    reserve_requests(2 * size);
    for (int i = 0; i < size; ++i) {
      const int from = (me - i + size) % size;
      if (i == 0 && call.in_place()) continue;
      const int count = static_cast<int>(call.recvcounts[from]);
      posted(MPI_Irecv(at(call.recvbuf, call.rdispls[from], recv_extent), count, call.recvtype,
                       from, tags::kNonblockingDirect.tag(), ctx.nonblocking, &add(count)),
             "MPI_Irecv");
    }
    for (int i = 0; i < size; ++i) {
      const int to = (me + i) % size;
      if (i == 0 && call.in_place()) continue;
      if (call.in_place()) {
        posted(MPI_Isend(packed_.data() + packed_offset_[to], packed_bytes_[to], MPI_PACKED, to,
                         tags::kNonblockingDirect.tag(), ctx.nonblocking, &add()),
               "MPI_Isend");
      } else {
        posted(MPI_Isend(at(call.sendbuf, call.sdispls[to], send_extent),
                         static_cast<int>(call.sendcounts[to]), call.sendtype, to,
                         tags::kNonblockingDirect.tag(), ctx.nonblocking, &add()),
               "MPI_Isend");
      }
    }
  }

  bool progress() override { return all_tested(recvtype_); }

  std::int64_t temp_bytes() const {
    return static_cast<std::int64_t>(packed_.size()) + request_bytes();
  }

 private:
  // Where a block starts: displacements count extents of the datatype, as in MPI.
  static std::byte* at(const void* base, MPI_Aint displ, std::int64_t extent) {
    return static_cast<std::byte*>(const_cast<void*>(base)) + displ * extent;
  }

  // The send side of MPI_IN_PLACE is the receive buffer, which the receives overwrite.
  void pack_in_place(const Call& call, std::int64_t extent, const CommContext& ctx) {
    packed_bytes_.assign(ctx.size, 0);
    packed_offset_.assign(ctx.size, 0);
    int total = 0;
    for (int j = 0; j < ctx.size; ++j) {
      if (j == ctx.rank) continue;  // the own block stays where it is
      check_mpi(MPI_Pack_size(static_cast<int>(call.recvcounts[j]), call.recvtype, ctx.nonblocking,
                              &packed_bytes_[j]),
                "MPI_Pack_size");
      packed_offset_[j] = total;
      total += packed_bytes_[j];
    }
    packed_.resize(total);
    for (int j = 0; j < ctx.size; ++j) {
      if (packed_bytes_[j] == 0) continue;  // MPI_Pack may reject an empty output buffer
      int position = packed_offset_[j];
      check_mpi(
          MPI_Pack(at(call.recvbuf, call.rdispls[j], extent), static_cast<int>(call.recvcounts[j]),
                   call.recvtype, packed_.data(), total, &position, ctx.nonblocking),
          "MPI_Pack");
    }
  }

  MPI_Datatype recvtype_ = MPI_DATATYPE_NULL;
  std::vector<std::byte> packed_;  // MPI_IN_PLACE: the blocks to send
  std::vector<int> packed_bytes_, packed_offset_;
};

// What A2AV_ALGORITHM names; null if it is unset or empty.
const Spec* requested_spec() {
  static const char* env = env_text("A2AV_ALGORITHM");
  static const std::optional<Spec> spec =
      env && *env ? std::optional<Spec>(parse_spec(env)) : std::nullopt;
  return spec ? &*spec : nullptr;
}

// The requested algorithm's schedule (auto's where none is requested).
NonblockingSchedule schedule_of(const Spec* spec) {
  return (spec ? *spec->algorithm : auto_algorithm()).nonblocking;
}

// An intercommunicator's exchange: the MPI library's MPI_Ialltoallv (as vendor serves the
// blocking one) on int counts, which MPI reads until the exchange completes.
class VendorExchange : public NonblockingOperation {
 public:
  VendorExchange(const Call& call, const CommContext& ctx) {
    if (!vendor_int_arrays(call, ctx.size, ints_))
      fail(A2AV_ERR_ARG, "a count or displacement beyond int on an intercommunicator");
    const int* at = ints_.data();
    const std::size_t size = ints_.size() / 4;
    posted(MPI_Ialltoallv(call.sendbuf, at, at + size, call.sendtype, call.recvbuf, at + 2 * size,
                          at + 3 * size, call.recvtype, call.comm, &add()),
           "MPI_Ialltoallv");
  }
  bool progress() override { return all_tested(MPI_BYTE); }

 private:
  std::vector<int> ints_;
};

}  // namespace

NonblockingStart start_ialltoallv(const Call& call) {
  const CommContext& ctx = comm_context(call.comm);
  CheckedCall checked;
  check_call(call, ctx.size, checked);
  if (checked.code != 0) throw Error(checked.code, checked.message);
  if (ctx.is_intercomm)
    return {start_request(std::make_unique<VendorExchange>(call, ctx)), "vendor", 0};
  const std::uint64_t sequence = ctx.nonblocking_started++;
  const Spec* spec = requested_spec();
  std::int64_t temp = 0;
  const NonblockingSchedule schedule =
      call.in_place() ? NonblockingSchedule::direct : schedule_of(spec);
  if (schedule == NonblockingSchedule::tuna) {
    auto exchange =
        make_tuna_exchange(call, checked, ctx, tuna_shape(spec->params, ctx.size), sequence, temp);
    return {start_request(std::move(exchange)), "tuna", temp};
  }
  if (schedule == NonblockingSchedule::shared_memory && ctx.size > 1 && ctx.size == ctx.node_size)
    if (auto exchange = make_shared_memory_exchange(call, checked, ctx, sequence, temp))
      return {start_request(std::move(exchange)), "shared_memory", temp};
  auto exchange = std::make_unique<DirectExchange>(call, checked, ctx);
  temp = exchange->temp_bytes();
  return {start_request(std::move(exchange)), "direct", temp};
}

}  // namespace a2av
