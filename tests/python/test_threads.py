"""Threads (mpi4py initializes MPI_THREAD_MULTIPLE): four threads per rank, each on its own
duplicate of the world (made in order before they start), call a2av.alltoallv,
a2av.sparse_exchange and a2av.exchange_inplace at the same time, 40 rounds each; every
result is checked against what each rank can compute for every other. The package's calls
release the GIL while the library runs, so one thread's exchange does not stop the others'."""
import sys
import threading

import numpy as np
from mpi4py import MPI

import a2av
from harness import Tally

THREADS, ROUNDS = 4, 40


def count(thread, round_, source, destination):
    """How many int32 elements `source` sends `destination`: 0 to 6."""
    return (thread + round_ + 3 * source + destination) % 7


def value(thread, source, destination):
    return 1000 * thread + 10 * source + destination


def run(thread, comm, tally):
    rank, size = comm.Get_rank(), comm.Get_size()
    for round_ in range(ROUNDS):
        counts = np.array([count(thread, round_, rank, p) for p in range(size)], dtype=np.int64)
        send = np.concatenate([np.full(counts[p], value(thread, rank, p), dtype=np.int32)
                               for p in range(size)])
        want = np.concatenate([np.full(count(thread, round_, p, rank), value(thread, p, rank),
                                       dtype=np.int32) for p in range(size)])
        recv, _ = a2av.alltoallv(comm, send, counts)
        tally.check(np.array_equal(recv, want), f"thread {thread} round {round_}: alltoallv")

        buf = np.zeros(max(send.size, want.size), dtype=np.int32)
        buf[:send.size] = send
        a2av.exchange_inplace(comm, buf, counts)
        tally.check(np.array_equal(buf[:want.size], want),
                    f"thread {thread} round {round_}: exchange_inplace")

        length = round_ % 5 + 1
        got = a2av.sparse_exchange(
            comm, {(rank + 1) % size: np.full(length, value(thread, rank, 0), dtype=np.int64)},
            dtype=np.int64)
        source = (rank - 1) % size
        tally.check(len(got) == 1 and got[0][0] == source
                    and np.array_equal(got[0][1], np.full(length, value(thread, source, 0))),
                    f"thread {thread} round {round_}: sparse_exchange")


def main():
    tally = Tally()
    tally.check(MPI.Query_thread() == MPI.THREAD_MULTIPLE, "MPI_THREAD_MULTIPLE")
    comms = [MPI.COMM_WORLD.Dup() for _ in range(THREADS)]
    threads = [threading.Thread(target=run, args=(t, comms[t], tally)) for t in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for comm in comms:
        comm.Free()
    return tally.finish()


if __name__ == "__main__":
    sys.exit(main())
