// The nonblocking exchange's shared-memory schedule: the blocking shared_memory's cells
// (alltoallv/shared_memory.cpp; Fan et al. [Fan24], Section IV) advanced
// by the caller's MPI_Test/MPI_Wait. A block of at most the cells' capacity is copied into
// the sender's cell for its receiver and published by the exchange's number; the receiver
// copies it out when it sees that number. Larger blocks (and those above single_copy_above,
// as in the blocking form) the receiver reads straight from the sender's buffer where the
// kernel allows (core/single_copy.hpp, probed with the cells), announced by their address in
// the cell; its consumed number tells the sender it may complete. Where it does not, they go as
// MPI messages, announced by their size in the cell (small blocks one way, large ones the
// other, as UCC's "hybrid"). Those messages keep the bound on requests in flight (docs/design.md):
// half of it for sends, half for receives, pieces counted one by one; a block that finds no room
// waits for the next progress. A receive is posted only after its sender has posted the send, so
// the receives always drain, and with them room for every sender's next block.
//
// Several exchanges may be in flight on one communicator, and a rank may start one before
// its peers have finished the last, so the blocking form's rule (a rank is at most one
// exchange ahead) does not hold. Instead each cell says what its reader has consumed: a
// sender writes a cell only once its reader has consumed what the cell held last, else it
// tries again at the next progress. Cells alternate between two sets by the exchange's
// parity, so the next exchange rarely waits. A sender fills each reader's cells in the order
// its exchanges began: else exchange k + 2 could take a cell that exchange k still waits
// for, and a reader that starts k + 2 only once k is complete would wait forever (MPICH's
// nonblocking3, three exchanges in flight on one communicator, under the preload). An exchange that
// must wait for its readers first advances the older exchanges of its communicator on this rank
// (MPICH advances only the request being waited for, and a peer's reads may wait on this rank's
// older writes).
//
// Its own cells (not the blocking shared_memory's), made for the first nonblocking exchange on
// the communicator that asks for them, without waiting for the other ranks
// (nonblocking_setup.hpp): the A2AV_SHM_BYTES budget per rank again. An exchange begins once
// they are made; where they cannot be, it runs the direct schedule instead. Counts that
// disagree show as MPI_ERR_TRUNCATE on the receiving rank, as with MPI_Ialltoallv.
#include "driver/ialltoallv_shared_memory.hpp"

#include "alltoallv/algorithm.hpp"
#include "core/check.hpp"
#include "core/node_segment.hpp"
#include "core/p2p.hpp"
#include "core/spin.hpp"
#include "core/tags.hpp"
#include "driver/ialltoallv.hpp"
#include "driver/nonblocking_blocks.hpp"
#include "driver/nonblocking_operation.hpp"

#include <algorithm>
#include <cstring>
#include <vector>

namespace a2av {
namespace {

// A cell's first cache line; the block follows it.
struct Cell {
  std::uint64_t sequence;  // the exchange it holds, published last by its sender
  std::uint64_t consumed;  // the last exchange its reader has taken from it
  std::int64_t bytes;      // the block's size; more than the capacity: sent by MPI
  std::uint64_t address;   // else 0: the block in the sender's memory, for a single copy
};
static_assert(sizeof(Cell) <= kLine);

class SharedMemoryExchange : public StagedOperation {
 public:
  explicit SharedMemoryExchange(NonblockingSetup& setup)
      : StagedOperation(setup, true), ctx_(setup.context()) {}

  ~SharedMemoryExchange() override {
    if (cells_) std::erase(cells_->in_flight, this);
  }

  // Takes `call`, checked: a kept exchange serves the next call.
  void prepare(const Call& call, const CheckedCall& checked, std::uint64_t sequence,
               std::int64_t single_copy_above) {
    blocks_.assign(call, checked, ctx_.size);
    restart(sequence, single_copy_above);
  }

  // The same call again (CallCopy::repeats): its checks and layout stand.
  void again(std::uint64_t sequence, std::int64_t single_copy_above) {
    blocks_.again();
    restart(sequence, single_copy_above);
  }

  bool repeats(const Call& call) const { return blocks_.repeats(call, ctx_.size); }

  // Sets every member that depends on the call but the blocks.
  void restart(std::uint64_t sequence, std::int64_t single_copy_above) {
    restart_stage();
    single_copy_above_ = single_copy_above;
    unread_.clear();
    cells_ = nullptr;
    exchange_ = sequence + 1;  // zeroed cells hold exchange 0
    order_ = 0;
    tag_ = tags::kNonblockingSharedMemory.cycle(sequence);
    limit_ = nonblocking_in_flight();
    stride_ = 0;
    capacity_ = 0;
    // Large blocks' sends, one piece each mostly: at most half the bound, or the peers.
    sends_.clear();
    sends_.reserve(static_cast<std::size_t>(std::min(ctx_.size, limit_ / 2)));
    indices_.reserve(sends_.capacity());
    const int me = ctx_.rank, size = ctx_.size;
    to_read_.clear();
    to_write_.clear();
    for (int i = 1; i < size; ++i) {
      to_read_.push_back((me - i + size) % size);
      to_write_.push_back((me + i) % size);
    }
    direct_.reset();
    done_ = false;
  }

  void begin() override {
    cells_ = setup_.cells();
    if (!cells_) {
      direct_ = make_direct_exchange(blocks_.call(), blocks_.send_type(), blocks_.recv_type(),
                                     setup_, exchange_ - 1);
      return direct_->begin();
    }
    cells_->in_flight.push_back(this);
    order_ = cells_->begun++;
    stride_ = cells_->segment->part_bytes(0) / (2 * ctx_.size);
    capacity_ = static_cast<std::int64_t>(stride_ - kLine);
    if (!blocks_.copy_own_block(ctx_.rank)) note(MPI_ERR_TRUNCATE);
    write();
  }

  bool advance() override {
    if (direct_) return finished_direct();
    if (done_) return true;
    const std::size_t before = peers_left();
    // Older exchanges advance while this one waits to write, and while it waits to read: a
    // peer's write into a cell may wait for this rank to read an older exchange from it, and
    // under MPICH a wait on this request advances no other (MPI_Wait in reverse order).
    if (!write() || !to_read_.empty()) advance_older();
    all_tested(MPI_BYTE);  // completed receives make room for more
    read();
    drop_readers_done();
    if (peers_left() == before && before > 0 && cells_->cores_shared && !progress_loop_yields())
      yield_core();  // let the peers this rank waits for run
    if (peers_left() > 0 || !all_tested(MPI_BYTE) || sends_in_flight()) return false;
    blocks_.finish();
    std::erase(cells_->in_flight, this);  // no older exchange waits for it
    done_ = true;
    return true;
  }

  bool reusable() const override { return done_ && !direct_ && !blocks_.copies(); }

  std::int64_t temp_bytes() const override {
    return blocks_.temp_bytes() + request_bytes() +
           static_cast<std::int64_t>((to_read_.capacity() + to_write_.capacity() +
                                      indices_.capacity() + unread_.capacity()) *
                                         sizeof(int) +
                                     sends_.capacity() * sizeof(MPI_Request));
  }

 private:
  const ByteBlocks& send() const { return blocks_.send(); }
  const ByteBlocks& recv() const { return blocks_.recv(); }

  bool finished_direct() {
    if (!direct_->advance()) return false;
    note(direct_->error());
    return true;
  }

  Cell& cell(int owner, int reader) const {
    return *reinterpret_cast<Cell*>(cells_->segment->part(owner) +
                                    ((exchange_ % 2) * ctx_.size + reader) * stride_);
  }
  std::byte* block(Cell& c) const { return reinterpret_cast<std::byte*>(&c) + kLine; }

  // Fills the cells whose readers have consumed what they held; true if none is left.
  bool write() {
    std::erase_if(to_write_, [&](int to) {
      std::uint64_t& filled = cells_->filled[static_cast<std::size_t>(to)];
      if (filled != order_) return false;  // an older exchange has yet to fill its cell
      Cell& c = cell(ctx_.rank, to);
      if (load_acquire(c.consumed) != c.sequence) return false;  // its reader has not taken it yet
      const std::int64_t bytes = send().bytes[to];
      const bool by_address = read_by_address(bytes);
      if (!by_address && bytes > capacity_ && !room_for(bytes, sends_in_flight())) return false;
      c.bytes = bytes;
      c.address = by_address ? reinterpret_cast<std::uint64_t>(send().at(to)) : 0;
      if (by_address)
        unread_.push_back(to);
      else if (c.bytes <= capacity_)
        copy_on_node(block(c), send().at(to), c.bytes);
      else
        post_pieces(send().at(to), c.bytes, c.bytes, to, false);
      store_release(c.sequence, exchange_);
      ++filled;
      return true;
    });
    return to_write_.empty();
  }

  // Takes the blocks of every sender that has published this exchange.
  void read() {
    std::erase_if(to_read_, [&](int from) {
      Cell& c = cell(from, ctx_.rank);
      if (load_acquire(c.sequence) != exchange_) return false;
      if (!c.address && c.bytes > capacity_ && !room_for(c.bytes, in_flight())) return false;
      take(from, c);
      store_release(c.consumed, exchange_);
      return true;
    });
  }

  void take(int from, Cell& c) {
    const std::int64_t expected = recv().bytes[from];
    if (c.bytes != expected) note(MPI_ERR_TRUNCATE);
    if (c.address)
      read_from(from, c.address, std::min(c.bytes, expected));
    else if (c.bytes <= capacity_)
      copy_on_node(recv().at(from), block(c), std::min(c.bytes, expected));
    else  // posted now, in the pieces the sender sends: what does not fit fails as truncated
      post_pieces(recv().at(from), c.bytes, expected, from, true);
  }

  // Whether a block of `bytes` goes by its address: the receiver reads it, one copy (as the
  // blocking shared_memory's; its crossover, single_copy_above).
  bool read_by_address(std::int64_t bytes) const {
    return cells_->single_copy.ok() && (bytes > capacity_ || bytes > single_copy_above_);
  }

  void read_from(int from, std::uint64_t address, std::int64_t bytes) {
    if (cells_->single_copy.read(recv().at(from), from, reinterpret_cast<const void*>(address),
                                 static_cast<std::size_t>(bytes)))
      note(MPI_ERR_OTHER);  // the kernel refused: reported, the exchange goes on
  }

  // Drops the readers that have taken the block sent them by address (their consumed number;
  // a later exchange may have filled and emptied the cell since): once none is left, the
  // caller may reuse its buffer.
  void drop_readers_done() {
    std::erase_if(unread_,
                  [&](int to) { return load_acquire(cell(ctx_.rank, to).consumed) >= exchange_; });
  }

  // Peers whose cell is still to fill, to take, or whose reading is awaited.
  std::size_t peers_left() const { return to_write_.size() + to_read_.size() + unread_.size(); }

  // Whether a block of `bytes` sent as messages fits beside `in_flight` requests of its kind
  // (sends or receives): under half the bound, or alone.
  bool room_for(std::int64_t bytes, int in_flight) const {
    return fits_in_flight(in_flight, pieces_of(bytes), limit_ / 2);
  }

  // Sends not yet complete; completed ones are dropped, failures noted.
  int sends_in_flight() {
    if (sends_.empty()) return 0;
    int count = 0;
    indices_.resize(sends_.size());
    const int rc = MPI_Testsome(static_cast<int>(sends_.size()), sends_.data(), &count,
                                indices_.data(), MPI_STATUSES_IGNORE);
    if (rc != MPI_SUCCESS) note(rc);
    std::erase(sends_, MPI_REQUEST_NULL);
    return static_cast<int>(sends_.size());
  }

  // The list changes as they complete: an exchange that left it is not skipped over.
  void advance_older() {
    const std::vector<Operation*>& in_flight = cells_->in_flight;
    for (std::size_t i = 0; i < in_flight.size() && in_flight[i] != this;) {
      Operation* older = in_flight[i];
      older->progress();
      if (i < in_flight.size() && in_flight[i] == older) ++i;
    }
  }

  // A large block of `bytes` as messages of at most max_piece() bytes (MPI counts are int),
  // in order; a receive takes at most `room` bytes of them.
  void post_pieces(std::byte* data, std::int64_t bytes, std::int64_t room, int peer, bool receive) {
    const std::int64_t piece = max_piece();
    for (std::int64_t at = 0; at < bytes; at += piece) {
      const int n = static_cast<int>(std::min(piece, bytes - at));
      MPI_Request& request = receive ? add(n) : sends_.emplace_back(MPI_REQUEST_NULL);
      const int fits = static_cast<int>(std::clamp<std::int64_t>(room - at, 0, n));
      const int rc =
          receive ? MPI_Irecv(data + std::min(at, room), fits, MPI_BYTE, peer, tag_,
                              ctx_.nonblocking, &request)
                  : MPI_Isend(data + at, n, MPI_BYTE, peer, tag_, ctx_.nonblocking, &request);
      if (rc != MPI_SUCCESS) note(rc);
    }
  }

  const CommContext& ctx_;
  NodeCells* cells_ = nullptr;  // once begun; null: direct_ runs instead
  std::uint64_t exchange_ = 0;
  std::uint64_t order_ = 0;  // among this rank's exchanges on the cells (NodeCells::begun)
  int tag_ = 0;    // of blocks too large for a cell: kNonblockingSharedMemory (core/tags.hpp)
  int limit_ = 0;  // requests in flight at most: half for sends, half for receives
  std::size_t stride_ = 0;
  std::int64_t capacity_ = 0;
  NonblockingBlocks blocks_;
  std::vector<int> to_write_, to_read_;  // peers whose cell is still to fill, to take
  std::vector<MPI_Request> sends_;       // large blocks' pieces in flight
  std::vector<int> indices_;             // MPI_Testsome's
  std::vector<int> unread_;              // readers yet to take a block sent by address
  std::int64_t single_copy_above_ = 0;
  std::unique_ptr<StagedOperation> direct_;
  bool done_ = false;
};

}  // namespace

std::size_t nonblocking_cell_bytes(int size) {
  const std::int64_t capacity = shared_memory_capacity(size);
  return capacity < 0 ? 0 : static_cast<std::size_t>(capacity + kLine) * 2 * size;
}

std::unique_ptr<StagedOperation> make_shared_memory_exchange(const Call& call,
                                                             NonblockingSetup& setup,
                                                             std::uint64_t sequence,
                                                             std::int64_t single_copy_above) {
  return ready_exchange<SharedMemoryExchange>(call, setup, sequence, single_copy_above);
}

}  // namespace a2av
