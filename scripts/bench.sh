#!/usr/bin/env bash
# The main job: installs dependencies, builds the a2av command (Release) in build-bench/, then
# runs `a2av bench`'s default sweep on A2AV_RANKS ranks (default 4): every algorithm, uniform
# pattern, message sizes 16 B to 1 MiB, each validated against MPI_Alltoallv and then timed,
# beside the bound one copy per byte sets (memcpy_bound: each rank copies its receive volume
# once with memcpy, all ranks at once).
# Prints the table, writes build-bench/bench.json and plots time against message size in
# build-bench/bench.png. Extra arguments go to a2av bench (e.g. --iterations 1000).
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-deps.sh
cmake -S . -B build-bench -DCMAKE_BUILD_TYPE=Release -DCMAKE_UNITY_BUILD=ON -DA2AV_BUILD_TESTS=OFF \
  -DA2AV_BUILD_EXAMPLES=OFF
cmake --build build-bench -j2 --target a2av_tool

# Launch with the mpiexec of the MPI that CMake built against.
mpiexec=$(sed -n 's/^MPIEXEC_EXECUTABLE:FILEPATH=//p' build-bench/CMakeCache.txt)
launch=("${mpiexec:-mpiexec}" -n "${A2AV_RANKS:-4}")
if "${launch[0]}" --version 2>&1 | grep -q 'Open MPI\|OpenRTE'; then
  launch+=(--oversubscribe)  # more ranks than cores is the normal case on small machines
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
"${launch[@]}" build-bench/tools/a2av/a2av bench --copy-bound --json build-bench/bench.json "$@"

# Debian's python3-matplotlib belongs to /usr/bin/python3, which a python3 found earlier in
# PATH (pyenv, a virtual environment) may lack.
python=python3
"$python" -c 'import matplotlib' 2>/dev/null || python=/usr/bin/python3
"$python" tools/plot.py size build-bench/bench.json -o build-bench/bench.png
echo "bench.sh: total wall time ${SECONDS}s"
