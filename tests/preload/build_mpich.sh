#!/usr/bin/env bash
# The preload tests' MPICH side: builds a2av and its preload library for MPICH in OUT (as a
# user would, pointing CMake at MPICH's compiler wrappers), installs them to a prefix that is
# then moved (the run paths must be relative), and compiles the test programs with MPICH's
# wrappers.  Usage: build_mpich.sh SOURCE_DIR OUT
set -euo pipefail
src=$1 out=$2
cmake -S "$src" -B "$out/build" -DCMAKE_BUILD_TYPE=Release -DA2AV_BUILD_TESTS=OFF \
  -DA2AV_BUILD_EXAMPLES=OFF -DMPI_C_COMPILER=mpicc.mpich -DMPI_CXX_COMPILER=mpicxx.mpich
cmake --build "$out/build" -j2
rm -rf "$out/prefix" "$out/relocated"
cmake --install "$out/build" --prefix "$out/prefix" >/dev/null
mv "$out/prefix" "$out/relocated"
mpicc.mpich -o "$out/conformance" "$src/tests/preload/conformance.c"
for variant in MPIFH USE_MPI USE_MPI_F08; do
  mpifort.mpich -fallow-argument-mismatch -w -D$variant -o "$out/fortran_$variant" \
    "$src/tests/preload/fortran_alltoall.F90"
done
