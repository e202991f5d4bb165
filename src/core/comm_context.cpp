#include "core/comm_context.hpp"

#include "core/check.hpp"
#include "core/environment.hpp"
#include "core/per_thread.hpp"
#include "core/progress_request.hpp"
#include "core/spin.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdlib>
#include <memory>

namespace a2av {
namespace {

// a2av's own communicators are made through the profiling interface (PMPI_Comm_dup, ...), so
// that the preload library's hooks on communicator creation (src/preload/communicators.cpp)
// see only the program's.

// Bumped whenever a context is deleted (its communicator freed): lookups cached before
// may name a freed context, or a handle MPI has since reused.
std::atomic<std::uint64_t> contexts_deleted{0};

void wait_for_duplicates(const CommContext& context) {
  while (!duplicates_ready(context)) yield_core();
}

// Once neither the communicator nor a pin refers to it. Nothing started on it is in flight then,
// so no other thread tests the duplicates' requests: they are waited for here without the
// progress hold, which under MPICH (whose global critical section surrounds MPI_Comm_free and
// the delete callback) would wait for a thread waiting for that section.
void destroy(const CommContext* context) {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized) return;  // a plan outliving MPI: its state would take MPI calls to free
  std::unique_ptr<CommContext> owned(const_cast<CommContext*>(context));
  if (!owned->duplicated.load(std::memory_order_acquire))
    MPI_Waitall(2, owned->duplicating.data(), MPI_STATUSES_IGNORE);
  for (auto& [q, node] : owned->node_comms) MPI_Comm_free(&node);
  owned->kept.clear();  // unmaps the segments and cells
  if (owned->node != MPI_COMM_NULL) MPI_Comm_free(&owned->node);
  if (owned->nonblocking != MPI_COMM_NULL) MPI_Comm_free(&owned->nonblocking);
  if (owned->comm != MPI_COMM_NULL) MPI_Comm_free(&owned->comm);
}

void release(const CommContext* context) {
  if (context->references.fetch_sub(1, std::memory_order_acq_rel) == 1) destroy(context);
}

int delete_context(MPI_Comm, int, void* value, void*) {
  contexts_deleted.fetch_add(1, std::memory_order_release);
  auto* context = static_cast<CommContext*>(value);
#ifdef OMPI_MAJOR_VERSION
  // Open MPI 4.1's MPI_Comm_idup reads its parent until it completes (its progress crashed
  // where the parent was freed first), so the free waits for a nonblocking start's duplicates;
  // under the progress hold, as exchanges in flight test them too (no lock of Open MPI's
  // surrounds this callback, for the hold to invert).
  wait_for_duplicates(*context);
#endif
  release(context);
  return MPI_SUCCESS;
}

int context_keyval() {
  static int keyval = [] {
    int key = MPI_KEYVAL_INVALID;
    check_mpi(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_context, &key, nullptr),
              "MPI_Comm_create_keyval");
    return key;
  }();
  return keyval;
}

// Finds how many ranks share this node and whether nodes are equal, contiguous rank ranges.
void find_nodes(CommContext& context) {
  MPI_Comm& node = context.node;
  check_mpi(
      PMPI_Comm_split_type(context.comm, MPI_COMM_TYPE_SHARED, context.rank, MPI_INFO_NULL, &node),
      "MPI_Comm_split_type");
  int host_ranks = 1;
  check_mpi(MPI_Comm_size(node, &host_ranks), "MPI_Comm_size");
  context.cores_shared = oversubscribed(host_ranks);
  if (const int q = emulated_node_size(); q > 0) {
    MPI_Comm group = MPI_COMM_NULL;
    check_mpi(PMPI_Comm_split(node, context.rank / q, context.rank, &group), "MPI_Comm_split");
    MPI_Comm_free(&node);
    node = group;
  }
  int node_rank = 0;
  check_mpi(MPI_Comm_size(node, &context.node_size), "MPI_Comm_size");
  check_mpi(MPI_Comm_rank(node, &node_rank), "MPI_Comm_rank");
  // Contiguous and uniform: my node's ranks are [k*Q, (k+1)*Q) for Q = node_size everywhere.
  const int local_ok =
      context.size % context.node_size == 0 && context.rank % context.node_size == node_rank;
  int shape[2] = {local_ok ? context.node_size : -1, local_ok ? -context.node_size : 1};
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, shape, 2, MPI_INT, MPI_MIN, context.comm), "MPI_Allreduce");
  context.uniform_nodes = shape[0] == context.node_size && -shape[1] == context.node_size;
}

std::unique_ptr<CommContext> make_context(MPI_Comm user) {
  auto context = std::make_unique<CommContext>();
  int inter = 0;
  check_mpi(MPI_Comm_test_inter(user, &inter), "MPI_Comm_test_inter");
  context->is_intercomm = inter != 0;
  check_mpi(PMPI_Comm_dup(user, &context->comm), "MPI_Comm_dup");
  check_mpi(MPI_Comm_set_errhandler(context->comm, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
  if (context->is_intercomm) {  // only vendor runs here: blocks go to the remote group's ranks
    check_mpi(MPI_Comm_rank(context->comm, &context->rank), "MPI_Comm_rank");
    check_mpi(MPI_Comm_remote_size(context->comm, &context->size), "MPI_Comm_remote_size");
    return context;
  }
  check_mpi(PMPI_Comm_dup(context->comm, &context->nonblocking), "MPI_Comm_dup");
  check_mpi(MPI_Comm_rank(context->comm, &context->rank), "MPI_Comm_rank");
  check_mpi(MPI_Comm_size(context->comm, &context->size), "MPI_Comm_size");
  find_nodes(*context);
  context->nodes_found = true;
  context->duplicated = true;
  return context;
}

// A nonblocking start's: nothing that waits for the other ranks. The duplicates come from
// MPI_Comm_idup (both of the user's communicator: the second cannot wait for the first).
std::unique_ptr<CommContext> start_context(MPI_Comm user) {
  auto context = std::make_unique<CommContext>();
  int inter = 0;
  check_mpi(MPI_Comm_test_inter(user, &inter), "MPI_Comm_test_inter");
  context->is_intercomm = inter != 0;
  check_mpi(MPI_Comm_rank(user, &context->rank), "MPI_Comm_rank");
  check_mpi(
      inter ? MPI_Comm_remote_size(user, &context->size) : MPI_Comm_size(user, &context->size),
      "MPI_Comm_size");
  check_mpi(MPI_Comm_idup(user, &context->comm, &context->duplicating[0]), "MPI_Comm_idup");
  if (!inter)
    check_mpi(MPI_Comm_idup(user, &context->nonblocking, &context->duplicating[1]),
              "MPI_Comm_idup");
  return context;
}

// What a started context lacks for blocking calls: its duplicates, then the node layout.
void complete(CommContext& context) {
  wait_for_duplicates(context);
  if (!context.is_intercomm) find_nodes(context);
  context.nodes_found = true;
}

// The context attached to `comm`, or null.
CommContext* attached_context(MPI_Comm comm) {
  void* value = nullptr;
  int found = 0;
  check_mpi(MPI_Comm_get_attr(comm, context_keyval(), &value, &found), "MPI_Comm_get_attr");
  return found ? static_cast<CommContext*>(value) : nullptr;
}

bool comm_idup() {
  static const bool idup = env_flag("A2AV_COMM_IDUP");
  return idup;
}

CommContext& find_or_make_context(MPI_Comm comm, bool blocking) {
  if (CommContext* context = attached_context(comm)) return *context;
  auto context = blocking || !comm_idup() ? make_context(comm) : start_context(comm);
  check_mpi(MPI_Comm_set_attr(comm, context_keyval(), context.get()), "MPI_Comm_set_attr");
  return *context.release();
}

// The last communicators this thread used, valid while no context has been deleted: the
// attribute lookup costs more than a small exchange can spare.
struct RecentContexts {
  std::uint64_t generation = 0;
  std::array<MPI_Comm, 4> comms;
  std::array<CommContext*, 4> contexts{};
  std::size_t next = 0;

  explicit RecentContexts(std::uint64_t g = 0) : generation(g) { comms.fill(MPI_COMM_NULL); }
};

// `comm`'s context if this thread used it lately, else null.
CommContext* recently_used(MPI_Comm comm) {
  RecentContexts& recent = per_thread<RecentContexts>();
  const std::uint64_t generation = contexts_generation();
  if (recent.generation != generation) recent = RecentContexts{generation};
  for (std::size_t i = 0; i < recent.comms.size(); ++i)
    if (recent.comms[i] == comm) return recent.contexts[i];
  return nullptr;
}

CommContext& remember(MPI_Comm comm, CommContext& context) {
  RecentContexts& recent = per_thread<RecentContexts>();
  recent.comms[recent.next] = comm;
  recent.contexts[recent.next] = &context;
  recent.next = (recent.next + 1) % recent.comms.size();
  return context;
}

// `comm`'s context if it has one, else null (without A2AV_COMM_IDUP one is always whole).
CommContext* existing_context(MPI_Comm comm) {
  if (CommContext* context = recently_used(comm)) return context;
  CommContext* context = attached_context(comm);
  return context ? &remember(comm, *context) : nullptr;
}

// Whether `comm` is an intracommunicator of one rank, whose setup waits for nobody. The size
// first: a start on a communicator not set up pays one call more than the library's own.
bool alone(MPI_Comm comm) {
  int size = 0, inter = 0;
  check_mpi(MPI_Comm_size(comm, &size), "MPI_Comm_size");
  if (size != 1) return false;
  check_mpi(MPI_Comm_test_inter(comm, &inter), "MPI_Comm_test_inter");
  return !inter;
}

// The context of `comm`, made (blocking or started) if it has none.
CommContext& context_of(MPI_Comm comm, bool blocking) {
  if (comm == MPI_COMM_NULL) fail(A2AV_ERR_ARG, "the communicator is MPI_COMM_NULL");
  if (CommContext* context = recently_used(comm)) return *context;
  return remember(comm, find_or_make_context(comm, blocking));
}

}  // namespace

ContextPin::ContextPin(const CommContext& context) : context_(&context) {
  context.references.fetch_add(1, std::memory_order_relaxed);
}

ContextPin::~ContextPin() {
  if (context_) release(context_);
}

int emulated_node_size() {
  static const int q = static_cast<int>(*env_integer("A2AV_EMULATE_NODES"));
  return q;
}

std::uint64_t contexts_generation() {
  return contexts_deleted.load(std::memory_order_acquire);
}

const CommContext& comm_context(MPI_Comm comm) {
  CommContext& context = context_of(comm, true);
  if (!context.nodes_found) [[unlikely]]
    complete(context);
  return context;
}

const CommContext& started_context(MPI_Comm comm) {
  return context_of(comm, false);
}

bool setup_waits(MPI_Comm comm) {
  return comm != MPI_COMM_NULL && !comm_idup() && !existing_context(comm) && !alone(comm);
}

const CommContext* context_for_start(MPI_Comm comm) {
  if (comm == MPI_COMM_NULL) fail(A2AV_ERR_ARG, "the communicator is MPI_COMM_NULL");
  if (CommContext* context = existing_context(comm)) return context;
  if (comm_idup()) return &context_of(comm, false);
  return alone(comm) ? &context_of(comm, true) : nullptr;
}

int group_size(MPI_Comm comm) {
  if (comm == MPI_COMM_NULL) fail(A2AV_ERR_ARG, "the communicator is MPI_COMM_NULL");
  if (const CommContext* context = recently_used(comm)) return context->size;
  int inter = 0, size = 0;
  check_mpi(MPI_Comm_test_inter(comm, &inter), "MPI_Comm_test_inter");
  check_mpi(inter ? MPI_Comm_remote_size(comm, &size) : MPI_Comm_size(comm, &size),
            "MPI_Comm_size");
  return size;
}

bool duplicates_ready(const CommContext& context) {
  if (context.duplicated.load(std::memory_order_acquire)) return true;
  const ProgressHold hold;  // other threads' operations test the same requests
  if (context.duplicated.load(std::memory_order_relaxed)) return true;
  int done = 0;
  check_mpi(MPI_Testall(2, context.duplicating.data(), &done, MPI_STATUSES_IGNORE), "MPI_Testall");
  if (!done) return false;
  check_mpi(MPI_Comm_set_errhandler(context.comm, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
  if (context.nonblocking != MPI_COMM_NULL)
    check_mpi(MPI_Comm_set_errhandler(context.nonblocking, MPI_ERRORS_RETURN),
              "MPI_Comm_set_errhandler");
  context.duplicated.store(true, std::memory_order_release);
  return true;
}

MPI_Comm node_comm(const CommContext& context, int ranks_per_node) {
  auto [it, inserted] = context.node_comms.try_emplace(ranks_per_node, MPI_COMM_NULL);
  if (inserted)
    check_mpi(
        PMPI_Comm_split(context.comm, context.rank / ranks_per_node, context.rank, &it->second),
        "MPI_Comm_split");
  return it->second;
}

}  // namespace a2av
