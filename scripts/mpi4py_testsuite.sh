#!/usr/bin/env bash
# Cases we did not write: mpi4py's own collective tests (test/test_cco_*.py: buffers, vectors,
# objects, nonblocking and neighbourhood forms, intercommunicators; test_comm_topo.py) from an
# mpi4py source tree of the installed mpi4py's version, run by its runtests.py on the Debian
# Python at each rank count, once plainly and once under the preload library (Open MPI, the MPI
# Debian's python3-mpi4py is built for). Prints each run's unittest verdict and, for the preload
# runs, where A2AV_PRELOAD_STATS says rank 0's calls went. Exit 1 if a run passes plainly and
# fails under the preload. Not part of the default tests (it needs mpi4py's sources).
#
#   bash scripts/mpi4py_testsuite.sh --source DIR --preload LIB [--ranks "1 2 3 4"]
#     --source DIR   an mpi4py tree (DIR/test/runtests.py), e.g. its git tag 3.1.4 for Debian 12
#     --preload LIB  liba2av_preload.so (an installed one, ideally)
set -euo pipefail
source="" preload="" ranks="1 2 3 4"
while (($#)); do
  case $1 in
    --source) source=$2; shift 2 ;;
    --preload) preload=$2; shift 2 ;;
    --ranks) ranks=$2; shift 2 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
[[ -f $source/test/runtests.py && -f $preload ]] || {
  echo "usage: $0 --source MPI4PY_TREE --preload liba2av_preload.so [--ranks \"1 2 3 4\"]" >&2
  exit 2
}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
python=/usr/bin/python3  # Debian's, with python3-mpi4py
echo "mpi4py $($python -c 'import mpi4py; print(mpi4py.__version__)')," \
  "tests from $source"
modules=(-i test_cco_buf -i test_cco_nb_buf -i test_cco_vec -i test_cco_nb_vec -i test_cco_ngh_buf
  -i test_cco_ngh_obj -i test_cco_obj -i test_cco_obj_inter -i test_comm_topo)

# Runs the tests on $1 ranks, with the extra mpiexec arguments after it; prints "OK" or
# "FAILED", then rank 0's statistics lines, if any.
run() {
  local n=$1 output rc=0
  shift
  output=$(cd "$source/test" && timeout 900 mpiexec --oversubscribe -n "$n" "$@" $python runtests.py \
    --no-builddir -q "${modules[@]}" 2>&1 </dev/null) || rc=$?
  local ok
  ok=$(grep -c "^OK" <<<"$output" || true)
  if [[ $rc == 0 && $ok == "$n" ]]; then echo OK; else echo "FAILED (exit $rc)"; fi
  grep -m1 "^Ran " <<<"$output" || true
  grep "a2av preload (rank 0)" <<<"$output" | sed 's/^a2av preload (rank 0): /    /' || true
}

status=0
for n in $ranks; do
  plain=$(run "$n")
  preloaded=$(run "$n" -x LD_PRELOAD="$preload" -x A2AV_PRELOAD_STATS=1)
  echo "$n ranks: plain ${plain%%$'\n'*}, preload ${preloaded%%$'\n'*}"
  tail -n +2 <<<"$preloaded"
  [[ $plain == OK* && $preloaded != OK* ]] && status=1
done
exit $status
