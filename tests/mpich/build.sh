#!/usr/bin/env bash
# The suite's MPICH side, built with AddressSanitizer and UndefinedBehaviorSanitizer: most
# large machines run MPICH derivatives, and a sanitized build is a second reader of every
# byte the library touches. Builds a2av, its preload library and the quick MPI tests in
# OUT/build as a user would (CMake pointed at MPICH's compiler wrappers), installs the library
# to a prefix that is then moved (the run paths must be relative), and compiles the preload
# test programs with MPICH's wrappers.  Usage: build.sh SOURCE_DIR OUT TEST_TARGET...
set -euo pipefail
src=$1 out=$2
shift 2
# One translation unit per batch of sources (unity build) and -O1 -g1, as the sanitizers'
# documentation advises: a tenth of the per-file -O2 -g build's time, same checks.
cmake -S "$src" -B "$out/build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DA2AV_SANITIZE=ON \
  -DCMAKE_UNITY_BUILD=ON "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG" \
  -DA2AV_BUILD_EXAMPLES=OFF -DA2AV_BUILD_PYTHON=OFF -DMPI_C_COMPILER=mpicc.mpich \
  -DMPI_CXX_COMPILER=mpicxx.mpich >/dev/null
cmake --build "$out/build" -j2 --target a2av a2av_preload "$@"
rm -rf "$out/prefix" "$out/relocated"
cmake --install "$out/build" --component library --prefix "$out/prefix" >/dev/null
mv "$out/prefix" "$out/relocated"
mpicc.mpich -o "$out/conformance" "$src/tests/preload/conformance.c"
mpicc.mpich -o "$out/first_call" "$src/tests/preload/first_call.c"
mpicc.mpich -o "$out/erroneous" "$src/tests/preload/erroneous.c"
mpicc.mpich -o "$out/threads" "$src/tests/preload/threads.c" -lpthread
for variant in MPIFH USE_MPI USE_MPI_F08; do
  mpifort.mpich -fallow-argument-mismatch -w -D$variant -o "$out/fortran_$variant" \
    "$src/tests/preload/fortran_alltoall.F90"
done
