#!/usr/bin/env python3
"""Plots the JSON that `a2av bench --json` writes (docs/bench.md).

    plot.py size    bench.json             -o size.png     time against message size
    plot.py radix   bench.json             -o radix.png    TuNA time against radix, per size
    plot.py heatmap p4.json p8.json ...    -o heatmap.png  speedup over MPI_Alltoallv, P x size

Each takes one or more JSON files; `size` and `radix` draw one rank count (--ranks when the
files hold several). Times are medians over iterations of the per-iteration maximum over
ranks.
"""
import argparse
import json
import math
import sys

import matplotlib

matplotlib.use("Agg")  # files only: no display needed
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.colors import TwoSlopeNorm  # noqa: E402
from matplotlib.ticker import FuncFormatter  # noqa: E402

BASELINE = "MPI_Alltoallv"
COPY_BOUND = "memcpy_bound"  # a2av bench --copy-bound: a bound drawn beside the algorithms


def load(paths):
    records = []
    for path in paths:
        with open(path) as f:
            doc = json.load(f)
        if doc.get("schema") != "a2av-bench/1":
            sys.exit(f"{path}: not a2av bench JSON (schema a2av-bench/1)")
        records += doc["results"]
    if not records:
        sys.exit("no results in " + ", ".join(paths))
    return records


def one_rank_count(records, ranks):
    counts = sorted({r["ranks"] for r in records})
    if ranks is None and len(counts) > 1:
        sys.exit(f"the files hold P = {counts}: choose one with --ranks")
    chosen = counts[0] if ranks is None else ranks
    kept = [r for r in records if r["ranks"] == chosen]
    if not kept:
        sys.exit(f"no results for P = {chosen}; the files hold P = {counts}")
    return kept


def name_of(spec):
    return spec.split(":", 1)[0]


def param(spec, key):
    """The integer value of key in a resolved spec ("tuna:radix=4,batch=3"), or None."""
    for item in spec.partition(":")[2].split(","):
        k, _, v = item.partition("=")
        if k == key:
            return int(v)
    return None


def size_label(size):
    for unit, scale in (("MiB", 2**20), ("KiB", 2**10)):
        if size >= scale and size % scale == 0:
            return f"{size // scale} {unit}"
    return f"{size} B"


def describe(records):
    r = records[0]
    return f"pattern {r['pattern']}, {r['datatype']}, {r['mpi_library'].split(',')[0]}"


def log2_axis(ax, values, label_of):
    ax.set_xscale("log", base=2)
    ax.set_xticks(values)
    ax.set_xticklabels([label_of(v) for v in values], rotation=45, ha="right")
    ax.minorticks_off()


def log_time_axis(ax):
    """Log scale with plain numbers on the ticks: 20, 30, 50 read better than 2x10^1."""
    ax.set_yscale("log")
    plain = FuncFormatter(lambda v, _: f"{v:g}")
    ax.yaxis.set_major_formatter(plain)
    ax.yaxis.set_minor_formatter(plain)
    ax.tick_params(axis="y", which="minor", labelsize=7)
    ax.set_ylabel("median time (us)")


def plot_size(records, args):
    """(b) Median time against message size, one line per algorithm as requested."""
    records = one_rank_count(records, args.ranks)
    fig, ax = plt.subplots(figsize=(10, 5.5))
    lines = {}
    for r in records:
        lines.setdefault(r["requested"], []).append((r["size"], r["median_s"] * 1e6))
    colors = plt.cm.tab20.colors  # 20 distinct colors: every algorithm and its variants
    for i, (requested, points) in enumerate(lines.items()):
        points.sort()
        style = dict(color=colors[i % len(colors)])
        if requested == BASELINE:
            style = dict(color="black", linestyle="--", linewidth=2)
        elif requested == COPY_BOUND:
            style = dict(color="gray", linestyle=":", linewidth=2)
        ax.plot(*zip(*points), marker="o", markersize=3, label=requested, **style)
    log2_axis(ax, sorted({r["size"] for r in records}), size_label)
    log_time_axis(ax)
    ax.set_xlabel("message size S (largest block)")
    ax.set_title(f"a2av bench, P = {records[0]['ranks']}: {describe(records)}", fontsize=9)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1))  # beside: lines cross
    return fig


def plot_radix(records, args):
    """(a) TuNA paper Figure 7: time against radix, one line per message size."""
    records = one_rank_count(records, args.ranks)
    best = {}  # (size, radix) -> fastest median of that radix (over batch and other params)
    for r in records:
        radix = param(r["algorithm"], "radix")
        if name_of(r["algorithm"]) != args.family or radix is None:
            continue
        key = (r["size"], radix)
        best[key] = min(best.get(key, math.inf), r["median_s"] * 1e6)
    if not best:
        sys.exit(f"no {args.family} results with a radix: run a2av bench --radix ...")
    fig, ax = plt.subplots(figsize=(8, 5.5))
    sizes = sorted({s for s, _ in best})
    for i, size in enumerate(sizes):
        points = sorted((radix, t) for (s, radix), t in best.items() if s == size)
        color = plt.cm.viridis(i / max(1, len(sizes) - 1) * 0.9)  # dark: small, light: large
        ax.plot(*zip(*points), marker="o", color=color, label=f"S = {size_label(size)}")
    log2_axis(ax, sorted({radix for _, radix in best}), str)
    log_time_axis(ax)
    ax.set_xlabel("radix")
    ax.set_title(f"{args.family} against radix, P = {records[0]['ranks']}: {describe(records)}",
                 fontsize=9)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, ncol=2)
    return fig


def best_speedups(records, family):
    """(P, size) -> (MPI_Alltoallv median / fastest median, fastest resolved spec)."""
    baseline, fastest = {}, {}
    for r in records:
        key = (r["ranks"], r["size"])
        if r["requested"] == BASELINE:
            baseline[key] = r["median_s"]
        elif r["requested"] != COPY_BOUND and (family is None or name_of(r["algorithm"]) == family):
            if key not in fastest or r["median_s"] < fastest[key]["median_s"]:
                fastest[key] = r
    return {k: (baseline[k] / r["median_s"], r["algorithm"])
            for k, r in fastest.items() if k in baseline}


def short_name(spec):
    radix = param(spec, "radix")
    return name_of(spec) + (f"\nr={radix}" if radix else "")


def plot_heatmap(records, args):
    """(c) TuNA paper Figure 9: speedup of the fastest algorithm over MPI_Alltoallv."""
    cells = best_speedups(records, args.family)
    if not cells:
        sys.exit("no results to compare with MPI_Alltoallv")
    ranks = sorted({p for p, _ in cells})
    sizes = sorted({s for _, s in cells})
    grid = [[cells.get((p, s), (math.nan, ""))[0] for s in sizes] for p in ranks]
    values = [v for row in grid for v in row if not math.isnan(v)]
    norm = TwoSlopeNorm(vcenter=1.0, vmin=min(min(values), 0.99), vmax=max(max(values), 1.01))
    fig, ax = plt.subplots(figsize=(1.0 + 0.9 * len(sizes), 1.5 + 0.7 * len(ranks)))
    image = ax.imshow(grid, cmap="RdYlGn", norm=norm, aspect="auto", origin="lower")
    for i, p in enumerate(ranks):
        for j, s in enumerate(sizes):
            if (p, s) in cells:
                speedup, spec = cells[(p, s)]
                ax.text(j, i, f"{speedup:.2f}\n{short_name(spec)}", ha="center", va="center",
                        fontsize=6)
    ax.set_xticks(range(len(sizes)))
    ax.set_xticklabels([size_label(s) for s in sizes], rotation=45, ha="right")
    ax.set_yticks(range(len(ranks)))
    ax.set_yticklabels([str(p) for p in ranks])
    ax.set_xlabel("message size S")
    ax.set_ylabel("P (ranks)")
    which = args.family or "fastest a2av algorithm"
    ax.set_title(f"speedup of {which} over MPI_Alltoallv: {describe(records)}", fontsize=8)
    fig.colorbar(image, ax=ax, label="MPI_Alltoallv median / median")
    return fig


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="kind", required=True)
    kinds = {"size": (plot_size, "time against message size, one line per algorithm"),
             "radix": (plot_radix, "time against radix for one TuNA family, one line per size"),
             "heatmap": (plot_heatmap, "speedup over MPI_Alltoallv over (P, size)")}
    for kind, (_, summary) in kinds.items():
        p = sub.add_parser(kind, help=summary, description=summary)
        p.add_argument("json", nargs="+", help="files written by a2av bench --json")
        p.add_argument("-o", "--output", required=True, help="image file (.png, .svg, .pdf)")
        if kind != "heatmap":
            p.add_argument("--ranks", type=int, help="the P to draw when the files hold several")
        if kind == "radix":
            p.add_argument("--family", default="tuna",
                           help="tuna (default), tuna_coalesced or tuna_staggered")
        if kind == "heatmap":
            p.add_argument("--family", help="only this algorithm name (e.g. tuna); default: any")
    args = parser.parse_args()
    fig = kinds[args.kind][0](load(args.json), args)
    fig.tight_layout()
    fig.savefig(args.output, dpi=120)
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
