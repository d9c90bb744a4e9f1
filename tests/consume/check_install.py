#!/usr/bin/env python3
"""Installs shaped into a staging directory and builds a program against it the way another project
would: with the flags that pkg-config reads from the installed shaped.pc.

Usage: check_install.py BUILD_DIR PROGRAM.cpp EXPECTED_OUTPUT CXX
"""
import os
import pathlib
import subprocess
import sys
import tempfile

from consumer import prints_expected, stage_install


def main():
    build, program, expected, cxx = sys.argv[1:]
    with tempfile.TemporaryDirectory() as stage:
        stage_install(build, stage)
        pcs = list(pathlib.Path(stage).rglob("shaped.pc"))
        if len(pcs) != 1:
            print(f"expected one installed shaped.pc, found {pcs}")
            return 1
        env = dict(os.environ, PKG_CONFIG_PATH=str(pcs[0].parent), PKG_CONFIG_SYSROOT_DIR=stage)
        flags = subprocess.run(["pkg-config", "--cflags", "--libs", "shaped"], env=env, check=True,
                               capture_output=True, text=True).stdout.split()
        if not any(f.startswith("-I" + stage) for f in flags):
            print(f"pkg-config gave no include directory inside the installed tree: {flags}")
            return 1
        exe = pathlib.Path(stage) / "consumer"
        subprocess.run([cxx, "-std=c++20", program, *flags, "-o", str(exe)], check=True)
        if not prints_expected(exe, expected, "against the installed headers"):
            return 1
    print("installed headers and shaped.pc build the example; its output matches")
    return 0


if __name__ == "__main__":
    sys.exit(main())
