// The textbook collectives of the lecture ([Lecture14] in docs/references.md)
// on MPI point-to-point: broadcast, reduce, allreduce, scatter, gather, allgather and
// alltoall with uniform blocks, each for any P and any root, with a choice of algorithm.
// docs/collectives.md lists the algorithms and their alpha-beta costs.
//
// Semantics are those of the MPI call of the same name, with one datatype for both sides
// and counts per rank (scatter, gather, allgather: `count` elements for each rank;
// alltoall: `count` elements for each pair). Any datatype works, contiguous or not; any
// MPI_Op, built-in or from MPI_Op_create, and every algorithm keeps the rank order of the
// operands, so non-commutative operators give MPI's result. Traffic goes through the
// library's private duplicate of `comm`. Not supported: MPI_IN_PLACE, intercommunicators,
// single messages beyond INT_MAX elements. Errors throw a2av::Error (A2AV_ERR_ARG,
// A2AV_ERR_ALGORITHM, A2AV_ERR_DATATYPE, A2AV_ERR_MPI); argument errors are found by each
// rank alone, as in MPI, so a rank whose peers erred may block.
#pragma once

#include <a2av/error.hpp>
#include <a2av/mpi_type.hpp>

#include <mpi.h>

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace a2av::coll {

enum class Collective { bcast, reduce, allreduce, scatter, gather, allgather, alltoall };

enum class Algorithm {
  automatic,           // chosen by P and message size (choose())
  binomial,            // bcast, reduce, scatter, gather: binomial tree (minimum spanning tree)
  scatter_allgather,   // bcast: van de Geijn, binomial scatter + ring allgather
  recursive_doubling,  // allreduce, allgather: hypercube exchange, non-powers of two folded
  rabenseifner,        // reduce, allreduce: recursive-halving reduce-scatter + gather/allgather
  linear,              // scatter, gather: the root talks to every rank itself
  ring,                // allgather: P-1 steps to the right-hand neighbour
  exchange,            // alltoall: P-1 steps with rank +- i (the lecture's exchange algorithm)
  bruck,               // alltoall: ceil(lg P) store-and-forward rounds (Bruck et al.)
};

std::string_view name(Collective collective);
std::string_view name(Algorithm algorithm);
Collective parse_collective(std::string_view text);  // throws A2AV_ERR_ARG
Algorithm parse_algorithm(std::string_view text);    // "auto" too; throws A2AV_ERR_ALGORITHM
// The algorithms implemented for a collective, automatic excluded.
std::vector<Algorithm> algorithms(Collective collective);

// What `automatic` runs for P ranks and `bytes` per rank (the vector for bcast, reduce and
// allreduce; one rank's block for the others) of `count` elements.
Algorithm choose(Collective collective, int size, std::int64_t bytes, std::int64_t count);

// Peak temporary bytes the calling thread's last collective allocated (its own buffers and
// packing of non-contiguous types; MPI's internal buffers are not counted).
std::int64_t last_peak_temp_bytes();

// The lecture's model: a message of n bytes costs alpha + beta n; combining n bytes with
// the operator costs gamma n (zero for the collectives that do not reduce).
struct Machine {
  double alpha = 0;  // seconds per message
  double beta = 0;   // seconds per byte
  double gamma = 0;  // seconds per byte reduced
};
// Predicted seconds of `algorithm` (not automatic) for P ranks and `bytes` as in choose().
double predict(Collective collective, Algorithm algorithm, int size, std::int64_t bytes,
               const Machine& machine);

void bcast(void* buf, MPI_Count count, MPI_Datatype type, int root, MPI_Comm comm,
           Algorithm algorithm = Algorithm::automatic);
// recvbuf is significant at the root only.
void reduce(const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype type, MPI_Op op,
            int root, MPI_Comm comm, Algorithm algorithm = Algorithm::automatic);
void allreduce(const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype type, MPI_Op op,
               MPI_Comm comm, Algorithm algorithm = Algorithm::automatic);
// sendbuf (P blocks of count) is significant at the root only.
void scatter(const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype type, int root,
             MPI_Comm comm, Algorithm algorithm = Algorithm::automatic);
// recvbuf (P blocks of count) is significant at the root only.
void gather(const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype type, int root,
            MPI_Comm comm, Algorithm algorithm = Algorithm::automatic);
void allgather(const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype type,
               MPI_Comm comm, Algorithm algorithm = Algorithm::automatic);
void alltoall(const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype type, MPI_Comm comm,
              Algorithm algorithm = Algorithm::automatic);

// A user-defined MPI_Op over T from `Combine`, a stateless callable with
// Combine{}(a, b) == a (op) b, where a comes from the lower ranks. Owns the MPI_Op (free it
// before MPI_Finalize, i.e. let it go out of scope).
template <class T, class Combine>
class UserOp {
 public:
  explicit UserOp(bool commutative) { check(MPI_Op_create(&apply, commutative ? 1 : 0, &op_)); }
  ~UserOp() {
    if (op_ != MPI_OP_NULL) MPI_Op_free(&op_);
  }
  UserOp(const UserOp&) = delete;
  UserOp& operator=(const UserOp&) = delete;
  MPI_Op get() const { return op_; }

 private:
  // MPI's convention: inout[i] = in[i] (op) inout[i].
  static void apply(void* in, void* inout, int* length, MPI_Datatype*) {
    const T* a = static_cast<const T*>(in);
    T* b = static_cast<T*>(inout);
    for (int i = 0; i < *length; ++i) b[i] = Combine{}(a[i], b[i]);
  }
  static void check(int rc) {
    if (rc != MPI_SUCCESS) throw Error(A2AV_ERR_MPI, "MPI_Op_create failed");
  }
  MPI_Op op_ = MPI_OP_NULL;
};

// Typed forms: the type from mpi_type<T>(); receive spans must be large enough (A2AV_ERR_ARG).
template <class T>
void bcast(std::span<T> data, int root, MPI_Comm comm, Algorithm algorithm = Algorithm::automatic) {
  bcast(data.data(), static_cast<MPI_Count>(data.size()), mpi_type<T>(), root, comm, algorithm);
}

namespace detail {
void require_room(std::size_t have, std::size_t need, const char* what);
}

template <class T>
void reduce(std::span<const T> send, std::span<T> recv, MPI_Op op, int root, MPI_Comm comm,
            Algorithm algorithm = Algorithm::automatic) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  if (rank == root) detail::require_room(recv.size(), send.size(), "reduce: recv");
  reduce(send.data(), recv.data(), static_cast<MPI_Count>(send.size()), mpi_type<T>(), op, root,
         comm, algorithm);
}

template <class T>
std::vector<T> allreduce(std::span<const T> send, MPI_Op op, MPI_Comm comm,
                         Algorithm algorithm = Algorithm::automatic) {
  std::vector<T> recv(send.size());
  allreduce(send.data(), recv.data(), static_cast<MPI_Count>(send.size()), mpi_type<T>(), op, comm,
            algorithm);
  return recv;
}

// Every rank's `send` (all of the same size), in rank order.
template <class T>
std::vector<T> allgather(std::span<const T> send, MPI_Comm comm,
                         Algorithm algorithm = Algorithm::automatic) {
  int size = 1;
  MPI_Comm_size(comm, &size);
  std::vector<T> recv(send.size() * static_cast<std::size_t>(size));
  allgather(send.data(), recv.data(), static_cast<MPI_Count>(send.size()), mpi_type<T>(), comm,
            algorithm);
  return recv;
}

// send holds P blocks of equal size, block j for rank j; returns block i from every rank i.
template <class T>
std::vector<T> alltoall(std::span<const T> send, MPI_Comm comm,
                        Algorithm algorithm = Algorithm::automatic) {
  int size = 1;
  MPI_Comm_size(comm, &size);
  if (send.size() % static_cast<std::size_t>(size) != 0)
    throw Error(A2AV_ERR_ARG, "alltoall: the send size is not a multiple of P");
  std::vector<T> recv(send.size());
  alltoall(send.data(), recv.data(), static_cast<MPI_Count>(send.size() / size), mpi_type<T>(),
           comm, algorithm);
  return recv;
}

}  // namespace a2av::coll
