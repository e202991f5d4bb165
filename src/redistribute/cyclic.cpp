// cyclic: MADRE's cyclic scheduler ([Siegel10], Section 3.2, Figure 4). A root walks
// the transmission graph (edge i -> j of weight k: rank i holds k blocks bound for j) depth
// first, with each rank streaming in one outgoing edge at a time, so the root holds O(P)
// state, never the graph. A cycle on the stack becomes one send-receive action on each of
// its ranks, a path ending at a rank with nothing to send a shift (send, send-receives,
// receive); quantity q = the lightest edge, increment c = the least free space on the way
// (at least 1: every rank reserves one extra slot, so cycles without free space complete).
// Then every rank executes its actions in order; every block moves once, straight home.
//
// Beyond the paper: the paper's ranks stream their edges in ascending destination order,
// which on a global transpose schedules 2-cycles in dictionary order, {0,1}, {0,2}, ...,
// so ranks wait in turn (Figure 5(d)). Here rank i streams i+1, i+2, ... (mod P) by
// default: the depth-first walk then closes long cycles i -> i+k -> i+2k ... in which
// every rank takes part at once. dictionary=1 restores the paper's order.
// Messages: no MPI_ANY_SOURCE; the root asks a rank for its next edge and receives from it.
#include "core/check.hpp"
#include "core/tags.hpp"
#include "redistribute/engine.hpp"

#include <algorithm>
#include <array>

namespace a2av::redist {
namespace {

constexpr int kCyclicRoot = 0;

enum Kind : std::int64_t { kSend, kRecv, kSendRecv, kNextEdge, kDone };

// One scheduled action, or a control message from the root.
struct Action {
  std::int64_t kind = kDone;
  std::int64_t to = -1, from = -1;
  std::int64_t quantity = 0, increment = 0;
};

// This rank's outgoing edges in streaming order.
class Edges {
 public:
  Edges(const Engine& e, bool dictionary) : counts_(outgoing_counts(e)) {
    const int p = e.ctx.size, me = e.ctx.rank;
    for (int k = 1; k < p; ++k) {
      const int dest = dictionary ? (k <= me ? k - 1 : k) : (me + k) % p;
      if (counts_[dest] > 0) order_.push_back(dest);
    }
  }
  std::int64_t degree() const { return static_cast<std::int64_t>(order_.size() - next_); }
  // {destination, weight} of the next edge, or {-1, 0}.
  std::array<std::int64_t, 2> next() {
    if (next_ == order_.size()) return {-1, 0};
    const int dest = order_[next_++];
    return {dest, counts_[dest]};
  }

 private:
  std::vector<std::int64_t> counts_;
  std::vector<int> order_;
  std::size_t next_ = 0;
};

class Scheduler {
 public:
  std::int64_t depth = 0;  // blocks on the critical path, after run_root

  Scheduler(const Engine& e, Edges& own) : e_(e), own_(own) {}

  // Root: gathers each rank's first edge and free space, walks the graph, tells every rank
  // its actions; returns the root's own.
  std::vector<Action> run_root(std::vector<std::int64_t> firsts) {
    const int p = e_.ctx.size;
    degree_.resize(p), dest_.resize(p), weight_.resize(p), free_.resize(p);
    stack_pos_.assign(p, -1);
    clock_.assign(p, 0);
    for (int i = 0; i < p; ++i) {
      degree_[i] = firsts[4 * i], dest_[i] = firsts[4 * i + 1];
      weight_[i] = firsts[4 * i + 2], free_[i] = firsts[4 * i + 3];
    }
    for (int i = 0; i < p; ++i)
      while (degree_[i] > 0) walk_from(i);
    for (int i = 0; i < p; ++i)
      if (i != kCyclicRoot) send_to(i, Action{});
    depth = *std::max_element(clock_.begin(), clock_.end());
    return std::move(own_actions_);
  }

 private:
  void walk_from(int start) {
    push(start);
    while (!stack_.empty()) {
      const int r = stack_.back();
      if (degree_[r] == 0) {
        schedule_shift();
      } else if (stack_pos_[dest_[r]] < 0) {
        push(static_cast<int>(dest_[r]));
      } else {
        schedule_cycle(static_cast<std::size_t>(stack_pos_[dest_[r]]));
      }
    }
  }

  void push(int r) {
    stack_pos_[r] = static_cast<std::int64_t>(stack_.size());
    stack_.push_back(r);
  }
  int pop() {
    const int r = stack_.back();
    stack_.pop_back();
    stack_pos_[r] = -1;
    return r;
  }

  std::int64_t increment(std::int64_t q, std::size_t first, std::size_t last) const {
    std::int64_t least = q;
    for (std::size_t k = first; k < last; ++k) least = std::min(least, free_[stack_[k]]);
    return std::min(q, std::max<std::int64_t>(1, least));
  }

  // Stack [s..top] is a cycle: a send-receive on each member.
  void schedule_cycle(std::size_t s) {
    std::int64_t q = weight_[stack_[s]];
    for (std::size_t k = s; k < stack_.size(); ++k) q = std::min(q, weight_[stack_[k]]);
    const std::int64_t c = increment(q, s, stack_.size());
    advance_clocks(s, stack_.size(), q);
    const int last = stack_.back();
    while (stack_.size() > s) {
      const int p1 = pop();
      const int p0 = stack_.size() > s ? stack_.back() : last;
      assign(p1, {kSendRecv, dest_[p1], p0, q, c});
      consume(p1, q);
    }
  }

  // The stack is a path ending at a rank with nothing to send: a shift along it.
  void schedule_shift() {
    if (stack_.size() == 1) return static_cast<void>(pop());
    std::int64_t q = weight_[stack_[0]];
    for (std::size_t k = 0; k + 1 < stack_.size(); ++k) q = std::min(q, weight_[stack_[k]]);
    const std::int64_t c = increment(q, 1, stack_.size() - 1);
    advance_clocks(0, stack_.size(), q);
    const int first = stack_.front(), last = stack_.back();
    for (std::size_t k = 0; k < stack_.size(); ++k) {
      const int r = stack_[k];
      if (k == 0) {
        assign(r, {kSend, dest_[r], -1, q, c});
      } else if (k + 1 == stack_.size()) {
        assign(r, {kRecv, -1, stack_[k - 1], q, c});
      } else {
        assign(r, {kSendRecv, dest_[r], stack_[k - 1], q, c});
      }
    }
    for (std::size_t k = 0; k + 1 < stack_.size(); ++k) consume(stack_[k], q);
    free_[first] += q;
    free_[last] -= q;
    while (!stack_.empty()) pop();
  }

  // The event on stack [first, last) starts when all its ranks are free and moves q blocks.
  void advance_clocks(std::size_t first, std::size_t last, std::int64_t q) {
    std::int64_t start = 0;
    for (std::size_t k = first; k < last; ++k) start = std::max(start, clock_[stack_[k]]);
    for (std::size_t k = first; k < last; ++k) clock_[stack_[k]] = start + q;
  }

  void consume(int r, std::int64_t q) {
    weight_[r] -= q;
    if (weight_[r] > 0) return;
    std::array<std::int64_t, 2> edge;
    if (r == kCyclicRoot) {
      edge = own_.next();
    } else {
      send_to(r, Action{kNextEdge});
      check_mpi(MPI_Recv(edge.data(), 2, MPI_INT64_T, r, tags::kRedistributeControl.tag(),
                         e_.ctx.comm, MPI_STATUS_IGNORE),
                "MPI_Recv");
    }
    dest_[r] = edge[0];
    weight_[r] = edge[1];
    --degree_[r];
  }

  void assign(int r, const Action& a) {
    if (r == kCyclicRoot) return own_actions_.push_back(a);
    send_to(r, a);
  }
  void send_to(int r, const Action& a) {
    check_mpi(MPI_Send(&a, sizeof a, MPI_BYTE, r, tags::kRedistributeControl.tag(), e_.ctx.comm),
              "MPI_Send");
  }

  const Engine& e_;
  Edges& own_;
  std::vector<std::int64_t> degree_, dest_, weight_, free_, stack_pos_, clock_;
  std::vector<int> stack_;
  std::vector<Action> own_actions_;
};

// A non-root rank answers edge requests and collects its actions until told it is done.
std::vector<Action> follow_root(const Engine& e, Edges& edges) {
  std::vector<Action> actions;
  for (;;) {
    Action a;
    check_mpi(MPI_Recv(&a, sizeof a, MPI_BYTE, kCyclicRoot, tags::kRedistributeControl.tag(),
                       e.ctx.comm, MPI_STATUS_IGNORE),
              "MPI_Recv");
    if (a.kind == kDone) return actions;
    if (a.kind != kNextEdge) {
      actions.push_back(a);
      continue;
    }
    const std::array<std::int64_t, 2> edge = edges.next();
    check_mpi(MPI_Send(edge.data(), 2, MPI_INT64_T, kCyclicRoot, tags::kRedistributeControl.tag(),
                       e.ctx.comm),
              "MPI_Send");
  }
}

// The first `count` slots holding blocks bound for `dest`.
std::vector<std::int64_t> slots_bound_for(const BlockStore& store, std::int64_t dest,
                                          std::int64_t count) {
  std::vector<std::int64_t> slots;
  for (std::int64_t s = 0; s < store.slots() && static_cast<std::int64_t>(slots.size()) < count;
       ++s)
    if (store.rank[s] == dest) slots.push_back(s);
  return slots;
}

// The slots are found once per action, not per increment: the blocks to send, and the
// free slots a receive-only action fills; a send-receive receives its first increment into
// free slots and each later one into the slots the previous increment sent from.
void execute(Engine& e, const Action& a) {
  const std::vector<std::int64_t> outgoing =
      a.kind == kRecv ? std::vector<std::int64_t>{} : slots_bound_for(e.store, a.to, a.quantity);
  std::vector<std::int64_t> into =
      a.kind == kSend ? std::vector<std::int64_t>{}
                      : e.store.free_slots(a.kind == kRecv ? a.quantity : a.increment);
  for (std::int64_t done = 0; done < a.quantity; done += a.increment) {
    const std::int64_t n = std::min(a.increment, a.quantity - done);
    std::vector<SlotTransfer> sends, receives;
    std::vector<std::int64_t> sent;
    if (a.kind != kRecv) {
      sent.assign(outgoing.begin() + done, outgoing.begin() + done + n);
      sends.push_back({static_cast<int>(a.to), sent});
    }
    if (a.kind == kRecv) {
      receives.push_back(
          {static_cast<int>(a.from), {into.begin() + done, into.begin() + done + n}});
    } else if (a.kind == kSendRecv) {
      receives.push_back({static_cast<int>(a.from), {into.begin(), into.begin() + n}});
    }
    transfer(e, sends, receives);
    if (a.kind == kSendRecv) into = std::move(sent);
  }
  ++e.stats.steps;
}

}  // namespace

void run_cyclic(Engine& e, bool dictionary_order) {
  e.store.add_extra_slots(1);  // the reserved block
  e.stats.local_copies += e.store.sort_by_destination();
  Edges edges(e, dictionary_order);
  const std::int64_t degree = edges.degree();
  const std::array<std::int64_t, 2> first = edges.next();
  const std::int64_t mine[4] = {degree, first[0], first[1], e.store.free_count() - 1};
  std::vector<std::int64_t> firsts(e.ctx.rank == kCyclicRoot ? 4 * e.ctx.size : 0);
  check_mpi(
      MPI_Gather(mine, 4, MPI_INT64_T, firsts.data(), 4, MPI_INT64_T, kCyclicRoot, e.ctx.comm),
      "MPI_Gather");
  std::vector<Action> actions;
  if (e.ctx.rank == kCyclicRoot) {
    Scheduler scheduler(e, edges);
    actions = scheduler.run_root(firsts);
    e.stats.schedule_depth = scheduler.depth;
  } else {
    actions = follow_root(e, edges);
  }
  for (const Action& a : actions) execute(e, a);
}

}  // namespace a2av::redist
