#!/usr/bin/env bash
# Cases we did not write: MPICH's own test suite's all-to-all tests, built from an MPICH source
# tree the caller supplies (not shipped by Debian, nor in this repository) against one MPI, and
# run at the rank counts and arguments of MPICH's testlists, once plainly and once under the
# preload library; each run must print MPICH's " No Errors". The tests: test/mpi/coll's
# alltoall*, icalltoall* (intercommunicators), neighb_alltoall*, ring_neighbor_alltoall and the
# persistent p_alltoall* and p_neighb_alltoall* where the MPI has MPI-4's names; errors/coll's
# noalias2 and noalias3 (aliased send and receive buffers must fail) and alltoalllength; the
# Fortran ones that call all-to-all (f77/coll, `include 'mpif.h'`; f08/coll, `use mpi_f08`).
# Prints PASS/FAIL per run and, for the preload runs, where A2AV_PRELOAD_STATS says rank 0's
# calls went. Exit 1 if a test passes plainly and fails under the preload. Not part of the
# default tests (it needs MPICH's sources).
#
#   bash scripts/mpich_testsuite.sh --source DIR --preload LIB [--mpi openmpi|mpich] [--out DIR]
#     --source DIR   an MPICH checkout or release tree (DIR/test/mpi/coll/testlist.in)
#     --preload LIB  liba2av_preload.so built against that MPI (an installed one, ideally)
#     --mpi M        openmpi (mpicc, mpifort, mpiexec; default) or mpich (mpicc.mpich, ...)
#     --out DIR      where the test programs are built (default: a temporary folder)
set -euo pipefail
mpi=openmpi source="" preload="" out=""
while (($#)); do
  case $1 in
    --source) source=$2; shift 2 ;;
    --preload) preload=$2; shift 2 ;;
    --mpi) mpi=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
tests=$source/test/mpi
[[ -f $tests/coll/testlist.in && -f $preload ]] || {
  echo "usage: $0 --source MPICH_TREE --preload liba2av_preload.so [--mpi openmpi|mpich]" >&2
  exit 2
}
out=${out:-$(mktemp -d)}
mkdir -p "$out"
renames=()
if [[ $mpi == mpich ]]; then
  cc=mpicc.mpich fc=mpifort.mpich launch=(mpiexec.mpich) preloading=(-genv LD_PRELOAD "$preload" -genv A2AV_PRELOAD_STATS 1)
else
  cc=mpicc fc=mpifort launch=(mpiexec --oversubscribe) preloading=(-x LD_PRELOAD="$preload" -x A2AV_PRELOAD_STATS=1)
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  # Open MPI 4.1 has the persistent collectives as MPIX_ (mpi-ext.h), same arguments.
  renames=(-include mpi.h -include mpi-ext.h)
  for op in Alltoall Alltoallv Alltoallw Neighbor_alltoall Neighbor_alltoallv Neighbor_alltoallw; do
    renames+=("-DMPI_${op}_init=MPIX_${op}_init")
  done
fi

# What configure would generate for MTest on Linux.
cat >"$out/mpitestconf.h" <<'EOF'
#define HAVE_STRING_H 1
#define HAVE_UNISTD_H 1
#define HAVE_STDARG_H 1
#define HAVE_SYS_TIME_H 1
#define HAVE_SYS_RESOURCE_H 1
#define HAVE_GETRUSAGE 1
#define HAVE_MPI_WIN_CREATE 1
#define HAVE_MPI_INIT_THREAD 1
#define THREAD_PACKAGE_NAME THREAD_PACKAGE_POSIX
EOF
: >"$out/mtest_mpix.h"

# Builds test $1 of folder $2 (coll, errors/coll, f77/coll, f08/coll); C programs with their
# own main() skip MTest's driver. TEST_NEIGHB_COLL turns the neighbourhood tests on (MPICH's
# tree defines it for MPICH only).
build() {
  local name=$1 dir=$2 util=("$tests/util/mtest.c" "$tests/util/mtest_common.c" "$tests/util/mtest_single.c")
  case $dir in
    f77/*) $fc -w -fallow-argument-mismatch "$tests/$dir/$name.f" "$tests/util/mtest_f77.f" \
             -o "$out/$name" >/dev/null 2>&1 ;;
    f08/*) $fc -w "$tests/util/mtest_f08.f90" "$tests/$dir/$name.f90" -J "$out" \
             -o "$out/$name" >/dev/null 2>&1 ;;
    *)
      grep -q "^int main" "$tests/$dir/$name.c" || util+=("$tests/util/run_mpitests.c")
      $cc -w -DTEST_NEIGHB_COLL "${renames[@]}" -I"$out" -I"$tests/include" "$tests/$dir/$name.c" \
        "${util[@]}" -o "$out/$name" >/dev/null 2>&1 ;;
  esac
}

# Runs test $1 on $2 ranks with argument $3 (may be empty), plainly or under the preload ($4).
run() {
  local name=$1 ranks=$2 arg=$3 preloaded=$4 env=() output rc=0
  [[ $preloaded == yes ]] && env=("${preloading[@]}")
  output=$(timeout 180 "${launch[@]}" -n "$ranks" "${env[@]}" "$out/$name" $arg 2>&1 </dev/null) || rc=$?
  if [[ $rc == 0 ]] && grep -q "No Errors" <<<"$output"; then
    echo "PASS"
    grep "a2av preload (rank 0)" <<<"$output" | sed 's/^a2av preload (rank 0): /    /' || true
  else
    echo "FAIL (exit $rc)"
    tail -3 <<<"$output" | sed 's/^/    /'
  fi
}

# "folder name ranks [arg=...]" for every test run, from MPICH's testlists.
selected() {
  local c_coll='^(alltoall|icalltoall|neighb_alltoall|ring_neighbor_alltoall|p_alltoall|p_neighb_alltoall)'
  local fortran='^(alltoall|nonblocking|vw_inplace|split_type)'
  grep -E "$c_coll" "$tests/coll/testlist.in" | sed 's|^|coll |'
  sed 's/^@coll_error@//' "$tests/errors/coll/testlist.in" | grep -E '^(noalias[23]|alltoalllength) ' |
    sed 's|^|errors/coll |'
  grep -E "$fortran" "$tests/f77/coll/testlist" | sed 's|^|f77/coll |'
  grep -E "$fortran" "$tests/f08/coll/testlist" | sed 's|^|f08/coll |'
}

status=0
while read -r dir name ranks rest; do
  [[ -x $out/$name ]] || build "$name" "$dir" || { echo "$dir/$name: does not build against $mpi"; continue; }
  arg=""
  [[ $rest == arg=* ]] && arg=${rest#arg=}
  plain=$(run "$name" "$ranks" "$arg" no)
  preloaded=$(run "$name" "$ranks" "$arg" yes)
  echo "$dir/$name -n $ranks $arg: $mpi ${plain%%$'\n'*}, preload ${preloaded%%$'\n'*}"
  grep -v "^PASS\|^FAIL" <<<"$preloaded" || true
  [[ $plain == PASS* && $preloaded != PASS* ]] && status=1
done < <(selected)
exit $status
