#!/usr/bin/env python3
"""Checks the JSON of `a2av bench --inplace`: every pattern has the vendor baseline and
each requested in-place algorithm, every result was validated, times and ratios are
positive, and the extra memory stays within the chunk buffer plus O(P) metadata."""
import argparse
import json
import sys


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("json")
    parser.add_argument("--ranks", type=int, required=True)
    parser.add_argument("--patterns", nargs="+", required=True)
    parser.add_argument("--algorithms", nargs="+", required=True)
    parser.add_argument("--chunk", type=int, default=1 << 20)
    args = parser.parse_args()
    data = json.load(open(args.json))
    assert data["schema"] == "a2av-bench-inplace/1", data["schema"]
    seen = {(r["pattern"], r["requested"]): r for r in data["results"]}
    errors = []
    for pattern in args.patterns:
        for name in ["MPI_Alltoallv"] + args.algorithms:
            r = seen.get((pattern, name))
            if r is None:
                errors.append(f"missing {pattern} {name}")
                continue
            if not r["validated"]:
                errors.append(f"{pattern} {name} not validated")
            if r["ranks"] != args.ranks or r["median_s"] <= 0 or r["ratio_vs_vendor"] <= 0:
                errors.append(f"{pattern} {name}: bad ranks/time/ratio {r}")
            if name != "MPI_Alltoallv":
                # chunk + four O(P) vectors + three run lists of at most peak_runs runs
                bound = args.chunk + 4 * 8 * args.ranks + 3 * 24 * r["peak_runs"]
                if not 0 < r["extra_bytes"] <= bound:
                    errors.append(f"{pattern} {name}: extra {r['extra_bytes']} > {bound}")
                if name == "inplace_auto" and len(r["auto_estimates_bytes"]) != 2:
                    errors.append(f"{pattern} auto: no estimates")
    for e in errors:
        print(e, file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
