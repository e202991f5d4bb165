#!/usr/bin/env bash
# Runs `a2av bench` on a simulated cluster with SimGrid SMPI (docs/scale.md):
#   bash scripts/simulate.sh PLATFORM RANKS [a2av bench arguments...]
#   bash scripts/simulate.sh --build        (only builds)
# PLATFORM: polaris, fugaku, fattree (data/platforms/NAME.xml) or a path to a platform file.
# Installs what it needs, builds the library and the `a2av` command with smpicxx in
# build-sim/, places A2AV_SIM_RANKS_PER_NODE ranks (default 32) on each host in order, and
# prints the wall time and peak memory of the simulation. Exits non-zero when the simulated
# program fails or SimGrid reports a deadlock (smpirun itself exits 0 then).
# A2AV_SIM_CFG adds SimGrid options, e.g. "--cfg=smpi/coll-selector:mpich" (the default
# is Open MPI's selector); A2AV_SIM_BUILD names another build folder; A2AV_SIM_PROGRAM runs
# another program of that build (its path under the build folder, e.g. bench/scale_probe or
# bench/tuna_ablation) instead of `a2av bench`. A2AV_SIM_COPY_BANDWIDTH (bytes/s) is what a
# copy through a node's shared memory is charged; default: the platform's loopback bandwidth.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
[[ $# -ge 2 || "${1:-}" == --build ]] || { sed -n '2,15p' "$0"; exit 2; }

build="${A2AV_SIM_BUILD:-$root/build-sim}"
bash "$root/scripts/install-deps.sh"
if [[ ! -f "$build/CMakeCache.txt" ]]; then
  # smpicc fails the compiler checks unless it pretends to be a plain compiler while CMake probes.
  SMPI_PRETEND_CC=1 CC=smpicc CXX=smpicxx cmake -S "$root" -B "$build" \
    -DCMAKE_BUILD_TYPE=Release -DCMAKE_UNITY_BUILD=ON -DA2AV_SIMULATION=ON \
    -DMPI_C_COMPILER=smpicc -DMPI_CXX_COMPILER=smpicxx >/dev/null
fi
# Only the program that runs (and the library under it).
target=a2av_tool
program=("$build/tools/a2av/a2av" bench)
if [[ -n "${A2AV_SIM_PROGRAM:-}" ]]; then
  program=("$build/$A2AV_SIM_PROGRAM")
  target=$(basename "$A2AV_SIM_PROGRAM")
fi
cmake --build "$build" -j2 --target "$target" >/dev/null
[[ "$1" == --build ]] && exit 0
platform="$1" ranks="$2"
shift 2
[[ -f "$platform" ]] || platform="$root/data/platforms/$platform.xml"
[[ -f "$platform" ]] || { echo "simulate.sh: no platform '$platform'" >&2; exit 2; }

work="$(mktemp -d "${TMPDIR:-/tmp}/a2av-sim.XXXXXX")"
trap 'rm -rf "$work"' EXIT
# Host names from the platform's <cluster>: prefix + number + suffix, numbers from radical.
# Its loopback bandwidth (e.g. 40GBps) is what a copy through a node's shared memory costs.
python3 - "$platform" "${A2AV_SIM_RANKS_PER_NODE:-32}" "$ranks" "$work/copy_bandwidth" \
  >"$work/hosts" <<'PY'
import re, sys, xml.etree.ElementTree as ET
cluster = ET.parse(sys.argv[1]).getroot().find("cluster")
per_node, ranks = int(sys.argv[2]), int(sys.argv[3])
lo, hi = (int(x) for x in cluster.get("radical").split("-"))
if ranks > (hi - lo + 1) * per_node:
    sys.exit(f"simulate.sh: {ranks} ranks do not fit {hi - lo + 1} hosts of {per_node}")
for r in range(ranks):
    print(f"{cluster.get('prefix')}{lo + r // per_node}{cluster.get('suffix')}")
value, unit = re.fullmatch(r"([\d.]+)([KMG]?)Bps", cluster.get("loopback_bw")).groups()
scale = {"": 1, "K": 1e3, "M": 1e6, "G": 1e9}[unit]
open(sys.argv[4], "w").write(f"{float(value) * scale:g}")
PY
export A2AV_SIM_COPY_BANDWIDTH="${A2AV_SIM_COPY_BANDWIDTH:-$(cat "$work/copy_bandwidth")}"

# dlopen privatization: each rank runs its own copy of the program (a2av's state included;
# the library is static in this build). Copies go to TMPDIR (smpirun's -tmpdir is broken in
# 3.32). Raw contexts, SimGrid's fastest, run every rank on one thread.
export TMPDIR="$work"
# SimGrid's default collectives are slower than either MPI's, and a2av's own allreduce and
# barriers run on them: Open MPI's selector unless A2AV_SIM_CFG names one.
selector=(--cfg=smpi/coll-selector:ompi)
[[ ${A2AV_SIM_CFG:-} == *coll-selector* ]] && selector=()
# SMPI agrees on a new communicator's id by a broadcast. From 128 ranks on, its Open MPI
# selector broadcasts small messages with MVAPICH2's intra-node k-nomial tree, which costs
# O(P) simulated time and O(P^2) simulation: each MPI_Comm_dup took 2.8 ms simulated and 23 s
# of wall time at P = 1024. A binomial tree makes it 5 us and under a second (at P = 4096 too).
bcast=(--cfg=smpi/bcast:binomial_tree)
[[ ${A2AV_SIM_CFG:-} == *smpi/bcast:* ]] && bcast=()
# SimGrid 3.32's max-min solver compares what is left of a link's summed flow weights (about
# 1e6 per flow here) with an absolute maxmin/precision, 1e-5 by default; tens of thousands of
# flows on a link round past that and stop the simulation ("Cannot saturate more a constraint
# that has no active element", or a segmentation fault). 1e-2 moved no result by over 0.3%.
precision=(--cfg=maxmin/precision:1e-2)
[[ ${A2AV_SIM_CFG:-} == *maxmin/precision* ]] && precision=()
status=0
/usr/bin/time -f "simulate.sh: wall %e s, peak memory %M KiB" \
  smpirun -np "$ranks" -platform "$platform" -hostfile "$work/hosts" \
  --cfg=smpi/privatization:dlopen --cfg=contexts/factory:raw --log=root.thres:critical \
  "${selector[@]}" "${bcast[@]}" "${precision[@]}" ${A2AV_SIM_CFG:-} "${program[@]}" "$@" \
  2>"$work/log" || status=$?
grep -v '^\[' "$work/log" >&2 || true
if grep -q "Deadlock\|did not return 0" "$work/log"; then
  grep -m5 "Deadlock\|did not return 0" "$work/log" >&2
  status=1
fi
exit "$status"
