#!/usr/bin/env bash
# The simulated scaling sweeps of docs/scale.md, two simulations at a time (each is one
# thread), into docs/data/scale/NAME.json with NAME.log (wall time, peak memory, errors).
#   bash scripts/scale_sweep.sh [NAME...]     (default: every run below, missing ones only)
# Then: python3 tools/scale_report.py docs/data/scale docs/
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
out="$root/docs/data/scale"
mkdir -p "$out"
bash "$root/scripts/simulate.sh" --build

direct="spread_out,scattered,pairwise"
hier="tuna_coalesced,tuna_staggered"
flat="tuna:radix=2;tuna:radix=4;tuna:radix=8"  # scale_probe lists: ';'-separated
hier_probe="tuna_coalesced;tuna_staggered"
# node_aware: shared memory inside a simulated host (copies charged at its loopback
# bandwidth), one message per pair of nodes or TuNA's rounds between them.
nodes="node_aware,node_aware:radix=2,node_aware:agents=1"
nodes_probe="node_aware;node_aware:radix=2"
ompi=--cfg=smpi/coll-selector:ompi
mpich=--cfg=smpi/coll-selector:mpich
# Polling loops (NBX's MPI_Test) at 0.1 us a test, as smpi/iprobe is in the platforms; SMPI's
# default injects 100 us per failed test, growing. (The platforms have set both since the
# nodes_* runs; the runs before them ran with SMPI's defaults for MPI_Test.)
polling="--cfg=smpi/test:1e-7 --cfg=smpi/grow-injected-times:no"
# A coarser simulated spin (docs/scale.md, "A coarser spin"): each look at a shared-memory flag
# (A2AV_SIM_POLL_NANOSECONDS, the runs' sixth field), MPI_Test and MPI_Iprobe cost 1 or 10 us.
poll1us="--cfg=smpi/test:1e-6 --cfg=smpi/iprobe:1e-6 --cfg=smpi/grow-injected-times:no"
poll10us="--cfg=smpi/test:1e-5 --cfg=smpi/iprobe:1e-5 --cfg=smpi/grow-injected-times:no"
# Open MPI's basic_linear (its selector's choice for 128 <= P < 256 and from P = 1024 on) at
# other P, to check SMPI's lower bound on it that docs/scale.md uses at P = 1024.
linear="--cfg=smpi/alltoallv:ompi_basic_linear"
# NAME | platform | ranks | SimGrid options | a2av bench arguments [| environment]. polaris_p64 was run before
# tuna agreed on errors in band (commit cd68582); polaris_p64_inband is the same sweep after.
# The vendor's O(P^2) concurrent messages are what the simulator pays for (docs/scale.md):
# at P = 1024 the MPICH selector's (32 messages in flight per rank) at one size without
# validation; the Open MPI selector's (all 1023 at once) crashed SimGrid before simulate.sh
# set maxmin/precision and was too slow after (ompi_p1024_probe, stopped; its a2av points
# came out); at P = 4096 not at all. The runs listed after hier_p4096_probe ran with that
# setting; those before it, with SimGrid's default.
# *_probe runs use bench/scale_probe (O(P) setup per rank, where a2av bench's P x P matrix per
# rank costs P^3 in all); their spec lists are ';'-separated. SimGrid's default collective
# selector is slower than both MPIs' (a2av's own MPI_Allreduce and barriers use it), so every
# run names one.
runs=$(cat <<RUNS
polaris_p64|polaris|64|$ompi|--algorithms spread_out,scattered,pairwise,linear,vendor,$hier,tuna --radix 2,4,8,sqrtP,P -m 16:16384
polaris_p256|polaris|256|$ompi|--algorithms $direct,$hier,tuna --radix 2,4,8,sqrtP,P -m 16:16384
polaris_p1024|polaris|1024|$ompi|--no-baseline --algorithms tuna,$hier --radix 2,4,8,sqrtP -m 16:16384
polaris_p1024_mpich16|polaris|1024|$mpich|--algorithms tuna:radix=2,tuna_coalesced -m 16:16 --no-validate --warmup 0
polaris_p4096_probe|polaris|4096|$ompi|--specs $flat;tuna:radix=64;$hier_probe --sizes 16,256
ablation_p256_r2|polaris|256|$ompi|--radix 2 --sizes 16,256,1024 --iterations 1
ablation_p256_r2_inband|polaris|256|$ompi|--radix 2 --sizes 16,256,1024 --iterations 1
fugaku_p64_probe|fugaku|64|$ompi|--specs MPI_Alltoallv;tuna:radix=2;tuna_coalesced --sizes 16,1024
fattree_p64_probe|fattree|64|$ompi|--specs MPI_Alltoallv;tuna:radix=2;tuna_coalesced --sizes 16,1024
fugaku_p256_probe|fugaku|256|$ompi|--specs MPI_Alltoallv;scattered;$flat;tuna:radix=16;tuna:radix=256;$hier_probe --sizes 16,1024,16384
fattree_p256_probe|fattree|256|$ompi|--specs MPI_Alltoallv;scattered;$flat;tuna:radix=16;tuna:radix=256;$hier_probe --sizes 16,1024,16384
polaris_p256_mpich_probe|polaris|256|$mpich|--specs MPI_Alltoallv;scattered;$flat;tuna:radix=16;$hier_probe --sizes 16,1024,16384
polaris_p256_normal|polaris|256|$ompi|--pattern normal --algorithms scattered,tuna_coalesced,tuna --radix 2,4,16 -m 1024:1024
polaris_p256_powerlaw|polaris|256|$ompi|--pattern power-law --algorithms scattered,tuna_coalesced,tuna --radix 2,4,16 -m 1024:1024
polaris_p64_inband|polaris|64|$ompi|--algorithms spread_out,scattered,pairwise,linear,vendor,$hier,tuna --radix 2,4,8,sqrtP,P -m 16:16384
polaris_p64_probe|polaris|64|$ompi|--specs MPI_Alltoallv;tuna:radix=2;tuna:radix=8;tuna_coalesced --sizes 16,1024
polaris_p256_probe|polaris|256|$ompi|--specs tuna:radix=2;tuna:radix=4;tuna:radix=32;tuna_coalesced --sizes 16,256
polaris_p1024_inband_probe|polaris|1024|$ompi|--specs tuna:radix=2;tuna_coalesced --sizes 16
polaris_p1024_probe|polaris|1024|$ompi|--specs tuna:radix=2;tuna:radix=4;tuna:radix=32;tuna_coalesced --sizes 16,256
ablation_p256_r16|polaris|256|$ompi|--radix 16 --sizes 16,256,1024 --iterations 1
sparse_p256|polaris|256|$ompi $polling|--sparse -m 16:16 --pattern random:6,stencil3d,random:64 --algorithms mpi,nbx,grid,dense,auto
sparse_p256_dense|polaris|256|$ompi $polling|--sparse -m 16:16 --pattern random:255,random:128 --algorithms dense,auto --no-validate
sparse_p1024|polaris|1024|$ompi $polling|--sparse -m 256:256 --pattern random:6,stencil3d --algorithms nbx,grid --no-validate
sparse_p4096|polaris|4096|$ompi $polling|--sparse -m 256:256 --pattern random:6,stencil3d --algorithms nbx,grid --no-validate
sparse_p256_history|polaris|256|$ompi $polling|--sparse -m 16:16 --pattern random:6,stencil3d,random:64 --algorithms mpi,nbx,grid,dense,auto
sparse_p256_dense_history|polaris|256|$ompi $polling|--sparse -m 16:16 --pattern random:255,random:128 --algorithms dense,auto --no-validate
nodes_p64|polaris|64|$ompi|--algorithms $nodes,spread_out,tuna:radix=2,tuna:radix=8,tuna_coalesced,auto -m 16:16384
nodes_p256_probe|polaris|256|$ompi|--specs MPI_Alltoallv;$nodes_probe;tuna:radix=2;tuna:radix=16;tuna_coalesced;auto --sizes 16,1024
nodes_p256_4k_probe|polaris|256|$ompi|--specs node_aware;tuna:radix=16;tuna_coalesced --sizes 4096
nodes_fugaku_p256_probe|fugaku|256|$ompi|--specs MPI_Alltoallv;$nodes_probe;tuna:radix=2;tuna:radix=16;tuna_coalesced --sizes 16,1024
nodes_p1024_probe|polaris|1024|$ompi|--specs $nodes_probe;tuna:radix=2;tuna_coalesced --sizes 16
nodes_p1024_256_probe|polaris|1024|$ompi|--specs node_aware;tuna_coalesced --sizes 256
nodes_p4096_probe|polaris|4096|$ompi|--specs node_aware --sizes 16
nodes_fugaku_p1024_probe|fugaku|1024|$ompi|--specs node_aware;tuna_coalesced --sizes 16
hier_p256_inband_probe|polaris|256|$ompi|--specs tuna_coalesced;tuna_staggered --sizes 16
hier_p256_inband_1k_probe|polaris|256|$ompi|--specs tuna_coalesced --sizes 1024
hier_p1024_inband_probe|polaris|1024|$ompi|--specs tuna_coalesced --sizes 16
tuna_p4096_probe|polaris|4096|$ompi|--specs tuna:radix=2 --sizes 16
hier_p4096_probe|polaris|4096|$ompi|--specs tuna_coalesced;tuna_staggered --sizes 16
ompi_p1024_probe|polaris|1024|$ompi|--specs node_aware;tuna_coalesced;tuna:radix=2;MPI_Alltoallv --sizes 16 --warmup 0
radix_p1024_probe|polaris|1024|$ompi|--specs tuna:radix=4;tuna:radix=8 --sizes 16,256
poll1us_p1024_1k_probe|polaris|1024|$ompi $poll1us|--specs auto --sizes 1024 --shared-buffers --warmup 0|A2AV_SIM_POLL_NANOSECONDS=1000
poll10us_p1024_1k_probe|polaris|1024|$ompi $poll10us|--specs auto --sizes 1024 --shared-buffers --warmup 0|A2AV_SIM_POLL_NANOSECONDS=10000
bound_p4096_1k_probe|polaris|4096|$ompi $poll10us|--specs auto;tuna:radix=64,in_flight=2147483647 --sizes 1024 --shared-buffers --warmup 0|A2AV_SIM_POLL_NANOSECONDS=10000
window_p512_1k_probe|polaris|512|$ompi|--specs tuna:radix=23;tuna:radix=23,in_flight=2147483647 --sizes 1024 --warmup 0
linear_p128_probe|polaris|128|$ompi|--specs node_aware;tuna_coalesced;MPI_Alltoallv --sizes 16,256 --warmup 0
linear_p256_probe|polaris|256|$ompi $linear|--specs node_aware;tuna_coalesced;MPI_Alltoallv --sizes 16,256 --warmup 0
linear_p512_probe|polaris|512|$ompi $linear|--specs node_aware;tuna_coalesced;MPI_Alltoallv --sizes 16 --warmup 0
RUNS
)

run_one() {
  local name="$1" platform="$2" ranks="$3" cfg="$4" args="$5" environment="${6:-}"
  [[ -s "$out/$name.txt" ]] && return 0
  echo "scale_sweep: $name"
  local program="" extra=(--iterations 1 --json "$out/$name.json")
  [[ $args == *--warmup* ]] || extra+=(--warmup 1)
  # The textbook two-phase TuNA against a2av's (bench/tuna_ablation), text output only.
  [[ $name == ablation* ]] && program=bench/tuna_ablation extra=()
  [[ $name == *_probe ]] && program=bench/scale_probe extra=(--json "$out/$name.json")
  # shellcheck disable=SC2086  # the argument lists are word lists
  env $environment A2AV_SIM_CFG="$cfg" A2AV_SIM_PROGRAM="$program" bash "$root/scripts/simulate.sh" \
    "$platform" "$ranks" $args "${extra[@]}" >"$out/$name.txt" 2>"$out/$name.log" ||
    echo "scale_sweep: $name failed (see $out/$name.log)"
}

wanted=("$@")
while IFS='|' read -r name platform ranks cfg args environment; do
  if [[ ${#wanted[@]} -gt 0 && ! " ${wanted[*]} " =~ " $name " ]]; then continue; fi
  while [[ $(jobs -rp | wc -l) -ge 2 ]]; do wait -n; done
  run_one "$name" "$platform" "$ranks" "$cfg" "$args" "$environment" &
done <<<"$runs"
wait
