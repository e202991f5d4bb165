/* The synchronization floor of a small exchange on one node, against the exchanges (docs/bench.md,
 * "The floor at small blocks"). Timed as `a2av bench` times a call: from a barrier to the
 * call's end, the maximum over ranks, the median over iterations; all rows alternate in one run:
 *
 *   nothing         no call at all: what the method itself measures (the barrier's exit skew)
 *   flag_barrier    every rank raises its flag in a shared window and waits for all others':
 *                   the least any one-round exchange on the node must do, with no data
 *   MPI_Barrier     the MPI library's own
 *   MPI_Alltoallv   S bytes to every rank
 *   A2AV_Alltoallv  the same through a2av (A2AV_ALGORITHM, default auto)
 *
 *   mpiexec -n 2 ./sync_floor [iterations] [S]
 */
#include <a2av/a2av.h>
#include <mpi.h>

#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { kLine = 64, kRows = 5 };
static const char* kNames[kRows] = {"nothing", "flag_barrier", "MPI_Barrier", "MPI_Alltoallv",
                                    "A2AV_Alltoallv"};

typedef struct {
  int rank, size, bytes;
  char *send, *recv;
  int *counts, *displs;
  char* flags;  // one cache line per rank, in a window shared by the node
  uint64_t round;
} Run;

static _Atomic uint64_t* flag_of(const Run* r, int rank) {
  return (_Atomic uint64_t*)(r->flags + (size_t)rank * kLine);
}

// Spins, and yields the core after a while: where ranks outnumber the cores, the rank waited
// for may be the one that does not run.
static void flag_barrier(Run* r) {
  ++r->round;
  atomic_store_explicit(flag_of(r, r->rank), r->round, memory_order_release);
  for (int peer = 0; peer < r->size; ++peer)
    for (int spins = 0; atomic_load_explicit(flag_of(r, peer), memory_order_acquire) < r->round;)
      if (++spins > 1000) sched_yield();
}

static int run_row(Run* r, int row) {
  switch (row) {
    case 1:
      flag_barrier(r);
      return MPI_SUCCESS;
    case 2:
      return MPI_Barrier(MPI_COMM_WORLD);
    case 3:
      return MPI_Alltoallv(r->send, r->counts, r->displs, MPI_BYTE, r->recv, r->counts, r->displs,
                           MPI_BYTE, MPI_COMM_WORLD);
    case 4:
      return A2AV_Alltoallv(r->send, r->counts, r->displs, MPI_BYTE, r->recv, r->counts, r->displs,
                            MPI_BYTE, MPI_COMM_WORLD);
    default:
      return MPI_SUCCESS;
  }
}

static double timed(Run* r, int row) {
  MPI_Barrier(MPI_COMM_WORLD);
  const double start = MPI_Wtime();
  if (run_row(r, row) != MPI_SUCCESS) MPI_Abort(MPI_COMM_WORLD, 1);
  return MPI_Wtime() - start;
}

static int compare(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

/* Both exchanges deliver what was sent: byte k of the block from s to d is s*31 + d*7 + k. */
static int exchanges_right(Run* r) {
  int wrong = 0;
  for (int row = 3; row < kRows; ++row) {
    memset(r->recv, 0, (size_t)r->bytes * r->size);
    run_row(r, row);
    for (int s = 0; s < r->size; ++s)
      for (int k = 0; k < r->bytes; ++k)
        wrong += r->recv[s * r->bytes + k] != (char)(s * 31 + r->rank * 7 + k);
  }
  MPI_Allreduce(MPI_IN_PLACE, &wrong, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  return wrong == 0;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  Run r = {0};
  MPI_Comm_rank(MPI_COMM_WORLD, &r.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &r.size);
  const int iterations = argc > 1 ? atoi(argv[1]) : 20000;
  r.bytes = argc > 2 ? atoi(argv[2]) : 16;
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  int node_size = 0;
  MPI_Comm_size(node, &node_size);
  if (node_size != r.size || iterations < 1 || r.bytes < 0) {
    if (r.rank == 0) fprintf(stderr, "sync_floor: all ranks on one node, iterations >= 1\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  MPI_Win window;
  MPI_Win_allocate_shared(kLine, 1, MPI_INFO_NULL, node, &r.flags, &window);
  MPI_Aint window_bytes;
  int unit;
  MPI_Win_shared_query(window, 0, &window_bytes, &unit, &r.flags);
  memset(r.flags + (size_t)r.rank * kLine, 0, kLine);
  MPI_Barrier(MPI_COMM_WORLD);

  r.send = malloc((size_t)r.bytes * r.size + 1);
  r.recv = malloc((size_t)r.bytes * r.size + 1);
  r.counts = malloc(sizeof(int) * r.size);
  r.displs = malloc(sizeof(int) * r.size);
  for (int d = 0; d < r.size; ++d) {
    r.counts[d] = r.bytes;
    r.displs[d] = d * r.bytes;
    for (int k = 0; k < r.bytes; ++k) r.send[d * r.bytes + k] = (char)(r.rank * 31 + d * 7 + k);
  }
  const int right = exchanges_right(&r);

  double* seconds = malloc(sizeof(double) * kRows * (size_t)iterations);
  for (int i = 0; i < iterations / 10 + 1; ++i)  // warm-up
    for (int row = 0; row < kRows; ++row) timed(&r, row);
  for (int i = 0; i < iterations; ++i)
    for (int row = 0; row < kRows; ++row) seconds[row * iterations + i] = timed(&r, row);
  MPI_Allreduce(MPI_IN_PLACE, seconds, kRows * iterations, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  if (r.rank == 0) {
    printf(
        "# sync_floor: P=%d, blocks of %d B, %d iterations, median (us) of the max over ranks%s\n",
        r.size, r.bytes, iterations, right ? "" : "  WRONG RESULT");
    for (int row = 0; row < kRows; ++row) {
      qsort(seconds + row * iterations, iterations, sizeof(double), compare);
      printf("%-15s %8.3f\n", kNames[row], 1e6 * seconds[row * iterations + iterations / 2]);
    }
  }
  free(seconds);
  free(r.send);
  free(r.recv);
  free(r.counts);
  free(r.displs);
  MPI_Win_free(&window);
  MPI_Comm_free(&node);
  MPI_Finalize();
  return right ? 0 : 1;
}
