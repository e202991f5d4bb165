// Nonblocking starts that never wait for the other ranks (docs/design.md, "Nonblocking
// starts"). A nonblocking exchange is made in two steps: its start does this rank's own work
// (copies of the arrays, packing) and chooses its schedule; it begins (posts its messages, fills
// its cells) once its communicator's duplicates exist (core/comm_context.hpp: a nonblocking
// start on a new communicator only starts making them) and, for the shared-memory schedule, once
// its cells are made or known impossible. Exchanges begin in the order they started: every rank
// posts a communicator's messages in the same order, which MPI's matching of one source and tag
// relies on. What is not ready advances whenever a start on the communicator or an exchange
// waiting for it runs (inside MPI_Test, MPI_Wait and, under Open MPI, any MPI call).
//
// The cells, made on the first start that asks for them: whether every rank is on this node (an
// MPI_Iallreduce of the processor name's hash; A2AV_EMULATE_NODES's groups besides), then a
// NodeSegmentMaker, then, where the segment was made, a SingleCopyMaker; all on the nonblocking
// duplicate, where they are its only collectives.
#pragma once

#include "core/call.hpp"
#include "core/comm_context.hpp"
#include "core/node_segment.hpp"
#include "core/single_copy.hpp"
#include "driver/nonblocking_operation.hpp"

#include <array>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <typeinfo>
#include <vector>

namespace a2av {

// The nonblocking shared-memory schedule's cells, on a communicator whose ranks share a node.
struct NodeCells {
  std::unique_ptr<NodeSegment> segment;
  SingleCopy single_copy;             // large blocks read from the sender where ok()
  bool cores_shared = false;          // more ranks on the node than cores
  std::vector<Operation*> in_flight;  // the exchanges on them on this rank, oldest first
  // This rank's exchanges on the cells, numbered as they begin, and by peer how many of them
  // have filled its cell: each peer's cell is filled in that order.
  std::uint64_t begun = 0;
  std::vector<std::uint64_t> filled;
};

class NonblockingSetup;

// An exchange made at its start and begun by its communicator's NonblockingSetup.
class StagedOperation : public NonblockingOperation {
 public:
  ~StagedOperation() override;
  bool progress() final;
  // Kept by its setup for a later call where it completed without error and is reusable();
  // else deleted.
  void retire() final;
  // Posts its messages (or fills its cells). Throws a2av::Error on a failed post.
  virtual void begin() = 0;
  // Once begun: advances without blocking; true once complete.
  virtual bool advance() = 0;
  // What it holds from its start on.
  virtual std::int64_t temp_bytes() const = 0;

 protected:
  StagedOperation(NonblockingSetup& setup, bool needs_cells)
      : setup_(setup), needs_cells_(needs_cells) {}
  // The first step of preparing an exchange for a call, new or kept (NonblockingSetup::exchange).
  void restart_stage() {
    restart_requests();
    begun_ = failed_ = complete_ = false;
  }
  // Whether, once retired, it may serve another call: it holds nothing of this call's that
  // the next would not overwrite (no packed data) and has left every shared list.
  virtual bool reusable() const { return false; }
  NonblockingSetup& setup_;

 private:
  friend class NonblockingSetup;
  void begin_now();  // begin(), a failure noted for MPI_Wait

  bool needs_cells_;
  ContextPin pin_;  // from its start until it retires
  bool begun_ = false;
  bool failed_ = false;
  bool complete_ = false;
};

class NonblockingSetup {
 public:
  explicit NonblockingSetup(const CommContext& ctx) : ctx_(ctx) {}
  // Takes the cells' collectives to their end, as the other ranks do (MPI_Comm_free).
  ~NonblockingSetup();
  NonblockingSetup(const NonblockingSetup&) = delete;
  NonblockingSetup& operator=(const NonblockingSetup&) = delete;

  const CommContext& context() const { return ctx_; }
  // Asks for cells of `part_bytes` per rank: at the same start on every rank.
  void want_cells(std::size_t part_bytes);
  // Whether the cells are known to be impossible: the ranks do not share a node, or no segment.
  bool cells_refused() const;
  // Once the cells are settled: null if refused.
  NodeCells* cells() const { return cells_.get(); }

  // Queues `op` and begins what can begin, in start order.
  void start(StagedOperation& op);
  // Advances the duplicates and the cells, then begins what can begin, in start order. Under a
  // ProgressHold.
  void advance();
  // Waits until every exchange started has begun: for a blocking call that posts messages the
  // ranks match with theirs in order.
  void begin_all();

  // An exchange of type T to prepare for `call`: one kept from an earlier call (with its
  // storage: a loop of exchanges allocates nothing once warm), that of an equal call if there
  // is one (`repeats`: its checks and layout stand), else a new one.
  template <class T>
  struct Reused {
    std::unique_ptr<T> exchange;
    bool repeats = false;
  };
  template <class T>
  Reused<T> exchange(const Call& call);
  // Keeps a retired exchange for a later call; at most kSpares, of at most kSpareBytes each
  // (their temp_bytes(): memory the communicator holds between calls).
  void keep(StagedOperation* op);
  static constexpr std::size_t kSpares = 4;
  static constexpr std::int64_t kSpareBytes = 64 << 10;

 private:
  friend class StagedOperation;
  enum class Cells { kUnwanted, kWanted, kFindingNode, kMaking, kProbing, kSettled };

  bool ready_for(const StagedOperation& op) const;
  // One step of the cells; `wait`: waits for its collective instead of testing it.
  bool advance_cells(bool wait);
  void find_node();
  void node_found();
  void segment_made(std::unique_ptr<NodeSegment> segment);
  void settle(std::unique_ptr<NodeSegment> segment, SingleCopy single_copy = {});

  const CommContext& ctx_;
  std::deque<StagedOperation*> waiting_;  // started, not begun, oldest first
  Cells step_ = Cells::kUnwanted;
  std::size_t part_bytes_ = 0;
  std::array<std::uint64_t, 2> hashes_{};  // the processor name's hash and its complement
  MPI_Request finding_ = MPI_REQUEST_NULL;
  std::optional<NodeSegmentMaker> maker_;
  std::unique_ptr<NodeSegment> segment_;  // while the single copy is probed
  std::optional<SingleCopyMaker> prober_;
  std::unique_ptr<NodeCells> cells_;
  std::vector<std::unique_ptr<StagedOperation>> spares_;  // after cells_: they leave first
};

template <class T>
NonblockingSetup::Reused<T> NonblockingSetup::exchange(const Call& call) {
  const ProgressHold hold;  // other threads' requests are retired into spares_
  auto kept = spares_.end();
  bool repeats = false;
  for (auto spare = spares_.begin(); spare != spares_.end() && !repeats; ++spare) {
    if (typeid(**spare) != typeid(T)) continue;
    repeats = static_cast<const T&>(**spare).repeats(call);
    if (repeats || kept == spares_.end()) kept = spare;
  }
  if (kept == spares_.end()) return {std::make_unique<T>(*this)};
  std::unique_ptr<T> reused(static_cast<T*>(kept->release()));
  spares_.erase(kept);
  return {std::move(reused), repeats};
}

// The communicator's setup, kept in its context.
NonblockingSetup& nonblocking_setup(const CommContext& ctx);

}  // namespace a2av
