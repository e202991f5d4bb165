"""a2av's errors as Python exceptions: a2av.Error with the library's code on every rank of
the call, whether the library or the binding refused an argument, and on one rank only
(the others must not hang); after each error the next exchange works."""
import sys

import numpy as np

import a2av
from harness import Tally, communicators


class Checks:
    """The error cases on one communicator; one_rank: the rank that alone errs."""

    def __init__(self, tally, name, comm):
        self.tally, self.name, self.comm = tally, name, comm
        self.rank, self.size = comm.Get_rank(), comm.Get_size()
        self.one_rank = self.size - 1
        self.sendbuf = np.arange(self.size, dtype=np.int32)
        self.counts = np.ones(self.size, dtype=np.int64)

    def expect(self, code, what, call):
        """call() raises a2av.Error(code) here; then a correct exchange works."""
        error = self.tally.raises(code, call, f"{self.name}: {what}")
        self.works_after(what)
        return error

    def works_after(self, what):
        """A correct exchange after an error: nothing of the failed call is left over."""
        recv, _ = a2av.alltoallv(self.comm, self.sendbuf, self.counts)
        self.tally.check(np.array_equal(recv, np.full(self.size, self.rank)),
                         f"{self.name}: the exchange after '{what}'")

    def mine(self, good, bad):
        """bad on the rank that errs alone, good elsewhere."""
        return bad if self.rank == self.one_rank else good

    def unknown_algorithms(self):
        error = self.expect(a2av.ERR_ALGORITHM, "alltoallv algorithm", lambda: a2av.alltoallv(
            self.comm, self.sendbuf, self.counts, algorithm="nope"))
        self.tally.check(error is None or "A2AV_ERR_ALGORITHM" in str(error),
                         f"{self.name}: str(error) is {error}")
        self.expect(a2av.ERR_ALGORITHM, "sparse algorithm", lambda: a2av.sparse_exchange(
            self.comm, [(0, b"x")], algorithm="nope"))
        self.expect(a2av.ERR_ALGORITHM, "in-place algorithm", lambda: a2av.exchange_inplace(
            self.comm, np.zeros(self.size), self.counts, algorithm="nope"))

    def alltoallv_arguments(self):
        """Arguments refused on one rank: by the library, then by the binding."""
        negative = self.mine(self.counts, np.where(np.arange(self.size) == 0, -1, 1))
        self.expect(a2av.ERR_ARG, "negative count",
                    lambda: a2av.alltoallv(self.comm, self.sendbuf, negative))
        short = self.mine(self.counts, self.counts[1:])
        error = self.expect(a2av.ERR_ARG, "too few counts",
                            lambda: a2av.alltoallv(self.comm, self.sendbuf, short))
        if self.rank == self.one_rank and error:
            self.tally.check("sendcounts has shape" in error.message, f"message: {error}")
        small = self.mine(self.sendbuf, self.sendbuf[1:])
        self.expect(a2av.ERR_ARG, "sendbuf too small",
                    lambda: a2av.alltoallv(self.comm, small, self.counts))
        not_a_buffer = self.mine(self.sendbuf, list(range(self.size)))
        self.expect(a2av.ERR_ARG, "not a buffer",
                    lambda: a2av.alltoallv(self.comm, not_a_buffer, self.counts))
        floats = self.mine(self.counts, self.counts * 1.0)
        self.expect(a2av.ERR_ARG, "counts not integers",
                    lambda: a2av.alltoallv(self.comm, self.sendbuf, floats))
        recvcounts = self.mine(self.counts, ["x"] * self.size)
        self.expect(a2av.ERR_ARG, "recvcounts not numbers", lambda: a2av.alltoallv(
            self.comm, self.sendbuf, self.counts, recvcounts=recvcounts))

    def count_disagreement(self):
        """A receiver expecting more than its sender sends finds out (only it is sure to)."""
        if self.size < 2:
            return
        recvcounts = self.counts.copy()
        if self.rank == 0:
            recvcounts[1] += 1  # one element more than rank 1 sends
        try:
            a2av.alltoallv(self.comm, self.sendbuf, self.counts, recvcounts=recvcounts)
            self.tally.check(self.rank != 0, f"{self.name}: no error for counts that differ")
        except a2av.Error as error:
            self.tally.check(error.code == a2av.ERR_COUNTS, f"{self.name}: raised {error}")
        self.works_after("counts that differ")

    def sparse_arguments(self):
        out_of_range = self.mine([(0, b"x")], [(self.size, b"x")])
        self.expect(a2av.ERR_ARG, "destination out of range",
                    lambda: a2av.sparse_exchange(self.comm, out_of_range))
        strided = self.mine([(0, b"x")], [(0, np.arange(8)[::2])])
        error = self.expect(a2av.ERR_ARG, "strided message",
                            lambda: a2av.sparse_exchange(self.comm, strided))
        if self.rank == self.one_rank and error:
            self.tally.check("not contiguous" in error.message, f"message: {error}")
        negative = self.mine([(0, b"x")], [(-1, b"x")])
        self.expect(a2av.ERR_ARG, "negative destination",
                    lambda: a2av.sparse_exchange(self.comm, negative))
        try:  # on every rank: nothing is sent
            a2av.sparse_exchange(self.comm.py2f(), [(0, b"x")])
            self.tally.check(False, f"{self.name}: no TypeError for a Fortran handle as comm")
        except TypeError as error:
            self.tally.check("Comm" in str(error), f"{self.name}: TypeError {error}")
        self.works_after("a Fortran handle as comm")
        not_a_pair = self.mine([(0, b"x")], [(0, b"x", 1)])
        self.expect(a2av.ERR_ARG, "not a pair",
                    lambda: a2av.sparse_exchange(self.comm, not_a_pair))

    def sparse_dtypes(self):
        """A dtype that what arrives does not fit: ValueError where it arrives, after an
        exchange that every rank completed (so nothing hangs)."""
        right = (self.rank + 1) % self.size
        odd = self.mine([(right, b"xy")], [(right, b"xyz")])
        left = (self.rank - 1) % self.size
        try:
            a2av.sparse_exchange(self.comm, odd, dtype=np.int16)
            raised = None
        except ValueError as error:
            raised = str(error)
        wanted = f"3 bytes from rank {left} are not a whole number of int16 items"
        self.tally.check(raised == wanted if left == self.one_rank else raised is None,
                         f"{self.name}: odd message as int16 raised {raised!r}")
        try:
            a2av.sparse_exchange(self.comm, [(right, b"12345678")], dtype=object)
            raised = None
        except ValueError as error:
            raised = str(error)
        self.tally.check(raised is not None and "holds objects" in raised,
                         f"{self.name}: dtype=object raised {raised!r}")
        self.works_after("sparse dtypes")

    def inplace_arguments(self):
        buf = self.mine(np.zeros(self.size), b"\0" * self.size)
        self.expect(a2av.ERR_ARG, "read-only buffer",
                    lambda: a2av.exchange_inplace(self.comm, buf, self.counts))
        capacity = self.mine(self.size, self.size + 1)
        self.expect(a2av.ERR_ARG, "capacity beyond the buffer", lambda: a2av.exchange_inplace(
            self.comm, np.zeros(self.size), self.counts, capacity=capacity))
        capacity = self.mine(self.size, self.size - 1)
        self.expect(a2av.ERR_CAPACITY, "capacity too small", lambda: a2av.exchange_inplace(
            self.comm, np.zeros(self.size), self.counts, capacity=capacity))


def check_error_object(tally):
    error = a2av.Error(a2av.ERR_COUNTS, "rank 1 sent 3")
    tally.check(error.code == 2 and error.message == "rank 1 sent 3", "Error attributes")
    tally.check(str(error).startswith("A2AV_ERR_COUNTS"), f"str(Error): {error}")
    tally.check(a2av.error_string(a2av.ERR_MPI).startswith("A2AV_ERR_MPI"), "error_string")


def main():
    tally = Tally()
    check_error_object(tally)
    for name, comm in communicators():
        checks = Checks(tally, name, comm)
        checks.unknown_algorithms()
        checks.alltoallv_arguments()
        checks.count_disagreement()
        checks.sparse_arguments()
        checks.sparse_dtypes()
        checks.inplace_arguments()
    return tally.finish()


if __name__ == "__main__":
    sys.exit(main())
