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
    parser.add_argument("--c-loop", help="the sparse_c_loop module: also time the C side's "
                        "loop inside a Python process (under mpiexec without --c-program: "
                        "that side alone)")
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
        elapsed = np.zeros(1)  # the maximum over ranks, by buffer (as sparse_c's), not pickled
        for iteration in range(WARMUP + args.iterations):
            comm.Barrier()
            start = MPI.Wtime()
            received = a2av.sparse_exchange(comm, messages, algorithm=args.algorithm)
            elapsed[0] = MPI.Wtime() - start
            comm.Allreduce(MPI.IN_PLACE, elapsed, op=MPI.MAX)
            if iteration == 0:
                wrong += wrong_messages(received, rank, size, k, message_bytes)
            if iteration >= WARMUP:
                seconds.append(elapsed[0])
        if rank == 0:
            median = sorted(seconds)[len(seconds) // 2]  # the upper median, as sparse_c's
            print(f"{message_bytes} {median:.9f} {a2av.last_algorithm()}", flush=True)
    wrong = comm.allreduce(wrong)
    if rank == 0 and wrong:
        print(f"python_sparse: {wrong} wrong messages", file=sys.stderr)
    return 1 if wrong else 0


def time_c_loop_in_python(args):
    """The C side's loop (sparse_c_run of the sparse_c_loop module), called once from this
    Python process, with mpi4py, NumPy and a2av imported as the binding's side has them."""
    import ctypes
    from mpi4py import MPI  # noqa: F401 (initializes MPI, at MPI_THREAD_MULTIPLE)
    import a2av  # noqa: F401 (the same libraries loaded as on the binding's side)

    loop = ctypes.CDLL(args.c_loop)
    loop.sparse_c_run.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_int]
    sizes = ",".join(str(s) for s in args.sizes).encode()
    return 1 if loop.sparse_c_run(sizes, args.iterations, args.algorithm.encode(), 1) else 0


def launch(args, ranks, program):
    """Runs one side ("c", "c_copy", "c_in_python", "python") under mpiexec; returns
    {S: (median seconds, algorithm)}."""
    sizes = [str(s) for s in args.sizes]
    if program.startswith("c_in"):
        side = [sys.executable, __file__, "--c-loop", args.c_loop, "--sizes", *sizes,
                "--iterations", str(args.iterations), "--algorithm", args.algorithm]
    elif program.startswith("c"):
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
    """All sides at each P, alternately; prints a Markdown table (times in microseconds). With
    --c-loop, also the C loop inside a Python process, and the binding against it."""
    programs = ["c", "c_copy"] + (["c_in_python"] if args.c_loop else []) + ["python"]
    heading = "| P | S (bytes) | algorithm | C | C + copy |"
    heading += " C + copy, in a Python process |" if args.c_loop else ""
    heading += " Python | Python / C | Python / (C + copy) |"
    heading += " Python / (C + copy in Python) |" if args.c_loop else ""
    print(heading)
    print("|" + " ---: |" * (heading.count("|") - 1))
    for ranks in args.ranks:
        rounds = {program: [] for program in programs}
        for _ in range(args.rounds):
            for program in programs:
                rounds[program].append(launch(args, ranks, program))
        for size in args.sizes:
            t = {program: statistics.median(r[size][0] for r in rounds[program])
                 for program in programs}
            algorithm = rounds["c"][0][size][1]
            row = f"| {ranks} | {size} | {algorithm} | {1e6 * t['c']:.1f} | {1e6 * t['c_copy']:.1f} |"
            row += f" {1e6 * t['c_in_python']:.1f} |" if args.c_loop else ""
            row += (f" {1e6 * t['python']:.1f} | {t['python'] / t['c']:.2f} |"
                    f" {t['python'] / t['c_copy']:.2f} |")
            row += f" {t['python'] / t['c_in_python']:.2f} |" if args.c_loop else ""
            print(row, flush=True)


def main():
    args = parse_arguments()
    if args.worker:
        return time_python_side(args)
    if args.c_loop and not args.c_program:
        return time_c_loop_in_python(args)
    if not args.c_program:
        sys.exit("python_sparse.py: --c-program (the sparse_c executable) is needed, or --worker")
    compare(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
