#!/usr/bin/env python3
"""Fails when a lower layer of src/ includes a higher one.

A call runs one way down the layers (DESIGN.md, README "Layers"): entry points -> driver ->
selection -> registry and algorithms -> core. Each folder of src/ has a level; a file may include
its own folder and any lower level, never a higher one. A folder missing from LEVELS fails
too, so a new one must be placed.

  check_layers.py SRC_DIR            check the tree
  check_layers.py SRC_DIR --self-test  also check that a planted upward include is caught
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


def violations(src: pathlib.Path):
    found = []
    for path in sorted(src.rglob("*")):
        if path.suffix not in (".hpp", ".cpp", ".h"):
            continue
        folder = path.relative_to(src).parts[0]
        if folder not in LEVELS:
            found.append(f"{path}: folder '{folder}' has no level in check_layers.py")
            continue
        for target in INCLUDE.findall(path.read_text()):
            if target in LEVELS and LEVELS[target] > LEVELS[folder]:
                found.append(f"{path}: {folder} (level {LEVELS[folder]}) includes {target}/ "
                             f"(level {LEVELS[target]})")
    return found


def main():
    src = pathlib.Path(sys.argv[1])
    bad = violations(src)
    for line in bad:
        print(line)
    if "--self-test" in sys.argv:
        with tempfile.TemporaryDirectory() as tmp:
            planted = pathlib.Path(tmp) / "alltoallv" / "x.cpp"
            planted.parent.mkdir()
            planted.write_text('#include "driver/exchange.hpp"\n')
            if not violations(pathlib.Path(tmp)):
                print("self-test: a planted upward include was not caught")
                return 1
    print(f"check_layers: {'FAIL' if bad else 'ok'}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
