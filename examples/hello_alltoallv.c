/* hello_alltoallv: the smallest complete use of a2av from C. Rank i sends (i + j) % 3 + 1
 * ints to rank j, each holding 1000 * i + j; every rank checks what it received.
 *
 *   mpicc hello_alltoallv.c $(pkg-config --cflags --libs a2av) -o hello_alltoallv
 *   mpiexec -n 4 ./hello_alltoallv
 */
#include <a2av/a2av.h>
#include <mpi.h>

#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);

  int *sendcounts = malloc(size * sizeof(int)), *sdispls = malloc(size * sizeof(int));
  int *recvcounts = malloc(size * sizeof(int)), *rdispls = malloc(size * sizeof(int));
  int send_total = 0, recv_total = 0;
  for (int peer = 0; peer < size; ++peer) {
    sendcounts[peer] = (rank + peer) % 3 + 1;
    recvcounts[peer] = (peer + rank) % 3 + 1; /* what `peer` sends me: the same rule */
    sdispls[peer] = send_total;
    rdispls[peer] = recv_total;
    send_total += sendcounts[peer];
    recv_total += recvcounts[peer];
  }
  int *sendbuf = malloc(send_total * sizeof(int)), *recvbuf = malloc(recv_total * sizeof(int));
  for (int peer = 0; peer < size; ++peer)
    for (int k = 0; k < sendcounts[peer]; ++k) sendbuf[sdispls[peer] + k] = 1000 * rank + peer;

  /* Same arguments as MPI_Alltoallv; the algorithm comes from A2AV_ALGORITHM or "auto". */
  int rc = A2AV_Alltoallv(sendbuf, sendcounts, sdispls, MPI_INT, recvbuf, recvcounts, rdispls,
                          MPI_INT, MPI_COMM_WORLD);
  if (rc != A2AV_SUCCESS) {
    fprintf(stderr, "rank %d: %s: %s\n", rank, A2AV_Error_string(rc), A2AV_Last_error_message());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }

  int errors = 0;
  for (int peer = 0; peer < size; ++peer)
    for (int k = 0; k < recvcounts[peer]; ++k)
      errors += recvbuf[rdispls[peer] + k] != 1000 * peer + rank;
  MPI_Allreduce(MPI_IN_PLACE, &errors, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) {
    if (errors == 0)
      printf("OK: %d ranks exchanged with %s\n", size, A2AV_Last_algorithm());
    else
      printf("FAILED: %d wrong elements\n", errors);
  }

  free(sendbuf);
  free(recvbuf);
  free(sendcounts);
  free(sdispls);
  free(recvcounts);
  free(rdispls);
  MPI_Finalize();
  return errors == 0 ? 0 : 1;
}
