/* No first-call deadlock under the preload (docs/design.md): the first call on a communicator is a
   nonblocking start (MPI_Ialltoallv, MPI_Ineighbor_alltoallv) or a persistent init
   (MPI_Alltoallv_init; Open MPI 4.1: MPIX_Alltoallv_init), which the preload keeps local (MPI
   would let an init wait for the other ranks, not a start). Each starts in a chain: rank r > 0
   first receives a token from rank r - 1 (synchronously sent), then starts; every rank passes
   the token on after its start. Each case runs on a fresh duplicate of MPI_COMM_WORLD and
   checks every value; the last on one from MPI_Comm_idup, which the preload cannot set up as it
   is made, twice around a blocking MPI_Alltoallv on it. Then one MPI_Alltoallv and one
   MPI_Alltoall on MPI_COMM_WORLD, which the preload tests' statistics expect. Rank 0 prints
   " No Errors" when all passed. Then exchanges whose communicator is freed before their wait
   or their starts. An argument (ialltoallv, persistent, persistent_start, ineighbor, idup,
   freed) runs that case alone. */
#include <mpi.h>
#ifdef OPEN_MPI
#include <mpi-ext.h> /* MPIX_Alltoallv_init */
#define ALLTOALLV_INIT MPIX_Alltoallv_init
#define NEIGHBOR_ALLTOALLV_INIT MPIX_Neighbor_alltoallv_init
#elif MPI_VERSION >= 4
#define ALLTOALLV_INIT MPI_Alltoallv_init
#define NEIGHBOR_ALLTOALLV_INIT MPI_Neighbor_alltoallv_init
#define ALLTOALL_INIT_C MPI_Alltoall_init_c /* a large-count form */
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { kTokenTag = 77, kMaxRanks = 64 };

static int errors = 0;

static void expect(int got, int want, const char* test, int at) {
  if (got == want) return;
  if (++errors <= 10) fprintf(stderr, "%s: element %d is %d, expected %d\n", test, at, got, want);
}

static void pass_token_in(MPI_Comm comm, int me) {
  int token = 0;
  if (me > 0) MPI_Recv(&token, 1, MPI_INT, me - 1, kTokenTag, comm, MPI_STATUS_IGNORE);
}

static void pass_token_on(MPI_Comm comm, int me, int size) {
  int token = 0;
  if (me + 1 < size) MPI_Ssend(&token, 1, MPI_INT, me + 1, kTokenTag, comm);
}

/* Block for rank p: two ints, (me, p) encoded; received from p: (p, me). */
struct blocks {
  int counts[kMaxRanks], displs[kMaxRanks], send[2 * kMaxRanks], recv[2 * kMaxRanks];
};

/* `offset` tells exchanges in flight at once apart. */
static void fill_with(struct blocks* b, int me, int size, int offset) {
  for (int p = 0; p < size; ++p) {
    b->counts[p] = 2, b->displs[p] = 2 * p;
    b->send[2 * p] = offset + me * 1000 + p, b->send[2 * p + 1] = -(offset + me * 1000 + p);
    b->recv[2 * p] = b->recv[2 * p + 1] = -1;
  }
}

static void check_with(const struct blocks* b, int me, int size, int offset, const char* test) {
  for (int p = 0; p < size; ++p) {
    expect(b->recv[2 * p], offset + p * 1000 + me, test, 2 * p);
    expect(b->recv[2 * p + 1], -(offset + p * 1000 + me), test, 2 * p + 1);
  }
}

static void fill(struct blocks* b, int me, int size) {
  fill_with(b, me, size, 0);
}

static void check(const struct blocks* b, int me, int size, const char* test) {
  check_with(b, me, size, 0, test);
}

/* MPI_Ialltoallv in the chain on `comm`. */
static void ialltoallv_in_chain(MPI_Comm comm, int me, int size, const char* test) {
  MPI_Request request;
  struct blocks b;
  fill(&b, me, size);
  pass_token_in(comm, me);
  MPI_Ialltoallv(b.send, b.counts, b.displs, MPI_INT, b.recv, b.counts, b.displs, MPI_INT, comm,
                 &request);
  pass_token_on(comm, me, size);
  MPI_Wait(&request, MPI_STATUS_IGNORE);
  check(&b, me, size, test);
}

static void ialltoallv_first(int me, int size) {
  MPI_Comm comm;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  ialltoallv_in_chain(comm, me, size, "MPI_Ialltoallv");
  MPI_Comm_free(&comm);
}

static void idup_first(int me, int size) {
  MPI_Comm comm;
  MPI_Request request;
  struct blocks b;
  MPI_Comm_idup(MPI_COMM_WORLD, &comm, &request);
  MPI_Wait(&request, MPI_STATUS_IGNORE);
  for (int round = 0; round < 2; ++round) {
    ialltoallv_in_chain(comm, me, size, "MPI_Ialltoallv on MPI_Comm_idup's");
    fill(&b, me, size);
    MPI_Alltoallv(b.send, b.counts, b.displs, MPI_INT, b.recv, b.counts, b.displs, MPI_INT, comm);
    check(&b, me, size, "MPI_Alltoallv on MPI_Comm_idup's");
  }
  MPI_Comm_free(&comm);
}

#ifdef ALLTOALLV_INIT
/* Starts the persistent exchange `request` on the blocks twice, checking each result. */
static void start_twice(MPI_Request* request, struct blocks* b, int me, int size,
                        const char* test) {
  for (int round = 0; round < 2; ++round) {
    fill(b, me, size);
    MPI_Start(request);
    MPI_Wait(request, MPI_STATUS_IGNORE);
    check(b, me, size, test);
  }
}

static void persistent_first(int me, int size) {
  MPI_Comm comm;
  MPI_Request request;
  struct blocks b;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  fill(&b, me, size);
  pass_token_in(comm, me);
  ALLTOALLV_INIT(b.send, b.counts, b.displs, MPI_INT, b.recv, b.counts, b.displs, MPI_INT, comm,
                 MPI_INFO_NULL, &request);
  pass_token_on(comm, me, size);
  start_twice(&request, &b, me, size, "persistent MPI_Alltoallv");
  MPI_Request_free(&request);
  MPI_Comm_free(&comm);
}
#endif

/* MPI_Comm_free with an exchange pending, and before a persistent exchange's starts: they complete
   normally, and the request outlives the communicator (MPI_COMM_FREE in the standard). */
static void freed_before_use(int me, int size) {
  MPI_Comm comm;
  MPI_Request request;
  struct blocks b;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  fill(&b, me, size);
  MPI_Ialltoallv(b.send, b.counts, b.displs, MPI_INT, b.recv, b.counts, b.displs, MPI_INT, comm,
                 &request);
  MPI_Comm_free(&comm);
  MPI_Wait(&request, MPI_STATUS_IGNORE);
  check(&b, me, size, "MPI_Ialltoallv, its communicator freed before the wait");
#ifdef ALLTOALLV_INIT
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  ALLTOALLV_INIT(b.send, b.counts, b.displs, MPI_INT, b.recv, b.counts, b.displs, MPI_INT, comm,
                 MPI_INFO_NULL, &request);
  MPI_Comm_free(&comm);
  start_twice(&request, &b, me, size, "persistent MPI_Alltoallv, its communicator freed first");
  MPI_Request_free(&request);
#endif
}

#if defined(ALLTOALLV_INIT) && defined(NEIGHBOR_ALLTOALLV_INIT)
/* Starting is local (MPI 4.1, Section 7.13): two persistent exchanges on one communicator and a
   neighbourhood one on a ring (and, where the MPI has it, a large-count MPI_Alltoall_init_c),
   started in the chain, completed in the other order than started (MPI_Wait, MPI_Waitall,
   MPI_Test), twice. Under MPICH the exchanges advance only inside the
   program's waits and tests, which the preload takes (docs/design.md, "Persistent"). */
static void persistent_start_in_chain(int me, int size) {
  const int periodic = 1;
  const int below = (me - 1 + size) % size, above = (me + 1) % size;
  int counts[2] = {1, 1}, displs[2] = {0, 1}, send[2] = {me * 10, me * 10 + 1}, got[2];
  MPI_Comm comm, ring;
  MPI_Request requests[4];
  int n = 3;
  struct blocks a, b, c;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  MPI_Cart_create(MPI_COMM_WORLD, 1, &size, &periodic, 0, &ring);
  fill(&a, me, size); /* the counts, which the init reads */
  fill(&b, me, size);
  ALLTOALLV_INIT(a.send, a.counts, a.displs, MPI_INT, a.recv, a.counts, a.displs, MPI_INT, comm,
                 MPI_INFO_NULL, &requests[0]);
  ALLTOALLV_INIT(b.send, b.counts, b.displs, MPI_INT, b.recv, b.counts, b.displs, MPI_INT, comm,
                 MPI_INFO_NULL, &requests[1]);
  NEIGHBOR_ALLTOALLV_INIT(send, counts, displs, MPI_INT, got, counts, displs, MPI_INT, ring,
                          MPI_INFO_NULL, &requests[2]);
#ifdef ALLTOALL_INIT_C
  ALLTOALL_INIT_C(c.send, 2, MPI_INT, c.recv, 2, MPI_INT, comm, MPI_INFO_NULL, &requests[n++]);
#endif
  for (int round = 0; round < 2; ++round) {
    fill_with(&a, me, size, round * 100);
    fill_with(&b, me, size, 500 + round * 100);
    fill_with(&c, me, size, 300 + round * 100);
    got[0] = got[1] = -1;
    pass_token_in(comm, me);
    for (int i = 0; i < n; ++i) MPI_Start(&requests[i]);
    pass_token_on(comm, me, size);
    if (n > 3) MPI_Wait(&requests[3], MPI_STATUS_IGNORE);
    int done = 0;
    while (!done) MPI_Test(&requests[2], &done, MPI_STATUS_IGNORE);
    if (round == 0) {
      MPI_Wait(&requests[1], MPI_STATUS_IGNORE);
      MPI_Wait(&requests[0], MPI_STATUS_IGNORE);
    } else {
      MPI_Waitall(2, requests, MPI_STATUSES_IGNORE);
    }
    check_with(&a, me, size, round * 100, "persistent MPI_Alltoallv started in the chain");
    check_with(&b, me, size, 500 + round * 100, "second persistent MPI_Alltoallv");
    if (n > 3) check_with(&c, me, size, 300 + round * 100, "persistent MPI_Alltoall_c");
    expect(got[0], below * 10 + 1, "persistent MPI_Neighbor_alltoallv", 0);
    expect(got[1], above * 10, "persistent MPI_Neighbor_alltoallv", 1);
  }
  for (int i = 0; i < n; ++i) MPI_Request_free(&requests[i]);
  MPI_Comm_free(&ring);
  MPI_Comm_free(&comm);
}
#endif

/* A periodic ring: block 0 goes down, block 1 up; slot 0 receives what the rank below sent up,
   slot 1 what the rank above sent down. */
static void ineighbor_first(int me, int size) {
  const int periodic = 1;
  const int below = (me - 1 + size) % size, above = (me + 1) % size;
  int counts[2] = {1, 1}, displs[2] = {0, 1}, send[2] = {me * 10, me * 10 + 1}, got[2] = {-1, -1};
  MPI_Comm ring;
  MPI_Request request;
  MPI_Cart_create(MPI_COMM_WORLD, 1, &size, &periodic, 0, &ring);
  pass_token_in(ring, me);
  MPI_Ineighbor_alltoallv(send, counts, displs, MPI_INT, got, counts, displs, MPI_INT, ring,
                          &request);
  pass_token_on(ring, me, size);
  MPI_Wait(&request, MPI_STATUS_IGNORE);
  expect(got[0], below * 10 + 1, "MPI_Ineighbor_alltoallv", 0);
  expect(got[1], above * 10, "MPI_Ineighbor_alltoallv", 1);
  MPI_Comm_free(&ring);
}

static void blocking_on_world(int me, int size) {
  struct blocks b;
  fill(&b, me, size);
  MPI_Alltoallv(b.send, b.counts, b.displs, MPI_INT, b.recv, b.counts, b.displs, MPI_INT,
                MPI_COMM_WORLD);
  check(&b, me, size, "MPI_Alltoallv");
  fill(&b, me, size);
  MPI_Alltoall(b.send, 2, MPI_INT, b.recv, 2, MPI_INT, MPI_COMM_WORLD);
  check(&b, me, size, "MPI_Alltoall");
}

int main(int argc, char** argv) {
  int me, size, all_errors = 0;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size > kMaxRanks) MPI_Abort(MPI_COMM_WORLD, 2);
  const char* only = argc > 1 ? argv[1] : NULL;
  if (!only || strcmp(only, "ialltoallv") == 0) ialltoallv_first(me, size);
#ifdef ALLTOALLV_INIT
  if (!only || strcmp(only, "persistent") == 0) persistent_first(me, size);
#endif
#if defined(ALLTOALLV_INIT) && defined(NEIGHBOR_ALLTOALLV_INIT)
  if (!only || strcmp(only, "persistent_start") == 0) persistent_start_in_chain(me, size);
#endif
  if (!only || strcmp(only, "ineighbor") == 0) ineighbor_first(me, size);
  if (!only || strcmp(only, "idup") == 0) idup_first(me, size);
  if (!only || strcmp(only, "freed") == 0) freed_before_use(me, size);
  if (!only) blocking_on_world(me, size);
  MPI_Allreduce(&errors, &all_errors, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (me == 0 && all_errors == 0) printf(" No Errors\n");
  MPI_Finalize();
  return all_errors != 0;
}
