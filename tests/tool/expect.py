#!/usr/bin/env python3
"""Runs a command and checks how it ends, for tests of the a2av command line.

    expect.py [--fail] [--match REGEX]... [--once REGEX]... [--absent REGEX]... [--timeout S]
              -- COMMAND...

Passes when the command exits zero (non-zero with --fail), within the timeout (a hang is
a failure with its own message), and its standard output and error together match every
--match pattern; --once patterns must match exactly once (an error reported by rank 0
alone, not by every rank); --absent patterns must not match at all.
"""
import argparse
import re
import subprocess
import sys


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--fail", action="store_true", help="expect a non-zero exit")
    parser.add_argument("--match", action="append", default=[])
    parser.add_argument("--once", action="append", default=[])
    parser.add_argument("--absent", action="append", default=[])
    parser.add_argument("--timeout", type=float, default=60)
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command

    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=args.timeout)
    except subprocess.TimeoutExpired:
        sys.exit(f"FAIL: no exit within {args.timeout} s (a rank hangs?): {' '.join(command)}")
    output = done.stdout + done.stderr
    print(output)

    problems = []
    if args.fail and done.returncode == 0:
        problems.append("exited 0, expected a failure")
    if not args.fail and done.returncode != 0:
        problems.append(f"exited {done.returncode}, expected 0")
    problems += [f"no match for /{p}/" for p in args.match if not re.search(p, output)]
    for p in args.once:
        count = len(re.findall(p, output))
        if count != 1:
            problems.append(f"/{p}/ matched {count} times, expected once")
    problems += [f"unexpected match for /{p}/" for p in args.absent if re.search(p, output)]
    for problem in problems:
        print(f"FAIL: {problem}", file=sys.stderr)
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
