#include "collectives/common.hpp"

#include "core/check.hpp"
#include "core/comm_context.hpp"
#include "core/per_thread.hpp"
#include "core/tags.hpp"

#include <climits>
#include <cstring>
#include <vector>

namespace a2av::coll {
int as_int(std::int64_t count) {
  if (count > INT_MAX)
    fail(A2AV_ERR_ARG, "a message of {} elements exceeds INT_MAX, the limit of a2av collectives",
         count);
  return static_cast<int>(count);
}

Comm private_comm(MPI_Comm user, int tag) {
  const CommContext& context = comm_context(user);
  if (context.is_intercomm) fail(A2AV_ERR_ARG, "a2av collectives need an intracommunicator");
  return {context.comm, context.rank, context.size, tag};
}

int floor_pow2(int n) {
  int p = 1;
  while (p <= n / 2) p *= 2;
  return p;
}

int ceil_log2(int n) {
  int l = 0;
  while ((1 << l) < n) ++l;
  return l;
}

Type::Type(MPI_Datatype t) : type(t) {
  if (t == MPI_DATATYPE_NULL) fail(A2AV_ERR_DATATYPE, "the datatype is MPI_DATATYPE_NULL");
  MPI_Aint lb = 0;
  check_mpi(MPI_Type_get_extent(t, &lb, &extent), "MPI_Type_get_extent");
  check_mpi(MPI_Type_get_true_extent(t, &true_lb, &true_extent), "MPI_Type_get_true_extent");
  check_mpi(MPI_Type_size(t, &size), "MPI_Type_size");
  contiguous = size == extent && size == true_extent;
}

MemoryTracker& call_memory() {
  A2AV_THREAD_LOCAL MemoryTracker memory;
  return memory;
}

std::int64_t last_peak_temp_bytes() {
  return call_memory().peak();
}

Elements::Elements(const Type& type, std::int64_t count) {
  // Element 0's bytes start at true_lb; the last element's end at (count-1)*extent + true ub.
  bytes_ = count > 0 ? type.true_extent + (count - 1) * type.extent : 0;
  storage_ = std::make_unique_for_overwrite<std::byte[]>(static_cast<std::size_t>(bytes_));
  base_ = storage_.get() - type.true_lb;
  call_memory().allocate(bytes_);
}

Elements::~Elements() {
  call_memory().release(bytes_);
}

void send(const void* buf, std::int64_t count, const Type& type, int peer, const Comm& c) {
  check_mpi(MPI_Send(buf, as_int(count), type.type, peer, c.tag, c.comm), "MPI_Send");
}

void recv(void* buf, std::int64_t count, const Type& type, int peer, const Comm& c) {
  check_mpi(MPI_Recv(buf, as_int(count), type.type, peer, c.tag, c.comm, MPI_STATUS_IGNORE),
            "MPI_Recv");
}

void sendrecv(const void* out, std::int64_t out_count, int dest, void* in, std::int64_t in_count,
              int source, const Type& type, const Comm& c) {
  check_mpi(MPI_Sendrecv(out, as_int(out_count), type.type, dest, c.tag, in, as_int(in_count),
                         type.type, source, c.tag, c.comm, MPI_STATUS_IGNORE),
            "MPI_Sendrecv");
}

void copy(const void* from, void* to, std::int64_t count, const Type& type) {
  if (count == 0 || from == to) return;
  if (type.contiguous) {
    std::memcpy(type.at(to, 0) + type.true_lb, type.at(from, 0) + type.true_lb,
                static_cast<std::size_t>(count * type.size));
    return;
  }
  // Through MPI's packed form, which only MPI knows for a type with holes.
  int bytes = 0;
  check_mpi(MPI_Pack_size(as_int(count), type.type, MPI_COMM_SELF, &bytes), "MPI_Pack_size");
  std::vector<std::byte> packed(static_cast<std::size_t>(bytes));
  call_memory().allocate(bytes);
  int position = 0;
  check_mpi(
      MPI_Pack(from, as_int(count), type.type, packed.data(), bytes, &position, MPI_COMM_SELF),
      "MPI_Pack");
  position = 0;
  check_mpi(
      MPI_Unpack(packed.data(), bytes, &position, to, as_int(count), type.type, MPI_COMM_SELF),
      "MPI_Unpack");
  call_memory().release(bytes);
}

void reduce_local(const void* in, void* inout, std::int64_t count, const Type& type, MPI_Op op) {
  if (count == 0) return;
  check_mpi(MPI_Reduce_local(in, inout, as_int(count), type.type, op), "MPI_Reduce_local");
}

bool commutative(MPI_Op op) {
  int yes = 0;
  check_mpi(MPI_Op_commutative(op, &yes), "MPI_Op_commutative");
  return yes != 0;
}

int subtree(int v, int size) {
  if (v == 0) return size;
  return std::min(v & -v, size - v);
}

void binomial_scatter(std::byte* mine, const Pieces& pieces, const Type& type, int root,
                      const Comm& c) {
  const int v = relative(c.rank, root, c.size);
  const auto at = [&](int j) { return mine + pieces.length(v, j) * type.extent; };
  int mask = 1;
  for (; mask < c.size; mask <<= 1) {
    if (v & mask) {
      const std::int64_t n = pieces.length(v, v + subtree(v, c.size));
      if (n > 0) recv(mine, n, type, absolute(v - mask, root, c.size), c);
      break;
    }
  }
  // Largest subtree first: it has the most forwarding left to do.
  for (mask >>= 1; mask > 0; mask >>= 1) {
    const int child = v + mask;
    if (child >= c.size) continue;
    const std::int64_t n = pieces.length(child, child + subtree(child, c.size));
    if (n > 0) send(at(child), n, type, absolute(child, root, c.size), c);
  }
}

void binomial_gather(std::byte* mine, const Pieces& pieces, const Type& type, int root,
                     const Comm& c) {
  const int v = relative(c.rank, root, c.size);
  for (int mask = 1; mask < c.size; mask <<= 1) {
    if (v & mask) {
      const std::int64_t n = pieces.length(v, v + subtree(v, c.size));
      if (n > 0) send(mine, n, type, absolute(v - mask, root, c.size), c);
      return;
    }
    const int child = v + mask;
    if (child >= c.size) continue;
    const std::int64_t n = pieces.length(child, child + subtree(child, c.size));
    if (n > 0)
      recv(mine + pieces.length(v, child) * type.extent, n, type, absolute(child, root, c.size), c);
  }
}

void ring_allgather(std::byte* base, const Pieces& pieces, const Type& type, int root,
                    const Comm& c) {
  const int p = c.size, v = relative(c.rank, root, p);
  const int right = absolute((v + 1) % p, root, p), left = absolute((v + p - 1) % p, root, p);
  for (int step = 0; step < p - 1; ++step) {
    // Forward what arrived in the previous step: piece v - step out, v - step - 1 in.
    const int out = (v - step + p) % p, in = (v - step - 1 + p) % p;
    sendrecv(base + pieces.begin(out) * type.extent, pieces.length(out, out + 1), right,
             base + pieces.begin(in) * type.extent, pieces.length(in, in + 1), left, type, c);
  }
}

void require_buffer(const void* buf, MPI_Count count, const char* what) {
  if (buf == MPI_IN_PLACE) fail(A2AV_ERR_ARG, "{}: MPI_IN_PLACE is not supported", what);
  if (count > 0 && buf == nullptr)
    fail(A2AV_ERR_ARG, "{}: null buffer with {} elements", what, count);
}

void require_op(MPI_Op op) {
  if (op == MPI_OP_NULL) fail(A2AV_ERR_ARG, "the reduction operator is MPI_OP_NULL");
}

Call start(Collective collective, MPI_Comm comm, MPI_Datatype type, MPI_Count count,
           Algorithm algorithm, int root) {
  if (count < 0) fail(A2AV_ERR_ARG, "{}: negative count {}", name(collective), count);
  call_memory() = MemoryTracker();
  static_assert(static_cast<int>(Collective::alltoall) < tags::kCollectives.count);
  Call call{private_comm(comm, tags::kCollectives.at(static_cast<int>(collective))), Type(type),
            algorithm};
  if (root < 0 || root >= call.c.size)
    fail(A2AV_ERR_ARG, "{}: root {} is not a rank of a communicator of {}", name(collective), root,
         call.c.size);
  if (algorithm == Algorithm::automatic) {
    call.algorithm = choose(collective, call.c.size, count * call.type.size, count);
    return call;
  }
  const auto valid = algorithms(collective);
  if (std::find(valid.begin(), valid.end(), algorithm) == valid.end())
    fail(A2AV_ERR_ALGORITHM, "{}: algorithm '{}' does not apply", name(collective),
         name(algorithm));
  return call;
}

void detail::require_room(std::size_t have, std::size_t need, const char* what) {
  if (have < need) fail(A2AV_ERR_ARG, "{}: room for {} elements, {} needed", what, have, need);
}

}  // namespace a2av::coll
