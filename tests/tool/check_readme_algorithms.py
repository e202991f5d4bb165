#!/usr/bin/env python3
"""Fails when the README's or the docs' algorithm tables disagree with the library's.

The algorithms are described once, by their descriptors in src/ (docs/design.md); `a2av
algorithms` prints them. This check holds the documentation to that:

- README.md, section "Algorithms": its table is exactly `a2av algorithms --markdown`;
- docs/algorithms.md has a section heading naming every alltoallv algorithm;
- docs/memory.md's and docs/redistribute.md's tables name every in-place and redistribution
  algorithm, and no other.

  check_readme_algorithms.py A2AV REPO_DIR              check
  check_readme_algorithms.py A2AV REPO_DIR --self-test  also check that planted drifts fail
"""
import json
import pathlib
import re
import subprocess
import sys
import tempfile

ROW_NAME = re.compile(r"^\| `([a-z_]+)")


def tool(a2av, *args):
    return subprocess.run([a2av, "algorithms", *args], check=True, capture_output=True,
                          text=True).stdout


def table_after(text, heading):
    """The first markdown table after the line `heading`, as its lines."""
    lines = text.splitlines()
    start = lines.index(heading)
    table = []
    for line in lines[start + 1:]:
        if line.startswith("|"):
            table.append(line)
        elif table:
            break
    return table


def row_names(table):
    return {m.group(1) for m in map(ROW_NAME.match, table) if m}


def problems(a2av, repo: pathlib.Path):
    found = []
    described = json.loads(tool(a2av, "--json"))
    family = lambda f: {a["name"] for a in described if a["family"] == f}

    want = tool(a2av, "--markdown").splitlines()
    have = table_after((repo / "README.md").read_text(), "## Algorithms")
    for line in sorted(set(want) - set(have)):
        found.append(f"README.md: the Algorithms table lacks: {line}")
    for line in sorted(set(have) - set(want)):
        found.append(f"README.md: the Algorithms table has, but `a2av algorithms --markdown` "
                     f"does not: {line}")
    if not found and want != have:
        found.append("README.md: the Algorithms table's rows are not in the library's order")

    headings = " ".join(re.findall(r"^## (.*)$", (repo / "docs/algorithms.md").read_text(), re.M))
    for name in sorted(family("alltoallv") - {"auto"} - set(re.findall(r"[a-z_]+", headings))):
        found.append(f"docs/algorithms.md: no section for {name}")
    if "auto" not in headings.split():
        found.append("docs/algorithms.md: no section for auto")

    for doc, fam, heading in [("docs/memory.md", "in-place", None),
                              ("docs/redistribute.md", "redistribution", "## Algorithms")]:
        text = (repo / doc).read_text()
        rows = row_names(table_after(text, heading) if heading else text.splitlines())
        rows = {r for r in rows if r in family(fam) or r.startswith(("inplace_",))} \
            if fam == "in-place" else rows
        for name in sorted(family(fam) - rows):
            found.append(f"{doc}: the table has no row for the {fam} algorithm {name}")
        for name in sorted(rows - family(fam)):
            found.append(f"{doc}: the table names {name}, which is no {fam} algorithm")
    return found


def self_test(a2av, repo: pathlib.Path):
    """Each planted drift must be caught."""
    readme = (repo / "README.md").read_text()
    drifts = {
        "a changed default": readme.replace("(1.., default 8)", "(1.., default 16)", 1),
        "a missing row": "\n".join(l for l in readme.splitlines() if not l.startswith("| `pairwise`")),
        "an extra row": readme.replace("| `vendor` |", "| `fastest` |  | made up |\n| `vendor` |", 1),
    }
    ok = True
    for what, text in drifts.items():
        if text == readme:
            print(f"self-test: could not plant {what}")
            ok = False
            continue
        with tempfile.TemporaryDirectory() as tmp:
            copy = pathlib.Path(tmp)
            (copy / "docs").mkdir()
            for doc in ("algorithms.md", "memory.md", "redistribute.md"):
                (copy / "docs" / doc).write_text((repo / "docs" / doc).read_text())
            (copy / "README.md").write_text(text)
            if not problems(a2av, copy):
                print(f"self-test: {what} in the README was not caught")
                ok = False
    return ok


def main():
    a2av, repo = sys.argv[1], pathlib.Path(sys.argv[2])
    found = problems(a2av, repo)
    for line in found:
        print(line)
    if found:
        print("Regenerate the README's table with `a2av algorithms --markdown`.")
    ok = not found and ("--self-test" not in sys.argv or self_test(a2av, repo))
    print("check_readme_algorithms:", "ok" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
