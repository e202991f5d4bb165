"""Simulated smoke test: a2av's own code on a simulated 64-rank Polaris-like cluster (SimGrid
SMPI, two nodes of 32 ranks), every result validated byte for byte against SMPI's
MPI_Alltoallv by `a2av bench` itself; this checks that the run covered what it should,
node_aware's shared memory between the simulated ranks of a host included.

    python3 smoke.py <repo root> <simulation build folder> <output folder>
"""
import json
import os
import subprocess
import sys

root, build, out = sys.argv[1:4]
specs = ["spread_out", "pairwise", "tuna:radix=2", "tuna:radix=8", "tuna_coalesced", "node_aware",
         "node_aware:radix=2", "auto"]
sizes = [256, 512, 1024]
result = os.path.join(out, "smoke.json")
os.makedirs(out, exist_ok=True)
if os.path.exists(result):
    os.remove(result)
env = dict(os.environ, A2AV_SIM_BUILD=build)
run = subprocess.run(
    ["bash", os.path.join(root, "scripts/simulate.sh"), "polaris", "64", "-m", "256:1024",
     "--iterations", "1", "--warmup", "0", "--algorithms", ",".join(specs), "--json", result],
    env=env, capture_output=True, text=True, timeout=300)
print(run.stdout[-3000:], run.stderr[-3000:], sep="\n")
assert run.returncode == 0, f"simulate.sh exited {run.returncode}"

rows = json.load(open(result))["results"]
assert all(r["ranks"] == 64 and r["ranks_per_node"] == 32 for r in rows), "not 2 nodes of 32"
seen = {(r["requested"], r["size"]) for r in rows}
for spec in ["MPI_Alltoallv"] + specs:
    for size in sizes:
        assert (spec, size) in seen, f"no result for {spec} at {size} B"
assert all(r["validated"] for r in rows), "a result was not validated"
assert all(r["median_s"] > 0 for r in rows), "a simulated time of zero"
# The ranks span two nodes: auto takes node_aware (docs/algorithms.md), never shared_memory.
chosen = {r["algorithm"] for r in rows if r["requested"] == "auto"}
assert all(a.startswith("node_aware") for a in chosen), f"auto ran {chosen}"
print(f"smoke: {len(rows)} simulated results validated at P = 64")
print("1 passed, 0 failed")
