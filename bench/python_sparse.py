"""The Python binding's cost on the sparse exchange: a2av.sparse_exchange called from Python
against the same exchange through the C API called from C (bench/sparse_c.c).

Both sides run the same pattern, algorithm and iterations: each rank sends one message of
S bytes to each of its k = min(P-1, 3) next ranks; every exchange is timed from a barrier
to its end, as the maximum over ranks; the median over the iterations is reported. The
Python side includes its one copy (into the arrays returned); C runs twice: reading the
messages in place, and copying them into one buffer of its own, as Python returns them.

The comparison, for each P launching both sides under mpiexec, alternately, `--rounds`
times (each side's figure: the median of its rounds' medians):

    PYTHONPATH=<prefix>/lib/python3/dist-packages /usr/bin/python3 bench/python_sparse.py \\
        --c-program <build>/bench/sparse_c --ranks 4 8 16

Under mpiexec with --worker, the Python side alone: rank 0 prints "S median_seconds
algorithm" per size, as sparse_c does.
"""
import argparse
import shlex
import statistics
import subprocess
import sys

import numpy as np

WARMUP = 10  # untimed exchanges before each size's timed ones, as in sparse_c.c


def parse_arguments():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--c-program", help="the sparse_c executable (comparison mode)")
    parser.add_argument("--ranks", type=int, nargs="+", default=[4, 8, 16])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1024, 16384, 262144],
                        help="message sizes S in bytes")
    parser.add_argument("--iterations", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--algorithm", default="auto")
    parser.add_argument("--mpiexec", default="mpiexec --oversubscribe")
    parser.add_argument("--worker", action="store_true", help="time the Python side (mpiexec)")
    return parser.parse_args()


def payload(source, size):
    """The message that `source` sends, S bytes: the same bytes as sparse_c's."""
    return ((np.arange(size) + 7 * source) % 256).astype(np.uint8)


def wrong_messages(received, rank, size, k, message_bytes):
    """How many of the received messages are not what the k previous ranks sent."""
    sources = sorted((rank - d) % size for d in range(1, k + 1))
    wrong = abs(len(received) - k)
    for (source, data), expected in zip(received, sources):
        wrong += source != expected or not np.array_equal(data, payload(source, message_bytes))
    return wrong


def time_python_side(args):
    """The worker: times a2av.sparse_exchange for each size; rank 0 prints the medians."""
    from mpi4py import MPI
    import a2av

    comm = MPI.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    k = min(size - 1, 3)
    wrong = 0
    for message_bytes in args.sizes:
        data = payload(rank, message_bytes)
        messages = [((rank + 1 + d) % size, data) for d in range(k)]
        seconds = []
        for iteration in range(WARMUP + args.iterations):
            comm.Barrier()
            start = MPI.Wtime()
            received = a2av.sparse_exchange(comm, messages, algorithm=args.algorithm)
            elapsed = comm.allreduce(MPI.Wtime() - start, op=MPI.MAX)
            if iteration == 0:
                wrong += wrong_messages(received, rank, size, k, message_bytes)
            if iteration >= WARMUP:
                seconds.append(elapsed)
        if rank == 0:
            median = sorted(seconds)[len(seconds) // 2]  # the upper median, as sparse_c's
            print(f"{message_bytes} {median:.9f} {a2av.last_algorithm()}", flush=True)
    wrong = comm.allreduce(wrong)
    if rank == 0 and wrong:
        print(f"python_sparse: {wrong} wrong messages", file=sys.stderr)
    return 1 if wrong else 0


def launch(args, ranks, program):
    """Runs one side ("c", "c_copy", "python") under mpiexec; returns {S: (median seconds,
    algorithm)}."""
    sizes = [str(s) for s in args.sizes]
    if program.startswith("c"):
        side = [args.c_program, ",".join(sizes), str(args.iterations), args.algorithm]
        side += ["copy"] if program == "c_copy" else []
    else:
        side = [sys.executable, __file__, "--worker", "--sizes", *sizes,
                "--iterations", str(args.iterations), "--algorithm", args.algorithm]
    command = shlex.split(args.mpiexec) + ["-n", str(ranks)] + side
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"python_sparse.py: {' '.join(command)} failed:\n{done.stdout}{done.stderr}")
    results = {}
    for line in done.stdout.splitlines():
        size, median, algorithm = line.split()
        results[int(size)] = (float(median), algorithm)
    return results


def compare(args):
    """All sides at each P, alternately; prints a Markdown table (times in microseconds)."""
    print("| P | S (bytes) | algorithm | C | C + copy | Python | Python / C "
          "| Python / (C + copy) |")
    print("| ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: |")
    for ranks in args.ranks:
        rounds = {"c": [], "c_copy": [], "python": []}
        for _ in range(args.rounds):
            for program in rounds:
                rounds[program].append(launch(args, ranks, program))
        for size in args.sizes:
            c, c_copy, python = (statistics.median(r[size][0] for r in rounds[program])
                                 for program in ("c", "c_copy", "python"))
            algorithm = rounds["c"][0][size][1]
            print(f"| {ranks} | {size} | {algorithm} | {1e6 * c:.1f} | {1e6 * c_copy:.1f} "
                  f"| {1e6 * python:.1f} | {python / c:.2f} | {python / c_copy:.2f} |",
                  flush=True)


def main():
    args = parse_arguments()
    if args.worker:
        return time_python_side(args)
    if not args.c_program:
        sys.exit("python_sparse.py: --c-program (the sparse_c executable) is needed, or --worker")
    compare(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
