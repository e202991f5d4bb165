#!/usr/bin/env python3
"""Fails when the README's table of environment variables and the library's own table
(src/core/environment.hpp, printed by `a2av environment --json`) disagree.

Every variable the library reads must have a row in the README's "Environment variables"
table, and every row there must name a variable the library reads (names exactly, each
once). The library's entries must also be well formed: a known type, a one-line doc.

  check_readme_env.py A2AV README.md              check
  check_readme_env.py A2AV README.md --self-test  also check that a README copy with a row
                                                  missing, or with an extra row, fails

A2AV is the command-line tool, an MPI program; it runs as a singleton (no mpiexec).
"""
import json
import re
import subprocess
import sys

SECTION = "## Environment variables"
ROW = re.compile(r"^\|\s*`([^`]+)`\s*\|")
TYPE = re.compile(r"^(flag|number|string|path|integer (-?\d+\.\.-?\d+|>= -?\d+))$")


def library_table(tool):
    """The library's variables, as `a2av environment --json` prints them."""
    run = subprocess.run([tool, "environment", "--json"], capture_output=True, text=True,
                         timeout=50, check=False)
    if run.returncode != 0:
        raise SystemExit(f"'{tool} environment --json' failed ({run.returncode}): {run.stderr}")
    try:
        return json.loads(run.stdout)
    except json.JSONDecodeError as e:
        raise SystemExit(f"'{tool} environment --json' printed no JSON ({e}): {run.stdout!r}")


def readme_names(text):
    """The variables named in the first column of the README's table, in order."""
    lines = text.splitlines()
    if SECTION not in lines:
        return None
    names = []
    in_table = False
    for line in lines[lines.index(SECTION) + 1:]:
        if line.startswith("## "):
            break
        if line.startswith("|"):
            in_table = True
            match = ROW.match(line)
            if match:
                names.append(match.group(1))
        elif in_table:
            break  # the first table of the section only
    return names


def problems(variables, readme_text):
    """What is wrong, one line each; empty if the tables agree."""
    found = []
    for v in variables:
        missing = [key for key in ("name", "type", "default", "doc") if key not in v]
        if missing:
            found.append(f"library entry {v} lacks {', '.join(missing)}")
            continue
        if not TYPE.match(v["type"]):
            found.append(f"{v['name']}: unknown type '{v['type']}' in the library's table")
        if not v["doc"] or "\n" in v["doc"]:
            found.append(f"{v['name']}: the library's doc must be one non-empty line")
    library = [v["name"] for v in variables if "name" in v]
    readme = readme_names(readme_text)
    if readme is None:
        return found + [f"README: no section '{SECTION}'"]
    if not readme:
        return found + [f"README: no table of variables under '{SECTION}'"]
    for name in sorted({n for n in readme if readme.count(n) > 1}):
        found.append(f"README: {name} has {readme.count(name)} rows")
    for name in sorted({n for n in library if library.count(n) > 1}):
        found.append(f"library: {name} is listed {library.count(name)} times")
    for name in library:
        if name not in readme:
            found.append(f"README: no row for {name}, which the library reads "
                         "(src/core/environment.hpp)")
    for name in readme:
        if name not in library:
            found.append(f"README: row {name} names a variable the library does not read "
                         "(not in src/core/environment.hpp)")
    return found


def self_test(variables, readme_text):
    """Failures of the check on planted drift; empty if every plant is caught."""
    failures = []
    names = readme_names(readme_text) or []
    if not names:
        return ["self-test: the README has no rows to plant drift in"]
    first = names[0]
    row = next(line for line in readme_text.splitlines() if ROW.match(line)
               and ROW.match(line).group(1) == first)
    without = readme_text.replace(row + "\n", "", 1)
    caught = problems(variables, without)
    if not any(first in line and "no row" in line for line in caught):
        failures.append(f"self-test: a README without the row of {first} passed: {caught}")
    extra = readme_text.replace(row + "\n", row + "\n| `A2AV_PLANTED` | not a variable |\n", 1)
    caught = problems(variables, extra)
    if not any("A2AV_PLANTED" in line for line in caught):
        failures.append(f"self-test: a README with an extra row A2AV_PLANTED passed: {caught}")
    doubled = readme_text.replace(row + "\n", row + "\n" + row + "\n", 1)
    if not problems(variables, doubled):
        failures.append(f"self-test: a README with two rows of {first} passed")
    unknown = [dict(variables[0], type="colour")] + variables[1:]
    if not problems(unknown, readme_text):
        failures.append("self-test: a library entry of an unknown type passed")
    return failures


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    if len(args) != 2:
        print(__doc__)
        return 2
    tool, readme = args
    variables = library_table(tool)
    with open(readme, encoding="utf-8") as f:
        text = f.read()
    bad = problems(variables, text)
    for line in bad:
        print(line)
    if "--self-test" in sys.argv:
        failures = self_test(variables, text)
        for line in failures:
            print(line)
        bad += failures
    print(f"check_readme_env: {len(variables)} variables, {'FAIL' if bad else 'ok'}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
