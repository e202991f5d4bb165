// The sparse exchange through shared memory, for ranks that share one node: a sender copies
// each message into its own part of a node-wide segment and appends a descriptor (source,
// where, bytes) to the destination's list with one atomic increment; one barrier of the node
// later, every rank knows exactly what came to it and copies it out. No census, no probing,
// no consensus rounds: one barrier per exchange, and one atomic per message.
//
// A message above 256 KiB, or above 64 KiB and finding the sender's part full, is read by its
// destination straight from the sender's buffer where the node allows cross-memory attach
// (core/single_copy.hpp): its descriptor carries the address, and the sender returns once
// each such destination has counted its read in the sender's counters. One copy per byte, as
// the dense shared_memory's large blocks.
//
// What does not fit goes as an MPI message after the barrier, counted by a second atomic
// counter of the destination, so that it knows how many to receive: a large message where no
// single copy is allowed, a small one that finds the sender's part full, or one past the
// destination's list. Once a message of a (source, destination) pair has gone by MPI the
// pair's later ones follow it, and a receiver takes its list before its MPI messages, so one
// source's messages arrive in order.
//
// Parts alternate between two halves by the exchange's parity, so one barrier serves both
// as "everything is written" for exchange n and "exchange n-1 is read" for n+1: a rank
// writes a half again only in exchange n+2, after every rank has reached barrier n+1, which
// it does only once it has read all of exchange n. The last rank to reach a barrier clears
// the error word of the half the next exchange uses.
//
// Errors are agreed through the segment: a rank that rejected its messages raises a word
// shared by the node (the highest code, then the lowest rank) and sends nothing; after the
// barrier every rank reads it, and nothing has gone by MPI.
//
// Memory: per rank, for the communicator's life, a segment part of the A2AV_SHM_BYTES budget
// (default min(1 MiB, 32 MiB / P)), two halves each of a list of descriptors and the data
// the rank sends; per call, a request per message sent by MPI.
// Source: the shared-memory counterpart of NBX (Hoefler, Siebert, Lumsdaine, PPoPP 2010,
// Section 3): on one node the consensus is a barrier and the matching an atomic increment.
#include "sparse/sparse.hpp"
#include "sparse/windowed_sends.hpp"

#include "core/node_segment.hpp"
#include "core/single_copy.hpp"
#include "core/spin.hpp"

#include <algorithm>
#include <atomic>
#include <unordered_set>

namespace a2av {
namespace {

struct Descriptor {
  std::int64_t offset;  // in the source's data of this half, or its address there if by_address
  std::int64_t bytes;
  std::int32_t source;
  std::int32_t by_address;  // read from the source's own buffer (single copy)
};

struct Counters {
  std::uint64_t in_list;  // messages announced in the list (may exceed its length)
  std::uint64_t by_mpi;   // messages that come as MPI messages
  std::uint64_t read;     // this rank's messages by address that their destinations have read
};

// Rank 0's part begins with the node's barrier and error words.
struct Shared {
  alignas(kLine) std::uint64_t arrived;
  alignas(kLine) std::uint64_t released;  // the last barrier every rank reached
  alignas(kLine) std::uint64_t fault[2];  // by half: the worst Fault::word, 0: none
};

// Through the segment up to 256 KiB where it has room: two copies of data the sender has just
// touched beat one through the kernel below that on the development machine; larger messages are
// read from the sender's buffer where the node allows it (one copy, no MPI message), those
// above 64 KiB that find the segment full too. Measured in docs/algorithms.md, "Sparse".
constexpr std::int64_t kLargestInSegment = std::int64_t{256} << 10;
constexpr std::int64_t kSingleCopyAbove = std::int64_t{64} << 10;

std::uint64_t fetch_add(std::uint64_t& word, std::uint64_t value) {
  return std::atomic_ref<std::uint64_t>(word).fetch_add(value, std::memory_order_acq_rel);
}

void raise_to(std::uint64_t& word, std::uint64_t value) {
  std::atomic_ref<std::uint64_t> ref(word);
  for (std::uint64_t seen = ref.load(); seen < value && !ref.compare_exchange_weak(seen, value);) {
  }
}

}  // namespace

// The layout of every rank's part: the shared words (used in rank 0's), then per half the
// counters, the list and the data.
struct SparseCells {
  std::shared_ptr<NodeSegment> segment;
  const SingleCopy* single_copy = nullptr;  // the communicator's, where the segment was made
  std::size_t list_length = 0, data_bytes = 0, half_bytes = 0;
  std::uint64_t exchanges = 0;  // the same on every rank

  static std::size_t list_length_for(int size) {
    return std::clamp<std::size_t>(4 * static_cast<std::size_t>(size), 64, 1024);
  }

  Shared& shared() const { return *reinterpret_cast<Shared*>(segment->part(0)); }
  std::byte* half(int rank, std::uint64_t exchange) const {
    return segment->part(rank) + sizeof(Shared) + (exchange % 2) * half_bytes;
  }
  Counters& counters(int rank, std::uint64_t exchange) const {
    return *reinterpret_cast<Counters*>(half(rank, exchange));
  }
  Descriptor* list(int rank, std::uint64_t exchange) const {
    return reinterpret_cast<Descriptor*>(half(rank, exchange) + kLine);
  }
  std::byte* data(int rank, std::uint64_t exchange) const {
    return half(rank, exchange) + kLine + list_length * sizeof(Descriptor);
  }
};

namespace {

// Made on the first call on the communicator (collectively); null where it cannot be.
SparseCells* cells_of(const CommContext& ctx) {
  SparseCells* kept = ctx.kept.find<SparseCells>();
  if (!kept) {
    auto cells = std::make_shared<SparseCells>();
    cells->list_length = SparseCells::list_length_for(ctx.size);
    const std::size_t fixed = kLine + cells->list_length * sizeof(Descriptor);
    const std::int64_t budget = shared_memory_budget(ctx.size);
    const std::int64_t room = budget / 2 - static_cast<std::int64_t>(fixed);
    cells->data_bytes = room > 0 ? static_cast<std::size_t>(room) / kLine * kLine : 0;
    cells->half_bytes = fixed + cells->data_bytes;
    const bool wanted = budget > 0;
    cells->segment = std::make_shared<NodeSegment>(
        ctx.comm, wanted ? sizeof(Shared) + 2 * cells->half_bytes : 0);
    // Tried with the segment (both collective), as the dense shared_memory does.
    if (cells->segment->ok()) cells->single_copy = &communicator_single_copy(ctx);
    kept = &ctx.kept.keep(std::move(cells));
  }
  return kept->segment->ok() ? kept : nullptr;
}

// Waits for every rank of the node to arrive; the last clears the error word of the half the
// next exchange uses, which every rank has read (it read it before arriving here).
void barrier(const SparseCells& cells, std::uint64_t exchange, const CommContext& ctx) {
  Shared& shared = cells.shared();
  if (fetch_add(shared.arrived, 1) == static_cast<std::uint64_t>(ctx.size) - 1) {
    shared.arrived = 0;
    shared.fault[(exchange + 1) % 2] = 0;
    store_release(shared.released, exchange);
    return;
  }
  for (int idle = 0; load_acquire(shared.released) < exchange; ++idle)
    wait_on_node(idle, ctx.cores_shared, ctx.comm);
}

// What this rank's side before the barrier leaves to do: the messages that go by MPI, and the
// number its destinations read from its buffers, which it must keep until they have.
struct Published {
  std::vector<const Parcel*> by_mpi;
  std::uint64_t by_address = 0;
};

// This rank's side before the barrier: messages into its data (or, if large, their addresses)
// and the destinations' lists; those that do not fit go by MPI.
Published publish(const std::vector<Parcel>& parcels, const SparseCells& cells,
                  std::uint64_t exchange, const CommContext& ctx, Inbox& inbox) {
  Published published;
  std::unordered_set<int> gone_by_mpi;  // destinations whose later messages must follow by MPI
  std::byte* data = cells.data(ctx.rank, exchange);
  std::int64_t used = 0;
  for (const Parcel& p : parcels) {
    if (p.destination == ctx.rank) {
      inbox.add(ctx.rank, {p.data, static_cast<std::size_t>(p.bytes)});
      continue;
    }
    Counters& counters = cells.counters(p.destination, exchange);
    const bool after_mpi = gone_by_mpi.contains(p.destination);
    const bool in_data = p.bytes <= kLargestInSegment &&
                         used + p.bytes <= static_cast<std::int64_t>(cells.data_bytes) &&
                         !after_mpi;
    const bool by_address =
        !in_data && cells.single_copy->ok() && p.bytes > kSingleCopyAbove && !after_mpi;
    if (by_address || in_data) {
      const std::uint64_t slot = fetch_add(counters.in_list, 1);
      if (slot < cells.list_length) {
        Descriptor& d = cells.list(p.destination, exchange)[slot];
        if (by_address) {
          d = {reinterpret_cast<std::int64_t>(p.data), p.bytes, ctx.rank, 1};
          ++published.by_address;
        } else {
          copy_on_node(data + used, p.data, static_cast<std::size_t>(p.bytes));
          d = {used, p.bytes, ctx.rank, 0};
          used += (p.bytes + 7) / 8 * 8;
        }
        continue;
      }
    } else {
      fetch_add(counters.by_mpi, 1);  // past the list: counted by in_list already
    }
    published.by_mpi.push_back(&p);
    gone_by_mpi.insert(p.destination);
  }
  return published;
}

// This rank's side after the barrier: its list, then its MPI messages.
void collect(const SparseCells& cells, std::uint64_t exchange, const CommContext& ctx, int tag,
             Inbox& inbox, WindowedSends& sends) {
  Counters& counters = cells.counters(ctx.rank, exchange);
  const std::uint64_t announced = counters.in_list;
  const std::uint64_t listed = std::min<std::uint64_t>(announced, cells.list_length);
  const std::uint64_t by_mpi = counters.by_mpi + (announced - listed);
  counters.in_list = counters.by_mpi = 0;  // for exchange + 2, which begins after barrier + 1
  const Descriptor* list = cells.list(ctx.rank, exchange);
  for (std::uint64_t i = 0; i < listed; ++i) {
    const Descriptor& d = list[i];
    std::byte* to = inbox.slot(d.source, d.bytes);
    const auto bytes = static_cast<std::size_t>(d.bytes);
    if (!d.by_address) {
      copy_on_node(to, cells.data(d.source, exchange) + d.offset, bytes);
      continue;
    }
    if (auto refused =
            cells.single_copy->read(to, d.source, reinterpret_cast<const void*>(d.offset), bytes))
      inbox.note_unread(d.source, *refused);
    fetch_add(cells.counters(d.source, exchange).read, 1);
  }
  // This rank's own sends go on as their window allows: its peers wait for them likewise.
  for (std::uint64_t i = 0; i < by_mpi; ++i) {
    MPI_Status status;
    int arrived = 0;
    for (int idle = 0;; wait_on_node(++idle, ctx.cores_shared, ctx.comm)) {
      check_mpi(MPI_Iprobe(MPI_ANY_SOURCE, tag, ctx.comm, &arrived, &status), "MPI_Iprobe");
      if (arrived) break;
      sends.advance();
    }
    inbox.receive(status, tag, ctx.comm);
  }
}

Fault agreed_fault(const SparseCells& cells, std::uint64_t exchange, const CommContext& ctx,
                   const Fault& local) {
  return Fault::from_word(load_acquire(cells.shared().fault[exchange % 2]), ctx.size, ctx.rank,
                          local);
}

}  // namespace

bool sparse_shared_memory_available(const CommContext& ctx) {
  return ctx.size == ctx.node_size && cells_of(ctx) != nullptr;
}

Fault sparse_shared_memory(const std::vector<Parcel>& parcels, const SparseContext& at,
                           const Fault& local, Inbox& inbox) {
  const CommContext& ctx = at.ctx;
  if (ctx.size != ctx.node_size)
    fail(A2AV_ERR_ALGORITHM,
         "sparse shared_memory needs all {} ranks on one node; {} share this one", ctx.size,
         ctx.node_size);
  SparseCells* cells = cells_of(ctx);
  if (!cells) return nbx(parcels, at, local, inbox);
  const std::uint64_t exchange = ++cells->exchanges;
  const int tag = next_sparse_tag(ctx);
  Published published;
  if (local)
    raise_to(cells->shared().fault[exchange % 2], local.word(ctx.size));
  else
    published = publish(parcels, *cells, exchange, ctx, inbox);
  barrier(*cells, exchange, ctx);
  const Fault fault = agreed_fault(*cells, exchange, ctx, local);
  if (fault) published = {};
  WindowedSends sends(std::move(published.by_mpi), tag, ctx.comm, false, at.memory);
  sends.advance();  // posts the first window
  Counters& mine = cells->counters(ctx.rank, exchange);
  if (fault)
    mine = {};
  else
    collect(*cells, exchange, ctx, tag, inbox, sends);
  // The messages read from this rank's buffers must stay there until they have been.
  auto all_read = [&] { return load_acquire(mine.read) == published.by_address; };
  for (int idle = 0; !sends.advance() || !all_read();)
    wait_on_node(++idle, ctx.cores_shared, ctx.comm);
  mine.read = 0;  // for exchange + 2, whose readers begin after barrier + 2
  return fault;
}

}  // namespace a2av
