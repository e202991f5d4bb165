// tuna_coalesced, tuna_staggered: hierarchical TuNA for N nodes of Q ranks. Phase 1 runs
// TuNA (radix r) inside each node on aggregated blocks: local rank g sends local rank h
// everything it has for ranks {n*Q + h}. Phase 2 exchanges across nodes between ranks with
// the same local index g, in batches of block_count (the scattered pattern): coalesced
// sends the Q blocks for one remote rank in one message (N-1 messages), staggered one
// message per block (Q(N-1) messages). Rounds: K_tuna(Q, r) + ceil((N-1)/block_count).
// Extra memory: the aggregated send copy (total send bytes), phase 1's receive buffer
// (at most P * max_block) and TuNA's store on blocks of at most N * max_block.
// Source: fan-tuna-configurable-alltoallv.txt, Section IV, Algorithms 2-3, Figures 4-6.
//
// Nodes are the ranks_per_node-rank ranges [k*Q, (k+1)*Q); by default Q is what
// MPI_COMM_TYPE_SHARED finds. If Q does not divide P, or the detected nodes are uneven or
// not numbered contiguously, the exchange falls back to flat `tuna` with the same radix; on
// one node (Q = P) phase 1 is flat TuNA on the blocks themselves, which runs without the
// aggregated copies. Blocks above direct_above bytes skip phase 1's rounds (tuna.cpp), but
// across nodes the aggregated copies still hold every byte once.
#include "alltoallv/tuna.hpp"

#include "core/check.hpp"

#include <algorithm>
#include <cstring>

namespace a2av {
namespace {

enum class Inter { coalesced, staggered };

struct Layout {
  int q, nodes, node, local;
};

// Sizes of the sub-blocks each local source holds for me (by node), via one node-local
// MPI_Alltoall of N sizes per peer.
std::vector<std::int64_t> exchange_sizes(const Exchange& ex, const Layout& l, MPI_Comm node) {
  std::vector<std::int64_t> mine(static_cast<std::size_t>(l.q) * l.nodes), theirs(mine.size());
  for (int h = 0; h < l.q; ++h)
    for (int n = 0; n < l.nodes; ++n) mine[h * l.nodes + n] = ex.send.bytes[n * l.q + h];
  check_mpi(
      MPI_Alltoall(mine.data(), l.nodes, MPI_INT64_T, theirs.data(), l.nodes, MPI_INT64_T, node),
      "MPI_Alltoall");
  return theirs;
}

// Send side of phase 1: for each local peer h, my blocks for ranks n*Q + h, back to back.
ByteBlocks aggregate(const Exchange& ex, const Layout& l, TempBuffer& storage) {
  std::vector<std::int64_t> bytes(l.q, 0);
  for (int h = 0; h < l.q; ++h)
    for (int n = 0; n < l.nodes; ++n) bytes[h] += ex.send.bytes[n * l.q + h];
  ByteBlocks out = packed_blocks(std::move(bytes), storage);
  for (int h = 0; h < l.q; ++h) {
    std::byte* to = out.at(h);
    for (int n = 0; n < l.nodes; ++n) {
      const int peer = n * l.q + h;
      if (ex.send.bytes[peer] > 0) std::memcpy(to, ex.send.at(peer), ex.send.bytes[peer]);
      to += ex.send.bytes[peer];
    }
  }
  return out;
}

// Receive side of phase 1: from each local source s, its blocks for my column, by node.
ByteBlocks phase1_receive(const std::vector<std::int64_t>& sizes, const Layout& l,
                          TempBuffer& storage) {
  std::vector<std::int64_t> bytes(l.q, 0);
  for (int s = 0; s < l.q; ++s)
    for (int n = 0; n < l.nodes; ++n) bytes[s] += sizes[s * l.nodes + n];
  return packed_blocks(std::move(bytes), storage);
}

// Where, after phase 1, the block from local source s for node n lies.
struct Held {
  const ByteBlocks& blocks;
  const std::vector<std::int64_t>& sizes;
  const Layout& l;

  std::int64_t bytes(int s, int n) const { return sizes[s * l.nodes + n]; }
  const std::byte* at(int s, int n) const {
    const std::byte* p = blocks.at(s);
    for (int k = 0; k < n; ++k) p += bytes(s, k);
    return p;
  }
};

void note_if_mismatch(const Exchange& ex, int source, std::int64_t got) {
  if (got != ex.recv.bytes[source])
    ex.mismatch.note(fmt::format("rank {} sent {} bytes where the receive count says {}", source,
                                 got, ex.recv.bytes[source]));
}

// Phase 2 for one remote node pair: to node `to_node`, from node `from_node`.
void post_inter(const Exchange& ex, const Held& held, int to_node, int from_node, Inter kind,
                Requests& requests, std::vector<MPI_Datatype>& types) {
  const Layout& l = held.l;
  const int to = to_node * l.q + l.local, from = from_node * l.q + l.local;
  for (int s = 0; s < l.q; ++s) {
    const int source = from_node * l.q + s;
    const int tag = kind == Inter::staggered ? s : 0;
    if (kind == Inter::staggered) {
      requests.irecv(ex.recv.at(source), ex.recv.bytes[source], from, tag, ex.ctx.comm);
      requests.isend(held.at(s, to_node), held.bytes(s, to_node), to, tag, ex.ctx.comm);
    }
  }
  if (kind == Inter::staggered) return;
  // Coalesced: one message each way, described by datatypes over the blocks where they lie.
  std::vector<int> lengths;
  std::vector<MPI_Aint> places;
  auto make_type = [&](auto block_at, auto block_bytes) {
    lengths.clear();
    places.clear();
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
  };
  MPI_Request request;
  const MPI_Datatype recv_type =
      make_type([&](int s) { return ex.recv.at(from_node * l.q + s); },
                [&](int s) { return ex.recv.bytes[from_node * l.q + s]; });
  check_mpi(MPI_Irecv(MPI_BOTTOM, 1, recv_type, from, 0, ex.ctx.comm, &request), "MPI_Irecv");
  std::int64_t expected = 0;
  for (int s = 0; s < l.q; ++s) expected += ex.recv.bytes[from_node * l.q + s];
  requests.adopt(request, expected);
  const MPI_Datatype send_type = make_type([&](int s) { return held.at(s, to_node); },
                                           [&](int s) { return held.bytes(s, to_node); });
  check_mpi(MPI_Isend(MPI_BOTTOM, 1, send_type, to, 0, ex.ctx.comm, &request), "MPI_Isend");
  requests.adopt(request, -1);
}

// Coalesced messages go as one datatype only when each fits an int; else per block.
bool fits_coalesced(const Exchange& ex, const Held& held) {
  std::int64_t most_in = 0, most_out = 0;
  const Layout& l = held.l;
  for (int n = 0; n < l.nodes; ++n) {
    std::int64_t in = 0, out = 0;
    for (int s = 0; s < l.q; ++s) {
      in += ex.recv.bytes[n * l.q + s];
      out += held.bytes(s, n);
    }
    most_in = std::max(most_in, in);
    most_out = std::max(most_out, out);
  }
  return std::max(most_in, most_out) <= max_piece();
}

void run_hierarchical(const Exchange& ex, const Params& params, Inter kind) {
  const int size = ex.ctx.size;
  const int q = hierarchical_node_size(params.at("ranks_per_node"), size, ex.ctx.node_size,
                                       ex.ctx.uniform_nodes);
  if (q == 0 || q == size) return run_tuna(ex, params);  // one node: phase 1 alone is flat TuNA
  const Layout l{q, size / q, ex.ctx.rank / q, ex.ctx.rank % q};
  const MPI_Comm node = node_comm(ex.ctx, q);
  CommContext node_ctx;
  node_ctx.comm = node;
  node_ctx.rank = l.local;
  node_ctx.size = node_ctx.node_size = q;
  node_ctx.uniform_nodes = true;

  // Phase 1: TuNA inside the node on aggregated blocks.
  const auto sizes = exchange_sizes(ex, l, node);
  TempBuffer send_copy(ex.memory, 0), received(ex.memory, 0);
  const ByteBlocks aggregated = aggregate(ex, l, send_copy);
  const ByteBlocks gathered = phase1_receive(sizes, l, received);
  tuna_exchange(node_ctx, {aggregated, gathered}, TunaOptions{tuna_shape(params, q)}, ex.memory,
                ex.mismatch);
  send_copy = TempBuffer();

  // Blocks for my own node have arrived.
  const Held held{gathered, sizes, l};
  for (int s = 0; s < q; ++s) {
    const int source = l.node * q + s;
    note_if_mismatch(ex, source, held.bytes(s, l.node));
    if (held.bytes(s, l.node) == ex.recv.bytes[source] && ex.recv.bytes[source] > 0)
      std::memcpy(ex.recv.at(source), held.at(s, l.node), ex.recv.bytes[source]);
  }

  // Phase 2: across nodes, in batches of block_count node pairs.
  if (kind == Inter::coalesced && !fits_coalesced(ex, held)) kind = Inter::staggered;
  const int batch = static_cast<int>(std::max<std::int64_t>(1, params.at("block_count")));
  for (int first = 1; first < l.nodes; first += batch) {
    Requests requests;
    std::vector<MPI_Datatype> types;
    for (int i = first; i < std::min(l.nodes, first + batch); ++i)
      post_inter(ex, held, (l.node + i) % l.nodes, (l.node - i + l.nodes) % l.nodes, kind, requests,
                 types);
    requests.wait_all(ex.mismatch);
    for (MPI_Datatype& type : types) MPI_Type_free(&type);
  }
}

}  // namespace

void run_tuna_coalesced(const Exchange& ex, const Params& params) {
  run_hierarchical(ex, params, Inter::coalesced);
}

void run_tuna_staggered(const Exchange& ex, const Params& params) {
  run_hierarchical(ex, params, Inter::staggered);
}

}  // namespace a2av
