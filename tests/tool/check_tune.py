#!/usr/bin/env python3
"""Reads back what `a2av tune` wrote and checks it (docs/tuning.md, "a2av tune").

    check_tune.py table TABLE --sweep SWEEP.json --ranks P
    check_tune.py auto TABLE --bench BENCH.json
    check_tune.py merged TABLE --earlier EARLIER --ranks P

table: TABLE is JSON in the tuning-table format; its rules for P are contiguous, cover
max_block_bytes from 0 with no gap and no upper bound, neighbours name different specs,
each size S of the sweep falls in the rule of the spec fastest at S (the MPI_Alltoallv
baseline and auto excluded, the first listed on a tie), and one spread_out fallback ends it.
auto: every auto record of a bench run with A2AV_TUNING_FILE=TABLE ran what the table's
first matching rule names.
merged: TABLE is a table for P merged into EARLIER: EARLIER's rules for other comm sizes
kept in order, no rule ahead of P's block matches P, one fallback, both comments kept.
"""
import argparse
import json
import sys

RANGES = ["comm_size", "ranks_per_node", "max_block_bytes", "mean_block_bytes", "sparsity"]
NO_BOUND = 2**62  # the last rule of a block must reach at least this far
BASELINE = "MPI_Alltoallv"


def load(path):
    with open(path) as f:
        return json.load(f)


def format_problems(table):
    """The parts of data/schemas/tuning.schema.json a table must satisfy."""
    if not isinstance(table, dict) or not isinstance(table.get("rules"), list):
        return ['expected {"rules": [...]}']
    problems = [f"unknown top-level key {k}" for k in table
                if k not in ("version", "comment", "rules")]
    if table.get("version") != 1 or not isinstance(table.get("comment"), str):
        problems.append("version must be 1 and comment a string")
    for i, rule in enumerate(table["rules"], 1):
        problems += [f"rule {i}: unknown key {k}" for k in rule
                     if k != "algorithm" and k not in RANGES]
        problems += [f"rule {i}: {k} is not [low, high]" for k in RANGES
                     if k in rule and not (len(rule[k]) == 2 and rule[k][0] <= rule[k][1])]
        if not isinstance(rule.get("algorithm"), str) or not rule["algorithm"]:
            problems.append(f"rule {i}: no algorithm")
    return problems


def matches(rule, stats):
    missing = [k for k in RANGES if k in rule and k not in stats]
    if missing:
        raise ValueError(f"rule {rule} needs {missing}, which the records do not give")
    return all(rule[k][0] <= stats[k] <= rule[k][1] for k in RANGES if k in rule)


def first_match(rules, stats):
    return next((rule for rule in rules if matches(rule, stats)), None)


def is_fallback(rule):
    return list(rule) == ["algorithm"]


def block_of(rules, size):
    """Indices of the rules for exactly this comm size."""
    return [i for i, r in enumerate(rules) if r.get("comm_size") == [size, size]]


def block_problems(rules, size):
    """P's rules: one run of rules, from max_block_bytes 0 up without gap or bound."""
    at = block_of(rules, size)
    if not at or at != list(range(at[0], at[-1] + 1)):
        return [f"the rules for P={size} are missing or not contiguous"]
    block = [rules[i] for i in at]
    problems = [f"rule {r} names more than comm_size and max_block_bytes" for r in block
                if set(r) != {"comm_size", "max_block_bytes", "algorithm"}]
    if problems:
        return problems
    ranges = [r["max_block_bytes"] for r in block]
    if ranges[0][0] != 0 or ranges[-1][1] < NO_BOUND:
        problems.append(f"max_block_bytes ranges {ranges} do not run from 0 without bound")
    problems += [f"gap or overlap between {a} and {b}" for a, b in zip(ranges, ranges[1:])
                 if b[0] != a[1] + 1]
    problems += [f"neighbouring rules both choose {a['algorithm']}"
                 for a, b in zip(block, block[1:]) if a["algorithm"] == b["algorithm"]]
    ahead = [r for r in rules[:at[0]]
             if "comm_size" not in r or r["comm_size"][0] <= size <= r["comm_size"][1]]
    problems += [f"rule {r} ahead of P={size}'s rules matches P={size}" for r in ahead]
    return problems


def fallback_problems(rules):
    fallbacks = [r for r in rules if is_fallback(r)]
    if fallbacks != [{"algorithm": "spread_out"}] or not is_fallback(rules[-1]):
        return ["the table must end with one fallback, spread_out, and have no other"]
    return []


def fastest(records):
    """size -> the spec that ran fastest there, first listed on a tie, as a2av tune picks."""
    best = {}
    for r in records:
        if r["requested"] == BASELINE or r["requested"].split(":")[0] == "auto":
            continue
        if r["size"] not in best or r["median_s"] < best[r["size"]]["median_s"]:
            best[r["size"]] = r
    return {size: r["algorithm"] for size, r in best.items()}


def check_table(args):
    table = load(args.table)
    problems = format_problems(table)
    if problems:
        return problems
    rules = table["rules"]
    problems = block_problems(rules, args.ranks) + fallback_problems(rules)
    sweep = load(args.sweep)["results"]
    if {r["ranks"] for r in sweep} != {args.ranks}:
        problems.append(f"the sweep is not at P={args.ranks}")
    for size, spec in sorted(fastest(sweep).items()):
        rule = first_match(rules, {"comm_size": args.ranks, "max_block_bytes": size})
        if rule is None or rule["algorithm"] != spec:
            problems.append(f"at {size} B the table chooses {rule}, the sweep's fastest is {spec}")
    return problems


def check_auto(args):
    rules = load(args.table)["rules"]
    records = [r for r in load(args.bench)["results"] if r["requested"] == "auto"]
    if not records:
        return ["no auto records"]
    problems = []
    for r in records:
        stats = {"comm_size": r["ranks"], "ranks_per_node": r["ranks_per_node"],
                 "max_block_bytes": r["max_block_bytes"]}
        rule = first_match(rules, stats)
        if rule is None or rule["algorithm"] != r["algorithm"]:
            problems.append(f"at {r['size']} B (largest block {r['max_block_bytes']} B) auto "
                            f"ran {r['algorithm']}, the table chooses {rule}")
    return problems


def check_merged(args):
    table, earlier = load(args.table), load(args.earlier)
    problems = format_problems(table)
    if problems:
        return problems
    rules = table["rules"]
    problems = block_problems(rules, args.ranks) + fallback_problems(rules)
    own = set(block_of(rules, args.ranks))
    kept = [r for i, r in enumerate(rules) if i not in own and not is_fallback(r)]
    expected = [r for r in earlier["rules"]
                if r.get("comm_size") != [args.ranks, args.ranks] and not is_fallback(r)]
    if kept != expected:
        problems.append(f"kept rules {kept} differ from the earlier table's {expected}")
    earlier_lines = set(earlier["comment"].splitlines())
    lines = table["comment"].splitlines()
    if not earlier_lines <= set(lines) or sum(l.startswith(f"P={args.ranks}:") for l in lines) != 1:
        problems.append(f"comment {lines!r} lost the earlier lines or has no P={args.ranks} line")
    return problems


def main():
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="what", required=True)
    table = sub.add_parser("table")
    table.add_argument("table")
    table.add_argument("--sweep", required=True)
    table.add_argument("--ranks", type=int, required=True)
    auto = sub.add_parser("auto")
    auto.add_argument("table")
    auto.add_argument("--bench", required=True)
    merged = sub.add_parser("merged")
    merged.add_argument("table")
    merged.add_argument("--earlier", required=True)
    merged.add_argument("--ranks", type=int, required=True)
    args = parser.parse_args()

    check = {"table": check_table, "auto": check_auto, "merged": check_merged}[args.what]
    problems = check(args)
    for problem in problems:
        print(f"FAIL: {problem}", file=sys.stderr)
    if not problems:
        print(f"OK: {args.table}")
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
