/* sparse_c: the sparse exchange through a2av's C API, called from C: the baseline that
 * bench/python_sparse.py compares the Python binding with (docs/python.md).
 *
 * Each rank sends one message of S bytes to each of its k = min(P-1, 3) next ranks
 * (rank+1, ..., rank+k, modulo P) and reads what arrives (A2AV_Sparse_message) in place or,
 * with "copy", copied into one buffer of its own, as the Python binding returns it.
 * Per S: `iterations` timed exchanges after 10 untimed ones, each timed from a barrier to
 * its end and taken as the maximum over ranks; rank 0 prints "S median_seconds algorithm".
 * The first exchange of each size checks every byte received. MPI is initialized at
 * MPI_THREAD_MULTIPLE, the level mpi4py asks for by default, so that both sides run the
 * same MPI (Open MPI takes locks at that level).
 *
 *   mpiexec -n 4 sparse_c 1024,16384,262144 200 auto [copy]
 *
 * Built a second time, without main, as the module sparse_c_loop, whose sparse_c_run a Python
 * process calls: the same exchanges from a process like the binding's, so that the
 * comparison isolates the binding from what any Python process pays on this node. */
#include <a2av/a2av.h>

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { WARMUP = 10 };

/* The byte at `offset` of the message from `source`: both sides compute it. */
static unsigned char payload_byte(int source, long offset) {
  return (unsigned char)(source * 7 + offset);
}

static void die(int code, const char* what) {
  fprintf(stderr, "sparse_c: %s: %s %s\n", what, A2AV_Error_string(code),
          A2AV_Last_error_message());
  MPI_Abort(MPI_COMM_WORLD, 1);
}

/* Reads every message received, copying it into `copy` if not NULL (room for k messages);
 * with `check`, each must be S bytes of its source's payload, from one of the k previous
 * ranks. Returns the number of wrong messages. */
static int read_messages(A2AV_Sparse received, long bytes, int k, int check, unsigned char* copy) {
  int rank, size, count, wrong = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int rc = A2AV_Sparse_count(received, &count);
  if (rc) die(rc, "A2AV_Sparse_count");
  wrong += check && count != k;
  for (int i = 0; i < count; ++i) {
    int source;
    const void* data;
    MPI_Count length;
    rc = A2AV_Sparse_message(received, i, &source, &data, &length);
    if (rc) die(rc, "A2AV_Sparse_message");
    if (copy && i < k) memcpy(copy + i * bytes, data, length < bytes ? length : bytes);
    if (!check) continue;
    const int distance = (rank - source + size) % size;
    wrong += length != bytes || distance < 1 || distance > k;
    for (long b = 0; b < length && length == bytes; ++b)
      wrong += ((const unsigned char*)data)[b] != payload_byte(source, b);
  }
  return wrong;
}

static int compare_doubles(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

/* Median over `iterations` timed exchanges of `bytes` per message (max over ranks). */
static double run_size(long bytes, int iterations, const char* algorithm, int copy, int* wrong) {
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int k = size - 1 < 3 ? size - 1 : 3;
  unsigned char* payload = malloc(bytes);
  for (long b = 0; b < bytes; ++b) payload[b] = payload_byte(rank, b);
  int destinations[3];
  const void* buffers[3];
  MPI_Count lengths[3];
  for (int d = 0; d < k; ++d) {
    destinations[d] = (rank + 1 + d) % size;
    buffers[d] = payload;
    lengths[d] = bytes;
  }
  double* seconds = malloc(sizeof(double) * iterations);
  unsigned char* copied = copy ? malloc(k * bytes + 1) : NULL; /* reused, as C programs do */
  for (int it = 0; it < WARMUP + iterations; ++it) {
    A2AV_Sparse received;
    MPI_Barrier(MPI_COMM_WORLD);
    const double start = MPI_Wtime();
    int rc = A2AV_Sparse_exchange(k, destinations, buffers, lengths, MPI_COMM_WORLD, algorithm,
                                  &received);
    if (rc) die(rc, "A2AV_Sparse_exchange");
    *wrong += read_messages(received, bytes, k, it == 0, copied);
    A2AV_Sparse_free(&received);
    double elapsed = MPI_Wtime() - start;
    MPI_Allreduce(MPI_IN_PLACE, &elapsed, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (it >= WARMUP) seconds[it - WARMUP] = elapsed;
  }
  qsort(seconds, iterations, sizeof(double), compare_doubles);
  const double median = seconds[iterations / 2];
  free(seconds);
  free(copied);
  free(payload);
  return median;
}

/* Every size of the comma-separated list `sizes`, on MPI_COMM_WORLD; rank 0 prints a line per
 * size. Returns the number of wrong messages over all ranks. Also called from a Python
 * process (bench/python_sparse.py, side "c_in_python", through ctypes): the same loop in a
 * process like the binding's. */
int sparse_c_run(const char* sizes, int iterations, const char* algorithm, int copy) {
  int rank, wrong = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  char* list = strdup(sizes);
  for (char* size = strtok(list, ","); size; size = strtok(NULL, ",")) {
    const long bytes = atol(size);
    const double median = run_size(bytes, iterations, algorithm, copy, &wrong);
    if (rank == 0) printf("%ld %.9f %s\n", bytes, median, A2AV_Last_algorithm());
    fflush(stdout);
  }
  free(list);
  MPI_Allreduce(MPI_IN_PLACE, &wrong, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0 && wrong) fprintf(stderr, "sparse_c: %d wrong messages\n", wrong);
  return wrong;
}

#ifndef SPARSE_C_LOOP_ONLY
int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  if (argc != 4 && !(argc == 5 && strcmp(argv[4], "copy") == 0)) {
    fprintf(stderr, "usage: sparse_c SIZES ITERATIONS ALGORITHM [copy] (1024,16384 200 auto)\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const int wrong = sparse_c_run(argv[1], atoi(argv[2]), argv[3], argc == 5);
  MPI_Finalize();
  return wrong ? 1 : 0;
}
#endif
