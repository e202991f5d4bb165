// shared_memory: for ranks that share one node. A block of at most `capacity` bytes goes
// through a cell of a node-wide shared segment: the sender copies it in and raises the
// cell's sequence number, the receiver waits for that number and copies the block out.
// Larger blocks the receiver reads straight from the sender's buffer (cross-memory attach,
// core/single_copy.hpp: one copy per byte where the cells cost two), announced by their
// address in the cell, and acknowledges in its own cell, since the sender may return only
// once its readers are done; where the kernel does not allow that, larger blocks go as MPI
// messages. Small blocks one way and large ones the other, as UCC's alltoallv "hybrid"
// does. One round, no MPI matching, and no temporary memory per call.
//
// Those messages keep the bound on requests in flight (docs/design.md): half of it for the
// sends, which are never waited for while cells remain to publish (a send completes only once
// its receiver has taken the cell), so a cell whose send finds no room is published later,
// between passes over the cells to take; the other half for the receives, which may wait,
// since each is posted only once its sender has posted the send.
//
// The cells alternate between two sets by the exchange's parity, so a sender never waits
// for its readers to free a cell: a rank starts exchange k+2 only after every peer has
// published k+1, and a peer publishes k+1 only after it has read all of exchange k.
//
// Errors are agreed in band through the cells (docs/errors.md): a rank that rejected its
// arguments publishes its error code in each of its cells instead of a block, and drops the
// large blocks sent to it. Where no segment can be made (no /dev/shm, or it is full), every
// rank runs spread_out instead, decided together when the segment is first made.
//
// Memory: per rank 2*P cells of 64 + capacity bytes (capacity at most 64 KiB), for the
// communicator's life: the A2AV_SHM_BYTES budget per rank (default min(1 MiB, 32 MiB / P);
// rank 0's value counts; 0 runs spread_out).
// Source: Fan et al. [Fan24], Section IV (intra-node exchange through
// shared memory is much faster than through the network stack).
#include "alltoallv/registry.hpp"
#include "core/check.hpp"
#include "core/environment.hpp"
#include "core/node_segment.hpp"
#include "core/per_thread.hpp"
#include "core/single_copy.hpp"
#include "core/spin.hpp"
#include "core/tags.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <vector>

namespace a2av {
namespace {

// How a block travels.
enum class Route : std::int32_t { cell, address, message };

// A cell's first cache line; the block follows it.
struct CellHeader {
  std::uint64_t sequence;  // the exchange this cell holds, published last
  std::int64_t bytes;      // the block's size
  std::int32_t code;       // the sender's error, or A2AV_SUCCESS
  Route route;
  std::uint64_t address;  // Route::address: the block, in the sender's memory
  // The last exchange in which this cell's owner finished with a block its destination sent
  // it by address (read it or dropped it): that sender may return then.
  std::uint64_t done_reading;
};
static_assert(sizeof(CellHeader) <= kLine);

inline constexpr Param kSingleCopyAbove{
    "single_copy_above", 0, std::int64_t{1} << 62, 65536,
    "blocks larger than this many bytes are read straight from the sender's buffer where the "
    "kernel allows cross-memory attach; smaller ones through the cells"};

// Blocks of up to 64 KiB in a cell: a larger one costs more as two copies through a cell
// than as one message (Open MPI's single copy), measured at P = 2, 4 and 8.
constexpr std::size_t kMaxCellBlock = std::size_t{64} << 10;

// Bytes of cells per rank: the shared-memory budget; no cell beyond kMaxCellBlock.
std::size_t part_bytes(int size) {
  const std::int64_t budget = shared_memory_budget(size);
  if (budget == 0) return 0;
  const std::size_t cell =
      std::clamp<std::size_t>(budget / (2 * size) / kLine * kLine, kLine, kLine + kMaxCellBlock);
  return cell * 2 * size;
}

// The largest block a cell takes when each rank has part_bytes of cells.
std::int64_t cell_capacity(std::size_t part_bytes, int size) {
  return static_cast<std::int64_t>(part_bytes / (2 * size) - kLine);
}

void explain(const CommContext& ctx, const SingleCopy* single) {
  const NodeSegment& segment = *ctx.segment;
  if (!verbose() || ctx.rank != 0) return;
  if (!segment.ok())
    return (void)std::fprintf(stderr, "a2av: shared_memory on %d ranks runs spread_out: %s\n",
                              ctx.size, segment.failure().c_str());
  std::fprintf(stderr,
               "a2av: shared_memory on %d ranks: %zu bytes of cells per rank, blocks of up to "
               "%lld bytes go through them; %s%s%s%s\n",
               ctx.size, segment.part_bytes(0),
               static_cast<long long>(cell_capacity(segment.part_bytes(0), ctx.size)),
               single->ok() ? "larger ones are read from the sender's buffer"
                            : "larger ones go as MPI messages: ",
               single->ok() ? "" : single->failure().c_str(),
               segment.fallback().empty() ? ""
                                          : "; cells in a named segment, the nameless one "
                                            "failed at ",
               segment.fallback().c_str());
}

class Cells {
 public:
  // Made on the first call on this communicator (collective); null if it could not be.
  static Cells* of(const CommContext& ctx) {
    if (ctx.size != ctx.node_size)
      fail(A2AV_ERR_ALGORITHM, "shared_memory needs all {} ranks on one node; {} share this one",
           ctx.size, ctx.node_size);
    if (!ctx.segment) {
      ctx.segment = std::make_shared<NodeSegment>(ctx.comm, part_bytes(ctx.size));
      // Tried together with the segment (both collective), where the segment could be made.
      if (ctx.segment->ok()) communicator_single_copy(ctx);
      explain(ctx, ctx.single_copy.get());
    }
    if (!ctx.segment->ok()) return nullptr;
    Cells& cells = per_thread<Cells>();
    cells.bind(ctx);
    return &cells;
  }

  const SingleCopy& single_copy() const { return *ctx_->single_copy; }

  std::int64_t capacity() const { return static_cast<std::int64_t>(stride_ - kLine); }

  CellHeader& header(int owner, int dest) const {
    return *reinterpret_cast<CellHeader*>(ctx_->segment->part(owner) +
                                          (parity_ * ctx_->size + dest) * stride_);
  }
  std::byte* block(int owner, int dest) const {
    return reinterpret_cast<std::byte*>(&header(owner, dest)) + kLine;
  }

  void publish(CellHeader& cell) const { store_release(cell.sequence, exchange_); }
  // Tells `owner` that this rank is done with the block it sent by address.
  void done_reading(int owner) const {
    store_release(header(ctx_->rank, owner).done_reading, exchange_);
  }

  // The ranks that read a block from this rank's buffer in this exchange.
  std::vector<int>& readers() { return readers_; }
  // Waits until each of them is done with it.
  void wait_for_readers() const {
    for (const int reader : readers_)
      for (int idle = 0; load_acquire(header(reader, ctx_->rank).done_reading) != exchange_;)
        wait_on_node(++idle, ctx_->cores_shared, ctx_->comm);
  }

  // Calls take(owner, cell) for each peer's cell for this rank once it holds this exchange,
  // in the order they come, so that a peer that is late holds up none of the others. A pass
  // that takes none calls between(), which returns whether it did something, before waiting.
  // While waiting it lets MPI progress (a peer may need that for a message this rank sent
  // before the call, or for a large block of this exchange).
  template <class Take, class Between = bool (*)()>
  void take_each(
      Take take, Between between = [] { return false; }) {
    pending_.clear();
    for (int i = 1; i < ctx_->size; ++i)
      pending_.push_back((ctx_->rank - i + ctx_->size) % ctx_->size);
    for (int idle = 0; !pending_.empty();) {
      std::size_t left = 0;
      for (const int owner : pending_) {
        const CellHeader& cell = header(owner, ctx_->rank);
        if (published(cell))
          take(owner, cell);
        else
          pending_[left++] = owner;
      }
      idle = left < pending_.size() || between() ? 0 : idle + 1;
      pending_.resize(left);
      if (idle > 0) wait_on_node(idle, ctx_->cores_shared, ctx_->comm);
    }
  }

 private:
  bool published(const CellHeader& cell) const { return load_acquire(cell.sequence) == exchange_; }

  void bind(const CommContext& ctx) {
    ctx_ = &ctx;
    stride_ = ctx.segment->part_bytes(0) / (2 * ctx.size);
    exchange_ = ++ctx.exchanges;
    parity_ = exchange_ % 2;
  }

  const CommContext* ctx_ = nullptr;
  std::size_t stride_ = 0;
  std::uint64_t exchange_ = 0;
  std::size_t parity_ = 0;
  std::vector<int> pending_;  // peers whose cell has not come yet
  std::vector<int> readers_;
};

Route route_of(std::int64_t bytes, const Cells& cells, std::int64_t single_copy_above) {
  const bool single = cells.single_copy().ok();
  if (bytes <= cells.capacity() && (!single || bytes <= single_copy_above)) return Route::cell;
  return single ? Route::address : Route::message;
}

// The MPI messages of large blocks where no single copy is allowed, under the bound
// (above): `deferred` holds the peers whose cell waits for room among the sends.
struct LargeMessages {
  explicit LargeMessages(int limit) : send_limit(limit / 2), receives(nullptr, limit - limit / 2) {}
  int send_limit;
  Requests sends;
  Requests receives;
  std::vector<int> deferred;

  bool room_for(std::int64_t bytes) {
    return fits_in_flight(sends.test_some(), sends.requests_for(bytes), send_limit);
  }
};

// Fills and publishes this rank's cell for `to` (its block in it, its address, or a message).
void publish_cell(const AlgorithmCall& ex, Cells& cells, int to, Route route,
                  LargeMessages& large) {
  const std::int64_t bytes = ex.send.bytes[to];
  CellHeader& cell = cells.header(ex.ctx.rank, to);
  cell.bytes = bytes;
  cell.code = A2AV_SUCCESS;
  cell.route = route;
  if (route == Route::cell) {
    copy_on_node(cells.block(ex.ctx.rank, to), ex.send.at(to), bytes);
  } else if (route == Route::address) {
    cell.address = reinterpret_cast<std::uint64_t>(ex.send.at(to));
    cells.readers().push_back(to);
  } else {
    large.sends.isend(ex.send.at(to), bytes, to, tags::kDirectBlock.tag(), ex.ctx.comm);
  }
  cells.publish(cell);
}

void send_blocks(const AlgorithmCall& ex, Cells& cells, std::int64_t single_copy_above,
                 LargeMessages& large) {
  const int me = ex.ctx.rank, size = ex.ctx.size;
  cells.readers().clear();
  for (int i = 1; i < size; ++i) {
    const int to = (me + i) % size;
    const Route route = route_of(ex.send.bytes[to], cells, single_copy_above);
    if (route == Route::message && (!large.deferred.empty() || !large.room_for(ex.send.bytes[to])))
      large.deferred.push_back(to);
    else
      publish_cell(ex, cells, to, route, large);
  }
}

// Publishes the deferred cells that now find room, in order; whether it published any.
bool publish_deferred(const AlgorithmCall& ex, Cells& cells, LargeMessages& large) {
  std::size_t published = 0;
  for (; published < large.deferred.size(); ++published) {
    const int to = large.deferred[published];
    if (!large.room_for(ex.send.bytes[to])) break;
    publish_cell(ex, cells, to, Route::message, large);
  }
  large.deferred.erase(large.deferred.begin(),
                       large.deferred.begin() + static_cast<std::ptrdiff_t>(published));
  return published > 0;
}

// A block this rank will not take (an error, or counts that disagree): its sender may go on.
void drop_block(int from, const CellHeader& cell, const Cells& cells, MPI_Comm comm) {
  if (cell.route == Route::message) drop_pieces(cell.bytes, from, tags::kDirectBlock.tag(), comm);
  if (cell.route == Route::address) cells.done_reading(from);
}

void receive_blocks(const AlgorithmCall& ex, Cells& cells, LargeMessages& large) {
  cells.take_each(
      [&](int from, const CellHeader& cell) {
        const std::int64_t expected = ex.recv.bytes[from];
        if (cell.code != A2AV_SUCCESS) {
          if (ex.in_band) ex.in_band->note(from, cell.code);
        } else if (cell.bytes != expected) {
          ex.mismatch.note(fmt::format("rank {} sent {} bytes where the receive count says {}",
                                       from, cell.bytes, expected));
          drop_block(from, cell, cells, ex.ctx.comm);
        } else if (cell.route == Route::cell) {
          copy_on_node(ex.recv.at(from), cells.block(from, ex.ctx.rank), expected);
        } else if (cell.route == Route::address) {
          if (auto refused = cells.single_copy().read(
                  ex.recv.at(from), from, reinterpret_cast<const void*>(cell.address), expected))
            ex.mismatch.note(fmt::format("the block from rank {}: {}", from, refused->what()),
                             refused->code());
          cells.done_reading(from);
        } else {
          large.receives.irecv(ex.recv.at(from), expected, from, tags::kDirectBlock.tag(),
                               ex.ctx.comm);
        }
      },
      [&] { return publish_deferred(ex, cells, large); });
}

void run_shared_memory(const AlgorithmCall& ex, const ParamValues& params) {
  if (ex.ctx.size == 1) return copy_self_block(ex);
  Cells* cells = Cells::of(ex.ctx);
  if (!cells) return spread_out_algorithm().run(ex, params);
  LargeMessages large(InFlight::limit());
  send_blocks(ex, *cells, params[kSingleCopyAbove], large);
  copy_self_block(ex);
  receive_blocks(ex, *cells, large);
  for (int idle = 0; !large.deferred.empty();)  // their receivers take every cell published
    idle = publish_deferred(ex, *cells, large) ? 0 : idle + 1,
    wait_on_node(idle, ex.ctx.cores_shared, ex.ctx.comm);
  // MPI_Waitall of nothing costs too
  if (!large.receives.empty()) large.receives.wait_all(ex.mismatch);
  if (!large.sends.empty()) large.sends.wait_all(ex.mismatch);
  cells->wait_for_readers();
}

void announce_error_shared_memory(const CommContext& ctx, const ParamValues&, int code,
                                  PeerErrors& peers) {
  Cells* cells = Cells::of(ctx);
  if (!cells) return announce_error(ctx.comm, code, peers);
  for (int peer = 0; peer < ctx.size; ++peer) {
    if (peer == ctx.rank) continue;
    CellHeader& cell = cells->header(ctx.rank, peer);
    cell.bytes = 0;
    cell.code = code;
    cell.route = Route::cell;
    cells->publish(cell);
  }
  cells->take_each([&](int peer, const CellHeader& cell) {
    if (cell.code != A2AV_SUCCESS)
      peers.note(peer, cell.code);
    else
      drop_block(peer, cell, *cells, ctx.comm);
  });
}

}  // namespace

std::int64_t shared_memory_capacity(int size) {
  const std::size_t part = part_bytes(size);
  return part == 0 ? -1 : cell_capacity(part, size);
}

std::int64_t shared_memory_single_copy_above(const ParamValues* params) {
  return params && params->has(kSingleCopyAbove) ? (*params)[kSingleCopyAbove]
                                                 : kSingleCopyAbove.fallback;
}

const AlgorithmDescriptor& shared_memory_algorithm() {
  static const AlgorithmDescriptor d{
      .name = "shared_memory",
      .summary =
          "ranks on one node: small blocks through per-pair cells of a shared segment, "
          "large ones read from the sender's buffer (else as messages)",
      .params = {&kSingleCopyAbove},
      .restrictions = "all ranks on one node and cells (A2AV_SHM_BYTES not 0)",
      .fallback = "spread_out",
      .source = "a2av's own (docs/algorithms.md, section shared_memory)",
      .run = run_shared_memory,
      .announce = announce_error_shared_memory,
      .model = {ModelShape::shared_memory},
      .nonblocking = NonblockingSchedule::shared_memory,
      .candidates =
          [](const CandidateScope& s, std::vector<std::string>& out) {
            if (s.machine_has_shared_memory && s.size <= s.ranks_per_node)
              out.emplace_back("shared_memory");
          },
      .test_specs = {{"shared_memory"},
                     // every block read from the sender's buffer, or none
                     {"shared_memory:single_copy_above=0"},
                     {"shared_memory:single_copy_above=1000000000"}},
      // The crossover between cells and the sender's buffer: every block read from the
      // sender, or cells wherever they fit.
      .tuning_variants = {"shared_memory:single_copy_above=0",
                          "shared_memory:single_copy_above=1073741824"},
      .one_node_only = true,
      .bounds_in_flight = true,
  };
  return d;
}

}  // namespace a2av
