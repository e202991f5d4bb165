#include "core/call.hpp"

#include "core/check.hpp"
#include "core/per_thread.hpp"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstring>

namespace a2av {
namespace {

constexpr std::int64_t kPackPiece = std::int64_t{1} << 28;  // bytes per MPI_Pack call

bool multiply(std::int64_t a, std::int64_t b, std::int64_t& out) {
  return !__builtin_mul_overflow(a, b, &out);
}

struct Side {
  const void* buf;
  const MPI_Count* counts;
  const MPI_Aint* displs;
  MPI_Datatype type;
};

Side send_side(const Call& c) {
  if (c.in_place()) return {c.recvbuf, c.recvcounts, c.rdispls, c.recvtype};
  return {c.sendbuf, c.sendcounts, c.sdispls, c.sendtype};
}
Side recv_side(const Call& c) {
  return {c.recvbuf, c.recvcounts, c.rdispls, c.recvtype};
}

// Kept between calls on each thread: no allocation per call.
A2AV_THREAD_LOCAL std::vector<ByteSpan> receive_spans;
A2AV_THREAD_LOCAL std::vector<ByteSpan> send_spans;

// What check_side learns of a side beyond its block bytes.
struct SideFacts {
  TypeInfo type;
  std::int64_t lowest = INT64_MAX, highest = INT64_MIN;  // the blocks' hull, buffer-relative
};

// Checks one side and fills its type facts and block bytes; `spans`, where given, gets the
// blocks' byte ranges (contiguous types only: blocks of others may interleave without
// sharing a byte, and a span test would reject valid strided layouts).
int check_side(const Side& side, const char* name, int comm_size, std::string& message,
               SideFacts& facts, std::vector<std::int64_t>& bytes, std::vector<ByteSpan>* spans) {
  if (side.type == MPI_DATATYPE_NULL) {
    message = fmt::format("the {} datatype is MPI_DATATYPE_NULL", name);
    return A2AV_ERR_DATATYPE;
  }
  if (comm_size > 0 && (!side.counts || !side.displs)) {
    message = fmt::format("the {} counts or displacements array is null", name);
    return A2AV_ERR_ARG;
  }
  const TypeInfo& type = facts.type = type_info(side.type);
  bytes.assign(comm_size, 0);
  if (spans) spans->clear();
  if (!type.contiguous) spans = nullptr;
  bool has_data = false;
  for (int peer = 0; peer < comm_size; ++peer) {
    const std::int64_t count = side.counts[peer];
    if (count < 0) {
      message = fmt::format("{} count for rank {} is negative ({})", name, peer, count);
      return A2AV_ERR_ARG;
    }
    if (count == 0 || type.size == 0) continue;
    has_data = true;
    const std::optional<ByteSpan> block = block_span(count, side.displs[peer], type, peer);
    if (!block || !multiply(count, type.size, bytes[peer])) {
      message = fmt::format(
          "{} block for rank {} overflows 64-bit byte offsets "
          "(count {}, displacement {})",
          name, peer, count, side.displs[peer]);
      return A2AV_ERR_ARG;
    }
    facts.lowest = std::min(facts.lowest, block->begin);
    facts.highest = std::max(facts.highest, block->end);
    if (spans) spans->push_back(*block);
  }
  if (has_data && type.lacks(side.buf)) {
    message = fmt::format("the {} buffer is null but the {} counts are not all zero", name, name);
    return A2AV_ERR_ARG;
  }
  return A2AV_SUCCESS;
}

// Receive blocks must not share bytes (MPI's receive buffer is written once per byte).
int check_receive_blocks_apart(std::string& message) {
  if (receive_spans.size() < 2) return A2AV_SUCCESS;
  sort_by_begin(receive_spans);
  for (std::size_t i = 1; i < receive_spans.size(); ++i) {
    if (receive_spans[i].begin < receive_spans[i - 1].end) {
      message = fmt::format("receive blocks for ranks {} and {} overlap", receive_spans[i - 1].peer,
                            receive_spans[i].peer);
      return A2AV_ERR_ARG;
    }
  }
  return A2AV_SUCCESS;
}

// Refuses send blocks that share bytes with receive blocks (first_shared_byte, call.hpp). Only
// where both types are contiguous (their blocks are then exactly their spans); the hulls rule
// out the usual case, two buffers apart, at no cost.
int check_sides_apart(const Call& call, const SideFacts& send, const SideFacts& recv,
                      std::string& message) {
  if (!send.type.contiguous || !recv.type.contiguous || send.lowest > send.highest ||
      recv.lowest > recv.highest)
    return A2AV_SUCCESS;
  // Addresses as integers: the two buffers may be distinct allocations.
  const auto from = reinterpret_cast<std::intptr_t>(call.sendbuf);
  const auto to = reinterpret_cast<std::intptr_t>(call.recvbuf);
  if (from + send.highest <= to + recv.lowest || to + recv.highest <= from + send.lowest)
    return A2AV_SUCCESS;
  sort_by_begin(send_spans);  // receive_spans are sorted already
  const auto shared = first_shared_byte(send_spans, call.sendbuf, receive_spans, call.recvbuf);
  if (!shared) return A2AV_SUCCESS;
  message = aliased_message(shared->first, shared->second);
  return A2AV_ERR_ARG;
}

// Each block where it lies in the user's buffer (contiguous types).
void lay_out_in_place(const Side& side, const TypeInfo& type,
                      const std::vector<std::int64_t>& bytes, ByteBlocks& blocks) {
  blocks.base = static_cast<std::byte*>(const_cast<void*>(side.buf));
  blocks.offset.resize(bytes.size());
  for (std::size_t p = 0; p < bytes.size(); ++p)
    blocks.offset[p] = block_start(side.displs[p], type);
  blocks.bytes = bytes;
}

// Blocks back to back in `storage` (grown to fit).
void lay_out_packed(const std::vector<std::int64_t>& bytes, TempBuffer& storage,
                    ByteBlocks& blocks) {
  blocks.offset.resize(bytes.size());
  std::int64_t at = 0;
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    blocks.offset[i] = at;
    at += bytes[i];
  }
  storage.grow(at);
  blocks.base = storage.data();
  blocks.bytes = bytes;
}

// MPICH's MPI_Pack and MPI_Unpack refuse a null buffer even where it is MPI_BOTTOM and the
// datatype holds absolute addresses: such a run of `count` elements is given as the address
// kShift with a datatype that starts kShift bytes earlier, the same bytes in both MPIs.
class NonNullRun {
 public:
  NonNullRun(std::byte* at, int count, MPI_Datatype type) : at_(at), count_(count), type_(type) {
    if (at_ != nullptr) return;
    const MPI_Aint shift = -kShift;
    check_mpi(MPI_Type_create_hindexed_block(1, count, &shift, type, &shifted_),
              "MPI_Type_create_hindexed_block");
    check_mpi(MPI_Type_commit(&shifted_), "MPI_Type_commit");
    at_ = reinterpret_cast<std::byte*>(kShift);
    count_ = 1;
    type_ = shifted_;
  }
  ~NonNullRun() {
    if (shifted_ != MPI_DATATYPE_NULL) MPI_Type_free(&shifted_);
  }
  NonNullRun(const NonNullRun&) = delete;
  NonNullRun& operator=(const NonNullRun&) = delete;
  std::byte* at() const { return at_; }
  int count() const { return count_; }
  MPI_Datatype type() const { return type_; }

 private:
  static constexpr std::intptr_t kShift = 4096;
  std::byte* at_;
  int count_;
  MPI_Datatype type_;
  MPI_Datatype shifted_ = MPI_DATATYPE_NULL;
};

// Copies (packs) a side's blocks back to back into `out`.
void pack_side(const Side& side, const TypeInfo& type, const ByteBlocks& out) {
  const auto* base = static_cast<const std::byte*>(side.buf);
  for (std::size_t peer = 0; peer < out.bytes.size(); ++peer) {
    if (out.bytes[peer] == 0) continue;
    const std::byte* from = base + side.displs[peer] * type.extent;
    if (type.contiguous) {
      std::memcpy(out.at(peer), from + type.true_lb, out.bytes[peer]);
      continue;
    }
    const std::int64_t per_piece = std::max<std::int64_t>(1, kPackPiece / type.size);
    for (std::int64_t done = 0; done < side.counts[peer]; done += per_piece) {
      const int n = static_cast<int>(std::min<std::int64_t>(per_piece, side.counts[peer] - done));
      int position = 0;
      const NonNullRun run(const_cast<std::byte*>(from) + done * type.extent, n, side.type);
      check_mpi(MPI_Pack(run.at(), run.count(), run.type(), out.at(peer) + done * type.size,
                         static_cast<int>(n * type.size), &position, MPI_COMM_SELF),
                "MPI_Pack");
      if (position != n * type.size)
        fail(A2AV_ERR_DATATYPE, "MPI_Pack produced {} bytes for {} bytes of data", position,
             n * type.size);
    }
  }
}

void unpack_side(const ByteBlocks& in, const Side& side, const TypeInfo& type) {
  auto* base = static_cast<std::byte*>(const_cast<void*>(side.buf));
  for (std::size_t peer = 0; peer < in.bytes.size(); ++peer) {
    const std::int64_t per_piece =
        std::max<std::int64_t>(1, kPackPiece / std::max<std::int64_t>(1, type.size));
    for (std::int64_t done = 0; in.bytes[peer] > 0 && done < side.counts[peer]; done += per_piece) {
      const int n = static_cast<int>(std::min<std::int64_t>(per_piece, side.counts[peer] - done));
      int position = 0;
      const NonNullRun run(base + (side.displs[peer] + done) * type.extent, n, side.type);
      check_mpi(MPI_Unpack(in.at(peer) + done * type.size, static_cast<int>(n * type.size),
                           &position, run.at(), run.count(), run.type(), MPI_COMM_SELF),
                "MPI_Unpack");
    }
  }
}

}  // namespace

std::optional<ByteSpan> block_span(std::int64_t count, std::int64_t displ, const TypeInfo& type,
                                   int peer) {
  std::int64_t begin = 0, span = 0, end = 0;
  if (!multiply(displ, type.extent, begin) || __builtin_add_overflow(begin, type.true_lb, &begin) ||
      !multiply(count - 1, type.extent, span) ||
      __builtin_add_overflow(span, type.true_extent, &span) ||
      __builtin_add_overflow(begin, span, &end))
    return std::nullopt;
  return ByteSpan{begin, end, peer};
}

void sort_by_begin(std::vector<ByteSpan>& spans) {
  const auto by_begin = [](const ByteSpan& a, const ByteSpan& b) { return a.begin < b.begin; };
  if (!std::is_sorted(spans.begin(), spans.end(), by_begin))  // usually in rank order already
    std::sort(spans.begin(), spans.end(), by_begin);
}

std::optional<std::pair<int, int>> first_shared_byte(const std::vector<ByteSpan>& sends,
                                                     const void* send_base,
                                                     const std::vector<ByteSpan>& receives,
                                                     const void* recv_base) {
  // Send offsets in the receive buffer's frame; addresses as integers (two allocations).
  const std::int64_t shift =
      reinterpret_cast<std::intptr_t>(send_base) - reinterpret_cast<std::intptr_t>(recv_base);
  std::size_t r = 0;
  for (const ByteSpan& s : sends) {
    while (r < receives.size() && receives[r].end <= s.begin + shift) ++r;
    if (r < receives.size() && receives[r].begin < s.end + shift)
      return std::pair(s.peer, receives[r].peer);
  }
  return std::nullopt;
}

std::string aliased_message(int send_peer, int recv_peer) {
  return fmt::format(
      "the send and receive buffers overlap (the send block for rank {} and the receive block "
      "from rank {} share bytes); for an exchange in place pass MPI_IN_PLACE as the send buffer",
      send_peer, recv_peer);
}

ByteBlocks packed_blocks(std::vector<std::int64_t> bytes, TempBuffer& storage) {
  ByteBlocks blocks;
  lay_out_packed(bytes, storage, blocks);
  return blocks;
}

TypeInfo type_info(MPI_Datatype type) {
  if (type == MPI_DATATYPE_NULL) fail(A2AV_ERR_DATATYPE, "the datatype is MPI_DATATYPE_NULL");
  MPI_Count size = 0, lb = 0, extent = 0, true_lb = 0, true_extent = 0;
  check_mpi(MPI_Type_size_x(type, &size), "MPI_Type_size_x");
  check_mpi(MPI_Type_get_extent_x(type, &lb, &extent), "MPI_Type_get_extent_x");
  check_mpi(MPI_Type_get_true_extent_x(type, &true_lb, &true_extent), "MPI_Type_get_true_extent_x");
  TypeInfo info{size, extent, true_lb, true_extent, false};
  info.contiguous = size == 0 || (size == extent && true_extent == size);
  return info;
}

void check_call(const Call& call, int comm_size, CheckedCall& c) {
  c.code = A2AV_SUCCESS;
  c.message.clear();
  if (call.rejected) {
    c.code = A2AV_ERR_ARG;
    c.message = call.rejected;
    return;
  }
  if (call.recvbuf == MPI_IN_PLACE) {
    c.code = A2AV_ERR_ARG;
    c.message = "the receive buffer cannot be MPI_IN_PLACE";
    return;
  }
  SideFacts recv, send;
  c.code = check_side(recv_side(call), "receive", comm_size, c.message, recv, c.recv_bytes,
                      &receive_spans);
  if (c.code || (c.code = check_receive_blocks_apart(c.message))) return;
  c.recv_type = recv.type;
  if (call.in_place()) {
    c.send_type = c.recv_type;
    c.send_bytes = c.recv_bytes;
    return;
  }
  c.code =
      check_side(send_side(call), "send", comm_size, c.message, send, c.send_bytes, &send_spans);
  if (c.code) return;
  c.send_type = send.type;
  c.code = check_sides_apart(call, send, recv, c.message);
}

void NormalizedCall::assign(const Call& call, const CheckedCall& checked, MemoryTracker& memory) {
  call_ = call;
  send_type_ = checked.send_type;
  recv_type_ = checked.recv_type;
  send_copy_.attach(memory);
  recv_copy_.attach(memory);
  unpack_recv_ = !recv_type_.contiguous;
  // In place, a contiguous type is swapped where it lies; any other send side is packed.
  pack_send_ = call.in_place() ? unpack_recv_ : !send_type_.contiguous;
  if (pack_send_)
    lay_out_packed(checked.send_bytes, send_copy_, send_);
  else
    lay_out_in_place(send_side(call), send_type_, checked.send_bytes, send_);
  // (In place without packing, send and receive views coincide.)
  if (unpack_recv_)
    lay_out_packed(checked.recv_bytes, recv_copy_, recv_);
  else
    lay_out_in_place(recv_side(call), recv_type_, checked.recv_bytes, recv_);
}

void NormalizedCall::release_copies() {
  send_copy_ = TempBuffer();
  recv_copy_ = TempBuffer();
}

void NormalizedCall::begin() {
  if (pack_send_) pack_side(send_side(call_), send_type_, send_);
}

void NormalizedCall::finish() {
  if (unpack_recv_) unpack_side(recv_, recv_side(call_), recv_type_);
}

}  // namespace a2av
