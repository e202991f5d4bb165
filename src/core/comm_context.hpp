// Per-communicator state cached on the user's communicator as an MPI attribute: a private
// duplicate (own tag space, MPI_ERRORS_RETURN) and the node layout found by
// MPI_Comm_split_type(MPI_COMM_TYPE_SHARED). Creating it is collective, once per communicator.
// A blocking call creates it whole. A nonblocking start, which must not wait for the other
// ranks, only starts it (docs/design.md, "Nonblocking starts"): the duplicates are made by
// MPI_Comm_idup and usable once duplicates_ready(), and the node layout waits for the first
// blocking call.
#pragma once

#include <mpi.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <typeindex>
#include <typeinfo>
#include <utility>

namespace a2av {

class NodeSegment;
class SingleCopy;

// What higher layers keep per communicator (their shared segments and cells), made on first
// use and destroyed with the context. Keyed by the keeper's own type, so that core names none
// of them.
class KeptState {
 public:
  template <class T>
  T* find() const {
    const auto it = kept_.find(std::type_index(typeid(T)));
    return it == kept_.end() ? nullptr : static_cast<T*>(it->second.get());
  }
  template <class T>
  T& keep(std::shared_ptr<T> state) const {
    T& kept = *state;
    kept_[std::type_index(typeid(T))] = std::move(state);
    return kept;
  }
  void clear() const { kept_.clear(); }
  // T, default-constructed on first use.
  template <class T>
  T& get() const {
    T* found = find<T>();
    return found ? *found : keep(std::make_shared<T>());
  }

 private:
  mutable std::map<std::type_index, std::shared_ptr<void>> kept_;
};

struct CommContext {
  MPI_Comm comm = MPI_COMM_NULL;  // private duplicate used for all traffic
  // Another, for the nonblocking exchanges alone: a blocking exchange between their start and
  // their completion may receive from a peer with MPI_ANY_TAG (in-band errors), and must not
  // take their messages.
  MPI_Comm nonblocking = MPI_COMM_NULL;
  int rank = 0;
  int size = 1;               // of an intercommunicator: the remote group's, the ranks blocks go to
  int node_size = 1;          // ranks sharing this rank's node
  bool cores_shared = false;  // more ranks on this host than cores (emulated nodes or not)
  MPI_Comm node = MPI_COMM_NULL;  // those ranks (A2AV_EMULATE_NODES: groups of them)
  bool uniform_nodes = false;     // every node has node_size ranks, numbered contiguously
  bool is_intercomm = false;
  // The duplicates' MPI_Comm_idup requests, from a nonblocking start on a new communicator
  // until they complete (`duplicated`); tested under a ProgressHold (other threads' progress
  // tests them too).
  mutable std::array<MPI_Request, 2> duplicating{MPI_REQUEST_NULL, MPI_REQUEST_NULL};
  mutable std::atomic<bool> duplicated{false};
  bool nodes_found = false;  // node, node_size, uniform_nodes and cores_shared are set
  // Communicators of emulated nodes (ranks [k*Q, (k+1)*Q)), by Q; made on first use.
  mutable std::map<int, MPI_Comm> node_comms;
  // The shared_memory algorithm's cells (alltoallv/shared_memory.cpp), made on its first
  // call; null until then. `exchanges` counts its and node_aware's exchanges, the same on
  // every rank.
  mutable std::shared_ptr<NodeSegment> segment;  // shared_ptr: NodeSegment stays opaque here
  // Whether its ranks may read each other's memory (core/single_copy.hpp), tried with it.
  mutable std::shared_ptr<SingleCopy> single_copy;
  mutable std::uint64_t exchanges = 0;
  // Sparse exchange rounds (sparse/sparse.hpp) and nonblocking exchanges
  // (driver/ialltoallv.cpp) so far, the same on every rank.
  mutable std::uint64_t sparse_rounds = 0;
  // The largest message count and byte total of any rank in the last sparse exchange that
  // agreed on them (-1: none yet), from which the next one's auto chooses.
  mutable std::int64_t sparse_max_messages = -1, sparse_max_bytes = 0;
  mutable std::uint64_t nonblocking_started = 0;
  // The segments and cells of node_aware, the sparse shared_memory exchange and the
  // nonblocking shared-memory schedule, each made on its first use.
  KeptState kept;
  // The communicator's attribute and every ContextPin: the last of them frees the context.
  mutable std::atomic<int> references{1};
};

// Keeps a context, and the duplicates its operations use, past its communicator's
// MPI_Comm_free while what was started on it lives: MPI lets a program free a communicator
// with operations pending, which then complete normally, and a persistent request or plan
// still refers to it. Whichever of the attribute's deletion and the last pin comes last frees it.
class ContextPin {
 public:
  ContextPin() = default;
  explicit ContextPin(const CommContext& context);
  ContextPin(ContextPin&& other) noexcept : context_(std::exchange(other.context_, nullptr)) {}
  ContextPin& operator=(ContextPin&& other) noexcept {
    std::swap(context_, other.context_);
    return *this;
  }
  ~ContextPin();

 private:
  const CommContext* context_ = nullptr;
};

// Ranks per node as every rank sees it alike: node_size on nodes of one size numbered
// contiguously, else 0.
inline int agreed_node_size(const CommContext& ctx) {
  return ctx.uniform_nodes ? ctx.node_size : 0;
}

// A2AV_EMULATE_NODES=Q: groups of Q consecutive ranks of a node act as nodes (0 or unset:
// the nodes MPI_COMM_TYPE_SHARED finds).
int emulated_node_size();

// The context of `comm`, created or completed on first use (collectively, blocking).
const CommContext& comm_context(MPI_Comm comm);

// The context of `comm` for a nonblocking start, never waiting for the other ranks: on first
// use only rank, size and is_intercomm are set, and the duplicates are being made.
const CommContext& started_context(MPI_Comm comm);

// Whether a nonblocking start on `comm` would wait for the other ranks to set a2av up: it has no
// context, it has other ranks, and A2AV_COMM_IDUP is off (Open MPI's default), so the setup
// would block. The same on every rank: only collective calls make a context. A start then goes
// to the MPI library.
bool setup_waits(MPI_Comm comm);

// started_context's, or null where setup_waits.
const CommContext* context_for_start(MPI_Comm comm);

// The size of `comm`'s (remote) group, without making a context.
int group_size(MPI_Comm comm);

// Whether the context's duplicates are usable, testing their MPI_Comm_idup without waiting.
bool duplicates_ready(const CommContext& context);

// Changes whenever a context is deleted (its communicator freed). While it stays the same, a
// communicator handle that had a context still has that context: MPI reuses a handle only
// after the communicator is freed.
std::uint64_t contexts_generation();

// The communicator of this rank's node when nodes are ranks [k*Q, (k+1)*Q) (collective on
// first use for a given Q).
MPI_Comm node_comm(const CommContext& context, int ranks_per_node);

}  // namespace a2av
