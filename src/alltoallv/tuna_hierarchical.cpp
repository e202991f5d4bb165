// tuna_coalesced, tuna_staggered: hierarchical TuNA for N nodes of Q ranks. Phase 1 runs
// TuNA (radix r) inside each node on aggregated blocks: local rank g sends local rank h
// everything it has for ranks {n*Q + h}. Phase 2 exchanges across nodes between ranks with
// the same local index g, in batches of block_count (the scattered pattern): coalesced
// sends the Q blocks for one remote rank in one message (N-1 messages), staggered one
// message per block (Q(N-1) messages). Rounds: K_tuna(Q, r) + ceil((N-1)/block_count).
// Blocks above direct_above bytes (default 8 KiB, as for tuna) are never aggregated: each
// goes from the send buffer to the receive buffer in a message of its own, announced by a
// marker in place of its size, as in tuna.cpp. Extra memory: the aggregated send copy and
// phase 1's receive buffer (each at most P * min(S, direct_above)) and TuNA's store on blocks
// of at most N * min(S, direct_above): bounded whatever the block size.
// Source: Fan et al. [Fan24], Section IV, Algorithms 2-3, Figures 4-6.
//
// Nodes are the ranks_per_node-rank ranges [k*Q, (k+1)*Q); by default Q is what
// MPI_COMM_TYPE_SHARED finds. If Q does not divide P, or the detected nodes are uneven or
// not numbered contiguously, the exchange falls back to flat `tuna` with the same radix; on
// one node (Q = P) phase 1 is flat TuNA on the blocks themselves, which runs without the
// aggregated copies.
#include "alltoallv/tuna.hpp"

#include "alltoallv/registry.hpp"

#include "core/check.hpp"
#include "core/tags.hpp"

#include <algorithm>
#include <cstring>
#include <deque>
#include <functional>
#include <map>

namespace a2av {
namespace {

enum class Inter { coalesced, staggered };

struct NodePosition {
  int q, nodes, node, local;
};

// A large block another rank sends this one after phase 2.
struct DeferredBlock {
  std::int64_t bytes;
  bool takes;  // false: dropped (counts disagree, or this rank's node failed)
};

// The large blocks' messages, sent and received, under their share of the bound
// (hierarchical_shares): a rank whose large blocks would take more than the share, sent and
// received by its counts, defers its sends until after phase 2, as tuna does; their markers
// say so.
struct LargeBlocks {
  explicit LargeBlocks(int share) : requests(nullptr, share) {}
  Requests requests;
  bool defer = false;
  std::map<int, DeferredBlock> deferred;  // by source
};

// One rank's part in the exchange. On a rank whose arguments failed (failed_code, in band)
// the blocks are empty and nothing of the caller's is touched.
struct HierarchicalRank {
  const CommContext& ctx;
  const ByteBlocks& send;
  const ByteBlocks& recv;
  MemoryTracker& memory;
  Mismatch& mismatch;
  PeerErrors* peers;  // set under in-band agreement
  int failed_code;
  std::int64_t direct_above;
  LargeBlocks& large;
};

// What the size exchange and the headers carry for a block: its bytes, or for a block that
// travels directly its marker (deferrable_marker: its bytes, and whether it comes after
// phase 2).
std::int64_t entry_of(const HierarchicalRank& r, std::int64_t bytes) {
  return bytes > r.direct_above ? deferrable_marker({bytes, r.large.defer}) : bytes;
}
// What a block adds to the aggregated messages: nothing if it travels directly.
std::int64_t aggregated(std::int64_t entry) {
  return std::max<std::int64_t>(entry, 0);
}

// An error code and the lowest rank with it; code 0: none.
struct NodeError {
  std::int64_t code = 0;
  std::int64_t rank = -1;

  void add(std::int64_t c, std::int64_t r) {
    if (c > code || (c == code && c != 0 && r < rank)) {
      code = c;
      rank = r;
    }
  }
};

// Phase 0: one node-local MPI_Alltoall. Local rank h gets from every local source its error
// and the sizes of its blocks for ranks {n*Q + h}, by node.
struct NodeFacts {
  std::vector<std::int64_t> sizes;  // [source * nodes + node]
  NodeError error;                  // the worst of the node's ranks
};

NodeFacts exchange_sizes(const HierarchicalRank& r, const NodePosition& l, MPI_Comm node) {
  const int stride = l.nodes + 2;
  std::vector<std::int64_t> mine(static_cast<std::size_t>(l.q) * stride), theirs(mine.size());
  for (int h = 0; h < l.q; ++h) {
    std::int64_t* out = &mine[static_cast<std::size_t>(h) * stride];
    out[0] = r.failed_code;
    out[1] = r.failed_code ? r.ctx.rank : -1;
    for (int n = 0; n < l.nodes; ++n) out[2 + n] = entry_of(r, r.send.bytes[n * l.q + h]);
  }
  check_mpi(
      MPI_Alltoall(mine.data(), stride, MPI_INT64_T, theirs.data(), stride, MPI_INT64_T, node),
      "MPI_Alltoall");
  NodeFacts facts;
  facts.sizes.resize(static_cast<std::size_t>(l.q) * l.nodes);
  for (int s = 0; s < l.q; ++s) {
    const std::int64_t* in = &theirs[static_cast<std::size_t>(s) * stride];
    facts.error.add(in[0], in[1]);
    std::copy(in + 2, in + stride, facts.sizes.begin() + static_cast<std::ptrdiff_t>(s) * l.nodes);
  }
  return facts;
}

// Send side of phase 1: for each local peer h, my blocks for ranks n*Q + h, back to back.
ByteBlocks aggregate(const HierarchicalRank& r, const NodePosition& l, TempBuffer& storage) {
  auto bytes_for = [&](int peer) { return aggregated(entry_of(r, r.send.bytes[peer])); };
  std::vector<std::int64_t> bytes(l.q, 0);
  for (int h = 0; h < l.q; ++h)
    for (int n = 0; n < l.nodes; ++n) bytes[h] += bytes_for(n * l.q + h);
  ByteBlocks out = packed_blocks(std::move(bytes), storage);
  for (int h = 0; h < l.q; ++h) {
    std::byte* to = out.at(h);
    for (int n = 0; n < l.nodes; ++n) {
      const int peer = n * l.q + h;
      if (bytes_for(peer) > 0) std::memcpy(to, r.send.at(peer), bytes_for(peer));
      to += bytes_for(peer);
    }
  }
  return out;
}

// Receive side of phase 1: from each local source s, its blocks for my column, by node.
ByteBlocks phase1_receive(const std::vector<std::int64_t>& sizes, const NodePosition& l,
                          TempBuffer& storage) {
  std::vector<std::int64_t> bytes(l.q, 0);
  for (int s = 0; s < l.q; ++s)
    for (int n = 0; n < l.nodes; ++n) bytes[s] += aggregated(sizes[s * l.nodes + n]);
  return packed_blocks(std::move(bytes), storage);
}

// Where, after phase 1, the block from local source s for node n lies.
struct Held {
  const ByteBlocks& blocks;
  const std::vector<std::int64_t>& sizes;
  const NodePosition& l;

  std::int64_t entry(int s, int n) const { return sizes[s * l.nodes + n]; }
  std::int64_t bytes(int s, int n) const { return aggregated(entry(s, n)); }
  const std::byte* at(int s, int n) const {
    const std::byte* p = blocks.at(s);
    for (int k = 0; k < n; ++k) p += bytes(s, k);
    return p;
  }
};

void note_if_mismatch(const HierarchicalRank& r, int source, std::int64_t got) {
  if (got != r.recv.bytes[source])
    r.mismatch.note(fmt::format("rank {} sent {} bytes where the receive count says {}", source,
                                got, r.recv.bytes[source]));
}

// Phase 2 tags (core/tags.hpp): block s (sent on its own) kHierarchicalBlocks.cycle(s), a
// coalesced pair's front block 0's tag, a staggered pair's header kHierarchicalHeader, the
// entries after a coalesced front kHierarchicalEntries; a large block's own message
// kHierarchicalLarge.
int block_tag(int s) {
  return tags::kHierarchicalBlocks.cycle(s);
}

// Whether this rank's large blocks, sent and received, would take more than their share.
bool defers_large(const HierarchicalRank& r, int share) {
  std::int64_t requests = 0;
  for (int peer = 0; peer < r.ctx.size; ++peer) {
    if (peer == r.ctx.rank) continue;
    if (r.recv.bytes[peer] > r.direct_above)
      requests += r.large.requests.requests_for(r.recv.bytes[peer]);
    if (!r.failed_code && r.send.bytes[peer] > r.direct_above)
      requests += r.large.requests.requests_for(r.send.bytes[peer]);
  }
  return requests > share;
}

// Large blocks not deferred leave once this rank knows its node has no error, before phase 1.
void send_large_blocks(const HierarchicalRank& r) {
  for (int d = 1; d < r.ctx.size && !r.large.defer; ++d) {
    const int to = (r.ctx.rank + d) % r.ctx.size;
    if (r.send.bytes[to] > r.direct_above)
      r.large.requests.isend(r.send.at(to), r.send.bytes[to], to, tags::kHierarchicalLarge.tag(),
                             r.ctx.comm);
  }
}

// A block from `source` announced by `entry`: if it travels directly, received where the
// counts agree, else noted and dropped (always dropped with `drop`: this rank's node failed);
// a deferred one when its step after phase 2 comes.
void take_large_block(const HierarchicalRank& r, int source, std::int64_t entry, bool drop) {
  if (entry >= 0) return;
  const LargeBlock block = unmark(entry);
  if (source == r.ctx.rank)
    return (void)std::memcpy(r.recv.at(source), r.send.at(source), block.bytes);
  const bool takes = !drop && block.bytes == r.recv.bytes[source];
  if (!drop && !takes) note_if_mismatch(r, source, block.bytes);
  if (block.deferred) return (void)(r.large.deferred[source] = {block.bytes, takes});
  if (takes)
    return r.large.requests.irecv(r.recv.at(source), block.bytes, source,
                                  tags::kHierarchicalLarge.tag(), r.ctx.comm);
  drop_pieces(block.bytes, source, tags::kHierarchicalLarge.tag(), r.ctx.comm);
}

// The deferred large blocks after phase 2, step d receiving from rank - d and sending to
// rank + d: the order in which the bound slides without deadlock (core/p2p.hpp). A block this
// rank does not take is dropped at its step, after the step's send is posted.
void exchange_deferred_large(const HierarchicalRank& r, bool node_failed) {
  if (!r.large.defer && r.large.deferred.empty()) return;
  const int size = r.ctx.size, tag = tags::kHierarchicalLarge.tag();
  for (int d = 1; d < size; ++d) {
    const int to = (r.ctx.rank + d) % size, from = (r.ctx.rank - d + size) % size;
    const bool sends = r.large.defer && !node_failed && r.send.bytes[to] > r.direct_above;
    const auto incoming = r.large.deferred.find(from);
    const bool comes = incoming != r.large.deferred.end();
    const bool takes = comes && incoming->second.takes;
    r.large.requests.exchange(r.recv.at(from), takes ? incoming->second.bytes : 0, from,
                              r.send.at(to), sends ? r.send.bytes[to] : 0, to, tag, r.ctx.comm);
    if (comes && !takes) drop_pieces(incoming->second.bytes, from, tag, r.ctx.comm);
  }
}

// A phase 2 header: the sender node's error (code, rank), whether the entries of its Q
// blocks for the receiver's node follow, and those entries (sizes, or markers of large
// blocks). A coalesced pair sends the first three words at the front of its one message and
// the entries only where they are news: a large block among them, or blocks too long for one
// message; the receiver knows the other sizes from its counts. A staggered pair sends all of
// it in a message of its own.
class PairHeader {
 public:
  enum : std::size_t { kCode, kRank, kEntriesFollow, kEntries };
  explicit PairHeader(int q) : words_(kEntries + q, 0) {}
  std::int64_t code() const { return words_[kCode]; }
  std::int64_t rank() const { return words_[kRank]; }
  bool entries_follow() const { return words_[kEntriesFollow] != 0; }
  std::int64_t& entry(int s) { return words_[kEntries + s]; }
  std::int64_t entry(int s) const { return words_[kEntries + s]; }
  std::int64_t* data() { return words_.data(); }
  const std::int64_t* data() const { return words_.data(); }
  std::int64_t* entries() { return words_.data() + kEntries; }
  const std::int64_t* entries() const { return words_.data() + kEntries; }

 private:
  std::vector<std::int64_t> words_;
};

int word_bytes(std::size_t words) {
  return static_cast<int>(sizeof(std::int64_t) * words);
}
// What travels at the front of a pair's first message.
int front_bytes(const NodePosition& l, Inter kind) {
  return word_bytes(kind == Inter::coalesced ? PairHeader::kEntries : PairHeader::kEntries + l.q);
}

// One message of a header's front and Q blocks lying anywhere, as a datatype over their
// addresses.
MPI_Datatype front_and_blocks(const NodePosition& l, const PairHeader& header, auto block_at,
                              auto block_bytes, std::vector<MPI_Datatype>& types) {
  std::vector<int> lengths{front_bytes(l, Inter::coalesced)};
  std::vector<MPI_Aint> places(1);
  MPI_Get_address(header.data(), &places[0]);
  for (int s = 0; s < l.q; ++s) {
    if (block_bytes(s) == 0) continue;
    MPI_Aint address;
    MPI_Get_address(block_at(s), &address);
    lengths.push_back(static_cast<int>(block_bytes(s)));
    places.push_back(address);
  }
  MPI_Datatype type;
  check_mpi(MPI_Type_create_hindexed(static_cast<int>(lengths.size()), lengths.data(),
                                     places.data(), MPI_BYTE, &type),
            "MPI_Type_create_hindexed");
  check_mpi(MPI_Type_commit(&type), "MPI_Type_commit");
  types.push_back(type);
  return type;
}

// The header travels in block 0's tag for coalesced pairs (with the blocks, when they fit
// one message), alone in kHierarchicalHeader for staggered ones.
int header_tag(Inter kind) {
  return kind == Inter::coalesced ? block_tag(0) : tags::kHierarchicalHeader.tag();
}

// Coalesced pairs carry their blocks in the header's message when it fits one piece; each
// side decides from the total it knows (equal where the counts agree).
bool one_message(Inter kind, std::int64_t total) {
  return kind == Inter::coalesced && total <= max_piece();
}

// What this rank expects in the aggregated messages from `from_node`'s sources.
std::int64_t expected_bytes(const HierarchicalRank& r, const NodePosition& l, int from_node,
                            int s) {
  return aggregated(entry_of(r, r.recv.bytes[from_node * l.q + s]));
}

// A partner of phase 2: the rank with this rank's local index on node `node`, its header, and
// whether this rank expects its blocks in the front's message (`together`, by this rank's
// counts; the sender decides by its own, which may disagree).
struct Partner {
  explicit Partner(int q) : header(q) {}
  int node = 0;
  bool together = false;
  PairHeader header;
};

// The front's receive from a partner, posted before it comes: with the blocks where this
// rank expects them in one message. A coalesced front expected alone is not posted but probed
// when it comes (receive_probed_front), since a sender whose counts disagree may have sent its
// blocks with it.
void post_front_receive(const HierarchicalRank& r, const NodePosition& l, Inter kind, Partner& p,
                        Requests& fronts, std::vector<MPI_Datatype>& types) {
  const int from = p.node * l.q + l.local;
  auto bytes = [&](int s) { return expected_bytes(r, l, p.node, s); };
  auto at = [&](int s) { return r.recv.at(p.node * l.q + s); };
  std::int64_t total = 0;
  for (int s = 0; s < l.q; ++s) total += bytes(s);
  p.together = one_message(kind, total);
  MPI_Request front;
  if (p.together) {
    const MPI_Datatype type = front_and_blocks(l, p.header, at, bytes, types);
    check_mpi(MPI_Irecv(MPI_BOTTOM, 1, type, from, header_tag(kind), r.ctx.comm, &front),
              "MPI_Irecv");
    return fronts.adopt(front, front_bytes(l, kind) + total);
  }
  if (kind == Inter::coalesced) return;
  check_mpi(MPI_Irecv(p.header.data(), front_bytes(l, kind), MPI_BYTE, from, header_tag(kind),
                      r.ctx.comm, &front),
            "MPI_Irecv");
  fronts.adopt(front, front_bytes(l, kind));
}

// My node's blocks for `to_node` (none if it failed: `held` null), in bytes.
std::int64_t total_for(const NodePosition& l, const Held* held, int to_node) {
  std::int64_t total = 0;
  for (int s = 0; s < l.q && held; ++s) total += held->bytes(s, to_node);
  return total;
}

// Whether my blocks for `to_node` go with the front.
bool send_together(const NodePosition& l, const Held* held, int to_node, Inter kind) {
  return held && one_message(kind, total_for(l, held, to_node));
}

// The front to node `to_node`'s partner: the header, with my node's blocks for that node where
// they fit one coalesced message, then a coalesced header's entries where they follow.
void post_front_send(const HierarchicalRank& r, const NodePosition& l, const Held* held,
                     int to_node, Inter kind, const PairHeader& header, Requests& requests,
                     std::vector<MPI_Datatype>& types) {
  const int to = to_node * l.q + l.local;
  MPI_Request request;
  if (send_together(l, held, to_node, kind)) {
    const MPI_Datatype type = front_and_blocks(
        l, header, [&](int s) { return held->at(s, to_node); },
        [&](int s) { return held->bytes(s, to_node); }, types);
    check_mpi(MPI_Isend(MPI_BOTTOM, 1, type, to, header_tag(kind), r.ctx.comm, &request),
              "MPI_Isend");
  } else {
    check_mpi(MPI_Isend(header.data(), front_bytes(l, kind), MPI_BYTE, to, header_tag(kind),
                        r.ctx.comm, &request),
              "MPI_Isend");
  }
  requests.adopt(request, -1);
  if (kind == Inter::coalesced && header.entries_follow()) {
    check_mpi(MPI_Isend(header.entries(), word_bytes(l.q), MPI_BYTE, to,
                        tags::kHierarchicalEntries.tag(), r.ctx.comm, &request),
              "MPI_Isend");
    requests.adopt(request, -1);
  }
}

// My header for node `to_node`: entries follow a coalesced front where a block is large or
// the blocks do not fit one message.
void fill_header(const NodePosition& l, const Held* held, const NodeError& mine, int to_node,
                 PairHeader& out) {
  out.data()[PairHeader::kCode] = mine.code;
  out.data()[PairHeader::kRank] = mine.rank;
  bool large = false;
  for (int s = 0; s < l.q && held; ++s) {
    out.entry(s) = held->entry(s, to_node);
    large |= out.entry(s) < 0;
  }
  out.data()[PairHeader::kEntriesFollow] =
      held && (large || !one_message(Inter::coalesced, total_for(l, held, to_node)));
}

// A coalesced front without entries: the sender's blocks are small and came with it (the
// front's receive checked their byte count); the entries are taken from this rank's counts.
void entries_from_counts(const HierarchicalRank& r, const NodePosition& l, int from_node,
                         PairHeader& header) {
  for (int s = 0; s < l.q; ++s) {
    header.entry(s) = expected_bytes(r, l, from_node, s);
    if (entry_of(r, r.recv.bytes[from_node * l.q + s]) < 0)  // expected large, came small
      note_if_mismatch(r, from_node * l.q + s, 0);
  }
}

// Sizes that came in a header, against this rank's counts.
void check_entries(const HierarchicalRank& r, const NodePosition& l, int from_node,
                   const PairHeader& header) {
  for (int s = 0; s < l.q; ++s) {
    const int source = from_node * l.q + s;
    if (header.entry(s) >= 0 && header.entry(s) != expected_bytes(r, l, from_node, s))
      note_if_mismatch(r, source, header.entry(s));
  }
}

// Whether the sender put its blocks in the front's message: it says so by sending no entries,
// or by entries whose total fits one message.
bool sent_together(Inter kind, const PairHeader& header, int q) {
  if (kind == Inter::staggered) return false;
  if (!header.entries_follow()) return true;
  std::int64_t total = 0;
  for (int s = 0; s < q; ++s) total += aggregated(header.entry(s));
  return one_message(kind, total);
}

// Receives a partner's front as it comes, whatever its length: the header into `header`,
// blocks that came with it dropped. Returns the bytes that followed the header.
int receive_front(const HierarchicalRank& r, const NodePosition& l, int from, Inter kind,
                  PairHeader& header) {
  ProbedMessage message = ProbedMessage::wait(from, header_tag(kind), r.ctx.comm);
  const int front = front_bytes(l, kind);
  std::vector<std::byte> whole(std::max(message.bytes(), front));
  message.receive(whole.data());
  std::memcpy(header.data(), whole.data(), front);
  return std::max(0, message.bytes() - front);
}

// A coalesced front this rank expects alone (its counts say the blocks do not fit one
// message), probed: if the sender's counts put its blocks with it, they are dropped and the
// disagreement noted.
void receive_probed_front(const HierarchicalRank& r, const NodePosition& l, Partner& p) {
  const int from = p.node * l.q + l.local;
  if (const int blocks = receive_front(r, l, from, Inter::coalesced, p.header))
    r.mismatch.note(
        fmt::format("rank {} sent the blocks of node {} in one message of {} bytes "
                    "where the receive counts say they do not fit one",
                    from, p.node, blocks));
}

// Completes a partner's header once its front has come: a rank whose node failed receives it
// whatever it holds; a coalesced header's entries come in a message of their own, or from this
// rank's counts where the blocks came with the front.
void complete_header(const HierarchicalRank& r, const NodePosition& l, Inter kind, bool failed,
                     Partner& p) {
  const int from = p.node * l.q + l.local;
  if (failed) receive_front(r, l, from, kind, p.header);
  if (!failed && kind == Inter::coalesced && !p.together) receive_probed_front(r, l, p);
  if (p.header.code() || kind == Inter::staggered) return;
  if (p.header.entries_follow())
    check_mpi(MPI_Recv(p.header.entries(), word_bytes(l.q), MPI_BYTE, from,
                       tags::kHierarchicalEntries.tag(), r.ctx.comm, MPI_STATUS_IGNORE),
              "MPI_Recv");
  else if (!failed)
    entries_from_counts(r, l, p.node, p.header);
}

// The blocks that do not go with a front, once every header of the batch is known: step
// (s, i) receives block s from node - i and sends block s to node + i, the order in which the
// bound slides without deadlock (core/p2p.hpp); block by block, so that the window spreads
// over the batch's partners. Each goes as its pieces (none when empty), which the receiver
// knows from the sender's entries; a block whose sizes disagree (noted by check_entries), or
// any block reaching a rank whose node failed, is dropped at its step.
void exchange_blocks(const HierarchicalRank& r, const NodePosition& l, const Held* held, Inter kind,
                     int first, std::deque<Partner>& partners, int window) {
  // By partner: whether its blocks come alone, whether mine for its node go alone.
  const std::size_t n = partners.size();
  std::vector<char> comes(n), sends(n);
  for (std::size_t k = 0; k < n; ++k) {
    const Partner& p = partners[k];
    comes[k] = !p.header.code() && !sent_together(kind, p.header, l.q);
    sends[k] =
        held && !send_together(l, held, (l.node + first + static_cast<int>(k)) % l.nodes, kind);
  }
  if (std::ranges::none_of(comes, std::identity{}) && std::ranges::none_of(sends, std::identity{}))
    return;  // every pair's blocks went with its front
  Requests blocks(nullptr, window);
  for (int s = 0; s < l.q; ++s)
    for (std::size_t k = 0; k < n; ++k) {
      const Partner& p = partners[k];
      const int from = p.node * l.q + l.local;
      const int to_node = (l.node + first + static_cast<int>(k)) % l.nodes;
      const std::int64_t sent = comes[k] ? aggregated(p.header.entry(s)) : 0;
      const bool takes = comes[k] && held && !p.together && sent == expected_bytes(r, l, p.node, s);
      blocks.exchange(r.recv.at(p.node * l.q + s), takes ? sent : 0, from,
                      sends[k] ? held->at(s, to_node) : nullptr,
                      sends[k] ? held->bytes(s, to_node) : 0, to_node * l.q + l.local, block_tag(s),
                      r.ctx.comm);
      if (comes[k] && !takes) drop_pieces(sent, from, block_tag(s), r.ctx.comm);
    }
  blocks.wait_all(r.mismatch);
}

// Phase 2 with the partners of one batch of remote nodes: to node + i, from node - i. The
// fronts first, every one complete before the blocks that go alone take the window, then the
// large blocks the headers announced.
void exchange_batch(const HierarchicalRank& r, const NodePosition& l, const Held* held,
                    const NodeError& mine, Inter kind, int first, int last, int window) {
  std::deque<Partner> partners;
  std::deque<PairHeader> headers_out;
  Requests fronts;
  Requests sends;
  std::vector<MPI_Datatype> types;
  for (int i = first; i < last; ++i) {
    Partner& p = partners.emplace_back(l.q);
    p.node = (l.node - i + l.nodes) % l.nodes;
    if (!mine.code) post_front_receive(r, l, kind, p, fronts, types);
    const int to_node = (l.node + i) % l.nodes;
    PairHeader& out = headers_out.emplace_back(l.q);
    fill_header(l, held, mine, to_node, out);
    post_front_send(r, l, held, to_node, kind, out, sends, types);
  }
  fronts.wait_all(r.mismatch);
  for (Partner& p : partners) {
    complete_header(r, l, kind, mine.code != 0, p);
    if (p.header.code())  // that node failed and sends no blocks
      r.peers->learn(static_cast<int>(p.header.rank()), static_cast<int>(p.header.code()));
    else if (!mine.code && (kind == Inter::staggered || p.header.entries_follow()))
      check_entries(r, l, p.node, p.header);
  }
  sends.wait_all(r.mismatch);  // every partner has taken its front: the window is the blocks'
  exchange_blocks(r, l, held, kind, first, partners, window);
  for (const Partner& p : partners)
    for (int s = 0; s < l.q && !p.header.code(); ++s)
      take_large_block(r, p.node * l.q + s, p.header.entry(s), mine.code != 0);
  for (MPI_Datatype& type : types) MPI_Type_free(&type);
}
void run_hierarchical(const HierarchicalRank& r, const ParamValues& params, Inter kind, int q,
                      const HierarchicalShares& shares) {
  const NodePosition l{q, r.ctx.size / q, r.ctx.rank / q, r.ctx.rank % q};
  const MPI_Comm node = node_comm(r.ctx, q);
  CommContext node_ctx;
  node_ctx.comm = node;
  node_ctx.rank = l.local;
  node_ctx.size = node_ctx.node_size = q;
  node_ctx.uniform_nodes = true;

  r.large.defer = defers_large(r, shares.large);
  const NodeFacts facts = exchange_sizes(r, l, node);
  if (facts.error.code)
    r.peers->learn(static_cast<int>(facts.error.rank), static_cast<int>(facts.error.code));
  else
    send_large_blocks(r);

  // Phase 1: TuNA inside the node on aggregated blocks, unless the node failed, beside the
  // large blocks' share of the bound.
  TempBuffer send_copy(r.memory, 0), received(r.memory, 0);
  ByteBlocks gathered;
  if (!facts.error.code) {
    const InFlightScope phase1_share(shares.rest);
    const ByteBlocks aggregated = aggregate(r, l, send_copy);
    gathered = phase1_receive(facts.sizes, l, received);
    tuna_exchange(node_ctx, {aggregated, gathered}, TunaOptions{tuna_shape(params, q)}, r.memory,
                  r.mismatch);
    send_copy = TempBuffer();
  }

  // Blocks for my own node have arrived.
  const Held held{gathered, facts.sizes, l};
  for (int s = 0; s < q && !facts.error.code; ++s) {
    const int source = l.node * q + s;
    if (held.entry(s, l.node) < 0) {
      take_large_block(r, source, held.entry(s, l.node), false);
      continue;
    }
    note_if_mismatch(r, source, held.bytes(s, l.node));
    if (held.bytes(s, l.node) == r.recv.bytes[source] && r.recv.bytes[source] > 0)
      std::memcpy(r.recv.at(source), held.at(s, l.node), r.recv.bytes[source]);
  }

  // Phase 2: across nodes, in batches of node pairs.
  for (int first = 1; first < l.nodes; first += shares.batch)
    exchange_batch(r, l, facts.error.code ? nullptr : &held, facts.error, kind, first,
                   std::min(l.nodes, first + shares.batch), shares.rest);
  exchange_deferred_large(r, facts.error.code != 0);
  r.large.requests.wait_all(r.mismatch);
}

int node_size_of(const CommContext& ctx, const ParamValues& params) {
  return hierarchical_node_size(params[kRanksPerNode], ctx.size, ctx.node_size, ctx.uniform_nodes);
}

HierarchicalShares shares_of(const ParamValues& params) {
  return hierarchical_shares(InFlight::limit(), static_cast<int>(params[kNodesPerBatch]));
}

void run_either(const AlgorithmCall& ex, const ParamValues& params, Inter kind) {
  const int q = node_size_of(ex.ctx, params);
  if (q == 0 || q == ex.ctx.size) return run_tuna(ex, params);  // one node: flat TuNA
  PeerErrors agreed;  // errors agreed before: nothing to learn here
  const HierarchicalShares shares = shares_of(params);
  LargeBlocks large(shares.large);
  run_hierarchical({ex.ctx, ex.send, ex.recv, ex.memory, ex.mismatch,
                    ex.in_band ? ex.in_band : &agreed, 0, params[kDirectAbove], large},
                   params, kind, q, shares);
}

// A rank that rejected its arguments: phase 0 tells its node, which then sends headers only.
void announce(const CommContext& ctx, const ParamValues& params, int code, PeerErrors& peers,
              Inter kind) {
  const int q = node_size_of(ctx, params);
  if (q == 0 || q == ctx.size) return announce_error_tuna(ctx, params, code, peers);
  ByteBlocks none;
  none.bytes.assign(ctx.size, 0);
  none.offset.assign(ctx.size, 0);
  MemoryTracker memory;
  Mismatch ignored;  // a failed rank reports its own error, not its peers' counts
  const HierarchicalShares shares = shares_of(params);
  LargeBlocks large(shares.large);
  run_hierarchical({ctx, none, none, memory, ignored, &peers, code, params[kDirectAbove], large},
                   params, kind, q, shares);
}

// The spec as it runs: a hierarchical spec whose nodes do not fit runs flat tuna.
void resolve_tuna_hierarchical(Spec& spec, const Topology& t) {
  const int q =
      hierarchical_node_size(spec.params[kRanksPerNode], t.size, t.node_size, t.uniform_nodes);
  spec.params.set(kRanksPerNode, q);
  if (q != 0) return resolve_tuna_shape(spec, q);
  Spec flat{&tuna_algorithm(), {}, spec.validate};
  for (const Param* p : tuna_algorithm().params) flat.params.set(*p, spec.params[*p]);
  spec = std::move(flat);
  resolve_tuna_shape(spec, t.size);
}

// Blocks above direct_above travel directly: the aggregated copies hold only smaller ones.
std::int64_t hierarchical_bound(const BoundInput& in, const ParamValues& p) {
  const int q = hierarchical_node_size(p[kRanksPerNode], in.size, in.node_size, true);
  if (q == 0 || q == in.size) return tuna_bound(in, p);
  const std::int64_t block = std::min(in.max_block, p[kDirectAbove]);
  const int nodes = in.size / q;
  const std::int64_t phase1 = q == 1 ? 0 : tuna_memory_bound(q, tuna_shape(p, q), nodes * block);
  return std::min(in.send_total, in.size * block) + in.size * block + phase1;
}

// Candidates where the nodes divide P into several.
bool several_nodes(const CandidateScope& s) {
  return s.ranks_per_node > 1 && s.ranks_per_node < s.size && s.size % s.ranks_per_node == 0;
}
void add_coalesced(const CandidateScope& s, std::vector<std::string>& out) {
  if (several_nodes(s)) out.emplace_back("tuna_coalesced");
}
void add_staggered(const CandidateScope& s, std::vector<std::string>& out) {
  if (several_nodes(s)) out.emplace_back("tuna_staggered");
}

std::vector<TestSpec> hierarchical_test_specs(std::string_view name) {
  std::vector<TestSpec> specs;
  for (std::string_view params :
       {"", ":ranks_per_node=2,radix=2,block_count=2", ":ranks_per_node=3,radix=2,block_count=2",
        ":ranks_per_node=3,radix=3,block_count=2",
        // blocks on both sides of the threshold: some aggregated, some direct; all direct
        ":ranks_per_node=2,direct_above=500", ":ranks_per_node=3,direct_above=0"})
    specs.push_back({fmt::format("{}{}", name, params)});
  return specs;
}

}  // namespace

namespace {

void run_tuna_coalesced(const AlgorithmCall& ex, const ParamValues& params) {
  run_either(ex, params, Inter::coalesced);
}

void run_tuna_staggered(const AlgorithmCall& ex, const ParamValues& params) {
  run_either(ex, params, Inter::staggered);
}

void announce_error_tuna_coalesced(const CommContext& ctx, const ParamValues& params, int code,
                                   PeerErrors& peers) {
  announce(ctx, params, code, peers, Inter::coalesced);
}

void announce_error_tuna_staggered(const CommContext& ctx, const ParamValues& params, int code,
                                   PeerErrors& peers) {
  announce(ctx, params, code, peers, Inter::staggered);
}

// The two variants differ in their inter-node phase alone.
AlgorithmDescriptor hierarchical(std::string_view name, std::string_view summary,
                                 std::string_view source, AlgorithmFn run, AnnounceFn announce,
                                 ModelShape shape) {
  return {
      .name = name,
      .summary = summary,
      .params = {&kRadix, &kBatch, &kDirectAbove, &kNodesPerBatch, &kRanksPerNode},
      .restrictions =
          "nodes of ranks_per_node consecutive ranks dividing P (detected nodes: of "
          "one size, numbered contiguously)",
      .fallback = "tuna",
      .source = source,
      .run = run,
      .memory_bound = hierarchical_bound,
      .announce = announce,
      .model = {shape},
      .resolve = resolve_tuna_hierarchical,
      .candidates = shape == ModelShape::tuna_coalesced ? add_coalesced : add_staggered,
      .test_specs = hierarchical_test_specs(name),
      .bounds_in_flight = true,
  };
}

}  // namespace

const AlgorithmDescriptor& tuna_coalesced_algorithm() {
  static const AlgorithmDescriptor d = hierarchical(
      "tuna_coalesced", "hierarchical TuNA: TuNA inside nodes, one message per remote node",
      "[Fan24] Section IV, Algorithm 3, Figures 4-6", run_tuna_coalesced,
      announce_error_tuna_coalesced, ModelShape::tuna_coalesced);
  return d;
}

const AlgorithmDescriptor& tuna_staggered_algorithm() {
  static const AlgorithmDescriptor d = hierarchical(
      "tuna_staggered", "hierarchical TuNA: TuNA inside nodes, one message per remote block",
      "[Fan24] Section IV, Algorithm 2, Figures 4-6", run_tuna_staggered,
      announce_error_tuna_staggered, ModelShape::tuna_staggered);
  return d;
}

}  // namespace a2av
