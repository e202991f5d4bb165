// An alltoallv call as the user made it (64-bit), and its normalised form: one byte range
// per peer on each side, which is all the algorithms see.
#pragma once

#include "core/comm_context.hpp"
#include "core/memory.hpp"

#include <mpi.h>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace a2av {

struct Call {
  const void* sendbuf;
  const MPI_Count* sendcounts;
  const MPI_Aint* sdispls;
  MPI_Datatype sendtype;
  void* recvbuf;
  const MPI_Count* recvcounts;
  const MPI_Aint* rdispls;
  MPI_Datatype recvtype;
  MPI_Comm comm;
  // An argument error found before the call could be formed (a span too short): the arrays
  // are then null, and the error is agreed across ranks like any other.
  const char* rejected = nullptr;

  bool in_place() const { return sendbuf == MPI_IN_PLACE; }
};

struct TypeInfo {
  std::int64_t size = 0;         // bytes of data in one element
  std::int64_t extent = 0;       // stride between consecutive elements
  std::int64_t true_lb = 0;      // offset of the first data byte
  std::int64_t true_extent = 0;  // span of the data bytes of one element
  bool contiguous = false;       // n elements are n*size consecutive bytes

  bool operator==(const TypeInfo&) const = default;
  // Whether a null buffer holding data of this type is missing, not MPI_BOTTOM (null in Open
  // MPI and MPICH): only a type with a nonzero true lower bound carries the addresses.
  bool lacks(const void* buffer) const { return buffer == nullptr && true_lb == 0; }
};

// First data byte of a block at displacement `displ` (in extents of `type`), relative to its
// buffer.
inline std::int64_t block_start(MPI_Aint displ, const TypeInfo& type) {
  return static_cast<std::int64_t>(displ) * type.extent + type.true_lb;
}

// Byte ranges, one per peer, relative to `base`.
struct ByteBlocks {
  std::byte* base = nullptr;
  std::vector<std::int64_t> bytes;
  std::vector<std::int64_t> offset;

  std::byte* at(int peer) const { return base + offset[peer]; }
};

// The bytes a block touches, [begin, end), relative to its buffer, and its peer.
struct ByteSpan {
  std::int64_t begin, end;
  int peer;
};
// The bytes `count` elements of `type` at displacement `displ` touch, relative to their buffer;
// nullopt where an offset overflows 64 bits.
std::optional<ByteSpan> block_span(std::int64_t count, std::int64_t displ, const TypeInfo& type,
                                   int peer);
// Sorts by begin (at no cost where already in order, the usual case).
void sort_by_begin(std::vector<ByteSpan>& spans);
// MPI forbids a send buffer that shares bytes with the receive buffer (an OUT argument "cannot
// be aliased with any other argument": MPI-3.1 and later, Section 2.3, Procedure Specification):
// MPICH refuses sendbuf == recvbuf, Open MPI's algorithms read bytes already overwritten. Here the
// bytes decide: blocks side by side in one allocation are valid. The first (send peer, receive
// peer) whose blocks, `sends` in the buffer at `send_base` and `receives` at `recv_base`, each
// sorted by begin, share a byte.
std::optional<std::pair<int, int>> first_shared_byte(const std::vector<ByteSpan>& sends,
                                                     const void* send_base,
                                                     const std::vector<ByteSpan>& receives,
                                                     const void* recv_base);
// The error message for such a pair.
std::string aliased_message(int send_peer, int recv_peer);

// Blocks of the given sizes back to back in `storage` (grown to fit).
ByteBlocks packed_blocks(std::vector<std::int64_t> bytes, TempBuffer& storage);

// A call after the checks this rank can make alone, with the facts every later step needs.
// `code` is A2AV_SUCCESS or an error code with `message` set; nothing communicates, so the
// caller can agree on the result across ranks first. For MPI_IN_PLACE the send side is
// the receive side.
struct CheckedCall {
  int code = 0;
  std::string message;
  TypeInfo send_type, recv_type;
  std::vector<std::int64_t> send_bytes, recv_bytes;  // count * type size, per peer
};
// Fills `out`, reusing its storage.
void check_call(const Call& call, int comm_size, CheckedCall& out);

// Type facts; throws A2AV_ERR_DATATYPE for MPI_DATATYPE_NULL.
TypeInfo type_info(MPI_Datatype type);

// The byte view the algorithms work on. Contiguous types are used where they lie; other
// types, and the send side of MPI_IN_PLACE, go through tracked temporary buffers: begin()
// packs the send data, finish() unpacks the received data into the user's buffer. A view
// can be used for many exchanges with the same buffers and counts (persistent plans).
class NormalizedCall {
 public:
  // Lays out `call`, whose `checked` succeeded, reusing this view's storage. Copies are
  // charged to `memory`; a view that made copies must be destroyed (or release_copies())
  // before `memory` is.
  void assign(const Call& call, const CheckedCall& checked, MemoryTracker& memory);
  void release_copies();
  const ByteBlocks& send() const { return send_; }
  const ByteBlocks& recv() const { return recv_; }
  // MPI_IN_PLACE with a contiguous type: the blocks are swapped where they lie
  // (swap_symmetric_in_place on recv()); send() is not used and nothing is packed.
  bool swaps_in_place() const { return call_.in_place() && !unpack_recv_; }
  // The exchange goes through temporary copies (charged to the tracker given at creation).
  bool copies() const { return pack_send_ || unpack_recv_; }
  const TypeInfo& send_type() const { return send_type_; }
  const TypeInfo& recv_type() const { return recv_type_; }
  void begin();   // call before each exchange
  void finish();  // call after each exchange completed

 private:
  Call call_;
  TypeInfo send_type_, recv_type_;
  ByteBlocks send_;
  ByteBlocks recv_;
  TempBuffer send_copy_;
  TempBuffer recv_copy_;
  bool pack_send_ = false;
  bool unpack_recv_ = false;
};

}  // namespace a2av
