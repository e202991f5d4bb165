/* A program as a hybrid code writes one, knowing nothing of a2av: under MPI_THREAD_MULTIPLE,
 * kThreads threads per rank, each on its own duplicate of MPI_COMM_WORLD (made in order by the
 * main thread), exchange at the same time through MPI_Alltoallv, MPI_Alltoall, MPI_Ialltoallv and
 * a persistent MPI_Alltoallv (MPI-4's MPI_Alltoallv_init, Open MPI 4.1's MPIX_Alltoallv_init),
 * completed by MPI_Wait, MPI_Test and MPI_Waitall, and free their communicators at the end.
 * Every received byte is checked; prints " No Errors" on rank 0 when none failed anywhere. Run
 * under the preload library, its statistics say which calls a2av took (tests/preload.cmake). */
#include <mpi.h>
#ifdef OPEN_MPI
#include <mpi-ext.h>
#define ALLTOALLV_INIT MPIX_Alltoallv_init
#elif MPI_VERSION >= 4
#define ALLTOALLV_INIT MPI_Alltoallv_init
#endif

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

enum { kThreads = 4, kRounds = 60, kMaxBlock = 40 };

static int rank, size;

/* The byte that `from` sends `to` at `offset` in round `round` of thread `thread`. */
static unsigned char byte(int thread, int round, int from, int to, int offset) {
  return (unsigned char)(thread * 131 + round * 31 + from * 17 + to * 7 + offset);
}

/* The block size from `from` to `to`: 0 to kMaxBlock - 1, zero now and then. */
static int block(int thread, int round, int from, int to) {
  return (thread * 5 + round * 3 + from * 11 + to * 13) % kMaxBlock;
}

struct Exchange {
  int thread, round;
  int *sendcounts, *sdispls, *recvcounts, *rdispls;
  unsigned char *send, *recv;
};

static void fill(struct Exchange* e, int thread, int round, int uniform) {
  int s = 0, r = 0;
  e->thread = thread;
  e->round = round;
  for (int p = 0; p < size; ++p) {
    e->sendcounts[p] = uniform ? uniform : block(thread, round, rank, p);
    e->recvcounts[p] = uniform ? uniform : block(thread, round, p, rank);
    e->sdispls[p] = s;
    e->rdispls[p] = r;
    s += e->sendcounts[p];
    r += e->recvcounts[p];
  }
  for (int p = 0; p < size; ++p)
    for (int i = 0; i < e->sendcounts[p]; ++i)
      e->send[e->sdispls[p] + i] = byte(thread, round, rank, p, i);
  for (int i = 0; i < r; ++i) e->recv[i] = 0xA5;
}

static int wrong(const struct Exchange* e, const char* what) {
  for (int p = 0; p < size; ++p)
    for (int i = 0; i < e->recvcounts[p]; ++i)
      if (e->recv[e->rdispls[p] + i] != byte(e->thread, e->round, p, rank, i)) {
        fprintf(stderr, "rank %d thread %d round %d %s: wrong byte %d from %d\n", rank, e->thread,
                e->round, what, i, p);
        return 1;
      }
  return 0;
}

struct Thread {
  int index;
  MPI_Comm comm;
  int errors;
};

static void* run(void* arg) {
  struct Thread* t = arg;
  struct Exchange e;
  int* arrays = malloc(4 * (size_t)size * sizeof(int));
  e.sendcounts = arrays;
  e.sdispls = arrays + size;
  e.recvcounts = arrays + 2 * size;
  e.rdispls = arrays + 3 * size;
  e.send = malloc((size_t)size * kMaxBlock);
  e.recv = malloc((size_t)size * kMaxBlock);
  for (int round = 0; round < kRounds; ++round) {
    MPI_Request request;
    MPI_Status statuses[1];
    int done = 0;
    switch (round % 4) {
      case 0:
        fill(&e, t->index, round, 0);
        MPI_Alltoallv(e.send, e.sendcounts, e.sdispls, MPI_BYTE, e.recv, e.recvcounts, e.rdispls,
                      MPI_BYTE, t->comm);
        t->errors += wrong(&e, "MPI_Alltoallv");
        break;
      case 1:
        fill(&e, t->index, round, 1 + round % (kMaxBlock - 1));
        MPI_Alltoall(e.send, e.sendcounts[0], MPI_BYTE, e.recv, e.recvcounts[0], MPI_BYTE, t->comm);
        t->errors += wrong(&e, "MPI_Alltoall");
        break;
      case 2:
        fill(&e, t->index, round, 0);
        MPI_Ialltoallv(e.send, e.sendcounts, e.sdispls, MPI_BYTE, e.recv, e.recvcounts, e.rdispls,
                       MPI_BYTE, t->comm, &request);
        while (!done) MPI_Test(&request, &done, MPI_STATUS_IGNORE);
        t->errors += wrong(&e, "MPI_Ialltoallv");
        break;
      default:
#ifdef ALLTOALLV_INIT
        fill(&e, t->index, round, 0);
        ALLTOALLV_INIT(e.send, e.sendcounts, e.sdispls, MPI_BYTE, e.recv, e.recvcounts, e.rdispls,
                       MPI_BYTE, t->comm, MPI_INFO_NULL, &request);
        for (int start = 0; start < 2; ++start) {
          MPI_Start(&request);
          if (start == 0)
            MPI_Wait(&request, MPI_STATUS_IGNORE);
          else
            MPI_Waitall(1, &request, statuses);
          t->errors += wrong(&e, "persistent MPI_Alltoallv");
          for (int i = 0; i < e.rdispls[size - 1] + e.recvcounts[size - 1]; ++i) e.recv[i] = 0xA5;
        }
        MPI_Request_free(&request);
#endif
        break;
    }
  }
  free(arrays);
  free(e.send);
  free(e.recv);
  return NULL;
}

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (provided < MPI_THREAD_MULTIPLE) {
    if (rank == 0) printf("MPI_THREAD_MULTIPLE not provided\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  struct Thread threads[kThreads];
  pthread_t ids[kThreads];
  for (int i = 0; i < kThreads; ++i) {
    threads[i].index = i;
    threads[i].errors = 0;
    MPI_Comm_dup(MPI_COMM_WORLD, &threads[i].comm);
  }
  for (int i = 0; i < kThreads; ++i) pthread_create(&ids[i], NULL, run, &threads[i]);
  int errors = 0;
  for (int i = 0; i < kThreads; ++i) {
    pthread_join(ids[i], NULL);
    errors += threads[i].errors;
    MPI_Comm_free(&threads[i].comm);
  }
  MPI_Allreduce(MPI_IN_PLACE, &errors, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) printf(errors ? " Found %d errors\n" : " No Errors\n", errors);
  MPI_Finalize();
  return errors != 0;
}
