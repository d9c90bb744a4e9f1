#!/usr/bin/env python3
"""Runs an example and checks that it exits 0 and prints exactly the expected files' text, in order.

Usage: check_output.py EXECUTABLE EXPECTED [EXPECTED ...]
The expected files are what PyTorch printed for the same program (tests/golden/seed/*.out).
"""
import difflib
import pathlib
import subprocess
import sys


def main():
    exe, *expected_files = sys.argv[1:]
    expected = "".join(pathlib.Path(f).read_text() for f in expected_files)
    proc = subprocess.run([exe], capture_output=True, text=True)
    sys.stderr.write(proc.stderr)
    ok = True
    if proc.returncode != 0:
        print(f"{exe} exited with {proc.returncode}")
        ok = False
    if proc.stdout != expected:
        print("output differs from PyTorch's:")
        sys.stdout.writelines(difflib.unified_diff(expected.splitlines(True), proc.stdout.splitlines(True),
                                                   "PyTorch", exe))
        ok = False
    if ok:
        print(f"{pathlib.Path(exe).name}: prints what PyTorch prints ({len(expected.splitlines())} lines)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
