#!/usr/bin/env python3
"""Fails when a lower layer of src/ includes or names a higher one.

A call runs one way down the layers (docs/design.md, "Layers"): entry points -> driver ->
selection -> registry and algorithms -> core. Each folder of src/ has a level; a file may include
its own folder and any lower level, never a higher one. A folder missing from LEVELS fails
too, so a new one must be placed.

A forward declaration is an include in disguise: a file that declares `struct Foo;` or
`class Foo;` where Foo is defined only in folders of a higher level names that layer without
including it, and is reported like an upward include. Definitions are found by name
(`struct Foo {`, `class Foo final`, `struct Foo : Base {`), per folder; namespaces are not
followed, so a name defined at the file's own level or below is never reported.

  check_layers.py SRC_DIR            check the tree
  check_layers.py SRC_DIR --self-test  also check that a planted upward include and a planted
                                       upward forward declaration are caught
"""
import pathlib
import re
import sys
import tempfile

LEVELS = {
    "core": 0,  # MPI plumbing, buffers, the call's checks, memory accounting
    # algorithms and their registry, and the families that stand on core alone
    "alltoallv": 1,
    "inplace": 1,
    "redistribute": 1,
    "collectives": 1,
    "route": 1,
    "sort": 1,
    "tuning": 2,  # selection: tuning table, cost model, heuristic
    "driver": 3,  # per call: checks, agreement, selection, plans, recent calls
    "api": 4,  # the C++ entry points
    "capi": 4,  # the C entry points
    "preload": 4,  # the MPI_Alltoallv interposer
    "sparse": 4,  # the sparse exchange: entry point and algorithms (dense: over the driver)
}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([a-z_]+)/[^"]+"', re.M)
# At the start of a line, so that `enum class`, `friend class` and elaborated type specifiers
# in declarations do not count.
DEFINITION = re.compile(r'^\s*(?:struct|class)\s+([A-Za-z_]\w*)\s*(?:final\b|:(?!:)|\{)', re.M)
FORWARD = re.compile(r'^\s*(?:struct|class)\s+([A-Za-z_]\w*)\s*;', re.M)
SUFFIXES = (".hpp", ".cpp", ".h")


def defined_in(files):
    """Name of each struct or class defined in src/ -> the folders that define it."""
    where = {}
    for path, folder, text in files:
        for name in DEFINITION.findall(text):
            where.setdefault(name, set()).add(folder)
    return where


def violations(src: pathlib.Path):
    found = []
    files = []
    for path in sorted(src.rglob("*")):
        if path.suffix not in SUFFIXES:
            continue
        folder = path.relative_to(src).parts[0]
        if folder not in LEVELS:
            found.append(f"{path}: folder '{folder}' has no level in check_layers.py")
            continue
        files.append((path, folder, path.read_text()))
    where = defined_in(files)
    for path, folder, text in files:
        level = LEVELS[folder]
        for target in INCLUDE.findall(text):
            if target in LEVELS and LEVELS[target] > level:
                found.append(f"{path}: {folder} (level {level}) includes {target}/ "
                             f"(level {LEVELS[target]})")
        for name in sorted(set(FORWARD.findall(text))):
            owners = where.get(name, set())
            if owners and all(LEVELS[owner] > level for owner in owners):
                higher = ", ".join(f"{owner}/ (level {LEVELS[owner]})" for owner in sorted(owners))
                found.append(f"{path}: {folder} (level {level}) forward-declares {name}, "
                             f"defined in {higher}")
    return found


def planted(files):
    """Violations of a tree made of {relative path: text} (for the self-test)."""
    with tempfile.TemporaryDirectory() as tmp:
        for relative, text in files.items():
            path = pathlib.Path(tmp) / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
        return violations(pathlib.Path(tmp))


def main():
    src = pathlib.Path(sys.argv[1])
    bad = violations(src)
    for line in bad:
        print(line)
    if "--self-test" in sys.argv:
        if not planted({"alltoallv/x.cpp": '#include "driver/alltoallv.hpp"\n'}):
            print("self-test: a planted upward include was not caught")
            return 1
        upward = {
            "core/x.hpp": "namespace a2av {\nstruct PlantedState;\nclass PlantedCells;\n}\n",
            "driver/y.cpp": "namespace a2av {\nstruct PlantedState {\n  int n;\n};\n}\n",
            "sparse/z.cpp": "namespace a2av {\nclass PlantedCells final {\n};\n}\n",
        }
        caught = planted(upward)
        if len(caught) != 2 or not all("forward-declares" in line for line in caught):
            print("self-test: planted upward forward declarations were not caught: "
                  f"{caught}")
            return 1
        # The same name defined at the declaring level (or below) is not upward.
        level = dict(upward, **{"core/w.cpp": "struct PlantedState {};\nclass PlantedCells {};\n"})
        wrongly = planted(level)
        if wrongly:
            print(f"self-test: forward declarations of same-level types were reported: {wrongly}")
            return 1
    print(f"check_layers: {'FAIL' if bad else 'ok'}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
