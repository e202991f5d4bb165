"""Simulated smoke test of the sparse exchange: 32 simulated ranks on one Polaris-like node
(SimGrid SMPI), every algorithm checked against plain MPI (MPI_Alltoall of counts and
MPI_Alltoallv) by `a2av bench --sparse` itself, which fails on a wrong byte; this checks that
the run covered every algorithm and that auto took the shared segment of the simulated host.

    python3 smoke_sparse.py <repo root> <simulation build folder> <output folder>
"""
import json
import os
import subprocess
import sys

root, build, out = sys.argv[1:4]
algorithms = ["mpi", "nbx", "grid", "dense", "shared_memory", "auto"]
patterns = ["random:4", "stencil3d"]
result = os.path.join(out, "smoke_sparse.json")
os.makedirs(out, exist_ok=True)
if os.path.exists(result):
    os.remove(result)
# Polling MPI_Test at 0.1 us, as the platform's MPI_Iprobe (docs/scale.md, "Sparse exchange").
env = dict(os.environ, A2AV_SIM_BUILD=build,
           A2AV_SIM_CFG="--cfg=smpi/test:1e-7 --cfg=smpi/grow-injected-times:no")
run = subprocess.run(
    ["bash", os.path.join(root, "scripts/simulate.sh"), "polaris", "32", "--sparse", "-m", "16:64",
     "--pattern", ",".join(patterns), "--algorithms", ",".join(algorithms), "-i", "1", "-x", "0",
     "--json", result],
    env=env, capture_output=True, text=True, timeout=300)
print(run.stdout[-3000:], run.stderr[-3000:], sep="\n")
assert run.returncode == 0, f"simulate.sh exited {run.returncode}"

rows = json.load(open(result))["results"]
assert all(r["ranks"] == 32 for r in rows), "not 32 ranks"
seen = {(r["requested"], r["pattern"]) for r in rows}
for algorithm in algorithms:
    for pattern in patterns:
        assert (algorithm, pattern) in seen, f"no result for {algorithm} on {pattern}"
assert all(r["median_s"] > 0 for r in rows), "a simulated time of zero"
chosen = {r["algorithm"] for r in rows if r["requested"] == "auto"}
assert chosen == {"shared_memory"}, f"auto ran {chosen} on one node"
print(f"smoke_sparse: {len(rows)} simulated results validated at P = 32")
print("1 passed, 0 failed")
