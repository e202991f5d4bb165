"""a2av.sparse_exchange against the messages each rank knows were sent to it: seeded random
destinations (repeats, self messages, a hub everyone sends to), zero-byte messages, a rank
that sends nothing; messages as lists, dicts, NumPy arrays and bytes; results as bytes and
typed; the arrays as views of the received buffer, alive together; every algorithm, on the
world and on sub-communicators."""
import sys

import numpy as np

import a2av
from harness import Tally, communicators

ALGORITHMS = [None, "nbx", "grid", "dense", "shared_memory", "auto"]


def outgoing(seed, rank, size):
    """The messages that `rank` sends in case `seed`: (destination, float64 array) pairs.

    Every rank can compute every other rank's messages, so it knows what to expect.
    """
    if rank == seed % size:
        return []  # a rank that sends nothing
    rng = np.random.default_rng([seed, rank])
    destinations = list(rng.integers(0, size, rng.integers(0, 5))) + [size - 1]
    lengths = rng.integers(0, 40, len(destinations))
    return [(int(d), np.arange(n, dtype=np.float64) + 1000 * rank + 100000 * i)
            for i, (d, n) in enumerate(zip(destinations, lengths))]


def expected(seed, comm, keep=lambda messages: messages):
    """What this rank receives: (source, array) ordered by source, then as sent."""
    rank, size = comm.Get_rank(), comm.Get_size()
    return [(source, data) for source in range(size)
            for destination, data in keep(outgoing(seed, source, size)) if destination == rank]


def first_per_destination(messages):
    """The messages a dict keeps: the first one for each destination."""
    firsts = {}
    for destination, data in messages:
        firsts.setdefault(destination, data)
    return list(firsts.items())


def same(got, want, dtype):
    """Whether the received (source, array) list is the expected one, read as dtype."""
    return (len(got) == len(want)
            and all(s == t and a.dtype == dtype and a.tobytes() == b.tobytes()
                    for (s, a), (t, b) in zip(got, want)))


def check_forms(tally, name, comm):
    """The ways to give messages and to read what arrives."""
    rank, size = comm.Get_rank(), comm.Get_size()
    for seed in range(4):
        mine, want = outgoing(seed, rank, size), expected(seed, comm)
        what = f"{name} seed {seed}"
        got = a2av.sparse_exchange(comm, mine)
        tally.check(same(got, want, np.uint8), f"{what}: list, as bytes")
        got = a2av.sparse_exchange(comm, mine, dtype=np.float64)
        tally.check(same(got, want, np.float64), f"{what}: list, as float64")
        got = a2av.sparse_exchange(comm, [(d, a.tobytes()) for d, a in mine])
        tally.check(same(got, want, np.uint8), f"{what}: bytes objects")
        got = a2av.sparse_exchange(comm, dict(first_per_destination(mine)), dtype=np.float64)
        want = expected(seed, comm, keep=first_per_destination)
        tally.check(same(got, want, np.float64), f"{what}: dict")


def check_results(tally, name, comm):
    """Messages as a tuple or a generator of pairs; the arrays returned are writable,
    C-contiguous, and writing one changes no other."""
    rank, size = comm.Get_rank(), comm.Get_size()
    mine, want = outgoing(7, rank, size), expected(7, comm)
    got = a2av.sparse_exchange(comm, tuple(mine), dtype=np.float64)
    tally.check(same(got, want, np.float64), f"{name}: tuple of pairs")
    got = a2av.sparse_exchange(comm, (pair for pair in mine), dtype=np.float64)
    tally.check(same(got, want, np.float64), f"{name}: generator of pairs")
    if got:
        got[0][1][:] = -1
    tally.check(same(got[1:], want[1:], np.float64), f"{name}: writing one array")
    tally.check(all(data.flags.c_contiguous and data.flags.writeable for _, data in got),
                f"{name}: arrays C-contiguous and writable")


def check_views(tally, name, comm):
    """The arrays lie in the library's receive buffer (no copy), which lives as long as any
    array of its exchange: results alive together, and others dropped between them, keep
    their bytes."""
    rank, size = comm.Get_rank(), comm.Get_size()
    results = {seed: a2av.sparse_exchange(comm, outgoing(seed, rank, size), dtype=np.float64)
               for seed in (20, 21, 22)}
    tally.check(all(data.base is not None for got in results.values() for _, data in got
                    if data.size), f"{name}: arrays are views of the received buffer")
    kept = [data for _, data in results.pop(21)[:1]]  # one array of an otherwise dropped result
    results[23] = a2av.sparse_exchange(comm, outgoing(23, rank, size), dtype=np.float64)
    for seed, got in results.items():
        tally.check(same(got, expected(seed, comm), np.float64), f"{name}: seed {seed} alive")
    tally.check(all(a.tobytes() == b.tobytes()
                    for a, (_, b) in zip(kept, expected(21, comm)[:1])),
                f"{name}: an array kept from a dropped result")


def check_algorithms(tally, name, comm):
    rank, size = comm.Get_rank(), comm.Get_size()
    for seed, algorithm in enumerate(ALGORITHMS, start=10):
        what = f"{name} {algorithm}"
        got = a2av.sparse_exchange(comm, outgoing(seed, rank, size), algorithm=algorithm,
                                   dtype=np.float64)
        tally.check(same(got, expected(seed, comm), np.float64), f"{what}: received data")
        ran, chosen = a2av.last_algorithm(), algorithm not in (None, "auto")
        tally.check(ran.startswith(f"sparse:{algorithm}" if chosen else "sparse:"),
                    f"{what}: ran {ran}")


def main():
    tally = Tally()
    for name, comm in communicators():
        check_forms(tally, name, comm)
        check_results(tally, name, comm)
        check_views(tally, name, comm)
        check_algorithms(tally, name, comm)
    return tally.finish()


if __name__ == "__main__":
    sys.exit(main())
