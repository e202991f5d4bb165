#!/usr/bin/env python3
"""Tables and plots of the simulated scaling sweeps (docs/scale.md, scripts/scale_sweep.sh).

    scale_report.py DATA_DIR OUT_DIR

Reads DATA_DIR/*.json (a2av bench --json from SimGrid SMPI runs) and DATA_DIR/*.log (the
wall time and peak memory simulate.sh prints) and prints Markdown tables: the cost of each
simulation; per run, every algorithm's simulated time and its ratio to MPI_Alltoallv; a2av's
best against MPI_Alltoallv side by side; hierarchical against flat TuNA; the best TuNA radix
by platform, P and size. Writes OUT_DIR/scale-time.png (time against P per algorithm) and
OUT_DIR/scale-radix.png (best radix, P x size).
"""
import json
import math
import os
import re
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")  # files only
import matplotlib.pyplot as plt  # noqa: E402

BASELINE = "MPI_Alltoallv"
# What SMPI charges a rank per eager message it sends (smpi/ois) and receives (smpi/or) on
# the Polaris-like platform (data/platforms/polaris.xml): Open MPI's basic_linear pays it
# P - 1 times over, whatever the network does (docs/scale.md).
LINEAR_CHARGE_S = 0.2e-6 + 0.5e-6
# Runs made before TuNA agreed on errors in band (commit cd68582): their a2av rows paid an
# allreduce per call that later runs do not. Tables show them as they are; the plots and the
# best-radix table take a2av rows from the later runs (vendor rows from any run).
BEFORE_IN_BAND = {"polaris_p64", "polaris_p1024_mpich16", "fugaku_p64_probe",
                  "fattree_p64_probe"}


def current(name, row):
    return name not in BEFORE_IN_BAND or row["requested"] == BASELINE


def load(data_dir):
    runs = {}
    for name in sorted(os.listdir(data_dir)):
        if name.endswith(".json") and os.path.getsize(os.path.join(data_dir, name)) > 0:
            with open(os.path.join(data_dir, name)) as f:
                data = json.load(f)
            # The sparse exchange's runs have tables of their own (docs/bench.md).
            if data.get("schema") != "a2av-bench-sparse/1":
                runs[name[:-5]] = data["results"]
    return runs


def selector(name):
    """linear_* runs: Open MPI's basic_linear, which its selector picks for 128 <= P < 256
    and from P = 1024 on, forced with smpi/alltoallv at the other P."""
    if "mpich" in name:
        return "MPICH selector"
    return "Open MPI's basic_linear" if name.startswith("linear_") else "Open MPI selector"


def label(row, name=""):
    """The spec as it ran, without the parameters every row shares (batch, block_count)."""
    spec = row["algorithm"]
    if row["requested"] == "auto":
        return "auto"
    if row["requested"] == BASELINE:
        return f"{BASELINE} ({selector(name)})" if name else BASELINE
    if spec.startswith("tuna:"):
        return "tuna r=" + re.search(r"radix=(\d+)", spec).group(1)
    if spec.startswith("node_aware:"):
        radix, agents = (re.search(rf"{p}=(\d+)", spec).group(1) for p in ("radix", "agents"))
        return ("node_aware" + (f" r={radix}" if radix != "0" else "") +
                (f" agents={agents}" if agents != "0" else ""))
    return spec.split(":")[0]


def cost_table(data_dir, runs):
    lines = ["| run | P | points | wall (s) | peak memory (MiB) |", "| --- | --- | --- | --- | --- |"]
    for name in sorted(runs):
        log = os.path.join(data_dir, name + ".log")
        found = re.search(r"wall ([\d.]+) s, peak memory (\d+) KiB", open(log).read()) \
            if os.path.exists(log) else None
        wall, peak = (found.group(1), f"{int(found.group(2)) / 1024:.0f}") if found else ("", "")
        rows = runs[name]
        lines.append(f"| {name} | {rows[0]['ranks']} | {len(rows)} | {wall} | {peak} |")
    return "\n".join(lines) + "\n"


def versus_vendor(runs):
    """Per run with a baseline: a2av's fastest spec at each size against MPI_Alltoallv."""
    lines = ["| run | P | vendor | size | MPI_Alltoallv (us) | a2av best | its time (us) | speedup |",
             "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for name, rows in sorted(runs.items(), key=lambda kv: (kv[1][0]["ranks"], kv[0])):
        base = {r["size"]: r["median_s"] for r in rows if r["requested"] == BASELINE}
        for size in sorted(base):
            ours = [r for r in rows if r["size"] == size and r["requested"] not in (BASELINE, "vendor")]
            if not ours:
                continue
            best = min(ours, key=lambda r: r["median_s"])
            lines.append(f"| {name} | {best['ranks']} | {selector(name)} | {size} | "
                         f"{base[size] * 1e6:.1f} | {label(best)} | {best['median_s'] * 1e6:.1f} | "
                         f"{base[size] / best['median_s']:.2f}x |")
    return "\n".join(lines) + "\n"


def hierarchical_table(runs):
    """Best hierarchical TuNA against best flat TuNA, uniform patterns."""
    best = defaultdict(dict)
    for name, rows in runs.items():
        for r in rows:
            if r["pattern"] != "uniform":
                continue
            kind = label(r).split(" ")[0]
            if kind in ("tuna", "tuna_coalesced", "tuna_staggered"):
                key = (platform_of(name), r["ranks"], r["size"])
                t = best[key].get(kind)
                if t is None or r["median_s"] < t[0]:
                    best[key][kind] = (r["median_s"], label(r))
    lines = ["| platform | P | size | best flat TuNA (us) | tuna_coalesced (us) | tuna_staggered (us) | hierarchical / flat |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    for key in sorted(best):
        b = best[key]
        if "tuna" not in b or not ({"tuna_coalesced", "tuna_staggered"} & set(b)):
            continue
        hier = min(v[0] for k, v in b.items() if k != "tuna")
        cells = [f"{b[k][0] * 1e6:.1f}" if k in b else "" for k in ("tuna_coalesced", "tuna_staggered")]
        lines.append(f"| {key[0]} | {key[1]} | {key[2]} | {b['tuna'][0] * 1e6:.1f} ({b['tuna'][1]}) | "
                     + " | ".join(cells) + f" | {hier / b['tuna'][0]:.2f} |")
    return "\n".join(lines) + "\n"


def run_table(name, rows):
    sizes = sorted({r["size"] for r in rows})
    times = defaultdict(dict)
    for r in rows:
        times[label(r)][r["size"]] = r["median_s"] * 1e6
    base = times.get(BASELINE)
    first = label(rows[0])
    head = "| algorithm | " + " | ".join(f"{s} B" for s in sizes) + " |"
    lines = [f"**{name}** (P = {rows[0]['ranks']}, {rows[0]['pattern']}; simulated us"
             + (f", ratio to MPI_Alltoallv, {selector(name)})" if base else
                f", ratio to {first}; no MPI_Alltoallv)"),
             "", head, "|" + " --- |" * (len(sizes) + 1)]
    for alg, by_size in times.items():
        cells = []
        for s in sizes:
            t = by_size.get(s)
            if t is None:
                cells.append("")
            elif alg != (BASELINE if base else first):
                ref = (base or times[first]).get(s)
                cells.append(f"{t:.1f} ({t / ref:.2f})" if ref else f"{t:.1f}")
            else:
                cells.append(f"{t:.1f}")
        lines.append(f"| {alg} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def platform_of(name):
    """The platform a run names first or second (nodes_fugaku_*); runs that name none
    (hier_*, tuna_*, nodes_p*, sparse_*) ran on the Polaris-like one."""
    for word in name.split("_")[:2]:
        if word in ("polaris", "fugaku", "fattree"):
            return word
    return "polaris"


def best_radix(runs):
    """(platform, P, size) -> (radix, time) of the fastest flat TuNA, uniform runs only, where
    at least two radices ran."""
    tried = defaultdict(dict)
    for name, rows in runs.items():
        for r in rows:
            if (r["pattern"] != "uniform" or not label(r).startswith("tuna r=")
                    or not current(name, r)):
                continue
            radix = int(re.search(r"radix=(\d+)", r["algorithm"]).group(1))
            times = tried[(platform_of(name), r["ranks"], r["size"])]
            times[radix] = min(times.get(radix, math.inf), r["median_s"])
    return {key: min(((radix, t) for radix, t in times.items()), key=lambda rt: rt[1])
            for key, times in tried.items() if len(times) >= 2}


def radix_table(best):
    platforms = sorted({k[0] for k in best})
    out = []
    for plat in platforms:
        ps = sorted({k[1] for k in best if k[0] == plat})
        sizes = sorted({k[2] for k in best if k[0] == plat})
        out += [f"**{plat}**: best TuNA radix (of those run) by P and size", "",
                "| P | " + " | ".join(f"{s} B" for s in sizes) + " |",
                "|" + " --- |" * (len(sizes) + 1)]
        for p in ps:
            cells = [str(best[(plat, p, s)][0]) if (plat, p, s) in best else "" for s in sizes]
            out.append(f"| {p} | " + " | ".join(cells) + " |")
        out.append("")
    return "\n".join(out)


def plot_time(runs, path, sizes=(16, 256)):
    """Simulated time against P on the Polaris-like platform, uniform blocks."""
    fig, axes = plt.subplots(1, len(sizes), figsize=(6 * len(sizes), 4.5), squeeze=False)
    for ax, size in zip(axes[0], sizes):
        series = defaultdict(dict)
        # A point from the first run that has it; the nodes_* runs only add what others lack.
        for name, rows in sorted(runs.items(), key=lambda run: run[0].startswith("nodes_")):
            if platform_of(name) != "polaris":
                continue
            for r in rows:
                if r["pattern"] == "uniform" and r["size"] == size and current(name, r):
                    series[label(r, name)].setdefault(r["ranks"], r["median_s"] * 1e6)
        for alg, points in sorted(series.items()):
            vendor = alg.startswith(BASELINE)
            if len(points) < 2 and not vendor:
                continue
            ps = sorted(points)
            style = dict(color="black", linewidth=2.5) if vendor else {}
            if vendor and "MPICH" in alg:
                style = dict(color="gray", linewidth=2.5, linestyle="--")
            if vendor and "basic_linear" in alg:
                style = dict(color="black", linewidth=1.5, linestyle=":")
            ax.plot(ps, [points[p] for p in ps], marker="o", label=alg, **style)
        ps = [128, 256, 512, 1024]
        bound = f"basic_linear's lower bound, (P - 1) x {LINEAR_CHARGE_S * 1e6:.1f} us"
        ax.plot(ps, [(p - 1) * LINEAR_CHARGE_S * 1e6 for p in ps], color="black", linewidth=0.8,
                linestyle="--", label=bound)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("ranks P (32 per node)")
        ax.set_ylabel("simulated time (us)")
        ax.set_title(f"Polaris-like, uniform 0..{size} B blocks")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def plot_radix(best, path, platform="polaris"):
    keys = [k for k in best if k[0] == platform]
    ps = sorted({k[1] for k in keys})
    sizes = sorted({k[2] for k in keys})
    fig, ax = plt.subplots(figsize=(1 + 0.7 * len(sizes), 1 + 0.6 * len(ps)))
    grid = [[math.log2(best[(platform, p, s)][0]) if (platform, p, s) in best else float("nan")
             for s in sizes] for p in ps]
    image = ax.imshow(grid, cmap="viridis", aspect="auto", origin="lower")
    for i, p in enumerate(ps):
        for j, s in enumerate(sizes):
            if (platform, p, s) in best:
                ax.text(j, i, best[(platform, p, s)][0], ha="center", va="center", color="white",
                        fontsize=8)
    ax.set_xticks(range(len(sizes)), [str(s) for s in sizes], rotation=45)
    ax.set_yticks(range(len(ps)), [str(p) for p in ps])
    ax.set_xlabel("max block size S (bytes)")
    ax.set_ylabel("ranks P")
    ax.set_title(f"Best TuNA radix, {platform}-like (simulated)")
    fig.colorbar(image, label="log2 radix")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    data_dir, out_dir = sys.argv[1:]
    runs = load(data_dir)
    print(cost_table(data_dir, runs))
    print(versus_vendor(runs))
    print(hierarchical_table(runs))
    for name, rows in runs.items():
        print(run_table(name, rows))
    best = best_radix(runs)
    print(radix_table(best))
    plot_time(runs, os.path.join(out_dir, "scale-time.png"))
    plot_radix(best, os.path.join(out_dir, "scale-radix.png"))


if __name__ == "__main__":
    main()
