"""A Python program as users write it with mpi4py: Alltoallv, Ialltoallv, Alltoall, Ialltoall,
the pickled alltoall, and Neighbor_alltoallv and Ineighbor_alltoallv on a periodic ring, every
value checked (mpi4py 3.1 has no
persistent collectives). Rank 0 prints " No Errors" when all passed; exits non-zero otherwise."""
import sys
from array import array

from mpi4py import MPI


def value(source, dest, k):
    return source * 1000003 + dest * 1009 + k


def displacements(counts):
    out, total = [], 0
    for c in counts:
        out.append(total)
        total += c
    return out


def main():
    comm = MPI.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    errors = 0

    # Alltoallv: rank i sends (i + 2j) % 3 ints to rank j.
    sendcounts = [(rank + 2 * j) % 3 for j in range(size)]
    recvcounts = [(j + 2 * rank) % 3 for j in range(size)]
    send = array("i", [value(rank, j, k) for j in range(size) for k in range(sendcounts[j])])
    recv = array("i", [-1] * max(1, sum(recvcounts)))
    rdispls = displacements(recvcounts)
    comm.Alltoallv([send, (sendcounts, displacements(sendcounts)), MPI.INT],
                   [recv, (recvcounts, rdispls), MPI.INT])
    for j in range(size):
        for k in range(recvcounts[j]):
            errors += recv[rdispls[j] + k] != value(j, rank, k)

    # Ialltoallv: the same exchange, completed by Wait.
    recv = array("i", [-1] * max(1, sum(recvcounts)))
    request = comm.Ialltoallv([send, (sendcounts, displacements(sendcounts)), MPI.INT],
                              [recv, (recvcounts, rdispls), MPI.INT])
    request.Wait()
    for j in range(size):
        for k in range(recvcounts[j]):
            errors += recv[rdispls[j] + k] != value(j, rank, k)

    # Alltoall: three ints per rank.
    send = array("i", [value(rank, j, k) for j in range(size) for k in range(3)])
    recv = array("i", [-1] * (3 * size))
    comm.Alltoall([send, MPI.INT], [recv, MPI.INT])
    errors += sum(recv[3 * j + k] != value(j, rank, k) for j in range(size) for k in range(3))

    # Ialltoall: the same, completed by Wait.
    recv = array("i", [-1] * (3 * size))
    comm.Ialltoall([send, MPI.INT], [recv, MPI.INT]).Wait()
    errors += sum(recv[3 * j + k] != value(j, rank, k) for j in range(size) for k in range(3))

    # The lower-case (pickled objects) alltoall.
    got = comm.alltoall([(rank, j) for j in range(size)])
    errors += sum(got[j] != (j, rank) for j in range(size))

    # Neighbor_alltoallv on a periodic ring: block 0 goes down, block 1 up; what comes from
    # below is that rank's block 1 (1 + s + rank % 2 ints in block s).
    ring = comm.Create_cart([size], periods=[True])
    below, above = ring.Shift(0, 1)
    counts = [1 + s + rank % 2 for s in range(2)]
    send = array("i", [value(rank, s, k) for s in range(2) for k in range(counts[s])])
    expected = [2 + below % 2, 1 + above % 2]
    want = [value(below, 1, k) for k in range(expected[0])]
    want += [value(above, 0, k) for k in range(expected[1])]
    recv = array("i", [-1] * sum(expected))
    ring.Neighbor_alltoallv([send, (counts, displacements(counts)), MPI.INT],
                            [recv, (expected, displacements(expected)), MPI.INT])
    errors += sum(got != w for got, w in zip(recv, want))
    recv = array("i", [-1] * sum(expected))
    ring.Ineighbor_alltoallv([send, (counts, displacements(counts)), MPI.INT],
                             [recv, (expected, displacements(expected)), MPI.INT]).Wait()
    errors += sum(got != w for got, w in zip(recv, want))
    ring.Free()

    total = comm.allreduce(errors)
    if rank == 0:
        print(" No Errors" if total == 0 else f" Found {total} errors")
    return 1 if total else 0


if __name__ == "__main__":
    sys.exit(main())
