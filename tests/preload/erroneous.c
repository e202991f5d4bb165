/* Erroneous programs under the preload: what the statistics and the program see.
   1. MPI_Alltoall whose counts disagree (rank 0 sends twice what the others expect, as MPICH's
      test errors/coll/alltoalllength does): a2av takes the call and finds the disagreement, so
      every rank gets an error through the communicator's handler (here MPI_ERRORS_RETURN),
      counted as "via a2av, failed:error handler". (Open MPI 4.1.4 alone hangs here, so this
      program runs under the preload only.)
   2. MPI_Alltoallv with aliased send and receive buffers (MPICH's errors/coll/noalias2): a2av
      refuses the arguments and hands the call to the MPI library, counted as
      "via PMPI_Alltoallv"; what that returns is the library's (MPICH: an error; Open MPI: success
      and overwritten bytes), so only that the call returns is checked.
   Prints " No Errors" when every rank got an error in case 1. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define COUNT 10

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm comm;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  int* send = calloc((size_t)(2 * COUNT * size), sizeof(int));
  int* recv = calloc((size_t)(2 * COUNT * size), sizeof(int));
  int* counts = malloc(sizeof(int) * (size_t)size);
  int* displs = malloc(sizeof(int) * (size_t)size);

  const int sent = rank == 0 && size > 1 ? 2 * COUNT : COUNT;
  int failed = MPI_Alltoall(send, sent, MPI_INT, recv, COUNT, MPI_INT, comm) != MPI_SUCCESS;
  int everywhere = 0;
  MPI_Allreduce(&failed, &everywhere, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);

  for (int p = 0; p < size; ++p) {
    counts[p] = COUNT;
    displs[p] = COUNT * p;
  }
  MPI_Alltoallv(send, counts, displs, MPI_INT, send, counts, displs, MPI_INT, comm);

  MPI_Comm_free(&comm);
  if (rank == 0) printf(everywhere ? " No Errors\n" : " Found errors: a rank got no error\n");
  free(send);
  free(recv);
  free(counts);
  free(displs);
  MPI_Finalize();
  return 0;
}
