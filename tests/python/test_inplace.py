"""a2av.exchange_inplace against mpi4py's own Alltoallv, every byte compared: seeded random
counts (zeros among them, and a rank that sends nothing), capacities from just enough to
some to spare, every in-place algorithm, on the world and on sub-communicators."""
import sys

import numpy as np
from mpi4py import MPI

import a2av
from harness import Tally, communicators, mpi4py_alltoallv

ALGORITHMS = [None, "inplace_auto", "inplace_bitonic", "inplace_pairwise",
              "inplace_pairwise:chunk_bytes=64", "inplace_bitonic:chunk_bytes=24"]
DTYPES = [np.int64, np.float32, np.dtype([("id", np.int32), ("x", np.float64)])]


def check_case(tally, what, comm, seed, dtype, algorithm):
    rank, size = comm.Get_rank(), comm.Get_size()
    rng = np.random.default_rng([seed, rank])
    counts = rng.integers(0, 8, size)
    counts[rng.random(size) < 0.3] = 0
    if rank == seed % size:
        counts[:] = 0  # a rank that sends nothing
    dtype = np.dtype(dtype)
    send = rng.integers(0, 256, counts.sum() * dtype.itemsize, dtype=np.uint8).view(dtype)
    want, want_counts = mpi4py_alltoallv(comm, send, counts)
    # Every rank needs room for the largest total that leaves or arrives at any rank, plus
    # here 0..2 elements to spare.
    needed = comm.allreduce(max(send.size, want_counts.sum()), op=MPI.MAX)
    capacity = needed + rng.integers(0, 3)
    buf = np.zeros(capacity + 1, dtype=dtype)  # one element beyond the capacity: untouched
    buf[:send.size] = send
    recvcounts = a2av.exchange_inplace(comm, buf, counts, capacity=capacity, algorithm=algorithm)
    tally.check(np.array_equal(recvcounts, want_counts), f"{what}: recvcounts {recvcounts}")
    tally.check(buf[:want_counts.sum()].tobytes() == want.tobytes(), f"{what}: data differ")
    tally.check(buf[capacity:].tobytes() == bytes(dtype.itemsize), f"{what}: wrote beyond")
    if algorithm and algorithm != "inplace_auto":
        ran = a2av.last_algorithm()
        tally.check(ran.startswith(algorithm.split(":")[0]), f"{what}: ran {ran}")


def check_default_capacity(tally, name, comm):
    """Without capacity= the whole buffer may be used."""
    size, rank = comm.Get_size(), comm.Get_rank()
    buf = np.full(2 * size, rank, dtype=np.int32)
    recvcounts = a2av.exchange_inplace(comm, buf, np.full(size, 2))
    tally.check(np.array_equal(recvcounts, np.full(size, 2)), f"{name} default: recvcounts")
    tally.check(np.array_equal(buf, np.repeat(np.arange(size), 2)), f"{name} default: data")


def main():
    tally = Tally()
    for name, comm in communicators():
        for seed, algorithm in enumerate(ALGORITHMS):
            for dtype in DTYPES:
                check_case(tally, f"{name} {algorithm} {dtype}", comm, seed, dtype, algorithm)
        check_default_capacity(tally, name, comm)
    return tally.finish()


if __name__ == "__main__":
    sys.exit(main())
