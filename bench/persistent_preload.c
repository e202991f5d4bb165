/* Persistent MPI_Alltoallv through the preload against the MPI library's own, side by side in
 * one run: under LD_PRELOAD=liba2av_preload.so, MPI_Alltoallv_init (Open MPI 4.1:
 * MPIX_Alltoallv_init) is a2av's and the PMPI_ one the library's; beside them a2av's blocking
 * MPI_Alltoallv (what a start ran to completion before starts were local) and its
 * MPI_Ialltoallv + MPI_Wait (what a local start runs). For each block size one request of
 * each side is made, then the four alternate for
 * --iterations rounds, each MPI_Start + MPI_Wait (or call) timed from a barrier to its end as the
 * maximum over ranks; rank 0 prints the medians and the ratios. Every exchange's first
 * round is checked value by value.
 *
 *   mpiexec -n 4 env LD_PRELOAD=<prefix>/lib/liba2av_preload.so ./persistent_preload [iters]
 */
#include <mpi.h>
#ifdef OPEN_MPI
#include <mpi-ext.h>
#define ALLTOALLV_INIT MPIX_Alltoallv_init
#define VENDOR_ALLTOALLV_INIT PMPIX_Alltoallv_init
#elif MPI_VERSION >= 4
#define ALLTOALLV_INIT MPI_Alltoallv_init
#define VENDOR_ALLTOALLV_INIT PMPI_Alltoallv_init
#endif

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { kA2avPersistent, kVendorPersistent, kA2avBlocking, kA2avNonblocking, kSides };
static const char* const kSideNames[kSides] = {"a2av persistent", "vendor persistent",
                                               "a2av MPI_Alltoallv", "a2av MPI_Ialltoallv"};

struct exchange {
  int bytes, *counts, *displs;
  char *send, *recv;
  MPI_Request requests[2]; /* a2av's, the library's */
};

static int compare(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

/* Byte k of the block from `source` to `dest`. */
static char byte_of(int source, int dest, int k) {
  return (char)(source * 31 + dest * 7 + k);
}

static void run(struct exchange* e, int side) {
  if (side == kA2avBlocking) {
    MPI_Alltoallv(e->send, e->counts, e->displs, MPI_BYTE, e->recv, e->counts, e->displs, MPI_BYTE,
                  MPI_COMM_WORLD);
    return;
  }
  if (side == kA2avNonblocking) {
    MPI_Request request;
    MPI_Ialltoallv(e->send, e->counts, e->displs, MPI_BYTE, e->recv, e->counts, e->displs, MPI_BYTE,
                   MPI_COMM_WORLD, &request);
    MPI_Wait(&request, MPI_STATUS_IGNORE);
    return;
  }
  MPI_Start(&e->requests[side]);
  MPI_Wait(&e->requests[side], MPI_STATUS_IGNORE);
}

static double timed(struct exchange* e, int side) {
  MPI_Barrier(MPI_COMM_WORLD);
  const double start = MPI_Wtime();
  run(e, side);
  double seconds = MPI_Wtime() - start, slowest = 0;
  PMPI_Allreduce(&seconds, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return slowest;
}

static int wrong_bytes(const struct exchange* e, int rank, int size) {
  int wrong = 0;
  for (int source = 0; source < size; ++source)
    for (int k = 0; k < e->bytes; ++k)
      wrong += e->recv[source * e->bytes + k] != byte_of(source, rank, k);
  return wrong;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1, wrong = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int iterations = argc > 1 ? atoi(argv[1]) : 200;
  const int sizes[] = {16, 256, 4096, 65536, 1048576};
  double* times[kSides];
  for (int side = 0; side < kSides; ++side) times[side] = malloc(sizeof(double) * iterations);
  if (rank == 0)
    printf(
        "| P | block (B) | %s (us) | %s (us) | %s (us) | %s (us) | persistent a2av / vendor "
        "|\n|---|---|---|---|---|---|---|\n",
        kSideNames[0], kSideNames[1], kSideNames[2], kSideNames[3]);
  for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; ++s) {
    struct exchange e = {.bytes = sizes[s]};
    e.counts = malloc(2 * sizeof(int) * size), e.displs = e.counts + size;
    e.send = malloc((size_t)size * e.bytes), e.recv = malloc((size_t)size * e.bytes);
    for (int dest = 0; dest < size; ++dest) {
      e.counts[dest] = e.bytes, e.displs[dest] = dest * e.bytes;
      for (int k = 0; k < e.bytes; ++k) e.send[dest * e.bytes + k] = byte_of(rank, dest, k);
    }
    ALLTOALLV_INIT(e.send, e.counts, e.displs, MPI_BYTE, e.recv, e.counts, e.displs, MPI_BYTE,
                   MPI_COMM_WORLD, MPI_INFO_NULL, &e.requests[kA2avPersistent]);
    VENDOR_ALLTOALLV_INIT(e.send, e.counts, e.displs, MPI_BYTE, e.recv, e.counts, e.displs,
                          MPI_BYTE, MPI_COMM_WORLD, MPI_INFO_NULL, &e.requests[kVendorPersistent]);
    for (int side = 0; side < kSides; ++side) {
      memset(e.recv, 0, (size_t)size * e.bytes);
      run(&e, side);
      wrong += wrong_bytes(&e, rank, size);
    }
    for (int i = 0; i < iterations; ++i)
      for (int side = 0; side < kSides; ++side) times[side][i] = timed(&e, side);
    double median[kSides];
    for (int side = 0; side < kSides; ++side) {
      qsort(times[side], iterations, sizeof(double), compare);
      median[side] = times[side][iterations / 2];
    }
    if (rank == 0)
      printf("| %d | %d | %.2f | %.2f | %.2f | %.2f | %.2f |\n", size, e.bytes,
             median[kA2avPersistent] * 1e6, median[kVendorPersistent] * 1e6,
             median[kA2avBlocking] * 1e6, median[kA2avNonblocking] * 1e6,
             median[kA2avPersistent] / median[kVendorPersistent]);
    MPI_Request_free(&e.requests[kA2avPersistent]);
    PMPI_Request_free(&e.requests[kVendorPersistent]);
    free(e.counts), free(e.send), free(e.recv);
  }
  PMPI_Allreduce(MPI_IN_PLACE, &wrong, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) printf(wrong ? " Found %d wrong bytes\n" : " No Errors\n", wrong);
  for (int side = 0; side < kSides; ++side) free(times[side]);
  MPI_Finalize();
  return wrong != 0;
}
