// node_aware: for ranks on several nodes. Inside a node, blocks pass through shared memory;
// between nodes, each pair of nodes exchanges one aggregated message each way, carrying
// every block from any rank of one node to any rank of the other. The remote nodes are
// split among a node's ranks ("agents"), so that every rank injects, not one leader.
//
// Each rank stages its small blocks (at most `direct_above` bytes) in its part of a
// node-wide segment, one section per destination node: a header (its error code and the
// size of each block) and the blocks back to back; then publishes the exchange's number.
// The agent for remote node M sends M's sections of all its node's ranks as one message
// (an MPI datatype over the sections where they lie, no packing copy) to its partner on M,
// and receives M's message for its node into a slot of its part. Where ranks share cores,
// whichever rank first finds the node's sections all published sends the messages not yet
// claimed (one atomic word per remote node), so they need not wait for their agents' turns.
// Each rank copies its blocks out of its node peers' sections and out of the agents' slots.
// Larger blocks between two ranks of one node are read by the receiver straight from the
// sender's buffer where the node allows cross-memory attach (core/single_copy.hpp): the sender
// publishes their addresses beside its sections and returns once its node's readers have
// counted their reads. Other larger blocks travel as direct messages, announced in the headers
// (deferrable_marker), as TuNA's do. Under the bound on requests in flight (docs/design.md): a rank
// whose large sends exceed half of three quarters of it defers them all until after the aggregated
// exchange, then sends them step by step in spread_out's order, as its receivers, told by the
// markers, receive them; a rank receives its large blocks early (before their headers come) only if
// they fit in the other half, else as their headers come, at most that half at a time. The
// agents' messages, about 2(N-1)/Q per rank, take what the large blocks leave of the bound (a
// quarter at least): each rank opens its node pairs in one order for all (by the pair of
// nodes), so the lowest pair not done is open on both agents and the window slides.
//
// Messages between nodes: N-1 per node each way (agents=1: all from one rank; default:
// spread over the node's ranks). Copies of a small block: two (in, out), plus the network.
// With radix=R >= 2 (nodes of one size) the nodes exchange by TuNA's rounds instead, each
// rank in the column of its local index (node_aware_rounds.hpp): no agents and no slots;
// every rank reads its column blocks from its node's sections and takes its own blocks from
// the column blocks that reach it; the rounds in flight take the agents' share of the bound.
// Segment per rank, for the communicator's life (two sets by exchange parity, as
// shared_memory's cells): staging of N * 64 + P * (8 + t) bytes and slots of about the same,
// t = min(direct_above, 1 MiB / P): at most about 4 MiB + 64 N + 32 P bytes, and 16 Q bytes of
// addresses; the node's first rank holds 8 N bytes of claims besides. No temporary memory per
// call.
//
// Errors are agreed in band: a rank that rejected its arguments publishes its code in its
// section headers, forwards as an agent, and drops what is addressed to it. Every rank
// reads every source's header, so every rank learns every error.
//
// Nodes: what MPI_COMM_TYPE_SHARED finds, or groups of A2AV_EMULATE_NODES ranks; any sizes,
// any numbering. Where a segment cannot be made on some node, every rank runs spread_out
// instead, decided together on first use.
// Sources: Open MPI coll/han alltoallv (one partner per remote node, node-wide packing);
// Fan et al. [Fan24], Section IV and Figure 4 (intra-node aggregation
// before the inter-node phase; coalesced messages between nodes).
#include "alltoallv/node_aware_cells.hpp"
#include "alltoallv/node_aware_rounds.hpp"
#include "alltoallv/registry.hpp"
#include "alltoallv/tuna_schedule.hpp"
#include "core/check.hpp"
#include "core/environment.hpp"
#include "core/node_segment.hpp"
#include "core/spin.hpp"
#include "core/tags.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <vector>

namespace a2av {

namespace {

// A column block's word for a rank that rejected its arguments: this plus its code, far
// below any large-block marker.
constexpr std::int64_t kFailedWord = std::numeric_limits<std::int64_t>::min();

// A section's header as it lies in shared memory or in a received message.
// Words where sections and column blocks lie back to back in a message, at any byte offset:
// read and written by memcpy, never through an int64_t pointer (unaligned loads are undefined,
// and fault on some CPUs).
std::int64_t load_word(const std::byte* at, int index) {
  std::int64_t word;
  std::memcpy(&word, at + 8 * index, sizeof word);
  return word;
}
void store_word(std::byte* at, int index, std::int64_t word) {
  std::memcpy(at + 8 * index, &word, sizeof word);
}

struct AgentHeader {
  const std::byte* bytes;
  std::int64_t code() const { return load_word(bytes, 0); }
  std::int64_t size(int local) const { return load_word(bytes, 1 + local); }
};

// The bytes of a section's blocks that travel in it (sizes >= 0; < 0: sent directly).
std::int64_t aggregated_bytes(AgentHeader h, int ranks) {
  std::int64_t sum = 0;
  for (int i = 0; i < ranks; ++i) sum += std::max<std::int64_t>(0, h.size(i));
  return sum;
}

// Where block `local` lies in a section's data.
const std::byte* block_in(AgentHeader h, int local, int ranks) {
  const std::byte* data = h.bytes + header_bytes(ranks);
  for (int i = 0; i < local; ++i) data += std::max<std::int64_t>(0, h.size(i));
  return data;
}

// One exchange on one rank. `ex` is null for a rank that rejected its arguments (`code`):
// it takes part with empty blocks and drops what is addressed to it.
class NodeAwareRank : ColumnBlocks {
 public:
  NodeAwareRank(const CommContext& ctx, NodeAwareCells& c, const AlgorithmCall* ex, int code,
                PeerErrors* peers, Mismatch& mismatch, MemoryTracker& memory)
      : ctx_(ctx),
        cells_(c),
        ex_(ex),
        code_(code),
        peers_(peers),
        mismatch_(mismatch),
        memory_(memory) {
    exchange_ = ++ctx.exchanges;  // shared with shared_memory: one sequence per communicator
    parity_ = exchange_ % 2;
  }

  void run() {
    large_sends_ = ex_ ? large_requests(ex_->send) : 0;
    large_receives_ = ex_ ? large_requests(ex_->recv) : 0;
    defer_ = large_sends_ > large_half_;
    agent_budget_ = agents_share();
    post_early_receives();
    stage();
    if (ex_) copy_self_block(*ex_);
    for (int s = 0; s < node_size(cells_, cells_.node); ++s)
      if (s != cells_.local) local_pending_.push_back(s);
    if (cells_.radix) {
      for (int idle = 0; !all_local_published();)
        idle = take_local() ? 0 : idle + 1, wait_a_little(idle);
      run_column_rounds({ctx_.comm, cells_.column, cells_.node}, cells_.radix, agent_budget_, *this,
                        memory_);
    } else {
      pairs_ = in_pair_order(cells_.assigned[cells_.local]);
      for (int m = 0; m < node_count(cells_); ++m)
        if (m != cells_.node) remote_pending_.push_back(m);
    }
    for (int idle = 0; !done();) idle = step() ? 0 : idle + 1, wait_a_little(idle);
    direct_.wait_all(mismatch_);
    finish_early_receives();
    late_.wait_all(mismatch_);
    if (defer_ || !deferred_.empty()) exchange_deferred();
    wait_for_readers();
  }

 private:
  int direct_tag() const { return tags::kNodeAwareDirect.at(parity_); }
  static int deferred_tag() { return tags::kNodeAwareDeferred.tag(); }
  bool large(std::int64_t bytes) const { return bytes > cells_.threshold; }
  // A large block between this rank and `peer` that the receiver reads from the sender's
  // buffer (both on this node, which allows it) rather than receives as a message.
  bool read_by_address(int peer) const {
    return cells_.single_copy.ok() && cells_.node_of[peer] == cells_.node;
  }
  // Large blocks that travel as messages: not those read by address.
  bool sent_directly(int peer, std::int64_t bytes) const {
    return large(bytes) && !read_by_address(peer);
  }

  // The agents' share of the bound: what this rank's large blocks cannot take while the
  // node pairs' messages move (deferred sends go after them).
  int agents_share() const {
    const std::int64_t large =
        (defer_ ? 0 : large_sends_) + std::min<std::int64_t>(large_half_, large_receives_);
    return static_cast<int>(std::max<std::int64_t>(limit_ - large, std::max(2, limit_ / 4)));
  }

  // Requests this rank's large blocks take, sent or received (`blocks`: this rank's counts).
  std::int64_t large_requests(const ByteBlocks& blocks) const {
    std::int64_t n = 0;
    for (int peer = 0; peer < ctx_.size; ++peer)
      if (peer != ctx_.rank && sent_directly(peer, blocks.bytes[peer]))
        n += direct_.requests_for(blocks.bytes[peer]);
    return n;
  }

  // The deferred large blocks after the aggregated exchange, step d receiving from rank-d and
  // sending to rank+d: the order in which the bound slides without deadlock (core/p2p.hpp).
  // Every rank that sends or receives one takes part; a block this rank does not take (its
  // count disagrees, or it rejected its arguments) is dropped at its step.
  void exchange_deferred() {
    Requests steps(nullptr, limit_);
    for (int d = 1; d < ctx_.size; ++d) {
      const int to = (ctx_.rank + d) % ctx_.size, from = (ctx_.rank - d + ctx_.size) % ctx_.size;
      const bool sends = defer_ && sent_directly(to, ex_->send.bytes[to]);
      const auto incoming = deferred_.find(from);
      const bool comes = incoming != deferred_.end();
      const bool takes = comes && ex_ && incoming->second == ex_->recv.bytes[from];
      steps.exchange(takes ? ex_->recv.at(from) : nullptr, takes ? incoming->second : 0, from,
                     sends ? ex_->send.at(to) : nullptr, sends ? ex_->send.bytes[to] : 0, to,
                     deferred_tag(), ctx_.comm);
      if (comes && !takes) {
        if (ex_) note_mismatch(from, incoming->second);
        drop_pieces(incoming->second, from, deferred_tag(), ctx_.comm);
      }
    }
    steps.wait_all(mismatch_);
  }
  std::byte* part(int local) const { return cells_.segment->part(local); }
  // By remote node: the last exchange whose message for it a rank of this node claimed.
  std::uint64_t* claims() const {
    return reinterpret_cast<std::uint64_t*>(part(0) + kLine +
                                            2 * (cells_.staging_bytes + cells_.slots_bytes[0]) +
                                            addresses_bytes(node_size(cells_, cells_.node)));
  }
  std::uint64_t& published(int local) const {
    return *reinterpret_cast<std::uint64_t*>(part(local));
  }
  // The blocks of `local`'s that its node's ranks have read from its buffer (this exchange).
  std::uint64_t& read_by_peers(int local) const {
    return *reinterpret_cast<std::uint64_t*>(part(local) + 8);
  }
  // Where `local`'s large block for the node's rank `reader` lies in its send buffer.
  const std::byte*& address(int local, int reader) const {
    std::byte* table = part(local) + kLine + 2 * (cells_.staging_bytes + cells_.slots_bytes[local]);
    return reinterpret_cast<const std::byte**>(
        table)[parity_ * node_size(cells_, cells_.node) + reader];
  }
  std::byte* section(int local, int node) const {
    return part(local) + kLine + parity_ * cells_.staging_bytes + cells_.section_at[node];
  }
  // The slot for remote node `node`, in its agent's part: a line (exchange, bytes), then the
  // message.
  std::byte* slot(int node) const {
    const int agent = agent_of(cells_, cells_.node, node);
    return part(agent) + kLine + 2 * cells_.staging_bytes + parity_ * cells_.slots_bytes[agent] +
           cells_.slot_at[node];
  }

  // My sections: header and small blocks; large blocks sent directly.
  void stage() {
    for (int m = 0; m < node_count(cells_); ++m) {
      auto* words = reinterpret_cast<std::int64_t*>(section(cells_.local, m));
      words[0] = code_;
      std::byte* data = section(cells_.local, m) + header_bytes(node_size(cells_, m));
      for (int i = 0; i < node_size(cells_, m); ++i) {
        const int to = cells_.ranks[m][i];
        const std::int64_t bytes = ex_ && to != ctx_.rank ? ex_->send.bytes[to] : 0;
        if (large(bytes) && read_by_address(to)) {
          words[1 + i] = deferrable_marker({bytes, false});
          address(cells_.local, i) = ex_->send.at(to);
          ++read_by_address_;
          continue;
        }
        if (large(bytes)) {
          words[1 + i] = deferrable_marker({bytes, defer_});
          if (!defer_) direct_.isend(ex_->send.at(to), bytes, to, direct_tag(), ctx_.comm);
          continue;
        }
        words[1 + i] = bytes;
        if (bytes > 0) copy_on_node(data, ex_->send.at(to), bytes);
        data += bytes;
      }
    }
    store_release(published(cells_.local), exchange_);
  }

  // Large blocks this rank expects are received as soon as the call starts, so that they
  // need not wait for their header (a node's message, for remote senders); the header then
  // confirms the size or the receive is cancelled. Blocks beyond one message piece wait, and
  // all of them where they would not fit in half the bound.
  void post_early_receives() {
    if (!ex_ || large_receives_ > large_half_) return;
    early_.assign(ctx_.size, MPI_REQUEST_NULL);
    for (int from = 0; from < ctx_.size; ++from) {
      const std::int64_t bytes = ex_->recv.bytes[from];
      if (from == ctx_.rank || !sent_directly(from, bytes) || bytes > max_piece()) continue;
      check_mpi(MPI_Irecv(ex_->recv.at(from), static_cast<int>(bytes), MPI_BYTE, from, direct_tag(),
                          ctx_.comm, &early_[from]),
                "MPI_Irecv");
      InFlight::posted(1);
    }
  }

  // The header of `from` disagrees with the early receive: cancels it, or, if the sender's
  // direct block already matched it, notes the mismatch and drops the block's other pieces.
  // Returns whether the block is dealt with.
  bool withdraw_early_receive(int from, std::int64_t bytes) {
    [[maybe_unused]] const WorldErrorsReturn guard;  // a truncated receive is a mismatch
    MPI_Status status;
    int cancelled = 0;
    MPI_Cancel(&early_[from]);
    MPI_Wait(&early_[from], &status);
    InFlight::ended(1);
    MPI_Test_cancelled(&status, &cancelled);
    if (cancelled) return false;
    note_mismatch(from, bytes);
    if (bytes > max_piece()) drop_pieces(bytes - max_piece(), from, direct_tag(), ctx_.comm);
    return true;
  }

  void finish_early_receives() {
    [[maybe_unused]] const WorldErrorsReturn guard;  // a truncated receive is a mismatch
    for (int from = 0; from < static_cast<int>(early_.size()); ++from) {
      if (early_[from] == MPI_REQUEST_NULL) continue;
      MPI_Status status;
      int bytes = -1;
      if (MPI_Wait(&early_[from], &status) == MPI_SUCCESS) MPI_Get_count(&status, MPI_BYTE, &bytes);
      InFlight::ended(1);
      if (bytes != ex_->recv.bytes[from]) note_mismatch(from, bytes);
    }
  }

  void note_mismatch(int from, std::int64_t bytes) {
    mismatch_.note(fmt::format("rank {} sent {} bytes where the receive count says {}", from, bytes,
                               ex_->recv.bytes[from]));
  }

  int partner(int remote) const {
    return cells_.ranks[remote][agent_of(cells_, remote, cells_.node)];
  }

  // Remote nodes in the order every rank takes its node pairs: by the pair (lower node, higher
  // node). The lowest pair not yet done is then open on both of its agents, so a window over
  // that order slides without deadlock, as spread_out's steps do (core/p2p.hpp).
  std::vector<int> in_pair_order(std::vector<int> remotes) const {
    const int me = cells_.node;
    auto pair = [me](int m) { return std::pair{std::min(me, m), std::max(me, m)}; };
    std::sort(remotes.begin(), remotes.end(), [&](int a, int b) { return pair(a) < pair(b); });
    return remotes;
  }

  bool all_local_published() const {
    for (int s = 0; s < node_size(cells_, cells_.node); ++s)
      if (load_acquire(published(s)) < exchange_) return false;
    return true;
  }

  int aggregate_tag(int from_node) const {
    return tags::kNodeAwareAggregates.at(2 * from_node + static_cast<int>(parity_));
  }

  // Whether this rank takes the sending of this exchange's message for `remote`: the first
  // rank of the node to find every rank published claims it. A rank claims its own remote
  // nodes; where ranks share cores, also any other still unclaimed, so that the message
  // leaves as soon as the node's last rank has staged instead of when the agent gets a core.
  bool claim(int remote) const {
    std::atomic_ref<std::uint64_t> word(claims()[remote]);
    std::uint64_t seen = word.load(std::memory_order_relaxed);
    while (seen < exchange_)
      if (word.compare_exchange_weak(seen, exchange_, std::memory_order_relaxed)) return true;
    return false;
  }

  // To remote node `m`, every local rank's section for it, as one message.
  MPI_Request send_sections(int m) const {
    const int q = node_size(cells_, cells_.node), q_m = node_size(cells_, m);
    std::vector<int> lengths(q);
    std::vector<MPI_Aint> places(q);
    for (int s = 0; s < q; ++s) {
      const AgentHeader h{section(s, m)};
      lengths[s] = static_cast<int>(header_bytes(q_m) + aggregated_bytes(h, q_m));
      MPI_Get_address(section(s, m), &places[s]);
    }
    MPI_Datatype type;
    check_mpi(MPI_Type_create_hindexed(q, lengths.data(), places.data(), MPI_BYTE, &type),
              "MPI_Type_create_hindexed");
    check_mpi(MPI_Type_commit(&type), "MPI_Type_commit");
    MPI_Request request;
    check_mpi(
        MPI_Isend(MPI_BOTTOM, 1, type, partner(m), aggregate_tag(cells_.node), ctx_.comm, &request),
        "MPI_Isend");
    MPI_Type_free(&type);
    InFlight::posted(1);
    return request;
  }

  // Whether `request` (if any) has completed; counts it out of the bound when it has.
  static bool completed(MPI_Request& request, MPI_Status* status = MPI_STATUS_IGNORE) {
    if (request == MPI_REQUEST_NULL) return true;
    int flag = 0;
    check_mpi(MPI_Test(&request, &flag, status), "MPI_Test");
    if (flag) InFlight::ended(1);
    return flag != 0;
  }

  // Opens this rank's next node pairs while the agents' share of the bound has room for two
  // requests each (one at least is always open): the receive into the pair's slot now, the
  // send once the node's sections are published. ANY_SOURCE: any rank of the remote node may
  // have claimed the message.
  bool open_pairs() {
    bool moved = false;
    while (next_pair_ < pairs_.size() && (open_.empty() || agent_requests_ + 2 <= agent_budget_)) {
      const int m = pairs_[next_pair_++];
      OpenPair& p = open_.emplace_back(m);
      check_mpi(MPI_Irecv(slot(m) + kLine, static_cast<int>(slot_capacity(cells_, m, cells_.node)),
                          MPI_BYTE, MPI_ANY_SOURCE, aggregate_tag(m), ctx_.comm, &p.receive),
                "MPI_Irecv");
      InFlight::posted(1);
      agent_requests_ += 2;  // the send's place is kept until it is posted or not needed
      moved = true;
    }
    return moved;
  }

  // Sends of open pairs, once every local rank has staged: this rank's where it claims them
  // (where another rank of its node did, that one sends), and where ranks share cores others'
  // still unclaimed, while the agents' share of the bound has room for them.
  bool post_sends() {
    if (cells_.radix || (!published_ && !(published_ = all_local_published()))) return false;
    bool moved = false;
    for (OpenPair& p : open_) {
      if (p.send_decided) continue;
      p.send_decided = moved = true;
      if (claim(p.node))
        p.send = send_sections(p.node);
      else
        --agent_requests_;
    }
    for (int m = 0; ctx_.cores_shared && m < node_count(cells_) &&
                    agent_requests_ < agent_budget_ && !helped_all_;
         ++m) {
      if (m != cells_.node && agent_of(cells_, cells_.node, m) != cells_.local && claim(m)) {
        helping_.push_back(send_sections(m));
        ++agent_requests_;
        moved = true;
      }
    }
    helped_all_ = true;  // one pass: a message claimed later is its agent's to send
    return moved;
  }

  // Completes what has arrived or left: a pair's message is published to the node in its slot.
  bool test_pairs() {
    bool moved = false;
    std::erase_if(open_, [&](OpenPair& p) {
      MPI_Status status;
      if (p.receive != MPI_REQUEST_NULL && completed(p.receive, &status)) {
        int bytes = 0;
        MPI_Get_count(&status, MPI_BYTE, &bytes);
        std::byte* line = slot(p.node);
        reinterpret_cast<std::int64_t*>(line)[1] = bytes;
        store_release(*reinterpret_cast<std::uint64_t*>(line), exchange_);
        --agent_requests_;
        moved = true;
      }
      if (p.send != MPI_REQUEST_NULL && completed(p.send)) --agent_requests_, moved = true;
      return p.receive == MPI_REQUEST_NULL && p.send_decided && p.send == MPI_REQUEST_NULL;
    });
    std::erase_if(helping_, [&](MPI_Request& r) {
      if (!completed(r)) return false;
      --agent_requests_;
      return moved = true;
    });
    return moved;
  }

  bool pairs_done() const {
    return next_pair_ == pairs_.size() && open_.empty() && helping_.empty();
  }

  // The block `from` sent me, as its header announced it (data: where it lies if aggregated).
  void take(int from, std::int64_t code, std::int64_t size, const std::byte* data) {
    const LargeBlock block = size < 0 ? unmark(size) : LargeBlock{size, false};
    const std::int64_t bytes = block.bytes;
    if (!early_.empty() && early_[from] != MPI_REQUEST_NULL) {
      if (code == A2AV_SUCCESS && size < 0 && !block.deferred && bytes == ex_->recv.bytes[from])
        return;  // posted
      // A deferred block has a tag of its own: the early receive cannot have matched it.
      if (withdraw_early_receive(from, bytes)) return;
    }
    if (code != A2AV_SUCCESS) {
      if (peers_) peers_->note(from, static_cast<int>(code));
      return;
    }
    if (block.deferred) {  // after the aggregated exchange, taken or dropped then
      deferred_[from] = bytes;
      return;
    }
    if (!ex_) {
      if (size < 0) drop_pieces(bytes, from, direct_tag(), ctx_.comm);
      return;
    }
    if (bytes != ex_->recv.bytes[from]) {
      note_mismatch(from, bytes);
      if (size < 0) drop_pieces(bytes, from, direct_tag(), ctx_.comm);
    } else if (size < 0) {
      late_.irecv(ex_->recv.at(from), bytes, from, direct_tag(), ctx_.comm);
    } else if (bytes > 0) {
      copy_on_node(ex_->recv.at(from), data, bytes);
    }
  }

  bool take_local() {
    const std::size_t before = local_pending_.size();
    std::erase_if(local_pending_, [&](int s) {
      if (load_acquire(published(s)) < exchange_) return false;
      const AgentHeader h{section(s, cells_.node)};
      const int q = node_size(cells_, cells_.node);
      const int from = cells_.ranks[cells_.node][s];
      if (h.size(cells_.local) < 0 && read_by_address(from))
        read_from(s, unmark(h.size(cells_.local)).bytes);
      else
        take(from, h.code(), h.size(cells_.local), block_in(h, cells_.local, q));
      return true;
    });
    return local_pending_.size() != before;
  }

  // The large block of the node's rank `local` for me, from its buffer; counted as read even
  // where I do not take it (counts that disagree, or this rank rejected its arguments), so
  // that its sender does not wait for it.
  void read_from(int local, std::int64_t bytes) {
    const int from = cells_.ranks[cells_.node][local];
    if (ex_ && bytes == ex_->recv.bytes[from]) {
      if (auto refused =
              cells_.single_copy.read(ex_->recv.at(from), local, address(local, cells_.local),
                                      static_cast<std::size_t>(bytes)))
        mismatch_.note(fmt::format("the block from rank {}: {}", from, refused->what()),
                       refused->code());
    } else if (ex_)
      note_mismatch(from, bytes);
    std::atomic_ref<std::uint64_t>(read_by_peers(local)).fetch_add(1, std::memory_order_acq_rel);
  }

  // A sender's blocks read from its buffer must stay there until they have been; the count
  // goes back to 0 before this rank publishes its next exchange, the only one readers see next.
  void wait_for_readers() {
    std::atomic_ref<std::uint64_t> count(read_by_peers(cells_.local));
    for (int idle = 0; count.load(std::memory_order_acquire) < read_by_address_;)
      wait_a_little(++idle);
    count.fetch_sub(read_by_address_, std::memory_order_acq_rel);
  }

  // Walks the message from `remote` (one section per rank there) and takes my blocks.
  void take_message(int remote, const std::byte* message, std::int64_t bytes) {
    const int q = node_size(cells_, cells_.node);
    const std::byte* at = message;
    for (const int from : cells_.ranks[remote]) {
      const AgentHeader h{at};
      take(from, h.code(), h.size(cells_.local), block_in(h, cells_.local, q));
      at += header_bytes(q) + aggregated_bytes(h, q);
    }
    if (at != message + bytes)
      fail(A2AV_ERR_MPI,
           "node_aware: a message from node {} has {} bytes where its sections "
           "make {}",
           remote, bytes, at - message);
  }

  // The column block for rank (node, my local index): one word per rank of my node (its
  // block's size or large-block marker, or its error code), then their blocks.
  std::int64_t bytes_for(int node) const override {
    const int q = node_size(cells_, cells_.node);
    std::int64_t bytes = column_header_bytes(q);
    for (int s = 0; s < q; ++s)
      bytes += std::max<std::int64_t>(0, section_header(s, node).size(cells_.local));
    return bytes;
  }
  void write_for(int node, std::byte* out) const override {
    const int q = node_size(cells_, cells_.node), q_node = node_size(cells_, node);
    std::byte* data = out + column_header_bytes(q);
    for (int s = 0; s < q; ++s) {
      const AgentHeader h = section_header(s, node);
      const std::int64_t size = h.size(cells_.local);
      store_word(out, s, h.code() ? kFailedWord + h.code() : size);
      if (size > 0) copy_on_node(data, block_in(h, cells_.local, q_node), size);
      data += std::max<std::int64_t>(0, size);
    }
  }
  void arrived(int node, const std::byte* block, std::int64_t bytes) override {
    const int q = node_size(cells_, node);
    const std::byte* data = block + column_header_bytes(q);
    for (int s = 0; bytes >= column_header_bytes(q) && s < q; ++s) {
      const std::int64_t word = load_word(block, s);
      const bool failed = word < kFailedWord / 2;
      const std::int64_t size = failed ? 0 : word;
      if (data + std::max<std::int64_t>(0, size) > block + bytes) break;
      take(cells_.ranks[node][s], failed ? word - kFailedWord : std::int64_t{A2AV_SUCCESS}, size,
           data);
      data += std::max<std::int64_t>(0, size);
    }
    if (data != block + bytes || bytes < column_header_bytes(q))
      fail(A2AV_ERR_MPI,
           "node_aware: a column block from node {} has {} bytes where its sizes make {}", node,
           bytes, data - block);
  }
  void waiting(int idle) override {
    if (!take_local()) wait_a_little(idle);
  }
  AgentHeader section_header(int local, int node) const { return {section(local, node)}; }

  bool take_remote() {
    const std::size_t before = remote_pending_.size();
    std::erase_if(remote_pending_, [&](int m) {
      const std::byte* line = slot(m);
      if (load_acquire(*reinterpret_cast<const std::uint64_t*>(line)) < exchange_) return false;
      take_message(m, line + kLine, reinterpret_cast<const std::int64_t*>(line)[1]);
      return true;
    });
    return remote_pending_.size() != before;
  }

  bool done() const { return pairs_done() && local_pending_.empty() && remote_pending_.empty(); }

  bool step() {
    bool moved = false;
    moved |= open_pairs();
    moved |= post_sends();
    moved |= test_pairs();
    moved |= open_pairs();
    moved |= take_local();
    moved |= take_remote();
    return moved;
  }

  // Spins where every rank of the node has a core, else gives the core away; lets MPI
  // progress now and then (a peer's agent may wait for this rank's messages).
  void wait_a_little(int idle) const {
    if (idle == 0) return;
    const bool shared_cores = ctx_.cores_shared;
    if (!shared_cores && idle < 4096) return pause_briefly();
    if (idle % 16 == 15) {
      int found = 0;
      check_mpi(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, ctx_.comm, &found, MPI_STATUS_IGNORE),
                "MPI_Iprobe");
    }
    if (shared_cores) yield_core();
  }

  const CommContext& ctx_;
  NodeAwareCells& cells_;
  const AlgorithmCall* ex_;
  int code_;
  PeerErrors* peers_;
  Mismatch& mismatch_;
  MemoryTracker& memory_;
  std::uint64_t exchange_ = 0;
  std::size_t parity_ = 0;
  int limit_ = InFlight::limit();
  // The large blocks' sends (unless deferred) and receives each take at most half of three
  // quarters of the bound; the agents' messages what this rank's large blocks leave of it, at
  // least the last quarter.
  int large_half_ = std::max(1, (limit_ - limit_ / 4) / 2);
  std::int64_t large_sends_ = 0, large_receives_ = 0;  // requests this rank's large blocks take
  std::uint64_t read_by_address_ = 0;  // this rank's blocks its node's ranks read from its buffer
  int agent_budget_ = 0;
  bool defer_ = false;  // this rank's large blocks go after the aggregated exchange
  Requests direct_;     // large blocks sent during it
  // Large blocks received as their headers come: their sends are posted, so waiting for room
  // here cannot deadlock.
  Requests late_{nullptr, large_half_};
  std::map<int, std::int64_t> deferred_;  // by source: the bytes of a deferred block for me
  // The agents' messages: this rank's node pairs (pair order), those open, the sends it
  // makes for others' pairs, and the requests they hold or keep a place for, within
  // agent_budget_ (at least one pair).
  struct OpenPair {
    explicit OpenPair(int m) : node(m) {}
    int node;
    MPI_Request receive = MPI_REQUEST_NULL, send = MPI_REQUEST_NULL;
    bool send_decided = false;  // sent by this rank, or claimed by another
  };
  std::vector<int> pairs_;
  std::size_t next_pair_ = 0;
  std::vector<OpenPair> open_;
  std::vector<MPI_Request> helping_;
  int agent_requests_ = 0;
  bool published_ = false, helped_all_ = false;
  std::vector<MPI_Request> early_;  // by source; MPI_REQUEST_NULL where none
  std::vector<int> local_pending_, remote_pending_;
};

}  // namespace

namespace {

void run_node_aware(const AlgorithmCall& ex, const ParamValues& params) {
  if (ex.ctx.size == 1) return copy_self_block(ex);
  NodeAwareCells& cells = cells_of(ex.ctx, params);
  if (!cells.usable) return spread_out_algorithm().run(ex, params);
  NodeAwareRank(ex.ctx, cells, &ex, A2AV_SUCCESS, ex.in_band, ex.mismatch, ex.memory).run();
}

void announce_error_node_aware(const CommContext& ctx, const ParamValues& params, int code,
                               PeerErrors& peers) {
  NodeAwareCells& cells = cells_of(ctx, params);
  if (!cells.usable) return announce_error(ctx.comm, code, peers);
  Mismatch ignored;
  MemoryTracker memory;
  NodeAwareRank(ctx, cells, nullptr, code, &peers, ignored, memory).run();
}

// The segment is the communicator's, not the call's; TuNA over the nodes adds its store and
// round messages on uniform nodes.
std::int64_t node_aware_bound(const BoundInput& in, const ParamValues& p) {
  const int q = in.node_size;
  if (p[kNodeRadix] == 0 || q <= 0 || q >= in.size || in.size % q != 0) return 0;
  const std::int64_t block =
      std::min(in.max_block, node_aware_threshold(p[kAggregateAbove], in.size));
  return column_rounds_memory_bound(in.size / q, q, static_cast<int>(p[kNodeRadix]), block);
}

// The radix over the nodes, where they are of one size.
void resolve_node_aware(Spec& spec, const Topology& t) {
  const bool even = t.node_size > 0 && t.size % t.node_size == 0;
  if (spec.params[kNodeRadix])
    spec.params.set(kNodeRadix,
                    even ? tuna_radix(spec.params[kNodeRadix], t.size / t.node_size) : 0);
}

void candidates(const CandidateScope& s, std::vector<std::string>& out) {
  if (!s.machine_has_shared_memory || s.ranks_per_node >= s.size) return;
  out.emplace_back("node_aware");
  if (s.size % s.ranks_per_node == 0)
    for (const char* rounds : {"node_aware:radix=2", "node_aware:radix=4"})
      out.emplace_back(rounds);
}

}  // namespace

const AlgorithmDescriptor& node_aware_algorithm() {
  static const AlgorithmDescriptor d{
      .name = "node_aware",
      .summary =
          "ranks on several nodes: shared memory inside a node, one aggregated message per "
          "pair of nodes, remote nodes split among the node's ranks; larger blocks directly",
      .params = {&kAggregateAbove, &kAgents, &kNodeRadix},
      .restrictions =
          "a shared segment on every node, and for radix > 0 nodes of one size "
          "(else one message per pair of nodes)",
      .fallback = "spread_out",
      .source = "a2av's own (docs/algorithms.md); rounds over the nodes: [Fan24] Algorithm 1",
      .run = run_node_aware,
      .memory_bound = node_aware_bound,
      .announce = announce_error_node_aware,
      .model = {ModelShape::node_aware},
      .resolve = resolve_node_aware,
      .candidates = candidates,
      .test_specs = {{"node_aware"},
                     // blocks aggregated between nodes, sent directly, or both; one agent
                     {"node_aware:direct_above=500"},
                     {"node_aware:direct_above=0"},
                     {"node_aware:agents=1"},
                     // TuNA over the nodes: radix 2, and 3 with blocks on both sides
                     {"node_aware:radix=2", Nodes::several},
                     {"node_aware:radix=3,direct_above=500", Nodes::several}},
      .bounds_in_flight = true,
  };
  return d;
}

}  // namespace a2av
