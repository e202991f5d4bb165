#include "driver/nonblocking_setup.hpp"

#include "core/check.hpp"
#include "core/progress_request.hpp"
#include "core/spin.hpp"

#include <algorithm>
#include <functional>
#include <string_view>

namespace a2av {

StagedOperation::~StagedOperation() {
  // Only an operation whose request could not be made dies before it begins.
  if (!begun_) std::erase(setup_.waiting_, this);
}

bool StagedOperation::progress() {
  if (!begun_) setup_.advance();
  complete_ = begun_ && (failed_ || advance());
  return complete_;
}

void StagedOperation::retire() {
  // Released last: a communicator freed meanwhile ends here, with its spares (this one too).
  const ContextPin pin = std::move(pin_);
  if (complete_ && !failed_ && error() == MPI_SUCCESS && reusable() &&
      temp_bytes() <= NonblockingSetup::kSpareBytes)
    return setup_.keep(this);
  delete this;
}

void StagedOperation::begin_now() {
  begun_ = true;
  try {
    begin();
  } catch (const Error&) {  // posted() has cancelled what it had posted
    note(MPI_ERR_OTHER);
    failed_ = true;
  }
}

NonblockingSetup::~NonblockingSetup() {
  try {
    while (step_ != Cells::kUnwanted && step_ != Cells::kSettled) advance_cells(true);
  } catch (const Error&) {  // a destructor must not throw; the communicator is being freed
  }
}

void NonblockingSetup::want_cells(std::size_t part_bytes) {
  if (step_ != Cells::kUnwanted) return;
  const ProgressHold hold;  // other threads' progress reads step_
  part_bytes_ = part_bytes;
  step_ = Cells::kWanted;
}

bool NonblockingSetup::cells_refused() const {
  const ProgressHold hold;
  return step_ == Cells::kSettled && !cells_;
}

void NonblockingSetup::start(StagedOperation& op) {
  const ProgressHold hold;
  op.pin_ = ContextPin(ctx_);
  waiting_.push_back(&op);
  advance();
}

void NonblockingSetup::advance() {
  if (!duplicates_ready(ctx_)) return;
  while (advance_cells(false)) {
  }
  while (!waiting_.empty() && ready_for(*waiting_.front())) {
    StagedOperation* op = waiting_.front();
    waiting_.pop_front();
    op->begin_now();
  }
}

void NonblockingSetup::begin_all() {
  for (;;) {
    {
      const ProgressHold hold;
      advance();
      if (waiting_.empty()) return;
    }
    yield_core();  // the other ranks' steps, which this rank's next ones wait for
  }
}

void NonblockingSetup::keep(StagedOperation* op) {
  std::unique_ptr<StagedOperation> kept(op);
  if (spares_.size() < kSpares) spares_.push_back(std::move(kept));
}

bool NonblockingSetup::ready_for(const StagedOperation& op) const {
  return !op.needs_cells_ || step_ == Cells::kSettled;
}

// Once the duplicates exist (advance() or the destructor, after the context's deletion waited
// for them). True if it took a step.
bool NonblockingSetup::advance_cells(bool wait) {
  int done = 1;
  switch (step_) {
    case Cells::kWanted:
      find_node();
      return true;
    case Cells::kFindingNode:
      check_mpi(wait ? MPI_Wait(&finding_, MPI_STATUS_IGNORE)
                     : MPI_Test(&finding_, &done, MPI_STATUS_IGNORE),
                wait ? "MPI_Wait" : "MPI_Test");
      if (done) node_found();
      return done != 0;
    case Cells::kMaking:
      if (!maker_->advance(wait)) return false;
      segment_made(maker_->take());
      maker_.reset();
      return true;
    case Cells::kProbing:
      if (!prober_->advance(wait)) return false;
      settle(std::move(segment_), prober_->take());
      prober_.reset();
      return true;
    default:
      return false;
  }
}

// Whether every rank's processor name is this rank's: the smallest hash and the smallest
// complement, which is the complement of the largest hash.
void NonblockingSetup::find_node() {
  const int q = emulated_node_size();
  if (q > 0 && q < ctx_.size) return settle(nullptr);  // ranks of several emulated nodes
  char name[MPI_MAX_PROCESSOR_NAME];
  int length = 0;
  check_mpi(MPI_Get_processor_name(name, &length), "MPI_Get_processor_name");
  hashes_[0] = std::hash<std::string_view>{}(std::string_view(name, length));
  hashes_[1] = ~hashes_[0];
  check_mpi(MPI_Iallreduce(MPI_IN_PLACE, hashes_.data(), 2, MPI_UINT64_T, MPI_MIN, ctx_.nonblocking,
                           &finding_),
            "MPI_Iallreduce");
  step_ = Cells::kFindingNode;
}

void NonblockingSetup::node_found() {
  if (hashes_[0] != ~hashes_[1]) return settle(nullptr);  // another node's name
  maker_.emplace(ctx_.nonblocking, part_bytes_);
  step_ = Cells::kMaking;
}

// Where every rank has its segment (an outcome they agree on), whether they can read each
// other's memory.
void NonblockingSetup::segment_made(std::unique_ptr<NodeSegment> segment) {
  if (!segment || !segment->ok()) return settle(nullptr);
  segment_ = std::move(segment);
  prober_.emplace(ctx_.nonblocking);
  step_ = Cells::kProbing;
}

void NonblockingSetup::settle(std::unique_ptr<NodeSegment> segment, SingleCopy single_copy) {
  if (segment && segment->ok())
    cells_.reset(new NodeCells{std::move(segment),
                               std::move(single_copy),
                               oversubscribed(ctx_.size),
                               {},
                               0,
                               std::vector<std::uint64_t>(static_cast<std::size_t>(ctx_.size))});
  step_ = Cells::kSettled;
}

NonblockingSetup& nonblocking_setup(const CommContext& ctx) {
  if (NonblockingSetup* kept = ctx.kept.find<NonblockingSetup>()) return *kept;
  return ctx.kept.keep(std::make_shared<NonblockingSetup>(ctx));
}

}  // namespace a2av
