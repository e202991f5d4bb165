#!/usr/bin/env python3
"""How well `auto` chooses, from `a2av bench --json` files that ran auto beside fixed specs.

    auto_report.py p2_uniform.json p4_uniform.json ... [--markdown]

Per rank count, pattern and size: auto's median time over the best fixed algorithm's (with
its name) and over the MPI_Alltoallv baseline of the same run; then the worst of each and
how many points pass auto's targets (auto/best <= 1.10, auto/vendor <= 1.05).
"""
import argparse
import collections

from plot import BASELINE, COPY_BOUND, load


def table(records):
    points = collections.defaultdict(dict)  # (P, pattern, size) -> requested -> median
    for r in records:
        points[(r["ranks"], r["pattern"], r["size"])][r["requested"]] = r["median_s"]
    rows = []
    for (ranks, pattern, size), times in sorted(points.items()):
        if "auto" not in times or BASELINE not in times:
            continue
        fixed = {k: v for k, v in times.items() if k not in ("auto", BASELINE, COPY_BOUND)}
        best = min(fixed, key=fixed.get)
        rows.append((ranks, pattern, size, times["auto"] / fixed[best], best,
                     times["auto"] / times[BASELINE]))
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="+")
    args = parser.parse_args()
    rows = table(load(args.files))
    if not rows:
        raise SystemExit("no point has both auto and the MPI_Alltoallv baseline")
    print("| P | pattern | size | auto / best fixed | best fixed | auto / MPI_Alltoallv |")
    print("| ---: | --- | ---: | ---: | --- | ---: |")
    for ranks, pattern, size, vs_best, best, vs_vendor in rows:
        print(f"| {ranks} | {pattern} | {size} | {vs_best:.2f} | {best} | {vs_vendor:.2f} |")
    print()
    print("| P | points | worst auto / best | within 1.10 | worst auto / vendor | within 1.05 |")
    print("| ---: | ---: | ---: | ---: | ---: | ---: |")
    for ranks in sorted({r[0] for r in rows}):
        mine = [r for r in rows if r[0] == ranks]
        print(f"| {ranks} | {len(mine)} | {max(r[3] for r in mine):.2f} "
              f"| {sum(r[3] <= 1.10 for r in mine)} | {max(r[5] for r in mine):.2f} "
              f"| {sum(r[5] <= 1.05 for r in mine)} |")


if __name__ == "__main__":
    main()
