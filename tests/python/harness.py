"""Shared by the Python binding's test programs (tests/python/test_*.py).

Each program counts failed checks with a Tally; at the end rank 0 prints " No Errors" when
no rank failed one, and the program exits non-zero otherwise.
"""
import sys

import numpy as np
from mpi4py import MPI

import a2av


def communicators():
    """The communicators to test on: the world, its two halves (even and odd ranks) and
    the world in reverse rank order."""
    world = MPI.COMM_WORLD
    rank = world.Get_rank()
    half = world.Split(rank % 2, rank)
    reversed_world = world.Split(0, -rank)
    return [("world", world), ("half", half), ("reversed", reversed_world)]


def mpi4py_alltoallv(comm, send, sendcounts):
    """What mpi4py's own Alltoallv delivers, the reference: (received bytes, recvcounts)."""
    recvcounts = np.array(comm.alltoall(sendcounts.tolist()), dtype=np.int64)
    item = send.itemsize
    recv = np.empty(recvcounts.sum() * item, dtype=np.uint8)
    comm.Alltoallv([send.view(np.uint8), ((sendcounts * item).tolist(), None), MPI.BYTE],
                   [recv, ((recvcounts * item).tolist(), None), MPI.BYTE])
    return recv, recvcounts


class Tally:
    """Failed checks of this rank, each reported on stderr as it happens."""

    def __init__(self):
        self.failures = 0
        self.rank = MPI.COMM_WORLD.Get_rank()

    def check(self, ok, what):
        if not ok:
            self.failures += 1
            print(f"rank {self.rank}: FAIL: {what}", file=sys.stderr, flush=True)

    def raises(self, code, call, what):
        """Checks that call() raises a2av.Error with this code; returns the error."""
        try:
            call()
        except a2av.Error as error:
            self.check(error.code == code and error.message,
                       f"{what}: raised code {error.code} ({error}), expected {code}")
            return error
        self.check(False, f"{what}: no a2av.Error raised, expected code {code}")
        return None

    def finish(self):
        """Reports over all ranks; returns the exit status."""
        total = MPI.COMM_WORLD.allreduce(self.failures)
        if self.rank == 0:
            print(" No Errors" if total == 0 else f" Found {total} errors", flush=True)
        return 1 if total else 0
