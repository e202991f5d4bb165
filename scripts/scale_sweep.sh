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

every="spread_out,scattered,pairwise,linear,vendor,tuna_coalesced,tuna_staggered"
radices="2,4,8,sqrtP,P"
# NAME | platform | ranks | SimGrid options | a2av bench arguments
runs=$(cat <<RUNS
polaris_p64|polaris|64|--cfg=smpi/coll-selector:ompi|--algorithms $every,tuna --radix $radices -m 16:16384
polaris_p256|polaris|256|--cfg=smpi/coll-selector:ompi|--algorithms $every,tuna --radix $radices -m 16:16384
polaris_p64_mpich|polaris|64|--cfg=smpi/coll-selector:mpich|--algorithms tuna --radix 2,4,8 -m 16:16384
polaris_p256_mpich|polaris|256|--cfg=smpi/coll-selector:mpich|--algorithms tuna --radix 2,4,16 -m 16:16384
polaris_p256_normal|polaris|256|--cfg=smpi/coll-selector:ompi|--pattern normal --algorithms scattered,tuna_coalesced,tuna --radix 2,4,16 -m 16:4096
polaris_p256_powerlaw|polaris|256|--cfg=smpi/coll-selector:ompi|--pattern power-law --algorithms scattered,tuna_coalesced,tuna --radix 2,4,16 -m 16:4096
polaris_p1024_nobase|polaris|1024||--no-baseline --algorithms tuna,scattered,tuna_coalesced,tuna_staggered --radix 2,4,8,32 -m 16:16384
polaris_p4096|polaris|4096||--no-baseline --algorithms tuna,tuna_coalesced --radix 2,4,8,64 -m 16:256
fugaku_p256|fugaku|256|--cfg=smpi/coll-selector:ompi|--algorithms scattered,tuna_coalesced,tuna --radix 2,4,16,P -m 16:16384
fattree_p256|fattree|256|--cfg=smpi/coll-selector:ompi|--algorithms scattered,tuna_coalesced,tuna --radix 2,4,16,P -m 16:16384
ablation_p256_r2|polaris|256|--cfg=smpi/coll-selector:ompi|--radix 2 --sizes 16,256,1024 --iterations 1
ablation_p256_r16|polaris|256|--cfg=smpi/coll-selector:ompi|--radix 16 --sizes 16,256,1024 --iterations 1
polaris_p1024|polaris|1024|--cfg=smpi/coll-selector:ompi|--algorithms scattered,tuna_coalesced,tuna --radix 2,4,8,32 -m 16:256
RUNS
)

run_one() {
  local name="$1" platform="$2" ranks="$3" cfg="$4" args="$5"
  [[ -s "$out/$name.txt" ]] && return 0
  echo "scale_sweep: $name"
  local program="" extra=(--iterations 1 --warmup 1 --json "$out/$name.json")
  # The textbook two-phase TuNA against a2av's (bench/tuna_ablation), text output only.
  [[ $name == ablation* ]] && program=bench/tuna_ablation extra=()
  # shellcheck disable=SC2086  # the argument lists are word lists
  A2AV_SIM_CFG="$cfg" A2AV_SIM_PROGRAM="$program" bash "$root/scripts/simulate.sh" \
    "$platform" "$ranks" $args "${extra[@]}" >"$out/$name.txt" 2>"$out/$name.log" ||
    echo "scale_sweep: $name failed (see $out/$name.log)"
}

wanted=("$@")
while IFS='|' read -r name platform ranks cfg args; do
  if [[ ${#wanted[@]} -gt 0 && ! " ${wanted[*]} " =~ " $name " ]]; then continue; fi
  while [[ $(jobs -rp | wc -l) -ge 2 ]]; do wait -n; done
  run_one "$name" "$platform" "$ranks" "$cfg" "$args" &
done <<<"$runs"
wait
