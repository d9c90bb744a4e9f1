#!/usr/bin/env python3
"""Runs an example and checks what it prints.

Usage:
  check_output.py EXECUTABLE EXPECTED [EXPECTED ...] [--args ARG ...]
      exits 0 and prints exactly the expected files' text, in order (what PyTorch printed for the same
      program: tests/golden/**/*.out);
  check_output.py EXECUTABLE --args ARG ... --fails-with TEXT
      exits with a status other than 0, prints nothing on stdout, and TEXT on stderr.
"""
import argparse
import difflib
import pathlib
import subprocess
import sys


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("exe")
    parser.add_argument("expected", nargs="*")
    parser.add_argument("--args", nargs="+", default=[])
    parser.add_argument("--fails-with")
    a = parser.parse_args()
    proc = subprocess.run([a.exe, *a.args], capture_output=True, text=True)
    name = " ".join([pathlib.Path(a.exe).name, *a.args])
    if a.fails_with is not None:
        ok = proc.returncode != 0 and proc.stdout == "" and a.fails_with in proc.stderr
        print(f"{name}: exit status {proc.returncode}, stderr:\n{proc.stderr}")
        if not ok:
            print(f"expected a non-zero exit, no output, and on stderr: {a.fails_with}")
        return 0 if ok else 1
    sys.stderr.write(proc.stderr)
    expected = "".join(pathlib.Path(f).read_text() for f in a.expected)
    ok = True
    if proc.returncode != 0:
        print(f"{name} exited with {proc.returncode}")
        ok = False
    if proc.stdout != expected:
        print("output differs from PyTorch's:")
        sys.stdout.writelines(difflib.unified_diff(expected.splitlines(True), proc.stdout.splitlines(True),
                                                   "PyTorch", name))
        ok = False
    if ok:
        print(f"{name}: prints what PyTorch prints ({len(expected.splitlines())} lines)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
