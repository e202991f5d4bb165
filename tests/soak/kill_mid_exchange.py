#!/usr/bin/env python3
"""Kills a2av jobs in the middle of shared-memory exchanges and checks that no segment name
is left in /dev/shm.

Each trial starts the soak (tests/soak/soak.cpp) with the shared_memory algorithms only, waits
until every rank has written its pid (its first exchanges are done), lets it run a little,
then SIGKILLs one rank (mpiexec then takes the others down) or every rank at once. Segments
have no name where /proc allows, else /a2av.<creator's pid>.<n> until every rank has mapped
them (src/core/node_segment.cpp), so the check looks only at the names of this job's
processes: other jobs may share /dev/shm.

Trials with a new communicator for every call spend most of their time making segments,
which is when a name exists at all; the others kill during long runs of exchanges.

  kill_mid_exchange.py --soak PATH [--mpiexec mpiexec] [--numproc-flag=-n] [--ranks 4]
                       [--rounds 2] [-- more mpiexec flags, e.g. --oversubscribe]
"""
import argparse
import os
import random
import signal
import subprocess
import sys
import tempfile
import time

SHM = "/dev/shm"


def a2av_names():
    return {n for n in os.listdir(SHM) if n.startswith("a2av.")}


def alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie is gone for our purpose: it holds no mappings.
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def wait_for(condition, seconds):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return condition()


def read_pids(pid_dir, ranks):
    pids = []
    for r in range(ranks):
        path = os.path.join(pid_dir, f"rank{r}.pid")
        if not os.path.exists(path):
            return None
        with open(path) as f:
            pids.append(int(f.read()))
    return pids


def start_job(args, comm_every, pid_dir, log):
    command = [args.mpiexec, args.numproc_flag, str(args.ranks), *args.mpiexec_flags,
               args.soak, "--calls", "1000000000", "--comm-every", str(comm_every),
               "--algorithms", "shared_memory", "--sparse-algorithms", "shared_memory",
               "--pid-dir", pid_dir]
    # A2AV_VERBOSE: rank 0 of each communicator says where its cells are, and why the
    # nameless segment failed when a named one served (the only case that can leave a name).
    return subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT,
                            start_new_session=True, env={**os.environ, "A2AV_VERBOSE": "1"})


def kill_and_reap(job, pids, victim):
    targets = pids if victim == "all" else [pids[victim]]
    for pid in targets:
        os.kill(pid, signal.SIGKILL)
    try:
        job.wait(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(job.pid, signal.SIGKILL)
        job.wait()
    return wait_for(lambda: not any(alive(p) for p in pids), 30)


def trial(args, comm_every, victim):
    """Returns the names this job left in /dev/shm, or None if it never got going."""
    with tempfile.TemporaryDirectory() as pid_dir, tempfile.TemporaryFile("w+") as log:
        job = start_job(args, comm_every, pid_dir, log)
        pids = None
        if wait_for(lambda: job.poll() is not None or read_pids(pid_dir, args.ranks), 120):
            pids = read_pids(pid_dir, args.ranks)
        if not pids or job.poll() is not None:
            if job.poll() is None:
                os.killpg(job.pid, signal.SIGKILL)
            job.wait()
            log.seek(0)
            print(log.read()[-3000:])
            return None
        time.sleep(random.uniform(0.3, 1.5))
        gone = kill_and_reap(job, pids, victim)
        prefixes = tuple(f"a2av.{pid}." for pid in pids)
        left = sorted(n for n in a2av_names() if n.startswith(prefixes))
        who = "every rank" if victim == "all" else f"rank {victim}"
        print(f"comm-every {comm_every:>4}, SIGKILL to {who:<10}: pids {pids}, "
              f"all gone: {gone}, left in {SHM}: {left if left else 'nothing'}")
        if left:
            log.seek(0)
            why = sorted({line.strip() for line in log if "nameless one failed" in line})
            print("  why named:", *(why or ["(not reported)"]), sep="\n    ")
        return left if gone else ["(processes survived)"]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--soak", required=True)
    parser.add_argument("--mpiexec", default="mpiexec")
    parser.add_argument("--numproc-flag", default="-n")
    parser.add_argument("mpiexec_flags", nargs="*", default=[])
    parser.add_argument("--ranks", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    before = a2av_names()
    failures = 0
    for _ in range(args.rounds):
        for comm_every in (1, 1000):
            for victim in (0, 1, args.ranks - 1, "all"):
                left = trial(args, comm_every, victim)
                failures += left is None or bool(left)
    after = a2av_names()
    print(f"a2av names in {SHM}: {len(before)} before, {len(after)} after "
          f"(other jobs may share it; only this test's pids are checked)")
    print("kill test:", "FAIL" if failures else "PASS")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
