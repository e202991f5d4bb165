#!/usr/bin/env python3
"""The conformance matrix as markdown: argument forms x entry points x algorithms.

    python3 tests/tool/conformance_matrix.py BUILD_DIR --run   # run the tests, then tabulate
    python3 tests/tool/conformance_matrix.py LOG...            # tabulate logs of earlier runs

The runs are tests/preload/conformance.c's (tests/preload.cmake): conformance_vendor.np3 (the
MPI library alone), preload_c.npN and preload_c_<algorithm>.np5 (LD_PRELOAD), and
capi_conformance.npN and capi_conformance_<algorithm>.np5 (the C API, with the sparse
exchange). Each prints "matrix: <form> <entry> <passed>/<cases>". --run runs them all
(ctest -j2 -V, its output kept in BUILD_DIR/conformance_matrix.log); a LOG is such an output
(`ctest -V -R ... > LOG`) or a Testing/Temporary/LastTest.log. The script prints
  1. forms x entry points, summed over the algorithms,
  2. forms x algorithms, summed over a2av's entry points (the sparse exchange's algorithms
     as sparse:<name>),
  3. with --full, forms x algorithms for each entry point on its own,
and the cells with failures. Exits non-zero if any case failed or no matrix was found.
"""
import argparse
import collections
import pathlib
import re
import subprocess
import sys

TESTS = r"^(conformance_vendor|preload_c|capi_conformance)"
# LastTest.log: a "Test:" line before each test's output. ctest -V: "Start N: name" once, then
# the output's lines as "N: line".
TEST_LINE = re.compile(r"^\d+/\d+ Test: (\S+)$")
START_LINE = re.compile(r"^\s*Start\s+(\d+): (\S+)$")
MATRIX_LINE = re.compile(r"^(?:(\d+): )?matrix: (\S+) (\S+) (\d+)/(\d+)$")
SPARSE_ENTRY = re.compile(r"^(A2AV_Sparse_exchange)\[(\w+)\]$")


def run_kind(test):
    """(how the program was run, algorithm) from a test's name."""
    name = test.split(".np")[0]
    if name == "conformance_vendor":
        return "vendor", "MPI library"
    for prefix, kind in (("preload_mpich_c", "preload (MPICH)"), ("preload_c", "preload"),
                         ("capi_conformance", "C API")):
        if name == prefix:
            return kind, "auto"
        if name.startswith(prefix + "_"):
            return kind, name[len(prefix) + 1:]
    return name, "?"


def read_cells(logs):
    """{(form, entry column, algorithm): [passed, cases, {failing tests}]}."""
    cells = collections.defaultdict(lambda: [0, 0, set()])
    for log in logs:
        test, numbered = None, {}
        for line in pathlib.Path(log).read_text(errors="replace").splitlines():
            if m := TEST_LINE.match(line):
                test = m.group(1)
            elif m := START_LINE.match(line):
                numbered[m.group(1)] = m.group(2)
            elif m := MATRIX_LINE.match(line):
                test = numbered.get(m.group(1), test) if m.group(1) else test
                if not test:
                    continue
                form, entry, passed, cases = m.group(2), m.group(3), int(m.group(4)), int(m.group(5))
                kind, algorithm = run_kind(test)
                if s := SPARSE_ENTRY.match(entry):
                    entry, algorithm = s.group(1), "sparse:" + s.group(2)
                column = entry if kind == "C API" else f"{entry} ({kind})"
                cell = cells[(form, column, algorithm)]
                cell[0] += passed
                cell[1] += cases
                if passed != cases:
                    cell[2].add(test)
    return cells


def table(cells, rows, columns, key):
    """Markdown: rows x columns, each cell the sum of cells whose key(...) is (row, column)."""
    sums = collections.defaultdict(lambda: [0, 0])
    for k, (passed, cases, _) in cells.items():
        at = key(*k)
        if at:
            sums[at][0] += passed
            sums[at][1] += cases
    lines = ["| form | " + " | ".join(columns) + " |", "|---" * (len(columns) + 1) + "|"]
    for row in rows:
        out = []
        for column in columns:
            passed, cases = sums.get((row, column), (0, 0))
            text = f"{passed}/{cases}" if cases else "–"
            out.append(f"**{text}**" if passed != cases else text)
        lines.append(f"| {row} | " + " | ".join(out) + " |")
    return "\n".join(lines)


def ordered(values, first=()):
    seen = list(dict.fromkeys(values))
    return [v for v in first if v in seen] + sorted((v for v in seen if v not in first), key=str.lower)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("paths", nargs="+", help="a build folder (its last --run), or logs")
    parser.add_argument("--run", action="store_true", help="run the tests first (ctest -j2)")
    parser.add_argument("--full", action="store_true", help="also one table per entry point")
    args = parser.parse_args()
    logs = []
    for path in map(pathlib.Path, args.paths):
        if path.is_dir():
            log = path / "conformance_matrix.log"
            if args.run:
                with open(log, "w") as out:
                    subprocess.run(["ctest", "-R", TESTS, "-j2", "-V"], cwd=path, stdout=out)
            logs.append(log)
        else:
            logs.append(path)
    cells = read_cells(logs)
    if not cells:
        sys.exit("no matrix lines found (run with --run, or give the logs)")
    forms = ordered((f for f, _, _ in cells), first=("varied_counts",))
    entries = ordered(e for _, e, _ in cells)
    algorithms = ordered((a for _, e, a in cells if "(vendor)" not in e), first=("auto",))

    print("### Argument forms x entry points (all algorithms)\n")
    print(table(cells, forms, entries, lambda f, e, a: (f, e)))
    print("\n### Argument forms x algorithms (a2av's entry points)\n")
    print(table(cells, forms, algorithms, lambda f, e, a: "(vendor)" not in e and (f, a)))
    if args.full:
        for entry in entries:
            print(f"\n### {entry}\n")
            print(table(cells, forms, algorithms, lambda f, e, a, entry=entry: e == entry and (f, a)))
    failing = [(k, v) for k, v in cells.items() if v[0] != v[1]]
    total = [sum(v[i] for v in cells.values()) for i in (0, 1)]
    print(f"\n{total[0]}/{total[1]} cases passed.")
    for (form, entry, algorithm), (passed, cases, tests) in sorted(failing):
        print(f"- FAIL {form} / {entry} / {algorithm}: {passed}/{cases} ({', '.join(sorted(tests))})")
    return 1 if failing else 0


if __name__ == "__main__":
    sys.exit(main())
