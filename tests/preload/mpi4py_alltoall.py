"""A Python program as users write it with mpi4py: Alltoallv, Alltoall and the pickled alltoall,
every value checked. Rank 0 prints " No Errors" when all passed; exits non-zero otherwise."""
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

    # Alltoall: three ints per rank.
    send = array("i", [value(rank, j, k) for j in range(size) for k in range(3)])
    recv = array("i", [-1] * (3 * size))
    comm.Alltoall([send, MPI.INT], [recv, MPI.INT])
    errors += sum(recv[3 * j + k] != value(j, rank, k) for j in range(size) for k in range(3))

    # The lower-case (pickled objects) alltoall.
    got = comm.alltoall([(rank, j) for j in range(size)])
    errors += sum(got[j] != (j, rank) for j in range(size))

    total = comm.allreduce(errors)
    if rank == 0:
        print(" No Errors" if total == 0 else f" Found {total} errors")
    return 1 if total else 0


if __name__ == "__main__":
    sys.exit(main())
