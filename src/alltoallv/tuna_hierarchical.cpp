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

namespace a2av {
namespace {

enum class Inter { coalesced, staggered };

struct NodePosition {
  int q, nodes, node, local;
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
  Requests& direct;  // the large blocks' messages, sent and received
};

// What the size exchange and the headers carry for a block: its bytes, or for a block that
// travels directly the marker -(bytes + 1).
std::int64_t entry_of(const HierarchicalRank& r, std::int64_t bytes) {
  return bytes > r.direct_above ? large_marker(bytes) : bytes;
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

// Large blocks leave once this rank knows its node has no error, before phase 1.
void send_large_blocks(const HierarchicalRank& r) {
  for (int d = 1; d < r.ctx.size; ++d) {
    const int to = (r.ctx.rank + d) % r.ctx.size;
    if (entry_of(r, r.send.bytes[to]) < 0)
      r.direct.isend(r.send.at(to), r.send.bytes[to], to, tags::kHierarchicalLarge.tag(),
                     r.ctx.comm);
  }
}

// A block from `source` announced by `entry`: if it travels directly, received where the
// counts agree, else noted and dropped (always dropped with `drop`: this rank's node failed).
void take_large_block(const HierarchicalRank& r, int source, std::int64_t entry, bool drop) {
  if (entry >= 0) return;
  const std::int64_t bytes = marked_bytes(entry);
  if (source == r.ctx.rank) return (void)std::memcpy(r.recv.at(source), r.send.at(source), bytes);
  if (!drop && bytes == r.recv.bytes[source])
    return r.direct.irecv(r.recv.at(source), bytes, source, tags::kHierarchicalLarge.tag(),
                          r.ctx.comm);
  if (!drop) note_if_mismatch(r, source, bytes);
  drop_pieces(bytes, source, tags::kHierarchicalLarge.tag(), r.ctx.comm);
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

// Blocks that do not go with the header go one message each, an empty one for an empty block,
// so that a receiver whose count disagrees with the sender's finds out instead of waiting.
void post_block_receive(std::byte* data, std::int64_t bytes, int from, int tag, MPI_Comm comm,
                        Requests& requests) {
  if (bytes > 0) return requests.irecv(data, bytes, from, tag, comm);
  MPI_Request request;
  check_mpi(MPI_Irecv(nullptr, 0, MPI_BYTE, from, tag, comm, &request), "MPI_Irecv");
  requests.adopt(request, 0);
}

void post_block_send(const std::byte* data, std::int64_t bytes, int to, int tag, MPI_Comm comm,
                     Requests& requests) {
  if (bytes > 0) return requests.isend(data, bytes, to, tag, comm);
  MPI_Request request;
  check_mpi(MPI_Isend(nullptr, 0, MPI_BYTE, to, tag, comm, &request), "MPI_Isend");
  requests.adopt(request, -1);
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
  Requests blocks;  // the receives posted_early
};

// Where a block's receive is posted before its sender's header comes: a staggered pair sends
// every block alone, at least one message each (an empty one for an empty block), so a receive
// expecting one message takes the first whatever the sender's size. A coalesced pair's blocks
// may come with the front or alone, by the sender's total, so they wait for the header.
bool posted_early(Inter kind, std::int64_t expected) {
  return kind == Inter::staggered && expected <= max_piece();
}

// The receives from a partner posted before its header comes: the front (with the blocks,
// where this rank expects them in one message) into `fronts`, and the blocks posted_early
// into p.blocks. A coalesced front expected alone is not posted but probed when it comes
// (receive_probed_front), since a sender whose counts disagree may have sent its blocks
// with it. The other blocks wait for the header, which says what the sender sent
// (finish_blocks).
void post_receives(const HierarchicalRank& r, const NodePosition& l, Inter kind, Partner& p,
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
  for (int s = 0; s < l.q; ++s)
    if (posted_early(kind, bytes(s)))
      post_block_receive(at(s), bytes(s), from, block_tag(s), r.ctx.comm, p.blocks);
}

// The sends to node `to_node`'s partner: the header, and my node's blocks for that node
// unless it failed (`held` null).
void post_sends(const HierarchicalRank& r, const NodePosition& l, const Held* held, int to_node,
                Inter kind, const PairHeader& header, Requests& requests,
                std::vector<MPI_Datatype>& types) {
  const int to = to_node * l.q + l.local;
  std::int64_t total = 0;
  for (int s = 0; s < l.q && held; ++s) total += held->bytes(s, to_node);
  MPI_Request request;
  if (held && one_message(kind, total)) {
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
  if (!held || one_message(kind, total)) return;
  for (int s = 0; s < l.q; ++s)
    post_block_send(held->at(s, to_node), held->bytes(s, to_node), to, block_tag(s), r.ctx.comm,
                    requests);
}

// My header for node `to_node`: entries follow a coalesced front where a block is large or
// the blocks do not fit one message.
void fill_header(const NodePosition& l, const Held* held, const NodeError& mine, int to_node,
                 PairHeader& out) {
  out.data()[PairHeader::kCode] = mine.code;
  out.data()[PairHeader::kRank] = mine.rank;
  std::int64_t total = 0;
  bool large = false;
  for (int s = 0; s < l.q && held; ++s) {
    out.entry(s) = held->entry(s, to_node);
    total += held->bytes(s, to_node);
    large |= out.entry(s) < 0;
  }
  out.data()[PairHeader::kEntriesFollow] = held && (large || !one_message(Inter::coalesced, total));
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

// The messages a block goes in outside a coalesced front: its pieces, or one empty message.
std::int64_t messages_of(std::int64_t bytes) {
  return std::max<std::int64_t>(1, pieces_of(bytes));
}

void drop_messages(std::int64_t count, int from, int tag, MPI_Comm comm) {
  for (; count > 0; --count) drop_message(from, tag, comm);
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

// What a rank whose node failed does with a partner's messages: receives its header (and
// drops the blocks with it), then drops the blocks that follow on their own.
void drain(const HierarchicalRank& r, const NodePosition& l, int from, Inter kind,
           PairHeader& header) {
  receive_front(r, l, from, kind, header);
  if (header.code() || (kind == Inter::coalesced && !header.entries_follow())) return;
  if (kind == Inter::coalesced)
    check_mpi(MPI_Recv(header.entries(), word_bytes(l.q), MPI_BYTE, from,
                       tags::kHierarchicalEntries.tag(), r.ctx.comm, MPI_STATUS_IGNORE),
              "MPI_Recv");
  if (sent_together(kind, header, l.q)) return;
  for (int s = 0; s < l.q; ++s)
    drop_messages(messages_of(aggregated(header.entry(s))), from, block_tag(s), r.ctx.comm);
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

// After the header: the blocks that did not come with a front, by the sender's entries. A
// block whose sizes agree came in its receive posted_early, or is received now; of one whose
// sizes disagree (noted by check_entries), every message the sender sent is dropped but the
// one a receive posted_early took. Blocks the sender put with its front went with it.
void finish_blocks(const HierarchicalRank& r, const NodePosition& l, Inter kind, Partner& p) {
  p.blocks.wait_all(r.mismatch);
  if (sent_together(kind, p.header, l.q)) return;
  const int from = p.node * l.q + l.local;
  Requests late;
  for (int s = 0; s < l.q; ++s) {
    const std::int64_t sent = aggregated(p.header.entry(s));
    const std::int64_t expected = expected_bytes(r, l, p.node, s);
    const bool posted = posted_early(kind, expected);
    if (!p.together && sent == expected) {
      if (!posted)  // an empty block too is one message
        post_block_receive(r.recv.at(p.node * l.q + s), expected, from, block_tag(s), r.ctx.comm,
                           late);
      continue;
    }
    drop_messages(messages_of(sent) - (posted ? 1 : 0), from, block_tag(s), r.ctx.comm);
  }
  late.wait_all(r.mismatch);
}

// Phase 2 with the partners of one batch of remote nodes: to node + i, from node - i.
void exchange_batch(const HierarchicalRank& r, const NodePosition& l, const Held* held,
                    const NodeError& mine, Inter kind, int first, int last) {
  std::deque<Partner> partners;
  std::deque<PairHeader> headers_out;
  Requests fronts;
  Requests sends;
  std::vector<MPI_Datatype> types;
  for (int i = first; i < last; ++i) {
    const int from_node = (l.node - i + l.nodes) % l.nodes, to_node = (l.node + i) % l.nodes;
    Partner& p = partners.emplace_back(l.q);
    p.node = from_node;
    if (!mine.code) post_receives(r, l, kind, p, fronts, types);
    PairHeader& out = headers_out.emplace_back(l.q);
    fill_header(l, held, mine, to_node, out);
    post_sends(r, l, held, to_node, kind, out, sends, types);
  }
  fronts.wait_all(r.mismatch);
  for (Partner& p : partners) {
    const int from = p.node * l.q + l.local;
    if (mine.code) drain(r, l, from, kind, p.header);
    if (!mine.code && kind == Inter::coalesced && !p.together) receive_probed_front(r, l, p);
    if (p.header.code()) {  // that node failed and sends no blocks
      r.peers->learn(static_cast<int>(p.header.rank()), static_cast<int>(p.header.code()));
      p.blocks.cancel_all();
      continue;
    }
    if (!mine.code && kind == Inter::coalesced) {
      if (!p.header.entries_follow())
        entries_from_counts(r, l, p.node, p.header);
      else
        check_mpi(MPI_Recv(p.header.entries(), word_bytes(l.q), MPI_BYTE, from,
                           tags::kHierarchicalEntries.tag(), r.ctx.comm, MPI_STATUS_IGNORE),
                  "MPI_Recv");
    }
    if (!mine.code && (kind == Inter::staggered || p.header.entries_follow()))
      check_entries(r, l, p.node, p.header);
    if (!mine.code) finish_blocks(r, l, kind, p);
    for (int s = 0; s < l.q; ++s)
      take_large_block(r, p.node * l.q + s, p.header.entry(s), mine.code != 0);
  }
  sends.wait_all(r.mismatch);
  for (MPI_Datatype& type : types) MPI_Type_free(&type);
}

void run_hierarchical(const HierarchicalRank& r, const ParamValues& params, Inter kind, int q) {
  const NodePosition l{q, r.ctx.size / q, r.ctx.rank / q, r.ctx.rank % q};
  const MPI_Comm node = node_comm(r.ctx, q);
  CommContext node_ctx;
  node_ctx.comm = node;
  node_ctx.rank = l.local;
  node_ctx.size = node_ctx.node_size = q;
  node_ctx.uniform_nodes = true;

  const NodeFacts facts = exchange_sizes(r, l, node);
  if (facts.error.code)
    r.peers->learn(static_cast<int>(facts.error.rank), static_cast<int>(facts.error.code));
  else
    send_large_blocks(r);

  // Phase 1: TuNA inside the node on aggregated blocks, unless the node failed.
  TempBuffer send_copy(r.memory, 0), received(r.memory, 0);
  ByteBlocks gathered;
  if (!facts.error.code) {
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

  // Phase 2: across nodes, in batches of block_count node pairs.
  const int batch = static_cast<int>(std::max<std::int64_t>(1, params[kNodesPerBatch]));
  for (int first = 1; first < l.nodes; first += batch)
    exchange_batch(r, l, facts.error.code ? nullptr : &held, facts.error, kind, first,
                   std::min(l.nodes, first + batch));
  r.direct.wait_all(r.mismatch);
}

int node_size_of(const CommContext& ctx, const ParamValues& params) {
  return hierarchical_node_size(params[kRanksPerNode], ctx.size, ctx.node_size, ctx.uniform_nodes);
}

void run_either(const AlgorithmCall& ex, const ParamValues& params, Inter kind) {
  const int q = node_size_of(ex.ctx, params);
  if (q == 0 || q == ex.ctx.size) return run_tuna(ex, params);  // one node: flat TuNA
  PeerErrors agreed;  // errors agreed before: nothing to learn here
  Requests direct;
  run_hierarchical({ex.ctx, ex.send, ex.recv, ex.memory, ex.mismatch,
                    ex.in_band ? ex.in_band : &agreed, 0, params[kDirectAbove], direct},
                   params, kind, q);
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
  Requests direct;
  run_hierarchical({ctx, none, none, memory, ignored, &peers, code, params[kDirectAbove], direct},
                   params, kind, q);
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
