#!/usr/bin/env python3
"""Reads back what `a2av bench` wrote and checks it against the documented schema
(docs/bench.md).

    check_bench.py json FILE --ranks P --sizes 16 32 --algorithms MPI_Alltoallv vendor ...
    check_bench.py csv FILE --json FILE

json: every record has every key with the right type, there is exactly one record per
(requested algorithm, size), times and ratios are positive and ordered, the baseline's
ratio is 1, every record but memcpy_bound passed validation, and peaks stay within their bounds.
csv: the CSV holds the same records as the JSON, field for field.
"""
import argparse
import csv
import json
import sys

# key -> accepted types; None marks a value that is null for the MPI_Alltoallv baseline.
SCHEMA = {
    "mpi_library": (str,),
    "ranks": (int,),
    "ranks_per_node": (int,),
    "pattern": (str,),
    "seed": (int,),
    "datatype": (str,),
    "datatype_bytes": (int,),
    "iterations": (int,),
    "warmup": (int,),
    "baseline": (bool,),
    "copy_bound": (bool,),
    "size": (int,),
    "max_block_bytes": (int,),
    "requested": (str,),
    "algorithm": (str,),
    "median_s": (float,),
    "min_s": (float,),
    "max_s": (float,),
    "ratio": (float,),
    "peak_temp_bytes": (int, None),
    "bound_bytes": (int, None),
    "max_in_flight": (int, None),
    "validated": (bool,),
}
BASELINE = "MPI_Alltoallv"
COPY_BOUND = "memcpy_bound"  # --copy-bound: no exchange, so neither validated nor accounted


def has_type(value, types):
    if value is None:
        return None in types
    if isinstance(value, bool):  # bool is an int in Python; keep them apart
        return bool in types
    return any(t is not None and isinstance(value, t) for t in types)


def record_problems(r):
    problems = [f"missing {k}" for k in SCHEMA if k not in r]
    problems += [f"unexpected key {k}" for k in r if k not in SCHEMA]
    problems += [f"{k}={r[k]!r} has the wrong type" for k, types in SCHEMA.items()
                 if k in r and not has_type(r[k], types)]
    if problems:
        return problems
    baseline = r["requested"] == BASELINE
    bound = r["requested"] == COPY_BOUND
    if not 0 < r["min_s"] <= r["median_s"] <= r["max_s"]:
        problems.append("times not 0 < min <= median <= max")
    if r["ratio"] <= 0 or (baseline and r["ratio"] != 1):
        problems.append(f"ratio {r['ratio']}")
    if r["validated"] == bound:
        problems.append("validated must be true exactly for what exchanges")
    if bound and not r["copy_bound"]:
        problems.append("a memcpy_bound row without copy_bound")
    if not r["baseline"]:
        problems.append("baseline false, yet these tests run MPI_Alltoallv")
    unaccounted = baseline or bound
    if any(unaccounted != (r[k] is None) for k in ("peak_temp_bytes", "bound_bytes", "max_in_flight")):
        problems.append("peak, bound and max_in_flight must be null exactly for the baseline "
                        "and memcpy_bound")
    elif not unaccounted and not 0 <= r["peak_temp_bytes"] <= r["bound_bytes"]:
        problems.append(f"peak {r['peak_temp_bytes']} above bound {r['bound_bytes']}")
    if r["max_block_bytes"] % r["datatype_bytes"]:
        problems.append("max_block_bytes is not whole elements")
    return problems


def check_json(args):
    with open(args.file) as f:
        doc = json.load(f)
    if doc.get("schema") != "a2av-bench/1" or not isinstance(doc.get("command"), str):
        return ["header: schema must be a2av-bench/1 and command a string"]
    records = doc["results"]
    problems = []
    for i, r in enumerate(records):
        problems += [f"record {i} ({r.get('requested')}, {r.get('size')}): {p}"
                     for p in record_problems(r)]
    if problems:
        return problems
    wanted = {(a, s) for a in args.algorithms for s in args.sizes}
    seen = [(r["requested"], r["size"]) for r in records]
    if sorted(seen) != sorted(wanted):
        problems.append(f"records {sorted(seen)}, expected one per algorithm and size: "
                        f"{sorted(wanted)}")
    problems += [f"ranks {r['ranks']}, expected {args.ranks}"
                 for r in records if r["ranks"] != args.ranks]
    return problems


def same_value(text, value):
    if value is None:
        return text == ""
    if isinstance(value, bool):
        return text == str(value).lower()
    if isinstance(value, (int, float)):
        return float(text) == float(value)
    return text == value


def check_csv(args):
    with open(args.file, newline="") as f:
        rows = list(csv.DictReader(f))
    with open(args.json) as f:
        records = json.load(f)["results"]
    if len(rows) != len(records):
        return [f"{len(rows)} CSV rows, {len(records)} JSON records"]
    if rows and list(rows[0]) != list(SCHEMA):
        return [f"CSV columns {list(rows[0])}, expected {list(SCHEMA)}"]
    return [f"row {i}: {k} is {row[k]!r} in CSV, {rec[k]!r} in JSON"
            for i, (row, rec) in enumerate(zip(rows, records))
            for k in SCHEMA if not same_value(row[k], rec[k])]


def main():
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="kind", required=True)
    j = sub.add_parser("json")
    j.add_argument("file")
    j.add_argument("--ranks", type=int, required=True)
    j.add_argument("--sizes", type=int, nargs="+", required=True)
    j.add_argument("--algorithms", nargs="+", required=True,
                   help="requested specs, the MPI_Alltoallv baseline included")
    c = sub.add_parser("csv")
    c.add_argument("file")
    c.add_argument("--json", required=True)
    args = parser.parse_args()
    problems = check_json(args) if args.kind == "json" else check_csv(args)
    for p in problems:
        print(f"FAIL: {p}", file=sys.stderr)
    print(f"{args.file}: {'FAILED' if problems else 'ok'}")
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
