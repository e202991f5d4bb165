#!/usr/bin/env bash
# A real application, unchanged, under the installed preload library: Debian's HPC Challenge
# (package hpcc 1.5.0, /usr/bin/hpcc, linked against Open MPI's libmpi.so.40) calls
# MPI_Alltoall in its MPIFFT benchmark (the three global transposes of each distributed 1-D
# FFT) and in the verification of MPIRandomAccess and MPIRandomAccess_LCG (the update
# buckets). This script installs hpcc when missing, builds and installs a2av (Release, in
# build-apps/, to a temporary prefix) unless --prefix names an installed one, and runs hpcc
# with a fixed input (scripts/apps/hpccinf.txt) RUNS times without a2av and RUNS times with
# LD_PRELOAD=<prefix>/lib/liba2av_preload.so A2AV_PRELOAD_STATS=1, alternating, LD_LIBRARY_PATH
# unset. Both kinds of run also preload scripts/apps/alltoall_timer.c, which times each
# MPI_Alltoall and passes it on (to a2av or to the MPI library), unless --no-timer.
# It prints the results that depend on the exchanged data both ways, IDENTICAL or DIFFERENT
# (exit 1 when different), the medians of the exchange phases' times (hpcc's own timings
# and the timer's), and the A2AV_PRELOAD_STATS lines. Not part of the default tests.
#
#   bash scripts/apps.sh [--prefix DIR] [--ranks R] [--runs K] [--n N] [--no-timer]
#     --prefix DIR  use the a2av installed under DIR (env A2AV_APPS_PREFIX); no build
#     --ranks R     MPI ranks (env A2AV_RANKS, default 4); HPL/PTRANS grid P x Q = R
#     --runs K      runs each way (env A2AV_APPS_RUNS, default 3); medians of K
#     --n N         HPL matrix order (env A2AV_APPS_N, default 640); HPCC sizes every test
#                   from it: on 4 ranks N 512..723 gives MPIFFT 32768 points (32 KiB per
#                   peer and transpose), N 724..1023 gives 65536 (64 KiB); each doubling of
#                   N^2 doubles both and the RandomAccess tables, which take most of the
#                   time. Take a multiple of 160 (2 x NB), as HPCC's own default N is
#     --no-timer    leave the timing interposer out: LD_PRELOAD is liba2av_preload.so alone
# Run files (hpccoutf.txt, mpiexec output) stay in build-apps/hpcc/.
set -euo pipefail
caller=$PWD
cd "$(dirname "$0")/.."
root=$PWD

prefix=${A2AV_APPS_PREFIX:-}
ranks=${A2AV_RANKS:-4}
runs=${A2AV_APPS_RUNS:-3}
hpl_n=${A2AV_APPS_N:-640}
timer=1
while [[ $# -gt 0 ]]; do
  case "$1" in
    --prefix) prefix=$2; shift 2 ;;
    --ranks) ranks=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --n) hpl_n=$2; shift 2 ;;
    --no-timer) timer=0; shift ;;
    *) echo "usage: scripts/apps.sh [--prefix DIR] [--ranks R] [--runs K] [--n N] [--no-timer]" >&2
       exit 2 ;;
  esac
done
for v in ranks runs hpl_n; do
  [[ ${!v} =~ ^[1-9][0-9]*$ ]] || { echo "apps.sh: $v must be a positive integer" >&2; exit 2; }
done
trap 'echo "apps.sh: total wall time ${SECONDS}s"' EXIT

# --- The application: Debian's hpcc, installed only when missing --------------------------
if ! dpkg-query -W -f='${Status}' hpcc 2>/dev/null | grep -q 'install ok installed'; then
  echo "apps.sh: installing hpcc"
  sudo=()
  [[ $(id -u) -ne 0 ]] && sudo=(sudo)
  export DEBIAN_FRONTEND=noninteractive
  "${sudo[@]}" apt-get update
  "${sudo[@]}" apt-get install -y --no-install-recommends hpcc
fi
hpcc=/usr/bin/hpcc
# (grep reads all of its input: with -q and pipefail, ldd's SIGPIPE could fail the test)
if ! ldd "$hpcc" | grep 'libmpi\.so\.40 ' >/dev/null; then
  echo "apps.sh: $hpcc does not link Open MPI's libmpi.so.40; the preload is built for Open MPI" >&2
  exit 1
fi
mpiexec=mpiexec.openmpi
command -v "$mpiexec" >/dev/null || mpiexec=mpiexec

# --- a2av: build and install to a temporary prefix, unless one is given --------------------
if [[ -z $prefix ]]; then
  bash scripts/install-deps.sh
  prefix=$(mktemp -d /tmp/a2av-apps.XXXXXX)
  trap 'rm -rf "$prefix"; echo "apps.sh: total wall time ${SECONDS}s"' EXIT
  cmake -S . -B build-apps -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_UNITY_BUILD=ON \
    -DA2AV_BUILD_TESTS=OFF -DA2AV_BUILD_EXAMPLES=OFF -DA2AV_BUILD_PYTHON=OFF
  # The preload and the library it loads: the `a2av` command is not needed here.
  cmake --build build-apps -j2 --target a2av_preload
  cmake --install build-apps --prefix "$prefix" --component library >/dev/null
fi
[[ $prefix == /* ]] || prefix=$caller/$prefix  # absolute: each run starts in its own folder
[[ -d $prefix ]] || { echo "apps.sh: no folder $prefix" >&2; exit 1; }
preload=$prefix/lib/liba2av_preload.so
[[ -f $preload ]] || preload=$(find "$prefix" -name liba2av_preload.so -print -quit)
if [[ -z $preload || ! -f $preload ]]; then
  echo "apps.sh: no liba2av_preload.so under $prefix" >&2
  exit 1
fi
if ! env -u LD_LIBRARY_PATH ldd "$preload" | grep 'libmpi\.so\.40 ' >/dev/null; then
  echo "apps.sh: $preload is not built for Open MPI (libmpi.so.40), which hpcc uses" >&2
  exit 1
fi

# --- The input: Debian's example hpccinf.txt with N and a P x Q grid of all ranks ----------
p=1
for ((i = 1; i * i <= ranks; ++i)); do ((ranks % i == 0)) && p=$i; done
q=$((ranks / p))
work=$root/build-apps/hpcc
rm -rf "$work"
mkdir -p "$work"
sed -e "s/@N@/$hpl_n/" -e "s/@P@/$p/" -e "s/@Q@/$q/" scripts/apps/hpccinf.txt >"$work/hpccinf.txt"

# The timing interposer goes first in LD_PRELOAD both ways; it hands each call to the next
# MPI_Alltoall (a2av's or the MPI library's).
timer_so=
if ((timer)); then
  mpicc=mpicc.openmpi
  command -v "$mpicc" >/dev/null || mpicc=mpicc
  "$mpicc" -shared -fPIC -O2 -Wall -o "$work/liballtoall_timer.so" \
    scripts/apps/alltoall_timer.c -ldl
  timer_so=$work/liballtoall_timer.so
fi

launch=("$mpiexec" -n "$ranks")
if "$mpiexec" --version 2>&1 | grep 'Open MPI\|OpenRTE' >/dev/null; then
  launch+=(--oversubscribe)  # more ranks than cores is the normal case on small machines
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi

echo "apps.sh: $(dpkg-query -W -f='${Package} ${Version}' hpcc) ($hpcc), $ranks ranks" \
  "(HPL/PTRANS grid ${p}x${q}), N=$hpl_n, $runs runs each way, preload $preload"

# One run in its own folder (hpcc appends to ./hpccoutf.txt): $1 = folder, rest = env words.
run_hpcc() {
  local dir=$1
  shift
  mkdir -p "$dir"
  cp "$work/hpccinf.txt" "$dir/"
  local t0 t1
  t0=$(date +%s.%N)
  if ! (cd "$dir" && "${launch[@]}" env -u LD_LIBRARY_PATH "$@" "$hpcc" >mpiexec.log 2>&1); then
    echo "apps.sh: hpcc failed in $dir:" >&2
    tail -n 20 "$dir/mpiexec.log" >&2
    exit 1
  fi
  t1=$(date +%s.%N)
  echo "$t0 $t1" | awk '{printf "%.3f\n", $2 - $1}' >"$dir/wall"
}

for ((k = 1; k <= runs; ++k)); do
  # Alternating, so that a change in the machine's load falls on both sides alike.
  echo "apps.sh: run $k/$runs without a2av"
  if [[ -n $timer_so ]]; then
    run_hpcc "$work/without.$k" LD_PRELOAD="$timer_so"
  else
    run_hpcc "$work/without.$k"
  fi
  echo "apps.sh: run $k/$runs with a2av"
  run_hpcc "$work/with.$k" LD_PRELOAD="${timer_so:+$timer_so }$preload" \
    A2AV_PRELOAD_STATS=1
done

# --- Compare and report ------------------------------------------------------------------------
python=python3
command -v "$python" >/dev/null || python=/usr/bin/python3
"$python" - "$work" "$runs" <<'EOF'
import re, statistics, sys
from pathlib import Path

work, runs = Path(sys.argv[1]), int(sys.argv[2])

def sections(text):
    out, name = {}, None
    for line in text.splitlines():
        m = re.match(r"Begin of (\S+) section\.", line)
        if m:
            name = m.group(1)
            out[name] = []
        elif re.match(r"End of \S+ section\.", line):
            name = None
        elif name:
            out[name].append(line)
    return out

# The lines whose values come from the exchanged data (and what sizes them), and the
# summary's pass/fail. Times and rates are left out: they differ from run to run.
RESULT_PATTERNS = {
    "MPIFFT": [r"^Number of nodes", r"^Vector size", r"^max\(\|x-x0\|\)"],
    "MPIRandomAccess": [r"^Running on", r"^Total Main table size", r"^Found \d+ errors"],
    "MPIRandomAccess_LCG": [r"^Running on", r"^Total Main table size", r"^Found \d+ errors"],
    "Summary": [r"^Success=", r"^MPIFFT_(N|maxErr|Procs)=",
                r"^MPIRandomAccess(_LCG)?_(N|Errors|ErrorsFraction)="],
}
# Shown, not compared: RandomAccess runs fewer updates than the 4 x table size it aims at
# when a timed sample predicts more than 60 s (HPCC's time bound), which a loaded machine
# can make happen in one run and not in another.
INFO_PATTERNS = {
    "MPIRandomAccess": [r"^Number of updates EXECUTED"],
    "MPIRandomAccess_LCG": [r"^Number of updates EXECUTED"],
}

def results(sec, patterns=RESULT_PATTERNS):
    out = []
    for name, pats in patterns.items():
        for line in sec.get(name, []):
            if any(re.match(p, line) for p in pats):
                out.append(f"{name}: {line.strip()}")
    return out

def value(lines, pattern):
    for line in lines:
        m = re.match(pattern, line)
        if m:
            return float(m.group(1))
    return None

def times(sec, wall):
    summ = sec.get("Summary", [])
    t = {f"t{i}": value(summ, rf"MPIFFT_time{i}=(\S+)") for i in range(7)}
    ra = value(sec.get("MPIRandomAccess", []), r"Verification:\s+Real time used = (\S+)")
    lcg = value(sec.get("MPIRandomAccess_LCG", []), r"Verification:\s+Real time used = (\S+)")
    return {
        "fft_exchange": t["t1"] + t["t3"] + t["t5"],
        "fft_forward": sum(t.values()),
        "fft_inverse": value(sec.get("MPIFFT", []), r"Inverse FFT:\s+(\S+)"),
        "fft_gflops": value(summ, r"MPIFFT_Gflops=(\S+)"),
        "ra_verify": ra + lcg,
        "wall": wall,
    }

data = {}
for side in ("without", "with"):
    for k in range(1, runs + 1):
        d = work / f"{side}.{k}"
        sec = sections((d / "hpccoutf.txt").read_text())
        log = (d / "mpiexec.log").read_text().splitlines()
        t = times(sec, float((d / "wall").read_text()))
        # alltoall_timer lines: per block size, the calls and seconds.
        for line in log:
            m = re.match(r"alltoall_timer: (\d+) B per peer: (\d+) calls, rank 0 (\S+) s "
                         r"\(first call (\S+) s\), slowest rank (\S+) s", line)
            if m:
                b = int(m.group(1))
                t[f"timer{b}"] = (int(m.group(2)), float(m.group(3)), float(m.group(4)),
                                  float(m.group(5)))
        data[(side, k)] = {
            "results": results(sec),
            "info": results(sec, INFO_PATTERNS),
            "times": t,
            "stats": [l for l in log if l.startswith("a2av preload")],
        }

ref = data[("without", 1)]["results"]
if not any(l.startswith("Summary: MPIFFT_maxErr=") for l in ref):
    sys.exit(f"apps.sh: no MPIFFT result in {work}/without.1/hpccoutf.txt")
print("\nResults that depend on the exchanged data (hpccoutf.txt; run 1 each way):")
w_res = data[("with", 1)]["results"]
width = max(len(l) for l in ref + w_res)
print(f"  {'without a2av':<{width}}  | with a2av")
for i in range(max(len(ref), len(w_res))):
    a = ref[i] if i < len(ref) else ""
    b = w_res[i] if i < len(w_res) else ""
    print(f"  {a:<{width}}  | {'(same)' if a == b else b}")
print("Shown, not compared (HPCC shortens RandomAccess when a timed sample predicts over 60 s):")
if all(d["info"] == data[("without", 1)]["info"] for d in data.values()):
    for line in data[("without", 1)]["info"]:
        print(f"  all {2 * runs} runs: {line}")
else:
    for side in ("without", "with"):
        for k in range(1, runs + 1):
            for line in data[(side, k)]["info"]:
                print(f"  {side} a2av, run {k}: {line}")

bad = [key for key, d in data.items() if d["results"] != ref]
base_ok = all(data[("without", k)]["results"] == ref for k in range(1, runs + 1))
no_stats = [k for k in range(1, runs + 1)
            if not any("MPI_Alltoall calls via" in l for l in data[("with", k)]["stats"])]

rows = [
    ("MPIFFT forward: 3 global transposes (s)", "fft_exchange", "{:.6f}"),
    ("MPIFFT forward FFT, total (s)", "fft_forward", "{:.6f}"),
    ("MPIFFT inverse FFT (s)", "fft_inverse", "{:.3f}"),
    ("MPIFFT Gflop/s", "fft_gflops", "{:.4f}"),
    ("RandomAccess verifications, both (s)", "ra_verify", "{:.6f}"),
    ("whole hpcc run, wall (s)", "wall", "{:.3f}"),
]
# The timer's block sizes: MPIFFT's transposes move N/procs^2 complex numbers (16 bytes) per
# peer; RandomAccess's verification moves buckets of 1026 8-byte words.
all_keys = [key for d in data.values() for key in d["times"] if key.startswith("timer")]
sizes = sorted({int(key[5:]) for key in all_keys})
for b in sizes:
    if not all(f"timer{b}" in d["times"] for d in data.values()):
        continue
    name = "RandomAccess" if b == 1026 * 8 else "MPIFFT"
    calls = data[("without", 1)]["times"][f"timer{b}"][0]
    rows += [(f"MPI_Alltoall {b} B x{calls} ({name}): rank 0 (s)", (f"timer{b}", 1), "{:.6f}"),
             ("  the same, rank 0 without the first call (s)", (f"timer{b}", -1), "{:.6f}"),
             ("  the same, slowest rank (s)", (f"timer{b}", 3), "{:.6f}")]

def get(side, k, key):
    t = data[(side, k)]["times"]
    if not isinstance(key, tuple):
        return t[key]
    entry = t[key[0]]
    return entry[1] - entry[2] if key[1] == -1 else entry[key[1]]

print(f"\nTimes, rank 0 unless said, median of {runs} runs each way (each run's values below):")
print(f"  {'phase':<50} {'without a2av':>12} {'with a2av':>12} {'with/without':>12}")
for label, key, fmt in rows:
    vals = {s: [get(s, k, key) for k in range(1, runs + 1)] for s in ("without", "with")}
    med = {s: statistics.median(v) for s, v in vals.items()}
    ratio = f"{med['with'] / med['without']:.2f}" if med["without"] else "-"
    print(f"  {label:<50} {fmt.format(med['without']):>12} {fmt.format(med['with']):>12} "
          f"{ratio:>12}")
    for s in ("without", "with"):
        print(f"  {'':<6}{s + ':':<9}" + ", ".join(fmt.format(x) for x in vals[s]))

print("\nA2AV_PRELOAD_STATS (rank 0, at MPI_Finalize) of each run with a2av:")
for k in range(1, runs + 1):
    for line in data[("with", k)]["stats"] or ["(no statistics line)"]:
        print(f"  run {k}: {line}")
stray = [k for k in range(1, runs + 1) if data[("without", k)]["stats"]]
if stray:
    print(f"  (runs without a2av {stray} printed statistics: the preload was loaded there too)")

print()
if no_stats:
    print(f"apps.sh: runs with a2av {no_stats} report no MPI_Alltoall routed through a2av")
if bad:
    print("apps.sh: results DIFFERENT in " + ", ".join(f"{s} a2av run {k}" for s, k in bad)
          + " (from run 1 without a2av)")
    if not base_ok:
        print("apps.sh: the runs without a2av differ among themselves as well")
    for s, k in bad:
        got = data[(s, k)]["results"]
        for i in range(max(len(ref), len(got))):
            a = ref[i] if i < len(ref) else "(missing)"
            b = got[i] if i < len(got) else "(missing)"
            if a != b:
                print(f"  {s} {k}: {b}\n  expected: {a}")
    sys.exit(1)
if no_stats or stray:
    sys.exit(1)
print(f"apps.sh: results IDENTICAL ({runs} runs without a2av, {runs} with, "
      f"{len(ref)} result lines each)")
EOF
