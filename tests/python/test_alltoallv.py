"""a2av.alltoallv against mpi4py's own Alltoallv, every byte compared: seeded random counts
(zeros among them, and a rank that sends nothing), several dtypes and buffer types, counts
exchanged or given, every algorithm, on the world and on sub-communicators."""
import array
import sys

import numpy as np

import a2av
from harness import Tally, communicators, mpi4py_alltoallv

DTYPES = [np.uint8, np.int32, np.float64, np.complex128,
          np.dtype([("id", np.int64), ("x", np.float32)])]
ALGORITHMS = ["auto", "vendor", "linear", "spread_out", "scattered", "pairwise", "shared_memory",
              "tuna", "tuna:radix=2", "tuna_coalesced", "tuna_staggered", "node_aware", "bruck"]


def random_counts(rng, size, sends_nothing):
    """Counts of 0..5 elements, a third of them zero; all zero for a rank that sends nothing."""
    counts = rng.integers(0, 6, size)
    counts[rng.random(size) < 0.3] = 0
    if sends_nothing:
        counts[:] = 0
    return counts


def random_array(rng, n, dtype):
    """n elements of dtype with random bytes (comparisons are by bytes)."""
    dtype = np.dtype(dtype)
    return rng.integers(0, 256, n * dtype.itemsize, dtype=np.uint8).view(dtype)


def case(comm, seed, dtype):
    """A seeded exchange on comm: (send array, sendcounts)."""
    rank, size = comm.Get_rank(), comm.Get_size()
    rng = np.random.default_rng([seed, rank])
    counts = random_counts(rng, size, sends_nothing=rank == seed % size)
    return random_array(rng, counts.sum(), dtype), counts


def check_exchange(tally, what, comm, send, sendcounts, **options):
    """Runs a2av.alltoallv and compares it with mpi4py's Alltoallv."""
    send_array = send if isinstance(send, np.ndarray) else np.asarray(memoryview(send))
    expected, expected_counts = mpi4py_alltoallv(comm, send_array.reshape(-1), sendcounts)
    recv, recvcounts = a2av.alltoallv(comm, send, sendcounts, **options)
    tally.check(np.array_equal(recvcounts, expected_counts), f"{what}: recvcounts {recvcounts}")
    tally.check(recv.dtype == send_array.dtype, f"{what}: dtype {recv.dtype}")
    tally.check(recv.tobytes() == expected.tobytes(), f"{what}: received data differ")


def check_dtypes(tally, name, comm):
    for seed in range(3):
        for dtype in DTYPES:
            send, counts = case(comm, seed, dtype)
            check_exchange(tally, f"{name} seed {seed} {dtype}", comm, send, counts)


def check_algorithms(tally, name, comm):
    for seed, algorithm in enumerate(ALGORITHMS):
        send, counts = case(comm, seed, np.int32)
        if algorithm == "bruck":  # it runs where all blocks have one size, else tuna runs
            counts = np.full(comm.Get_size(), 3)
            send = np.arange(counts.sum(), dtype=np.int32) + 1000 * comm.Get_rank()
        what = f"{name} {algorithm}"
        given = {"recvcounts": comm.alltoall(counts.tolist())} if seed % 2 else {}
        check_exchange(tally, what, comm, send, counts, algorithm=algorithm, **given)
        ran = a2av.last_algorithm()
        if algorithm != "auto":
            tally.check(ran.startswith(algorithm.split(":")[0]), f"{what}: ran {ran}")
        tally.check(a2av.last_peak_bytes() >= 0, f"{what}: peak bytes")


def check_buffer_types(tally, name, comm):
    """Buffers other than 1-D NumPy arrays: bytes, bytearray, array.array, a 2-D array."""
    size = comm.Get_size()
    send, counts = case(comm, 7, np.uint8)
    check_exchange(tally, f"{name} bytes", comm, send.tobytes(), counts)
    check_exchange(tally, f"{name} bytearray", comm, bytearray(send.tobytes()), counts)
    doubles = array.array("d", range(3 * size))
    check_exchange(tally, f"{name} array.array", comm, doubles, np.full(size, 3))
    matrix = np.arange(4 * size, dtype=np.int16).reshape(size, 4)
    check_exchange(tally, f"{name} 2-D array", comm, matrix, np.full(size, 4))


def main():
    tally = Tally()
    for name, comm in communicators():
        check_dtypes(tally, name, comm)
        check_algorithms(tally, name, comm)
        check_buffer_types(tally, name, comm)
    return tally.finish()


if __name__ == "__main__":
    sys.exit(main())
