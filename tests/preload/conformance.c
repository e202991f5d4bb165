/* Conformance of the all-to-all entry points, in the style of the MPI libraries' own suites
   (MPICH test/mpi/coll): every entry point over a generator of communicators (world, a dup,
   splits into odd sizes, reversed rank order, one-rank ones), with zero counts on some ranks,
   MPI_IN_PLACE and derived datatypes; MPI_Neighbor_alltoallv on topologies made over each.
   Every received value is checked against a formula.
   A plain MPI program: run as is it tests the MPI library, under
   LD_PRELOAD=liba2av_preload.so it tests a2av. Rank 0 prints " No Errors" when all passed;
   the exit status is non-zero on any wrong value. */
#include <mpi.h>
#ifdef OPEN_MPI
#include <mpi-ext.h> /* Open MPI 4.1 has the persistent collectives as an extension */
#define ALLTOALLV_INIT MPIX_Alltoallv_init
#elif MPI_VERSION >= 4
#define ALLTOALLV_INIT MPI_Alltoallv_init
#endif
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

/* Counts with zeros: rank 1 sends nothing at all, and about a third of the blocks are empty. */
static int count(int from, int to) {
  return from == 1 ? 0 : (from + 2 * to) % 3 * 2;
}

/* MPI_Alltoallv, blocks stored in reverse rank order with a gap of one element between them. */
static void test_alltoallv(MPI_Comm comm, const char* name) {
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
  for (int r = 0; r < 3; ++r) free(recv[r]);
  free(send), free(sc);
}

/* MPI_Alltoallv with MPI_IN_PLACE: symmetric counts (rank i gets from j what it sends to j). */
static void test_alltoallv_in_place(MPI_Comm comm, const char* name) {
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
  free(buf), free(counts);
}

/* MPI_Alltoallv with different datatypes on the two sides: the sender's elements are pairs of
   ints with a one-int hole after each (resized), the receiver takes plain ints. */
static void test_alltoallv_derived(MPI_Comm comm, const char* name) {
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
  for (int j = 0; j < size; ++j)
    for (int k = 0; k < n; ++k) expect(recv[j * n + k], value(j, rank, k), test, name, j * n + k);
  free(send), free(recv);
}

/* MPI_Alltoall with one contiguous type of 3 ints sent, received as 3 MPI_INTs. */
static void test_alltoall_derived(MPI_Comm comm, const char* name) {
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
  MPI_Type_free(&triple);
  free(send), free(recv);
}

#ifdef ALLTOALLV_INIT
/* Persistent MPI_Alltoallv: one request started three times with new contents each time,
   completed by MPI_Wait, by MPI_Startall beside a persistent point-to-point pair then
   MPI_Waitall, and by MPI_Test in a loop; freed with MPI_Request_free. */
static void test_alltoallv_persistent(MPI_Comm comm, const char* name) {
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
  for (int round = 0; round < 3; ++round) {
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
      for (int done = 0; !done;) MPI_Test(&requests[0], &done, MPI_STATUS_IGNORE);
    }
    if (requests[0] == MPI_REQUEST_NULL)
      expect(0, 1, "persistent MPI_Alltoallv (request kept when complete)", name, 0);
    for (int j = 0; j < size; ++j)
      for (int k = 0; k < rc[j]; ++k)
        expect(recv[rd[j] + k], value(j, rank, k) + round, "persistent MPI_Alltoallv", name,
               rd[j] + k);
  }
  for (int r = 0; r < 3; ++r) MPI_Request_free(&requests[r]);
  free(send), free(recv), free(sc);
}
#endif

/* MPI_Neighbor_alltoallv over `topo`, whose rank `me` receives from sources[k] the block that
   sender lists as its slot[k], and sends out_degree blocks. Block sizes vary, zero included;
   a gap of one element after each block, which must stay untouched, as must a block from
   MPI_PROC_NULL. */
static void check_neighbor(MPI_Comm topo, const char* test, const char* name, int in_degree,
                           const int sources[], const int slot[], int out_degree) {
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
  for (int i = 0; i < rtotal; ++i) recv[i] = -1;
  MPI_Neighbor_alltoallv(send, sc, sd, MPI_INT, recv, rc, rd, MPI_INT, topo);
  for (int k = 0; k < in_degree; ++k) {
    for (int i = 0; i < rc[k]; ++i)
      expect(recv[rd[k] + i], sources[k] == MPI_PROC_NULL ? -1 : value(sources[k], slot[k], i),
             test, name, rd[k] + i);
    expect(recv[rd[k] + rc[k]], -1, test, name, rd[k] + rc[k]);
  }
  free(send), free(recv), free(sc);
}

/* Cartesian: a periodic ring and a ring with a periodic dimension of one process (both
   neighbours the rank itself); the block sent downwards lands in the lower neighbour's block
   from above (MPI-4.1 Section 8.6). */
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
    check_neighbor(cart,
                   ndims == 1 ? "MPI_Neighbor_alltoallv (periodic ring)"
                              : "MPI_Neighbor_alltoallv (periodic dimension of one)",
                   name, 2 * ndims, sources, slot, 2 * ndims);
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
  check_neighbor(graph, "MPI_Neighbor_alltoallv (graph, duplicate edges)", name, in_degree, sources,
                 slot, out_degree);
  MPI_Comm_free(&graph);
}

static void test_all(MPI_Comm comm, const char* name) {
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
#endif
  test_neighbor_cartesian(comm, name);
  test_neighbor_graph(comm, name);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  /* The communicators: like MPICH's MTestGetIntracomm, each made and freed in turn. */
  test_all(MPI_COMM_WORLD, "MPI_COMM_WORLD");
  test_all(MPI_COMM_SELF, "MPI_COMM_SELF");
  struct {
    const char* name;
    int color, key;
  } splits[] = {
      {"a dup of MPI_COMM_WORLD", 0, rank},
      {"reversed rank order", 0, size - rank},
      {"halves (odd sizes when the world is odd)", rank % 2, rank},
      {"groups of three, reversed", rank / 3, -rank},
      {"one rank each", rank, 0},
  };
  for (size_t s = 0; s < sizeof splits / sizeof splits[0]; ++s) {
    MPI_Comm comm;
    if (s == 0)
      MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    else
      MPI_Comm_split(MPI_COMM_WORLD, splits[s].color, splits[s].key, &comm);
    test_all(comm, splits[s].name);
    MPI_Comm_free(&comm);
  }
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
