/* An MPI program that knows nothing of a2av: it exchanges (rank + j) % 4 + 1 ints with each
   rank j through MPI_Alltoallv, several times, and checks every value. Run under
   LD_PRELOAD=liba2av_preload.so by the tests. Exits non-zero on a wrong value. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size, errors = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int *sc = malloc(size * sizeof *sc), *sd = malloc(size * sizeof *sd);
  int *rc = malloc(size * sizeof *rc), *rd = malloc(size * sizeof *rd);
  int stotal = 0, rtotal = 0;
  for (int j = 0; j < size; ++j) {
    sc[j] = (rank + j) % 4 + 1;
    rc[j] = (j + rank) % 4 + 1;
    sd[j] = stotal;
    rd[j] = rtotal;
    stotal += sc[j];
    rtotal += rc[j];
  }
  int *send = malloc(stotal * sizeof *send), *recv = malloc(rtotal * sizeof *recv);
  for (int j = 0; j < size; ++j)
    for (int k = 0; k < sc[j]; ++k) send[sd[j] + k] = rank * 1000 + j * 10 + k;
  for (int iteration = 0; iteration < 5; ++iteration) {
    MPI_Alltoallv(send, sc, sd, MPI_INT, recv, rc, rd, MPI_INT, MPI_COMM_WORLD);
    for (int j = 0; j < size; ++j)
      for (int k = 0; k < rc[j]; ++k) errors += recv[rd[j] + k] != j * 1000 + rank * 10 + k;
  }
  if (errors) fprintf(stderr, "rank %d: %d wrong values\n", rank, errors);
  free(send), free(recv), free(sc), free(sd), free(rc), free(rd);
  MPI_Finalize();
  return errors != 0;
}
