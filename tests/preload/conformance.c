/* Conformance of the all-to-all entry points, in the style of the MPI libraries' own suites
   (MPICH test/mpi/coll): every entry point over a generator of communicators (world, a dup,
   splits into odd sizes, reversed and scrambled rank orders, one-rank ones), and an
   intercommunicator, with the argument forms MPI allows: MPI_IN_PLACE with NULL or garbage
   send arguments, zero counts everywhere or on some ranks, NULL buffers with zero counts,
   derived datatypes (negative lower bound, holes, resized extents), MPI_BOTTOM with absolute
   addresses, send and receive types of equal signature but different layouts, and calls
   repeated with one argument changed at a time. Every received value is checked against a
   formula, and the whole receive buffer, holes and gaps included, byte for byte against the
   MPI library's own PMPI_Alltoallv on the same data.

   A plain MPI program: run as is it tests the MPI library; under
   LD_PRELOAD=liba2av_preload.so it tests a2av's preload. Built with -DCONFORMANCE_C_API it
   calls a2av's C API (A2AV_*) instead, and also tests the sparse exchange. Rank 0 prints one
   line per (argument form, entry point), "matrix: <form> <entry> <passed>/<cases>" (a case:
   one call on one communicator, passed when every rank of it got every byte right;
   tests/tool/conformance_matrix.py tabulates them), then " No Errors" when all passed; the
   exit status is non-zero on any wrong value. */
#include <mpi.h>
#ifdef CONFORMANCE_C_API
#include <a2av/a2av.h>
/* The C API under MPI's names, where it has the entry point (the persistent one takes a plan
   instead of a request: call_entry). PMPI_ calls stay the MPI library's. */
#define MPI_Alltoallv A2AV_Alltoallv
#define MPI_Alltoall A2AV_Alltoall
#define MPI_Ialltoallv A2AV_Ialltoallv
#define MPI_Neighbor_alltoallv A2AV_Neighbor_alltoallv
#define MPI_Ialltoall A2AV_Ialltoall
#define MPI_Ineighbor_alltoallv A2AV_Ineighbor_alltoallv
#define MPI_Alltoallv_c A2AV_Alltoallv_c
#define MPI_Ialltoallv_c A2AV_Ialltoallv_c
#define ENTRY(name) "A2AV_" #name
#define PERSISTENT_NAME "A2AV_Alltoallv_init"
#define HAVE_PERSISTENT 1
#elif defined(OPEN_MPI)
#include <mpi-ext.h> /* Open MPI 4.1 has the persistent collectives as an extension */
#define ALLTOALLV_INIT MPIX_Alltoallv_init
#define PERSISTENT_NAME "MPIX_Alltoallv_init"
#define ALLTOALL_INIT MPIX_Alltoall_init
#define NEIGHBOR_ALLTOALLV_INIT MPIX_Neighbor_alltoallv_init
#define INIT_NAME(name) "MPIX_" #name "_init"
#elif MPI_VERSION >= 4
#define ALLTOALLV_INIT MPI_Alltoallv_init
#define PERSISTENT_NAME "MPI_Alltoallv_init"
#define ALLTOALL_INIT MPI_Alltoall_init
#define NEIGHBOR_ALLTOALLV_INIT MPI_Neighbor_alltoallv_init
#define INIT_NAME(name) "MPI_" #name "_init"
#define HAVE_LARGE_COUNT 1 /* MPI-4: the _c forms */
#endif
#ifndef INIT_NAME
#define INIT_NAME(name) #name "_init"
#endif
#ifndef ENTRY
#define ENTRY(name) "MPI_" #name
#endif
#ifdef ALLTOALLV_INIT
#define HAVE_PERSISTENT 1
#endif
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int errors = 0;

/* The k-th value that rank `from` sends to rank `to` (ranks in the communicator tested). */
static int value(int from, int to, int k) {
  return from * 1000003 + to * 1009 + k;
}

static void expect(int got, int want, const char* test, const char* comm_name, int at) {
  if (got == want) return;
  if (++errors <= 10)
    fprintf(stderr, "%s on %s: element %d is %d, expected %d\n", test, comm_name, at, got, want);
}

/* The matrix: cases and passes per (argument form, entry point). Every rank registers every
   cell in the same order (the tests run the same sequence everywhere); rank 0 of the
   communicator a case ran on counts it. */
enum entry {
  ALLTOALLV,
  ALLTOALL,
  IALLTOALLV,
  PERSISTENT,
  NEIGHBOR,
  /* The entry points the preload took later, each reaching one of the above's paths. */
  IALLTOALL,
  ALLTOALL_PERSISTENT,
  ALLTOALLW,
  IALLTOALLW,
  NEIGHBOR_W,
  INEIGHBOR,
  NEIGHBOR_PERSISTENT,
  /* The large-count forms (MPI-4). */
  ALLTOALLV_C,
  ALLTOALL_C,
  IALLTOALLV_C,
  IALLTOALL_C,
  ALLTOALLW_C,
  IALLTOALLW_C,
  NEIGHBOR_C,
  INEIGHBOR_C,
  NEIGHBOR_W_C,
  PERSISTENT_C,
  ALLTOALL_PERSISTENT_C,
  NEIGHBOR_PERSISTENT_C,
  ENTRIES
};
static const char* const entry_names[ENTRIES] = {ENTRY(Alltoallv),
                                                 ENTRY(Alltoall),
                                                 ENTRY(Ialltoallv),
#ifdef HAVE_PERSISTENT
                                                 PERSISTENT_NAME,
#else
                                                 "persistent",
#endif
                                                 ENTRY(Neighbor_alltoallv),
                                                 ENTRY(Ialltoall),
                                                 INIT_NAME(Alltoall),
                                                 ENTRY(Alltoallw),
                                                 ENTRY(Ialltoallw),
                                                 ENTRY(Neighbor_alltoallw),
                                                 ENTRY(Ineighbor_alltoallv),
                                                 INIT_NAME(Neighbor_alltoallv),
                                                 ENTRY(Alltoallv_c),
                                                 ENTRY(Alltoall_c),
                                                 ENTRY(Ialltoallv_c),
                                                 ENTRY(Ialltoall_c),
                                                 ENTRY(Alltoallw_c),
                                                 ENTRY(Ialltoallw_c),
                                                 ENTRY(Neighbor_alltoallv_c),
                                                 ENTRY(Ineighbor_alltoallv_c),
                                                 ENTRY(Neighbor_alltoallw_c),
                                                 "MPI_Alltoallv_init_c",
                                                 "MPI_Alltoall_init_c",
                                                 "MPI_Neighbor_alltoallv_init_c"};

/* Whether this build (MPI library, or a2av's C API) has the entry point. */
static int available(enum entry entry) {
  switch (entry) {
    case ALLTOALLV:
    case ALLTOALL:
    case IALLTOALLV:
    case NEIGHBOR:
    case IALLTOALL:
    case INEIGHBOR:
      return 1;
#ifdef CONFORMANCE_C_API
    case PERSISTENT:
    case ALLTOALLV_C:
    case IALLTOALLV_C:
      return 1;
#else
#ifdef HAVE_PERSISTENT
    case PERSISTENT:
    case ALLTOALL_PERSISTENT:
    case NEIGHBOR_PERSISTENT:
      return 1;
#endif
    case ALLTOALLW:
    case IALLTOALLW:
    case NEIGHBOR_W:
      return 1;
#endif
#ifdef HAVE_LARGE_COUNT
    case ALLTOALLV_C:
    case ALLTOALL_C:
    case IALLTOALLV_C:
    case IALLTOALL_C:
    case ALLTOALLW_C:
    case IALLTOALLW_C:
    case NEIGHBOR_C:
    case INEIGHBOR_C:
    case NEIGHBOR_W_C:
    case PERSISTENT_C:
    case ALLTOALL_PERSISTENT_C:
    case NEIGHBOR_PERSISTENT_C:
      return 1;
#endif
    default:
      return 0;
  }
}

/* MPI_Alltoall's shape: one count per side, blocks packed. */
static int uniform_entry(enum entry entry) {
  return entry == ALLTOALL || entry == IALLTOALL || entry == ALLTOALL_PERSISTENT ||
         entry == ALLTOALL_C || entry == IALLTOALL_C || entry == ALLTOALL_PERSISTENT_C;
}

static int neighbor_entry(enum entry entry) {
  return entry == NEIGHBOR || entry == NEIGHBOR_W || entry == INEIGHBOR ||
         entry == NEIGHBOR_PERSISTENT || entry == NEIGHBOR_C || entry == INEIGHBOR_C ||
         entry == NEIGHBOR_W_C || entry == NEIGHBOR_PERSISTENT_C;
}
enum { MAX_CELLS = 512 };
static struct { const char *form, *entry; } cells[MAX_CELLS];
static int cell_passed[MAX_CELLS], cell_cases[MAX_CELLS], n_cells = 0;
/* While set, cases also count in this row (MPI_COMM_SELF, scrambled sub-communicators, the
   intercommunicator): the communicator as an argument form of its own. */
static const char* comm_row = NULL;

static void tally(const char* form, const char* entry, int counted, int passed) {
  int c = 0;
  while (c < n_cells && (strcmp(cells[c].form, form) || strcmp(cells[c].entry, entry))) ++c;
  if (c == n_cells) {
    if (n_cells == MAX_CELLS) return;
    cells[n_cells].form = form, cells[n_cells++].entry = entry;
  }
  cell_cases[c] += counted, cell_passed[c] += counted && passed;
}

/* Ends a case begun when `errors` was `before`, on the intracommunicator `comm`. */
static void end_named_case(MPI_Comm comm, const char* form, const char* entry, int before) {
  int ok = errors == before, all_ok = 0, rank;
  MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, comm);
  MPI_Comm_rank(comm, &rank);
  tally(form, entry, rank == 0, all_ok);
  if (comm_row) tally(comm_row, entry, rank == 0, all_ok);
}

static void end_case(MPI_Comm comm, const char* form, enum entry entry, int before) {
  end_named_case(comm, form, entry_names[entry], before);
}

/* Counts with zeros: rank 1 sends nothing at all, and about a third of the blocks are empty. */
static int count(int from, int to) {
  return from == 1 ? 0 : (from + 2 * to) % 3 * 2;
}

/* MPI_Alltoallv, blocks stored in reverse rank order with a gap of one element between them. */
static void test_alltoallv(MPI_Comm comm, const char* name) {
  const int before = errors;
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  int *sc = malloc(4 * size * sizeof(int)), *sd = sc + size, *rc = sd + size, *rd = rc + size;
  int stotal = 0, rtotal = 0;
  for (int j = size - 1; j >= 0; --j) {
    sc[j] = count(rank, j), sd[j] = stotal, stotal += sc[j] + 1;
    rc[j] = count(j, rank), rd[j] = rtotal, rtotal += rc[j] + 1;
  }
  int *send = malloc((stotal + 1) * sizeof(int)), *recv = malloc((rtotal + 1) * sizeof(int));
  for (int j = 0; j < size; ++j)
    for (int k = 0; k < sc[j]; ++k) send[sd[j] + k] = value(rank, j, k);
  for (int i = 0; i < rtotal; ++i) recv[i] = -1;
  MPI_Alltoallv(send, sc, sd, MPI_INT, recv, rc, rd, MPI_INT, comm);
  for (int j = 0; j < size; ++j) {
    for (int k = 0; k < rc[j]; ++k)
      expect(recv[rd[j] + k], value(j, rank, k), "MPI_Alltoallv", name, rd[j] + k);
    expect(recv[rd[j] + rc[j]], -1, "MPI_Alltoallv (gap untouched)", name, rd[j] + rc[j]);
  }
  end_case(comm, "gapped_blocks", ALLTOALLV, before);
  free(send), free(recv), free(sc);
}

/* Blocks of count() back to back: returns sc, with sd, rc and rd after it in the same
   allocation (free sc), and the totals. */
static int* packed_layout(int rank, int size, int* stotal, int* rtotal) {
  int *sc = malloc(4 * size * sizeof(int)), *sd = sc + size, *rc = sd + size, *rd = rc + size;
  *stotal = *rtotal = 0;
  for (int j = 0; j < size; ++j) {
    sc[j] = count(rank, j), sd[j] = *stotal, *stotal += sc[j];
    rc[j] = count(j, rank), rd[j] = *rtotal, *rtotal += rc[j];
  }
  return sc;
}

/* MPI_Ialltoallv: two exchanges outstanding at once, a blocking MPI_Alltoallv between their
   start and their completion, one completed by MPI_Test in a loop, the other by MPI_Wait; then
   one in place. Same blocks as test_alltoallv. */
static void test_ialltoallv(MPI_Comm comm, const char* name) {
  const int before = errors;
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  int stotal, rtotal;
  int *sc = packed_layout(rank, size, &stotal, &rtotal), *sd = sc + size, *rc = sd + size,
      *rd = rc + size;
  int *send = malloc((stotal + 1) * sizeof(int)), *recv[3];
  for (int r = 0; r < 3; ++r) recv[r] = malloc((rtotal + 1) * sizeof(int));
  for (int j = 0; j < size; ++j)
    for (int k = 0; k < sc[j]; ++k) send[sd[j] + k] = value(rank, j, k);
  MPI_Request requests[2];
  MPI_Ialltoallv(send, sc, sd, MPI_INT, recv[0], rc, rd, MPI_INT, comm, &requests[0]);
  MPI_Ialltoallv(send, sc, sd, MPI_INT, recv[1], rc, rd, MPI_INT, comm, &requests[1]);
  MPI_Alltoallv(send, sc, sd, MPI_INT, recv[2], rc, rd, MPI_INT, comm);
  for (int done = 0; !done;) MPI_Test(&requests[1], &done, MPI_STATUS_IGNORE);
  MPI_Wait(&requests[0], MPI_STATUS_IGNORE);
  if (requests[0] != MPI_REQUEST_NULL || requests[1] != MPI_REQUEST_NULL)
    expect(0, 1, "MPI_Ialltoallv (request freed when complete)", name, 0);
  for (int r = 0; r < 3; ++r)
    for (int j = 0; j < size; ++j)
      for (int k = 0; k < rc[j]; ++k)
        expect(recv[r][rd[j] + k], value(j, rank, k), r < 2 ? "MPI_Ialltoallv" : "MPI_Alltoallv",
               name, rd[j] + k);
  /* In place: the counts of test_alltoallv_in_place. */
  for (int j = 0, total = 0; j < size; ++j) rc[j] = (rank + j) % 3, rd[j] = total, total += rc[j];
  for (int j = 0; j < size; ++j)
    for (int k = 0; k < rc[j]; ++k) recv[0][rd[j] + k] = value(rank, j, k);
  MPI_Ialltoallv(MPI_IN_PLACE, NULL, NULL, MPI_DATATYPE_NULL, recv[0], rc, rd, MPI_INT, comm,
                 &requests[0]);
  MPI_Wait(&requests[0], MPI_STATUS_IGNORE);
  for (int j = 0; j < size; ++j)
    for (int k = 0; k < rc[j]; ++k)
      expect(recv[0][rd[j] + k], value(j, rank, k), "MPI_Ialltoallv in place", name, rd[j] + k);
  end_case(comm, "two_outstanding_in_place", IALLTOALLV, before);
  for (int r = 0; r < 3; ++r) free(recv[r]);
  free(send), free(sc);
}

/* MPI_Alltoallv with MPI_IN_PLACE: symmetric counts (rank i gets from j what it sends to j). */
static void test_alltoallv_in_place(MPI_Comm comm, const char* name) {
  const int before = errors;
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  int *counts = malloc(2 * size * sizeof(int)), *displs = counts + size, total = 0;
  for (int j = 0; j < size; ++j) counts[j] = (rank + j) % 3, displs[j] = total, total += counts[j];
  int* buf = malloc((total + 1) * sizeof(int));
  for (int j = 0; j < size; ++j)
    for (int k = 0; k < counts[j]; ++k) buf[displs[j] + k] = value(rank, j, k);
  MPI_Alltoallv(MPI_IN_PLACE, NULL, NULL, MPI_DATATYPE_NULL, buf, counts, displs, MPI_INT, comm);
  for (int j = 0; j < size; ++j)
    for (int k = 0; k < counts[j]; ++k)
      expect(buf[displs[j] + k], value(j, rank, k), "MPI_Alltoallv in place", name, displs[j] + k);
  end_case(comm, "in_place_null_send", ALLTOALLV, before);
  free(buf), free(counts);
}

/* MPI_Alltoallv with different datatypes on the two sides: the sender's elements are pairs of
   ints with a one-int hole after each (resized), the receiver takes plain ints. */
static void test_alltoallv_derived(MPI_Comm comm, const char* name) {
  const int before = errors;
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  MPI_Datatype pair, spaced_pair;
  MPI_Type_contiguous(2, MPI_INT, &pair);
  MPI_Type_create_resized(pair, 0, 3 * sizeof(int), &spaced_pair);
  MPI_Type_commit(&spaced_pair);
  int *sc = malloc(4 * size * sizeof(int)), *sd = sc + size, *rc = sd + size, *rd = rc + size;
  int stotal = 0, rtotal = 0;
  for (int j = 0; j < size; ++j) {
    sc[j] = count(rank, j) / 2, sd[j] = stotal, stotal += sc[j]; /* pairs */
    rc[j] = count(j, rank), rd[j] = rtotal, rtotal += rc[j];     /* ints */
  }
  int *send = malloc((3 * stotal + 1) * sizeof(int)), *recv = malloc((rtotal + 1) * sizeof(int));
  for (int j = 0; j < size; ++j)
    for (int k = 0; k < sc[j]; ++k) {
      int* at = send + 3 * (sd[j] + k);
      at[0] = value(rank, j, 2 * k), at[1] = value(rank, j, 2 * k + 1), at[2] = -7;
    }
  MPI_Alltoallv(send, sc, sd, spaced_pair, recv, rc, rd, MPI_INT, comm);
  for (int j = 0; j < size; ++j)
    for (int k = 0; k < rc[j]; ++k)
      expect(recv[rd[j] + k], value(j, rank, k), "MPI_Alltoallv derived types", name, rd[j] + k);
  end_case(comm, "derived_resized_send", ALLTOALLV, before);
  MPI_Type_free(&spaced_pair);
  MPI_Type_free(&pair);
  free(send), free(recv), free(sc);
}

/* MPI_Alltoall: n ints per rank (n = 0 too), from a separate buffer and in place. */
static void test_alltoall(MPI_Comm comm, const char* name, int n, int in_place) {
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  int *send = malloc((size * n + 1) * sizeof(int)), *recv = malloc((size * n + 1) * sizeof(int));
  int* fill = in_place ? recv : send;
  for (int j = 0; j < size; ++j)
    for (int k = 0; k < n; ++k) fill[j * n + k] = value(rank, j, k);
  if (in_place)
    MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, recv, n, MPI_INT, comm);
  else
    MPI_Alltoall(send, n, MPI_INT, recv, n, MPI_INT, comm);
  const char* test = in_place ? "MPI_Alltoall in place" : "MPI_Alltoall";
  const int before = errors;
  for (int j = 0; j < size; ++j)
    for (int k = 0; k < n; ++k) expect(recv[j * n + k], value(j, rank, k), test, name, j * n + k);
  end_case(comm,
           in_place ? "in_place_null_send"
           : n      ? "uniform_blocks"
                    : "zero_counts_everywhere",
           ALLTOALL, before);
  free(send), free(recv);
}

/* MPI_Alltoall with one contiguous type of 3 ints sent, received as 3 MPI_INTs. */
static void test_alltoall_derived(MPI_Comm comm, const char* name) {
  const int before = errors;
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  MPI_Datatype triple;
  MPI_Type_contiguous(3, MPI_INT, &triple);
  MPI_Type_commit(&triple);
  int *send = malloc((3 * size) * sizeof(int)), *recv = malloc((3 * size) * sizeof(int));
  for (int j = 0; j < size; ++j)
    for (int k = 0; k < 3; ++k) send[3 * j + k] = value(rank, j, k);
  MPI_Alltoall(send, 1, triple, recv, 3, MPI_INT, comm);
  for (int j = 0; j < size; ++j)
    for (int k = 0; k < 3; ++k)
      expect(recv[3 * j + k], value(j, rank, k), "MPI_Alltoall derived types", name, 3 * j + k);
  end_case(comm, "derived_resized_send", ALLTOALL, before);
  MPI_Type_free(&triple);
  free(send), free(recv);
}

#ifdef ALLTOALLV_INIT
/* Completes requests[0] (started; requests[1] and [2] inactive) by the completion function
   that `round` (2-7) names. */
static void complete_by(int round, MPI_Request requests[3]) {
  int done = 0, index = -1, count = 0, indices[3];
  switch (round) {
    case 2:
      while (!done) MPI_Test(&requests[0], &done, MPI_STATUS_IGNORE);
      break;
    case 3:
      MPI_Waitany(3, requests, &index, MPI_STATUS_IGNORE);
      break;
    case 4:
      MPI_Waitsome(3, requests, &count, indices, MPI_STATUSES_IGNORE);
      break;
    case 5:
      while (!done) MPI_Testany(3, requests, &index, &done, MPI_STATUS_IGNORE);
      break;
    case 6:
      while (count == 0) MPI_Testsome(3, requests, &count, indices, MPI_STATUSES_IGNORE);
      break;
    default:
      while (!done) MPI_Request_get_status(requests[0], &done, MPI_STATUS_IGNORE);
      MPI_Wait(&requests[0], MPI_STATUS_IGNORE);
  }
}

/* Persistent MPI_Alltoallv: one request started eight times with new contents each time,
   completed by MPI_Wait, by MPI_Startall beside a persistent point-to-point pair then
   MPI_Waitall, by MPI_Test in a loop, and by each other completion function (under MPICH the
   preload advances the exchange inside each); freed with MPI_Request_free. */
static void test_alltoallv_persistent(MPI_Comm comm, const char* name) {
  const int before = errors;
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  int stotal, rtotal;
  int *sc = packed_layout(rank, size, &stotal, &rtotal), *sd = sc + size, *rc = sd + size,
      *rd = rc + size;
  int *send = malloc((stotal + 1) * sizeof(int)), *recv = malloc((rtotal + 1) * sizeof(int));
  MPI_Request requests[3];
  ALLTOALLV_INIT(send, sc, sd, MPI_INT, recv, rc, rd, MPI_INT, comm, MPI_INFO_NULL, &requests[0]);
  int token_out = rank, token_in = -1;
  MPI_Send_init(&token_out, 1, MPI_INT, 0, 99, MPI_COMM_SELF, &requests[1]);
  MPI_Recv_init(&token_in, 1, MPI_INT, 0, 99, MPI_COMM_SELF, &requests[2]);
  for (int round = 0; round < 8; ++round) {
    for (int j = 0; j < size; ++j)
      for (int k = 0; k < sc[j]; ++k) send[sd[j] + k] = value(rank, j, k) + round;
    for (int i = 0; i < rtotal; ++i) recv[i] = -1;
    if (round == 0) {
      MPI_Start(&requests[0]);
      MPI_Wait(&requests[0], MPI_STATUS_IGNORE);
    } else if (round == 1) {
      MPI_Startall(3, requests);
      MPI_Waitall(3, requests, MPI_STATUSES_IGNORE);
      expect(token_in, rank, "MPI_Startall (point-to-point beside the collective)", name, 0);
    } else {
      MPI_Start(&requests[0]);
      complete_by(round, requests);
    }
    if (requests[0] == MPI_REQUEST_NULL)
      expect(0, 1, "persistent MPI_Alltoallv (request kept when complete)", name, 0);
    for (int j = 0; j < size; ++j)
      for (int k = 0; k < rc[j]; ++k)
        expect(recv[rd[j] + k], value(j, rank, k) + round, "persistent MPI_Alltoallv", name,
               rd[j] + k);
  }
  end_case(comm, "persistent_eight_rounds", PERSISTENT, before);
  for (int r = 0; r < 3; ++r) MPI_Request_free(&requests[r]);
  free(send), free(recv), free(sc);
}

/* Persistent MPI_Alltoallv with counts that disagree: the last rank expects one int of rank 0's
   two. Its MPI_Start or MPI_Wait returns an error of class MPI_ERR_TRUNCATE (the error handler
   set to return), and the next exchange on the communicator is right. Intracommunicators of two
   ranks or more. */
static void test_alltoallv_persistent_disagreeing(MPI_Comm comm, const char* name) {
  const int before = errors;
  int inter, rank, size;
  MPI_Comm_test_inter(comm, &inter);
  MPI_Comm_size(comm, &size);
  if (inter || size < 2) return;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm dup;
  MPI_Comm_dup(comm, &dup);
  MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN);
  int *counts = malloc(3 * size * sizeof(int)), *displs = counts + size,
      *recvcounts = displs + size;
  int *send = malloc(2 * size * sizeof(int)), *recv = malloc(2 * size * sizeof(int));
  for (int j = 0; j < size; ++j) {
    counts[j] = recvcounts[j] = 2, displs[j] = 2 * j;
    send[2 * j] = value(rank, j, 0), send[2 * j + 1] = value(rank, j, 1);
  }
  if (rank == size - 1) recvcounts[0] = 1;
  MPI_Request request;
  ALLTOALLV_INIT(send, counts, displs, MPI_INT, recv, recvcounts, displs, MPI_INT, dup,
                 MPI_INFO_NULL, &request);
  int code = MPI_Start(&request), error_class = MPI_SUCCESS;
  if (code == MPI_SUCCESS) code = MPI_Wait(&request, MPI_STATUS_IGNORE);
  MPI_Error_class(code, &error_class);
  if (rank == size - 1)
    expect(error_class, MPI_ERR_TRUNCATE, "persistent MPI_Alltoallv, counts that disagree", name,
           0);
  if (request != MPI_REQUEST_NULL) MPI_Request_free(&request); /* Open MPI frees it on error */
  for (int i = 0; i < 2 * size; ++i) recv[i] = -1;
  MPI_Alltoallv(send, counts, displs, MPI_INT, recv, counts, displs, MPI_INT, dup);
  for (int j = 0; j < size; ++j)
    for (int k = 0; k < 2; ++k)
      expect(recv[2 * j + k], value(j, rank, k), "MPI_Alltoallv after counts that disagreed", name,
             2 * j + k);
  end_case(comm, "persistent_counts_disagree", PERSISTENT, before);
  MPI_Comm_free(&dup);
  free(counts), free(send), free(recv);
}
#endif

/* One side's arrays in the other entry points' forms: 64-bit (the _c forms), byte
   displacements and a type per peer (the w forms). NULL stays NULL; `scaled` 0 keeps the
   displacements as they are (MPI_IN_PLACE's garbage send side, which is not read). */
struct side {
  MPI_Count* counts;
  MPI_Aint *displs, *bytes;
  int* int_bytes;
  MPI_Datatype* types;
};

/* The arguments of an MPI_Alltoallv-shaped call, and in the other forms. */
struct args {
  const void* sendbuf;
  const int *sendcounts, *sdispls;
  MPI_Datatype sendtype;
  void* recvbuf;
  const int *recvcounts, *rdispls;
  MPI_Datatype recvtype;
  MPI_Comm comm;
  int size;
  struct side s, r;
};

/* Defined with the argument forms below. */
static struct side side_of(const int* counts, const int* displs, MPI_Datatype type, int n,
                           int scaled);
static void free_side(struct side* w);
static int neighbor_on(enum entry entry, const struct args* a, MPI_Comm topo);

/* The neighbourhood entry points over `topo` (every one, or MPI_Neighbor_alltoallv only when
   `blocking_only`), whose rank `me` receives from sources[k] the block that sender lists as
   its slot[k], and sends out_degree blocks. Block sizes vary, zero
   included; a gap of one element after each block, which must stay untouched, as must a block
   from MPI_PROC_NULL. */
static void check_neighbor(MPI_Comm topo, const char* form, const char* test, const char* name,
                           int in_degree, const int sources[], const int slot[], int out_degree,
                           int blocking_only) {
  int me;
  MPI_Comm_rank(topo, &me);
  int n = in_degree + out_degree + 1;
  int *sc = malloc(4 * n * sizeof(int)), *sd = sc + n, *rc = sd + n, *rd = rc + n;
  int stotal = 0, rtotal = 0;
  for (int s = 0; s < out_degree; ++s) sc[s] = (me + s) % 3, sd[s] = stotal, stotal += sc[s] + 1;
  for (int k = 0; k < in_degree; ++k) {
    rc[k] = sources[k] == MPI_PROC_NULL ? 1 : (sources[k] + slot[k]) % 3;
    rd[k] = rtotal, rtotal += rc[k] + 1;
  }
  int *send = malloc((stotal + 1) * sizeof(int)), *recv = malloc((rtotal + 1) * sizeof(int));
  for (int s = 0; s < out_degree; ++s)
    for (int k = 0; k < sc[s]; ++k) send[sd[s] + k] = value(me, s, k);
  struct args a = {send,
                   sc,
                   sd,
                   MPI_INT,
                   recv,
                   rc,
                   rd,
                   MPI_INT,
                   topo,
                   0,
                   side_of(sc, sd, MPI_INT, out_degree, 1),
                   side_of(rc, rd, MPI_INT, in_degree, 1)};
  for (int entry = 0; entry < ENTRIES; ++entry) {
    if (!neighbor_entry(entry) || !available(entry) || (blocking_only && entry != NEIGHBOR))
      continue;
    /* MPICH 4.0's own MPI_Neighbor_alltoallw mismatches duplicate edges (and the preload
       leaves that entry point to the MPI library). */
    if ((entry == NEIGHBOR_W || entry == NEIGHBOR_W_C) && !strcmp(form, "graph_duplicate_edges"))
      continue;
    for (int i = 0; i < rtotal; ++i) recv[i] = -1;
    const int before = errors;
    if (neighbor_on(entry, &a, topo) != MPI_SUCCESS) expect(1, 0, test, name, -1);
    for (int k = 0; k < in_degree; ++k) {
      for (int i = 0; i < rc[k]; ++i)
        expect(recv[rd[k] + i], sources[k] == MPI_PROC_NULL ? -1 : value(sources[k], slot[k], i),
               test, name, rd[k] + i);
      expect(recv[rd[k] + rc[k]], -1, test, name, rd[k] + rc[k]);
    }
    end_case(topo, form, entry, before);
  }
  free_side(&a.s), free_side(&a.r);
  free(send), free(recv), free(sc);
}

/* Cartesian: a periodic ring and a ring with a periodic dimension of one process (both
   neighbours the rank itself); the block sent downwards lands in the lower neighbour's block
   from above (MPI-4.1 Section 8.6). MPI_Neighbor_alltoallv only: Open MPI 4.1's nonblocking
   and persistent forms get this order wrong (MPI Forum issue 153), and this program tests the
   MPI library too; a2av's share the blocking form's messages (driver/neighbor_alltoallv.cpp). */
static void test_neighbor_cartesian(MPI_Comm comm, const char* name) {
  int size;
  MPI_Comm_size(comm, &size);
  int dims[2] = {size, 1}, periods[2] = {1, 1};
  for (int ndims = 1; ndims <= 2; ++ndims) {
    MPI_Comm cart;
    MPI_Cart_create(comm, ndims, dims, periods, 0, &cart);
    int sources[4], slot[4];
    for (int d = 0; d < ndims; ++d) {
      MPI_Cart_shift(cart, d, 1, &sources[2 * d], &sources[2 * d + 1]);
      slot[2 * d] = 2 * d + 1, slot[2 * d + 1] = 2 * d;
    }
    check_neighbor(cart, ndims == 1 ? "cartesian_periodic" : "cartesian_dimension_of_one",
                   ndims == 1 ? "MPI_Neighbor_alltoallv (periodic ring)"
                              : "MPI_Neighbor_alltoallv (periodic dimension of one)",
                   name, 2 * ndims, sources, slot, 2 * ndims, 1);
    MPI_Comm_free(&cart);
  }
}

/* Distributed graph (weighted): rank r sends to r+1 twice and to itself; the last rank sends
   nothing, rank 0 receives only from itself. Sources listed self first, then r-1 twice: the k-th
   edge from a rank carries that rank's k-th block to this one. */
static void test_neighbor_graph(MPI_Comm comm, const char* name) {
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  int last = rank == size - 1;
  int destinations[3] = {rank + 1, rank, rank + 1}, out_degree = last ? 0 : 3;
  int sources[3] = {rank, rank - 1, rank - 1}, slot[3] = {1, 0, 2};
  int in_degree = rank == 0 ? 1 : 3;
  if (last) in_degree = rank == 0 ? 0 : 2, sources[0] = rank - 1, slot[0] = 0, slot[1] = 2;
  int weights[3] = {1, 2, 1}; /* weighted, so the weights' room is exercised too */
  MPI_Comm graph;
  MPI_Dist_graph_create_adjacent(comm, in_degree, sources, weights, out_degree, destinations,
                                 weights, MPI_INFO_NULL, 0, &graph);
  check_neighbor(graph, "graph_duplicate_edges", "MPI_Neighbor_alltoallv (graph, duplicate edges)",
                 name, in_degree, sources, slot, out_degree, 0);
  MPI_Comm_free(&graph);
}

/* ---- Argument forms over every entry point they apply to, each case checked against the
   formula and byte for byte against PMPI_Alltoallv ---- */

/* Element types, all made of ints (make_types). */
static MPI_Datatype t_pair; /* two ints, contiguous */
static MPI_Datatype t_hole; /* two ints with a hole between them and one after: extent 4 ints */
static MPI_Datatype t_neg;  /* ints at -1 and +1 from the origin: lower bound -2 ints, extent 4 */
static MPI_Datatype t_int;  /* MPI_INT (not a constant expression everywhere) */

static void make_types(void) {
  MPI_Datatype vector, indexed;
  MPI_Type_contiguous(2, MPI_INT, &t_pair);
  MPI_Type_vector(2, 1, 2, MPI_INT, &vector);
  MPI_Type_create_resized(vector, 0, 4 * sizeof(int), &t_hole);
  int lengths[2] = {1, 1}, displs[2] = {-1, 1};
  MPI_Type_indexed(2, lengths, displs, MPI_INT, &indexed);
  MPI_Type_create_resized(indexed, -2 * (MPI_Aint)sizeof(int), 4 * sizeof(int), &t_neg);
  MPI_Type_commit(&t_pair), MPI_Type_commit(&t_hole), MPI_Type_commit(&t_neg);
  MPI_Type_free(&vector), MPI_Type_free(&indexed);
  t_int = MPI_INT;
}

static void free_types(void) {
  MPI_Type_free(&t_pair), MPI_Type_free(&t_hole), MPI_Type_free(&t_neg);
}

static int ints_of(MPI_Datatype type) {
  int size;
  MPI_Type_size(type, &size);
  return size / (int)sizeof(int);
}

static MPI_Aint extent_of(MPI_Datatype type) {
  MPI_Aint lb, extent;
  MPI_Type_get_extent(type, &lb, &extent);
  return extent;
}

/* Ints one rank sends another (peer ids: struct peers). All even: every type holds 1 or 2. */
static int varied(int from, int to) {
  return from == 1 ? 0 : (from + 2 * to) % 3 * 2;
}
static int varied_again(int from, int to) {
  return (from + 2 * to + 1) % 3 * 2;
}
static int symmetric(int from, int to) { /* in place: what i sends j, j sends i */
  return (from + to) % 3 * 2;
}
static int none(int from, int to) {
  (void)from, (void)to;
  return 0;
}
static int some_ranks_empty(int from,
                            int to) { /* ranks 1, 4, ... send nothing, 2, 5, ... get nothing */
  return from % 3 == 1 || to % 3 == 2 ? 0 : 2 + (from + to) % 2 * 2;
}
static int triples(int from, int to) {
  return (from + to) % 2 * 3 + 3;
}

enum send_arg { SEND_DATA, IN_PLACE_NULL, IN_PLACE_GARBAGE };

struct form {
  const char* name;
  int (*ints)(int from, int to);
  int uniform; /* ints per block for MPI_Alltoall; -1: the form does not apply to it */
  const MPI_Datatype *send_type, *recv_type;
  enum send_arg send_arg;
  int null_when_empty; /* a rank with nothing to send (receive) passes a NULL buffer */
  int bottom;          /* MPI_BOTTOM, the buffers' addresses in the datatypes */
};

static const struct form forms[] = {
    {"in_place_null_send", symmetric, 4, &t_int, &t_int, IN_PLACE_NULL, 0, 0},
    {"in_place_garbage_send", symmetric, 4, &t_int, &t_int, IN_PLACE_GARBAGE, 0, 0},
    {"in_place_derived", symmetric, 4, &t_neg, &t_neg, IN_PLACE_GARBAGE, 0, 0},
    {"zero_counts_everywhere", none, 0, &t_int, &t_int, SEND_DATA, 0, 0},
    {"zero_counts_some_ranks", some_ranks_empty, -1, &t_int, &t_int, SEND_DATA, 0, 0},
    {"null_buffers_zero_counts", some_ranks_empty, 0, &t_int, &t_int, SEND_DATA, 1, 0},
    {"derived_neg_lb_holes", varied, 4, &t_neg, &t_hole, SEND_DATA, 0, 0},
    {"equal_signature_layouts", varied, 4, &t_int, &t_hole, SEND_DATA, 0, 0},
    {"mpi_bottom", varied, 4, &t_pair, &t_hole, SEND_DATA, 0, 1},
};
static const struct form plain = {"varied_counts", varied, 4, &t_int, &t_int, SEND_DATA, 0, 0};

/* Who is who: on an intracommunicator, ranks. On the intercommunicator a sender is known by
   its MPI_COMM_WORLD rank (remote rank j is world rank base + j) and a receiver by its rank
   in its group. */
struct peers {
  int me, rank, size, base, inter;
};

static struct peers peers_of(MPI_Comm comm) {
  struct peers p = {0, 0, 0, 0, 0};
  MPI_Comm_test_inter(comm, &p.inter);
  MPI_Comm_rank(comm, &p.rank);
  p.me = p.rank;
  if (!p.inter) {
    MPI_Comm_size(comm, &p.size);
    return p;
  }
  MPI_Comm_remote_size(comm, &p.size);
  MPI_Comm_rank(MPI_COMM_WORLD, &p.me);
  MPI_Group remote, world;
  MPI_Comm_remote_group(comm, &remote);
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  int zero = 0;
  MPI_Group_translate_ranks(remote, 1, &zero, world, &p.base);
  MPI_Group_free(&remote), MPI_Group_free(&world);
  return p;
}

/* Buffers: arenas whose blocks start MARGIN bytes in (room for negative lower bounds). The
   same arenas serve every case, so that repeated calls meet the same addresses. */
enum { ARENA_BYTES = 1 << 16, MARGIN = 512, MAX_BLOCK_INTS = 8 };
static _Alignas(64) char arenas[4][ARENA_BYTES];    /* send, send', receive, receive' */
static _Alignas(64) char reference[2][ARENA_BYTES]; /* the vendor's send and receive */
struct buffers {
  char *send, *recv;
};
static const struct buffers first_buffers = {arenas[0], arenas[2]};

/* One case: its arguments in their plain form (element counts, displacements in extents). */
struct exchange {
  const struct form* f;
  enum entry entry;
  MPI_Comm comm;
  struct peers p;
  int round; /* added to every value: a repeated call must deliver new contents */
  MPI_Datatype st, rt;
  MPI_Aint sext, rext;
  int *sc, *sd, *rc, *rd;
  int send_total, recv_total;
  char *send, *recv;
};

/* Blocks in reverse rank order with a one-element gap after each; MPI_Alltoall's packed. */
static void lay_out(struct exchange* x) {
  const int packed = uniform_entry(x->entry);
  const int sunit = ints_of(x->st), runit = ints_of(x->rt);
  int s_at = 0, r_at = 0;
  for (int i = 0; i < x->p.size; ++i) {
    const int j = packed ? i : x->p.size - 1 - i;
    const int out = packed ? x->f->uniform : x->f->ints(x->p.me, j);
    const int in = packed ? x->f->uniform : x->f->ints(x->p.base + j, x->p.rank);
    x->sc[j] = out / sunit, x->sd[j] = s_at, s_at += x->sc[j] + !packed;
    x->rc[j] = in / runit, x->rd[j] = r_at, r_at += x->rc[j] + !packed;
    x->send_total += x->sc[j], x->recv_total += x->rc[j];
  }
}

/* The send data, through MPI_Unpack into the layout given. */
static void fill(const struct exchange* x, char* base, const int* counts, const int* displs,
                 MPI_Datatype type, MPI_Aint extent) {
  int ints[MAX_BLOCK_INTS];
  for (int j = 0; j < x->p.size; ++j) {
    const int n = counts[j] * ints_of(type);
    for (int k = 0; k < n; ++k) ints[k] = value(x->p.me, j, k) + x->round;
    int position = 0;
    MPI_Unpack(ints, n * (int)sizeof(int), &position, base + displs[j] * extent, counts[j], type,
               MPI_COMM_SELF);
  }
}

/* Every received value against the formula, read through MPI_Pack. */
static void check_values(const struct exchange* x, const char* test, const char* comm_name) {
  int ints[MAX_BLOCK_INTS];
  for (int j = 0; j < x->p.size; ++j) {
    const int n = x->rc[j] * ints_of(x->rt);
    int position = 0;
    MPI_Pack(x->recv + x->rd[j] * x->rext, x->rc[j], x->rt, ints, n * (int)sizeof(int), &position,
             MPI_COMM_SELF);
    for (int k = 0; k < n; ++k)
      expect(ints[k], value(x->p.base + j, x->p.rank, k) + x->round, test, comm_name, j * 100 + k);
  }
}

/* What the MPI library makes of the same data in the plainest form (the in-place data from
   a separate send buffer, relative addresses, no NULLs): reference[1]. */
static void vendor_reference(const struct exchange* x) {
  const int in_place = x->f->send_arg != SEND_DATA;
  memcpy(reference[1], x->recv - MARGIN, ARENA_BYTES);
  if (in_place) memcpy(reference[0], x->recv - MARGIN, ARENA_BYTES);
  PMPI_Alltoallv(in_place ? reference[0] + MARGIN : x->send, in_place ? x->rc : x->sc,
                 in_place ? x->rd : x->sd, x->st, reference[1] + MARGIN, x->rc, x->rd, x->rt,
                 x->comm);
}

/* The whole receive arena, holes, gaps and margins included, against the vendor's. */
static void compare_with_vendor(const struct exchange* x, const char* test, const char* comm_name) {
  const char* arena = x->recv - MARGIN;
  if (!memcmp(arena, reference[1], ARENA_BYTES)) return;
  int at = 0;
  while (arena[at] == reference[1][at]) ++at;
  if (++errors <= 10)
    fprintf(stderr, "%s on %s: byte %d of the receive buffer differs from PMPI_Alltoallv's\n", test,
            comm_name, at - MARGIN);
}

static struct side side_of(const int* counts, const int* displs, MPI_Datatype type, int n,
                           int scaled) {
  struct side w = {NULL, NULL, NULL, NULL, NULL};
  const MPI_Aint extent = scaled && type != MPI_DATATYPE_NULL ? extent_of(type) : 1;
  if (counts) w.counts = malloc(n * sizeof *w.counts);
  if (displs) {
    w.displs = malloc(n * sizeof *w.displs), w.bytes = malloc(n * sizeof *w.bytes);
    w.int_bytes = malloc(n * sizeof *w.int_bytes);
  }
  if (type != MPI_DATATYPE_NULL) w.types = malloc(n * sizeof *w.types);
  for (int i = 0; i < n; ++i) {
    if (counts) w.counts[i] = counts[i];
    if (displs) w.displs[i] = displs[i], w.bytes[i] = displs[i] * extent;
    if (displs) w.int_bytes[i] = scaled ? (int)w.bytes[i] : displs[i];
    if (w.types) w.types[i] = type;
  }
  return w;
}

static void free_side(struct side* w) {
  free(w->counts), free(w->displs), free(w->bytes), free(w->int_bytes), free(w->types);
}

/* Completes a nonblocking call's request. */
static int waited(int code, MPI_Request* request) {
  return code != MPI_SUCCESS ? code : MPI_Wait(request, MPI_STATUS_IGNORE);
}

/* Starts a persistent request once, completes and frees it. */
static int started_once(int code, MPI_Request* request) {
  if (code != MPI_SUCCESS) return code;
  code = MPI_Start(request);
  if (code == MPI_SUCCESS) code = MPI_Wait(request, MPI_STATUS_IGNORE);
  MPI_Request_free(request);
  return code;
}

#ifdef CONFORMANCE_C_API
static int persistent(const struct args* a) {
  A2AV_Plan plan = NULL;
  int code = A2AV_Alltoallv_init(a->sendbuf, a->s.counts, a->s.displs, a->sendtype, a->recvbuf,
                                 a->r.counts, a->r.displs, a->recvtype, a->comm, NULL, &plan);
  if (code == A2AV_SUCCESS) code = A2AV_Start(plan);
  A2AV_Plan_free(&plan);
  return code;
}
#endif

/* The neighbourhood entry points on `topo`. */
static int neighbor_on(enum entry entry, const struct args* a, MPI_Comm topo) {
  MPI_Request request;
  switch (entry) {
    case NEIGHBOR:
      return MPI_Neighbor_alltoallv(a->sendbuf, a->sendcounts, a->sdispls, a->sendtype, a->recvbuf,
                                    a->recvcounts, a->rdispls, a->recvtype, topo);
    case INEIGHBOR:
      return waited(
          MPI_Ineighbor_alltoallv(a->sendbuf, a->sendcounts, a->sdispls, a->sendtype, a->recvbuf,
                                  a->recvcounts, a->rdispls, a->recvtype, topo, &request),
          &request);
#ifndef CONFORMANCE_C_API
    case NEIGHBOR_W:
      return MPI_Neighbor_alltoallw(a->sendbuf, a->sendcounts, a->s.bytes, a->s.types, a->recvbuf,
                                    a->recvcounts, a->r.bytes, a->r.types, topo);
#endif
#ifdef NEIGHBOR_ALLTOALLV_INIT
    case NEIGHBOR_PERSISTENT:
      return started_once(
          NEIGHBOR_ALLTOALLV_INIT(a->sendbuf, a->sendcounts, a->sdispls, a->sendtype, a->recvbuf,
                                  a->recvcounts, a->rdispls, a->recvtype, topo, MPI_INFO_NULL,
                                  &request),
          &request);
#endif
#ifdef HAVE_LARGE_COUNT
    case NEIGHBOR_C:
      return MPI_Neighbor_alltoallv_c(a->sendbuf, a->s.counts, a->s.displs, a->sendtype, a->recvbuf,
                                      a->r.counts, a->r.displs, a->recvtype, topo);
    case INEIGHBOR_C:
      return waited(
          MPI_Ineighbor_alltoallv_c(a->sendbuf, a->s.counts, a->s.displs, a->sendtype, a->recvbuf,
                                    a->r.counts, a->r.displs, a->recvtype, topo, &request),
          &request);
    case NEIGHBOR_W_C:
      return MPI_Neighbor_alltoallw_c(a->sendbuf, a->s.counts, a->s.bytes, a->s.types, a->recvbuf,
                                      a->r.counts, a->r.bytes, a->r.types, topo);
    case NEIGHBOR_PERSISTENT_C:
      return started_once(MPI_Neighbor_alltoallv_init_c(
                              a->sendbuf, a->s.counts, a->s.displs, a->sendtype, a->recvbuf,
                              a->r.counts, a->r.displs, a->recvtype, topo, MPI_INFO_NULL, &request),
                          &request);
#endif
    default:
      return MPI_ERR_OTHER;
  }
}

/* A neighbourhood entry point on the complete graph in rank order: MPI_Alltoallv's
   semantics. Weighted (all 1): GCC takes Open MPI's MPI_UNWEIGHTED for an array and warns. */
static int neighbor_complete(enum entry entry, const struct args* a) {
  int *all = malloc(2 * a->size * sizeof(int)), *weights = all + a->size;
  for (int j = 0; j < a->size; ++j) all[j] = j, weights[j] = 1;
  MPI_Comm graph;
  MPI_Dist_graph_create_adjacent(a->comm, a->size, all, weights, a->size, all, weights,
                                 MPI_INFO_NULL, 0, &graph);
  const int code = neighbor_on(entry, a, graph);
  MPI_Comm_free(&graph);
  free(all);
  return code;
}

/* MPI_Alltoall's forms (count: the first block's; none with MPI_IN_PLACE's NULL arrays). */
static int uniform_call(enum entry entry, const struct args* a) {
  const int sc = a->sendcounts ? a->sendcounts[0] : 0, rc = a->recvcounts[0];
  MPI_Request request;
  switch (entry) {
    case ALLTOALL:
      return MPI_Alltoall(a->sendbuf, sc, a->sendtype, a->recvbuf, rc, a->recvtype, a->comm);
    case IALLTOALL:
      return waited(MPI_Ialltoall(a->sendbuf, sc, a->sendtype, a->recvbuf, rc, a->recvtype, a->comm,
                                  &request),
                    &request);
#ifdef ALLTOALL_INIT
    case ALLTOALL_PERSISTENT:
      return started_once(ALLTOALL_INIT(a->sendbuf, sc, a->sendtype, a->recvbuf, rc, a->recvtype,
                                        a->comm, MPI_INFO_NULL, &request),
                          &request);
#endif
#ifdef HAVE_LARGE_COUNT
    case ALLTOALL_C:
      return MPI_Alltoall_c(a->sendbuf, sc, a->sendtype, a->recvbuf, rc, a->recvtype, a->comm);
    case IALLTOALL_C:
      return waited(MPI_Ialltoall_c(a->sendbuf, sc, a->sendtype, a->recvbuf, rc, a->recvtype,
                                    a->comm, &request),
                    &request);
    case ALLTOALL_PERSISTENT_C:
      return started_once(MPI_Alltoall_init_c(a->sendbuf, sc, a->sendtype, a->recvbuf, rc,
                                              a->recvtype, a->comm, MPI_INFO_NULL, &request),
                          &request);
#endif
    default:
      return MPI_ERR_OTHER;
  }
}

/* MPI_Alltoallw's forms: the same type for every peer, displacements in bytes. */
static int w_call(enum entry entry, const struct args* a) {
  MPI_Request request;
  switch (entry) {
#ifndef CONFORMANCE_C_API
    case ALLTOALLW:
      return MPI_Alltoallw(a->sendbuf, a->sendcounts, a->s.int_bytes, a->s.types, a->recvbuf,
                           a->recvcounts, a->r.int_bytes, a->r.types, a->comm);
    case IALLTOALLW:
      return waited(
          MPI_Ialltoallw(a->sendbuf, a->sendcounts, a->s.int_bytes, a->s.types, a->recvbuf,
                         a->recvcounts, a->r.int_bytes, a->r.types, a->comm, &request),
          &request);
#endif
#ifdef HAVE_LARGE_COUNT
    case ALLTOALLW_C:
      return MPI_Alltoallw_c(a->sendbuf, a->s.counts, a->s.bytes, a->s.types, a->recvbuf,
                             a->r.counts, a->r.bytes, a->r.types, a->comm);
    case IALLTOALLW_C:
      return waited(MPI_Ialltoallw_c(a->sendbuf, a->s.counts, a->s.bytes, a->s.types, a->recvbuf,
                                     a->r.counts, a->r.bytes, a->r.types, a->comm, &request),
                    &request);
#endif
    default:
      (void)request;
      return MPI_ERR_OTHER;
  }
}

static int dispatch(enum entry entry, const struct args* a) {
  MPI_Request request;
  if (uniform_entry(entry)) return uniform_call(entry, a);
  if (neighbor_entry(entry)) return neighbor_complete(entry, a);
  switch (entry) {
    case ALLTOALLV:
      return MPI_Alltoallv(a->sendbuf, a->sendcounts, a->sdispls, a->sendtype, a->recvbuf,
                           a->recvcounts, a->rdispls, a->recvtype, a->comm);
    case IALLTOALLV:
      return waited(MPI_Ialltoallv(a->sendbuf, a->sendcounts, a->sdispls, a->sendtype, a->recvbuf,
                                   a->recvcounts, a->rdispls, a->recvtype, a->comm, &request),
                    &request);
#ifdef CONFORMANCE_C_API
    case PERSISTENT:
      return persistent(a);
#elif defined(ALLTOALLV_INIT)
    case PERSISTENT:
      return started_once(
          ALLTOALLV_INIT(a->sendbuf, a->sendcounts, a->sdispls, a->sendtype, a->recvbuf,
                         a->recvcounts, a->rdispls, a->recvtype, a->comm, MPI_INFO_NULL, &request),
          &request);
#endif
#if defined(HAVE_LARGE_COUNT) || defined(CONFORMANCE_C_API)
    case ALLTOALLV_C:
      return MPI_Alltoallv_c(a->sendbuf, a->s.counts, a->s.displs, a->sendtype, a->recvbuf,
                             a->r.counts, a->r.displs, a->recvtype, a->comm);
    case IALLTOALLV_C:
      return waited(MPI_Ialltoallv_c(a->sendbuf, a->s.counts, a->s.displs, a->sendtype, a->recvbuf,
                                     a->r.counts, a->r.displs, a->recvtype, a->comm, &request),
                    &request);
#endif
#ifdef HAVE_LARGE_COUNT
    case PERSISTENT_C:
      return started_once(MPI_Alltoallv_init_c(a->sendbuf, a->s.counts, a->s.displs, a->sendtype,
                                               a->recvbuf, a->r.counts, a->r.displs, a->recvtype,
                                               a->comm, MPI_INFO_NULL, &request),
                          &request);
#endif
    default:
      return w_call(entry, a);
  }
}

/* `type` moved to absolute addresses: its blocks at MPI_BOTTOM + base + displacement. */
static MPI_Datatype absolute(MPI_Datatype type, const char* base) {
  MPI_Aint address, lb, extent;
  MPI_Get_address(base, &address);
  MPI_Type_get_extent(type, &lb, &extent);
  MPI_Datatype moved, resized;
  MPI_Type_create_hindexed_block(1, 1, &address, type, &moved);
  MPI_Type_create_resized(moved, address + lb, extent, &resized);
  MPI_Type_commit(&resized);
  MPI_Type_free(&moved);
  return resized;
}

/* The call as the form makes it. Garbage send arguments with MPI_IN_PLACE: counts and
   displacements no call could accept, and a type unlike the receive type. */
static int call_entry(const struct exchange* x) {
  const struct form* f = x->f;
  int* garbage = malloc(2 * x->p.size * sizeof(int));
  for (int j = 0; j < x->p.size; ++j) garbage[j] = -1, garbage[x->p.size + j] = INT_MIN;
  struct args a = {x->send, x->sc, x->sd, x->st, x->recv, x->rc, x->rd, x->rt, x->comm, x->p.size};
  if (f->bottom) {
    a.sendbuf = a.recvbuf = MPI_BOTTOM;
    a.sendtype = absolute(x->st, x->send), a.recvtype = absolute(x->rt, x->recv);
  }
  if (f->null_when_empty) {
    if (!x->send_total) a.sendbuf = NULL;
    if (!x->recv_total) a.recvbuf = NULL;
  }
  if (f->send_arg == IN_PLACE_NULL)
    a.sendbuf = MPI_IN_PLACE, a.sendcounts = a.sdispls = NULL, a.sendtype = MPI_DATATYPE_NULL;
  if (f->send_arg == IN_PLACE_GARBAGE)
    a.sendbuf = MPI_IN_PLACE, a.sendcounts = garbage, a.sdispls = garbage + x->p.size,
    a.sendtype = t_hole;
  a.s = side_of(a.sendcounts, a.sdispls, a.sendtype, a.size, a.sendbuf != MPI_IN_PLACE);
  a.r = side_of(a.recvcounts, a.rdispls, a.recvtype, a.size, 1);
  const int code = dispatch(x->entry, &a);
  free_side(&a.s), free_side(&a.r);
  if (f->bottom) MPI_Type_free(&a.sendtype), MPI_Type_free(&a.recvtype);
  free(garbage);
  return code;
}

/* Runs `f` through `entry` on `comm` (its case counted on the intracommunicator `local`). */
static void run_case(const struct form* f, enum entry entry, MPI_Comm comm, MPI_Comm local,
                     const char* comm_name, struct buffers b, int round) {
  struct exchange x = {.f = f, .entry = entry, .comm = comm, .p = peers_of(comm), .round = round};
  const int in_place = f->send_arg != SEND_DATA;
  x.rt = *f->recv_type, x.st = in_place ? x.rt : *f->send_type;
  x.rext = extent_of(x.rt), x.sext = extent_of(x.st);
  int* arrays = malloc(4 * x.p.size * sizeof(int));
  x.sc = arrays, x.sd = x.sc + x.p.size, x.rc = x.sd + x.p.size, x.rd = x.rc + x.p.size;
  x.send = b.send + MARGIN, x.recv = b.recv + MARGIN;
  lay_out(&x);
  memset(b.send, 0xA5, ARENA_BYTES), memset(b.recv, 0x5A, ARENA_BYTES);
  if (in_place)
    fill(&x, x.recv, x.rc, x.rd, x.rt, x.rext);
  else
    fill(&x, x.send, x.sc, x.sd, x.st, x.sext);
  vendor_reference(&x);
  char test[160];
  snprintf(test, sizeof test, "%s through %s (round %d)", f->name, entry_names[entry], round);
  const int before = errors;
  const int code = call_entry(&x);
  if (code != MPI_SUCCESS) {
    if (++errors <= 10) fprintf(stderr, "%s on %s: error %d\n", test, comm_name, code);
#ifdef CONFORMANCE_C_API
    if (errors <= 10) fprintf(stderr, "  %s\n", A2AV_Last_error_message());
#endif
  } else {
    check_values(&x, test, comm_name);
    compare_with_vendor(&x, test, comm_name);
  }
  end_case(local, f->name, entry, before);
  free(arrays);
}

/* Where a form applies: MPI allows neither MPI_IN_PLACE nor intercommunicators in
   neighbourhood collectives, nor MPI_IN_PLACE on intercommunicators. */
static int applies(const struct form* f, enum entry entry, int inter) {
  const int in_place = f->send_arg != SEND_DATA;
  if (inter && in_place) return 0;
  if (!available(entry)) return 0;
  if (uniform_entry(entry)) return f->uniform >= 0;
  if (neighbor_entry(entry)) return !inter && !in_place;
  return 1;
}

#ifndef CONFORMANCE_C_API
/* MPI_Alltoallw and MPI_Ialltoallw with a type per peer (ints for even peers, pairs for odd
   ones), as a program would use them. */
static void test_alltoallw_per_peer_types(MPI_Comm comm, const char* name) {
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  int *sc = malloc(4 * size * sizeof(int)), *sd = sc + size, *rc = sd + size, *rd = rc + size;
  MPI_Datatype* types = malloc(2 * size * sizeof(MPI_Datatype));
  int stotal = 0, rtotal = 0;
  for (int j = 0; j < size; ++j) { /* count(): even ints, so pairs fit */
    const int unit = j % 2 ? 2 : 1;
    types[j] = j % 2 ? t_pair : MPI_INT, types[size + j] = j % 2 ? t_pair : MPI_INT;
    sc[j] = count(rank, j) / unit, sd[j] = stotal * (int)sizeof(int), stotal += count(rank, j);
    rc[j] = count(j, rank) / unit, rd[j] = rtotal * (int)sizeof(int), rtotal += count(j, rank);
  }
  int *send = malloc((stotal + 1) * sizeof(int)), *recv = malloc((rtotal + 1) * sizeof(int));
  for (int j = 0; j < size; ++j)
    for (int k = 0; k < count(rank, j); ++k) send[sd[j] / (int)sizeof(int) + k] = value(rank, j, k);
  for (int nonblocking = 0; nonblocking <= 1; ++nonblocking) {
    const int before = errors;
    MPI_Request request;
    for (int i = 0; i < rtotal; ++i) recv[i] = -1;
    if (nonblocking)
      waited(MPI_Ialltoallw(send, sc, sd, types, recv, rc, rd, types + size, comm, &request),
             &request);
    else
      MPI_Alltoallw(send, sc, sd, types, recv, rc, rd, types + size, comm);
    for (int j = 0; j < size; ++j)
      for (int k = 0; k < count(j, rank); ++k)
        expect(recv[rd[j] / (int)sizeof(int) + k], value(j, rank, k),
               "MPI_Alltoallw per-peer types", name, k);
    end_case(comm, "per_peer_types", nonblocking ? IALLTOALLW : ALLTOALLW, before);
  }
  free(send), free(recv), free(sc), free(types);
}
#endif

static void test_forms(MPI_Comm comm, const char* name) {
  for (size_t i = 0; i < sizeof forms / sizeof forms[0]; ++i)
    for (int entry = 0; entry < ENTRIES; ++entry)
      if (applies(&forms[i], entry, 0))
        run_case(&forms[i], entry, comm, comm, name, first_buffers, 0);
}

/* Calls repeated with one argument changed at a time: a2av keeps recent calls' checked form
   (the recent-calls cache), so every change must be noticed. */
static void test_repeated(MPI_Comm comm, const char* name) {
  int rank;
  MPI_Comm_rank(comm, &rank);
  for (int entry = 0; entry < ENTRIES; ++entry) {
    /* A persistent request fixes its arguments; the later entry points reach the same paths
       as these through conversions made anew on every call. */
    if (entry == PERSISTENT || entry > NEIGHBOR) continue;
    struct form f = plain;
    f.name = "repeat_change_one";
    struct buffers b = first_buffers;
    int round = 0;
    run_case(&f, entry, comm, comm, name, b, round++);
    run_case(&f, entry, comm, comm, name, b, round++); /* the same again */
    f.ints = varied_again, f.uniform = 2;
    run_case(&f, entry, comm, comm, name, b, round++); /* counts */
    b.send = arenas[1];
    run_case(&f, entry, comm, comm, name, b, round++); /* send buffer */
    b.recv = arenas[3];
    run_case(&f, entry, comm, comm, name, b, round++); /* receive buffer */
    f.recv_type = &t_pair;
    run_case(&f, entry, comm, comm, name, b, round++); /* receive type */
    f.send_type = &t_hole;
    run_case(&f, entry, comm, comm, name, b, round++); /* send type */
    /* A type freed and another made, likely under the same handle: same size, extent and
       true extent, other holes. */
    int lengths[3] = {1, 1, 1}, first_at[3] = {0, 1, 3}, second_at[3] = {0, 2, 3};
    MPI_Datatype type;
    f.ints = triples, f.uniform = 3, f.send_type = &t_int, f.recv_type = &type;
    MPI_Type_indexed(3, lengths, first_at, MPI_INT, &type);
    MPI_Type_commit(&type);
    run_case(&f, entry, comm, comm, name, b, round++);
    MPI_Type_free(&type);
    MPI_Type_indexed(3, lengths, second_at, MPI_INT, &type);
    MPI_Type_commit(&type);
    run_case(&f, entry, comm, comm, name, b, round++);
    MPI_Type_free(&type);
    f.recv_type = &t_int;
    /* A communicator freed and another made, likely under the same handle, ranks reversed. */
    MPI_Comm other;
    MPI_Comm_dup(comm, &other);
    run_case(&f, entry, other, other, name, b, round++);
    MPI_Comm_free(&other);
    MPI_Comm_split(comm, 0, -rank, &other);
    run_case(&f, entry, other, other, "the same, reversed", b, round++);
    MPI_Comm_free(&other);
    if (entry == NEIGHBOR) continue;
    f.send_arg = IN_PLACE_NULL, f.ints = symmetric; /* in place, on the same receive buffer */
    run_case(&f, entry, comm, comm, name, b, round++);
  }
}

/* An intercommunicator between the lower and the upper half of MPI_COMM_WORLD. */
static void test_intercommunicator(void) {
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size < 2) return;
  const int low = rank < size / 2;
  MPI_Comm half, inter;
  MPI_Comm_split(MPI_COMM_WORLD, low, rank, &half);
  MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, low ? size / 2 : 0, 77, &inter);
  comm_row = "intercommunicator";
  const struct form* inter_forms[] = {&plain, &forms[4], &forms[5], &forms[6]};
  for (size_t i = 0; i < sizeof inter_forms / sizeof inter_forms[0]; ++i)
    for (int entry = 0; entry < ENTRIES; ++entry)
      if (applies(inter_forms[i], entry, 1))
        run_case(inter_forms[i], entry, inter, half, "an intercommunicator", first_buffers, 0);
  comm_row = NULL;
  MPI_Comm_free(&inter);
  MPI_Comm_free(&half);
}

#ifdef CONFORMANCE_C_API
/* ---- The sparse exchange (C API only), each algorithm, checked against the formula ---- */

static const char* const sparse_algorithms[] = {"nbx", "grid", "dense", "shared_memory", "auto"};
static const char* const sparse_entries[] = {
    "A2AV_Sparse_exchange[nbx]", "A2AV_Sparse_exchange[grid]", "A2AV_Sparse_exchange[dense]",
    "A2AV_Sparse_exchange[shared_memory]", "A2AV_Sparse_exchange[auto]"};
enum {
  SPARSE_ALGORITHMS = sizeof sparse_algorithms / sizeof sparse_algorithms[0],
  MAX_MESSAGES = 4
};

/* The messages rank `from` of `size` sends: their number, destinations and sizes. */
struct sparse_form {
  const char* name;
  int (*messages)(int from, int size, int to[], int bytes[]);
  int null_buffers; /* messages of zero bytes have NULL buffers; no messages: NULL arrays */
};

static int sparse_varied(int from, int size, int to[], int bytes[]) {
  for (int k = 0; k < 3; ++k) to[k] = (from + k * k) % size, bytes[k] = (from + k) % 4 * 3;
  return 3;
}
static int sparse_varied_again(int from, int size, int to[], int bytes[]) {
  for (int k = 0; k < 2; ++k) to[k] = (from + 2 * k + 1) % size, bytes[k] = (from + k) % 3 * 5 + 1;
  return 2;
}
static int sparse_none(int from, int size, int to[], int bytes[]) {
  (void)from, (void)size, (void)to, (void)bytes;
  return 0;
}
static int sparse_some_ranks(int from, int size, int to[], int bytes[]) {
  if (from % 3 == 1) return 0;
  to[0] = (from + 1) % size, to[1] = (from + 3) % size, bytes[0] = 5, bytes[1] = 0;
  return 2;
}
static int sparse_to_self(int from, int size, int to[], int bytes[]) {
  to[0] = to[1] = to[3] = from, to[2] = (from + 1) % size;
  bytes[0] = 4, bytes[1] = 0, bytes[2] = 7, bytes[3] = 9; /* order kept, to itself too */
  return 4;
}
static int sparse_empty_messages(int from, int size, int to[], int bytes[]) {
  to[0] = (from + 1) % size, to[1] = from, bytes[0] = bytes[1] = 0;
  return 2;
}

static const struct sparse_form sparse_forms[] = {
    {"zero_counts_everywhere", sparse_none, 1},
    {"zero_counts_some_ranks", sparse_some_ranks, 0},
    {"messages_to_self", sparse_to_self, 0},
    {"null_buffers_zero_counts", sparse_empty_messages, 1},
};

static unsigned char sparse_byte(int from, int message, int at, int round) {
  return (unsigned char)(from * 31 + message * 7 + at + round);
}

/* One sparse exchange with algorithm `a` on `comm`, every message checked. */
static void run_sparse(const struct sparse_form* f, int a, MPI_Comm comm, const char* comm_name,
                       const char* form_name, int round) {
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  int to[MAX_MESSAGES], bytes[MAX_MESSAGES];
  const int n = f->messages(rank, size, to, bytes);
  static unsigned char data[MAX_MESSAGES][64];
  const void* buffers[MAX_MESSAGES];
  MPI_Count sizes[MAX_MESSAGES];
  for (int i = 0; i < n; ++i) {
    for (int k = 0; k < bytes[i]; ++k) data[i][k] = sparse_byte(rank, i, k, round);
    buffers[i] = f->null_buffers && !bytes[i] ? NULL : data[i], sizes[i] = bytes[i];
  }
  const int no_arrays = f->null_buffers && n == 0;
  char test[160];
  snprintf(test, sizeof test, "%s through %s (round %d)", form_name, sparse_entries[a], round);
  const int before = errors;
  A2AV_Sparse received = NULL;
  const int code =
      A2AV_Sparse_exchange(n, no_arrays ? NULL : to, no_arrays ? NULL : buffers,
                           no_arrays ? NULL : sizes, comm, sparse_algorithms[a], &received);
  if (code != A2AV_SUCCESS) {
    if (++errors <= 10)
      fprintf(stderr, "%s on %s: error %d: %s\n", test, comm_name, code, A2AV_Last_error_message());
  } else {
    /* Expected: by source, each source's messages to this rank in the order it gave them. */
    int got = 0, count = 0;
    A2AV_Sparse_count(received, &count);
    for (int from = 0; from < size; ++from) {
      int their_to[MAX_MESSAGES], their_bytes[MAX_MESSAGES];
      const int m = f->messages(from, size, their_to, their_bytes);
      for (int i = 0; i < m; ++i) {
        if (their_to[i] != rank) continue;
        int source = -1;
        const void* at = NULL;
        MPI_Count length = -1;
        if (got < count) A2AV_Sparse_message(received, got, &source, &at, &length);
        ++got;
        expect(source, from, test, comm_name, got - 1);
        expect((int)length, their_bytes[i], test, comm_name, got - 1);
        for (int k = 0; source == from && k < their_bytes[i] && k < length; ++k)
          expect(((const unsigned char*)at)[k], sparse_byte(from, i, k, round), test, comm_name, k);
      }
    }
    expect(count, got, test, comm_name, -1);
    A2AV_Sparse_free(&received);
  }
  end_named_case(comm, form_name, sparse_entries[a], before);
}

static void test_sparse(MPI_Comm comm, const char* name) {
  int rank;
  MPI_Comm_rank(comm, &rank);
  const struct sparse_form varied_form = {"plain", sparse_varied, 0},
                           again = {"plain", sparse_varied_again, 0};
  for (int a = 0; a < SPARSE_ALGORITHMS; ++a) {
    for (size_t i = 0; i < sizeof sparse_forms / sizeof sparse_forms[0]; ++i)
      run_sparse(&sparse_forms[i], a, comm, name, sparse_forms[i].name, 0);
    /* Repeated, one thing changed at a time: contents, messages, the communicator. */
    const char* repeat = "repeat_change_one";
    run_sparse(&varied_form, a, comm, name, repeat, 0);
    run_sparse(&varied_form, a, comm, name, repeat, 1);
    run_sparse(&again, a, comm, name, repeat, 2);
    MPI_Comm other;
    MPI_Comm_dup(comm, &other);
    run_sparse(&again, a, other, name, repeat, 3);
    MPI_Comm_free(&other);
    MPI_Comm_split(comm, 0, -rank, &other);
    run_sparse(&again, a, other, "the same, reversed", repeat, 4);
    MPI_Comm_free(&other);
  }
}
#endif

/* depth 0: the tests of every entry point; 1: also the argument forms (and the sparse
   exchange); 2: also the repeated calls. Kept small where cases would repeat themselves. */
static void test_all(MPI_Comm comm, const char* name, int depth) {
  test_alltoallv(comm, name);
  test_ialltoallv(comm, name);
  test_alltoallv_in_place(comm, name);
  test_alltoallv_derived(comm, name);
  for (int n = 0; n <= 3; n += 3) {
    test_alltoall(comm, name, n, 0);
    test_alltoall(comm, name, n, 1);
  }
  test_alltoall_derived(comm, name);
#ifdef ALLTOALLV_INIT
  test_alltoallv_persistent(comm, name);
  test_alltoallv_persistent_disagreeing(comm, name);
#endif
  test_neighbor_cartesian(comm, name);
  test_neighbor_graph(comm, name);
#ifndef CONFORMANCE_C_API
  test_alltoallw_per_peer_types(comm, name);
#endif
  if (depth < 1) return;
  test_forms(comm, name);
#ifdef CONFORMANCE_C_API
  test_sparse(comm, name);
#endif
  if (depth > 1) test_repeated(comm, name);
}

/* Rank 0 prints the matrix: every cell's passed and counted cases, summed over the ranks. */
static void print_matrix(void) {
  int rank, fewest, most;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Allreduce(&n_cells, &fewest, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(&n_cells, &most, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (fewest != most || n_cells == MAX_CELLS) {
    if (++errors <= 10) fprintf(stderr, "the ranks registered different matrix cells\n");
    return;
  }
  int passed[MAX_CELLS], cases[MAX_CELLS];
  MPI_Reduce(cell_passed, passed, n_cells, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
  MPI_Reduce(cell_cases, cases, n_cells, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank != 0) return;
  for (int c = 0; c < n_cells; ++c)
    printf("matrix: %s %s %d/%d\n", cells[c].form, cells[c].entry, passed[c], cases[c]);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  /* A call that fails returns, so that the case is counted and the rest still run. */
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
  make_types();
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  /* The communicators: like MPICH's MTestGetIntracomm, each made and freed in turn. */
  test_all(MPI_COMM_WORLD, "MPI_COMM_WORLD", 2);
  comm_row = "MPI_COMM_SELF";
  test_all(MPI_COMM_SELF, "MPI_COMM_SELF", 2);
  comm_row = NULL;
  struct {
    const char* name;
    int color, key, depth;
    const char* row;
  } splits[] = {
      {"a dup of MPI_COMM_WORLD", 0, rank, 0, NULL},
      {"reversed rank order", 0, size - rank, 1, NULL},
      {"halves (odd sizes when the world is odd)", rank % 2, rank, 1, NULL},
      {"groups of three, reversed", rank / 3, -rank, 0, NULL},
      {"one rank each", rank, 0, 0, NULL},
      {"two unequal parts, ranks scrambled", rank % 3 == 2, rank ^ 5, 2, "scrambled_subcomm"},
  };
  for (size_t s = 0; s < sizeof splits / sizeof splits[0]; ++s) {
    MPI_Comm comm;
    if (s == 0)
      MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    else
      MPI_Comm_split(MPI_COMM_WORLD, splits[s].color, splits[s].key, &comm);
    comm_row = splits[s].row;
    test_all(comm, splits[s].name, splits[s].depth);
    comm_row = NULL;
    MPI_Comm_free(&comm);
  }
  test_intercommunicator();
  free_types();
  print_matrix();
  int total = 0;
  MPI_Allreduce(&errors, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) {
    if (total)
      printf(" Found %d errors\n", total);
    else
      printf(" No Errors\n");
  }
  MPI_Finalize();
  return total != 0;
}
