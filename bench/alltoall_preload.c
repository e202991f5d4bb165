/* MPI_Alltoall through the preload against the MPI library's own, side by side in one run:
 * under LD_PRELOAD=liba2av_preload.so, MPI_Alltoall is a2av's and PMPI_Alltoall the
 * library's. For each block size, both alternate for --iterations rounds, each call timed
 * from a barrier to its end as the maximum over ranks; rank 0 prints the medians and their
 * ratio. The first call of each size is checked value by value on both sides.
 *
 *   mpiexec -n 16 env LD_PRELOAD=<prefix>/lib/liba2av_preload.so ./alltoall_preload [iters]
 */
#include <mpi.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int (*Alltoall)(const void*, int, MPI_Datatype, void*, int, MPI_Datatype, MPI_Comm);

static int compare(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

static double timed(Alltoall call, const char* send, char* recv, int bytes) {
  MPI_Barrier(MPI_COMM_WORLD);
  const double start = MPI_Wtime();
  call(send, bytes, MPI_BYTE, recv, bytes, MPI_BYTE, MPI_COMM_WORLD);
  double seconds = MPI_Wtime() - start, slowest = 0;
  PMPI_Allreduce(&seconds, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return slowest;
}

/* Block from `source` to `dest`, byte k. */
static char byte_of(int source, int dest, int k) {
  return (char)(source * 31 + dest * 7 + k);
}

static int wrong_bytes(const char* recv, int bytes, int rank, int size) {
  int wrong = 0;
  for (int source = 0; source < size; ++source)
    for (int k = 0; k < bytes; ++k) wrong += recv[source * bytes + k] != byte_of(source, rank, k);
  return wrong;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int iterations = argc > 1 ? atoi(argv[1]) : 200;
  const int sizes[] = {16, 64, 256, 1024, 4096};
  const int nsizes = sizeof sizes / sizeof sizes[0];
  char* send = malloc((size_t)size * 4096);
  char* recv = malloc((size_t)size * 4096);
  double* a2av = malloc(sizeof(double) * iterations);
  double* vendor = malloc(sizeof(double) * iterations);
  int wrong = 0;
  if (rank == 0)
    printf("| P | block (B) | a2av (us) | vendor (us) | a2av / vendor |\n|---|---|---|---|---|\n");
  for (int s = 0; s < nsizes; ++s) {
    const int bytes = sizes[s];
    for (int dest = 0; dest < size; ++dest)
      for (int k = 0; k < bytes; ++k) send[dest * bytes + k] = byte_of(rank, dest, k);
    const Alltoall sides[2] = {MPI_Alltoall, PMPI_Alltoall};
    for (int side = 0; side < 2; ++side) {
      memset(recv, 0, (size_t)size * bytes);
      sides[side](send, bytes, MPI_BYTE, recv, bytes, MPI_BYTE, MPI_COMM_WORLD);
      wrong += wrong_bytes(recv, bytes, rank, size);
    }
    for (int i = 0; i < iterations; ++i) {
      a2av[i] = timed(MPI_Alltoall, send, recv, bytes);
      vendor[i] = timed(PMPI_Alltoall, send, recv, bytes);
    }
    qsort(a2av, iterations, sizeof(double), compare);
    qsort(vendor, iterations, sizeof(double), compare);
    const double ours = a2av[iterations / 2], theirs = vendor[iterations / 2];
    if (rank == 0)
      printf("| %d | %d | %.1f | %.1f | %.2f |\n", size, bytes, ours * 1e6, theirs * 1e6,
             ours / theirs);
  }
  PMPI_Allreduce(MPI_IN_PLACE, &wrong, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) printf(wrong ? " Found %d wrong bytes\n" : " No Errors\n", wrong);
  free(send);
  free(recv);
  free(a2av);
  free(vendor);
  MPI_Finalize();
  return wrong != 0;
}
