/* a2av: fast and memory-aware variable-size all-to-all exchange on MPI.
 *
 * The C API. Every function is collective over `comm` unless said otherwise,
 * returns A2AV_SUCCESS or one of the error codes below, and leaves the send
 * buffer untouched. See docs/algorithms.md for the algorithm names. */
#ifndef A2AV_A2AV_H
#define A2AV_A2AV_H

#include <a2av/version.h>
#include <mpi.h>

#ifdef __cplusplus
extern "C" {
#endif

enum {
  A2AV_SUCCESS = 0,
  A2AV_ERR_ARG = 1,       /* bad local argument: negative count, null buffer with data, ... */
  A2AV_ERR_COUNTS = 2,    /* send and receive counts disagree across ranks */
  A2AV_ERR_ALGORITHM = 3, /* unknown algorithm name, parameter or value */
  A2AV_ERR_CAPACITY = 4,  /* in-place buffer or memory budget too small */
  A2AV_ERR_DATATYPE = 5,  /* unusable datatype */
  A2AV_ERR_MPI = 6        /* an MPI call failed */
};

/* Same arguments and semantics as MPI_Alltoallv, MPI_IN_PLACE included.
   The algorithm comes from the A2AV_ALGORITHM environment variable if set,
   else from the built-in selection ("auto"). */
int A2AV_Alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[],
                   MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                   const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm);

/* Large-count form (MPI-4 style): totals and displacements beyond 2^31 work. */
int A2AV_Alltoallv_c(const void* sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                     MPI_Datatype sendtype, void* recvbuf, const MPI_Count recvcounts[],
                     const MPI_Aint rdispls[], MPI_Datatype recvtype, MPI_Comm comm);

/* Same arguments and semantics as MPI_Alltoall (uniform blocks), MPI_IN_PLACE included, through
   the same selection as A2AV_Alltoallv. */
int A2AV_Alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm);

/* Same arguments and semantics as MPI_Ialltoallv: starts the exchange and returns; the caller
   completes `request` with MPI_Wait, MPI_Test or their kin, during which the exchange
   advances (an MPI generalized request; docs/algorithms.md, "Nonblocking"). Buffers and
   counts must stay untouched until then. Arguments are checked on this rank only, as MPI
   does: a rank that gets an error must not leave its peers waiting. */
int A2AV_Ialltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[],
                    MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                    const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                    MPI_Request* request);

/* MPI_Ialltoallv's large-count form (MPI-4's MPI_Ialltoallv_c), for counts up to INT_MAX
   (beyond: A2AV_ERR_ARG) and displacements beyond 2^31. */
int A2AV_Ialltoallv_c(const void* sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                      MPI_Datatype sendtype, void* recvbuf, const MPI_Count recvcounts[],
                      const MPI_Aint rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                      MPI_Request* request);

/* Same arguments and semantics as MPI_Ialltoall (uniform blocks), as A2AV_Ialltoallv: only the
   buffers must stay untouched until the request completes. */
int A2AV_Ialltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                   int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request);

/* Same arguments and semantics as MPI_Neighbor_alltoallv on a communicator with a process
   topology (Cartesian, graph, distributed graph): one block per edge, count and displacement
   arrays of the in- and out-degree. Block order as MPI-4.1 Section 8.6 defines it, periodic
   Cartesian dimensions of one or two processes included. Arguments are checked on this rank
   only, as MPI does. */
int A2AV_Neighbor_alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[],
                            MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                            const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm);

/* Same arguments and semantics as MPI_Ineighbor_alltoallv: A2AV_Neighbor_alltoallv's
   messages, completed by MPI_Wait, MPI_Test or their kin. Buffers must stay untouched until
   then; the count and displacement arrays are read by this call only. */
int A2AV_Ineighbor_alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[],
                             MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                             const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                             MPI_Request* request);

/* The same with an explicit algorithm spec ("tuna:radix=4"); NULL or "" means auto. */
int A2AV_Alltoallv_with(const char* algorithm, const void* sendbuf, const MPI_Count sendcounts[],
                        const MPI_Aint sdispls[], MPI_Datatype sendtype, void* recvbuf,
                        const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                        MPI_Datatype recvtype, MPI_Comm comm);

/* Persistent exchange (in the spirit of MPI-4's MPI_Alltoallv_init): the checks, the
   agreement across ranks, the choice of algorithm and the buffer layout are done once;
   each A2AV_Start exchanges the buffers' current contents and returns when this rank's part
   is complete. Buffers and count arrays must stay valid until A2AV_Plan_free. */
typedef struct A2AV_Plan_s* A2AV_Plan;
int A2AV_Alltoallv_init(const void* sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                        MPI_Datatype sendtype, void* recvbuf, const MPI_Count recvcounts[],
                        const MPI_Aint rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                        const char* algorithm, A2AV_Plan* plan);
int A2AV_Start(A2AV_Plan plan);
int A2AV_Plan_free(A2AV_Plan* plan);

/* Sparse exchange (docs/algorithms.md, "Sparse"): this rank sends `count` messages, message i
   being bytes[i] bytes at buffers[i] for rank destinations[i] (several for one rank arrive in
   the order given; to itself too), and receives whatever the others send it, its sources and
   sizes unknown beforehand. No array of the communicator's size is used (except by "dense").
   Collective; errors are agreed across ranks. algorithm: "nbx", "grid", "dense",
   "shared_memory" or "auto"
   (NULL or "": A2AV_SPARSE_ALGORITHM, then auto). On success *received holds the messages,
   ordered by source, until A2AV_Sparse_free; A2AV_Sparse_count and A2AV_Sparse_message read
   them (local). */
typedef struct A2AV_Sparse_s* A2AV_Sparse;
int A2AV_Sparse_exchange(int count, const int destinations[], const void* const buffers[],
                         const MPI_Count bytes[], MPI_Comm comm, const char* algorithm,
                         A2AV_Sparse* received);
int A2AV_Sparse_count(A2AV_Sparse received, int* count);
int A2AV_Sparse_message(A2AV_Sparse received, int index, int* source, const void** data,
                        MPI_Count* bytes);
int A2AV_Sparse_free(A2AV_Sparse* received);

/* General in-place exchange: on entry buf holds s(i,0)..s(i,P-1) back to back
   (sendcounts[j] elements for rank j); on exit it holds S(i) = s(0,i)..s(P-1,i)
   back to back, in source order; recvcounts (may be NULL) receives the counts.
   capacity is the buffer's size in elements. NULL or "" algorithm means auto. */
int A2AV_Exchange_inplace(void* buf, MPI_Count capacity, const MPI_Count sendcounts[],
                          MPI_Count recvcounts[], MPI_Datatype type, MPI_Comm comm,
                          const char* algorithm);

/* Block redistribution (MADRE-style): nblocks blocks of block_bytes each, in place.
   algorithm: "parking", "cyclic", "auto" (NULL or "" means auto). */
typedef struct A2AV_Redist_s* A2AV_Redist;
int A2AV_Redist_create(void* blocks, MPI_Count nblocks, MPI_Count block_bytes, MPI_Comm comm,
                       const char* algorithm, A2AV_Redist* redist);
/* dest_rank[i] < 0: block i is free. Otherwise block i moves to block dest_index[i] of
   dest_rank[i]. Collective. */
int A2AV_Redist_run(A2AV_Redist redist, const int dest_rank[], const MPI_Count dest_index[]);
int A2AV_Redist_free(A2AV_Redist* redist);

/* Sets a2av up on `comm` now (its private duplicates and node layout), which otherwise the
   first blocking a2av call on `comm` does. Where MPI_Comm_idup is not used (A2AV_COMM_IDUP=0,
   Open MPI's default) a nonblocking start on a communicator of several ranks not set up runs
   the MPI library's exchange, since a2av's setup would wait for the other ranks: call it after
   creating a communicator whose first a2av calls may be nonblocking, to have a2av's exchanges
   from the first (docs/design.md, "Nonblocking starts"); on a Cartesian topology with a periodic
   dimension of one or two processes, where the library's neighbourhood exchange pairs blocks
   wrongly, A2AV_Ineighbor_alltoallv's first start sets a2av up and waits for the other
   ranks. The preload library does so for the communicators a program creates. Collective; a
   second call on `comm` does nothing. */
int A2AV_Comm_prepare(MPI_Comm comm);

/* A short description of an error code ("A2AV_ERR_COUNTS: ..."). */
const char* A2AV_Error_string(int code);

/* Local queries about the calling thread's most recent a2av call (not collective). */
const char* A2AV_Last_error_message(void); /* "" after a success */
MPI_Count A2AV_Last_peak_bytes(void);      /* peak temporary bytes allocated by that call */
const char* A2AV_Last_algorithm(void);     /* the spec that ran, parameters resolved */
/* The most point-to-point requests that call had in flight at once on this rank (its bound:
   A2AV_MAX_IN_FLIGHT or the spec's in_flight=N), also where an A2AV_Alltoallv call failed;
   0 where a2av posted none of its own. */
int A2AV_Last_in_flight(void);

#ifdef __cplusplus
}
#endif

#endif /* A2AV_A2AV_H */
