#!/usr/bin/env bash
# The main job: installs dependencies, builds compare_algorithms (Release) in build-bench/, then
# validates and times every algorithm against MPI_Alltoallv on A2AV_RANKS ranks (default 4)
# at max block sizes 16, 1024 and 16384 bytes. Prints the tables and writes
# build-bench/compare.json. Extra arguments go to compare_algorithms (e.g. --iterations 200).
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-deps.sh
cmake -S . -B build-bench -DCMAKE_BUILD_TYPE=Release
cmake --build build-bench -j2 --target compare_algorithms

# Launch with the mpiexec of the MPI that CMake built against.
mpiexec=$(sed -n 's/^MPIEXEC_EXECUTABLE:FILEPATH=//p' build-bench/CMakeCache.txt)
launch=("${mpiexec:-mpiexec}" -n "${A2AV_RANKS:-4}")
if "${launch[0]}" --version 2>&1 | grep -q 'Open MPI\|OpenRTE'; then
  launch+=(--oversubscribe)  # more ranks than cores is the normal case on small machines
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
"${launch[@]}" build-bench/examples/compare_algorithms --sizes 16,1024,16384 \
  --json build-bench/compare.json "$@"
echo "bench.sh: total wall time ${SECONDS}s"
