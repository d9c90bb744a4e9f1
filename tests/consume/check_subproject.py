#!/usr/bin/env python3
"""Builds a program in a Meson project that has shaped as a subproject (subprojects/shaped, a copy of
this source tree's build files and headers) and gets it with dependency('shaped'); shaped's own examples
and tests are not built there.

Usage: check_subproject.py SOURCE_ROOT PROGRAM.cpp EXPECTED_OUTPUT CXX
"""
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

from consumer import prints_expected

# With shaped's headers precompiled, as the README shows: a rebuild after an edit of program.cpp then
# parses none of them again.
MESON_BUILD = """project('consumer', 'cpp', default_options : ['cpp_std=c++20'])
executable('consumer', 'program.cpp', dependencies : dependency('shaped'), cpp_pch : 'pch/shaped_pch.hpp')
"""
PCH = "#include <shaped/shaped.hpp>\n"


def main():
    root, program, expected, cxx = sys.argv[1:]
    root = pathlib.Path(root)
    with tempfile.TemporaryDirectory() as tmp:
        project = pathlib.Path(tmp) / "consumer"
        sub = project / "subprojects" / "shaped"
        sub.mkdir(parents=True)
        for name in ["meson.build", "meson_options.txt", "LICENSE"]:
            shutil.copy(root / name, sub / name)
        for name in ["include", "cmake"]:
            shutil.copytree(root / name, sub / name)
        (project / "meson.build").write_text(MESON_BUILD)
        (project / "pch").mkdir()
        (project / "pch" / "shaped_pch.hpp").write_text(PCH)
        shutil.copy(program, project / "program.cpp")
        build = project / "build"
        setup = subprocess.run(["meson", "setup", str(build), str(project), "--force-fallback-for=shaped"],
                               capture_output=True, text=True, env=dict(os.environ, CXX=cxx))
        if setup.returncode != 0:
            print("meson setup failed:\n" + setup.stdout + setup.stderr)
            return 1
        targets = subprocess.run(["meson", "introspect", "--targets", str(build)], check=True,
                                 capture_output=True, text=True).stdout
        if '"consumer"' not in targets or targets.count('"name"') != 1:
            print("the subproject added targets of its own: " + targets[:2000])
            return 1
        run = subprocess.run(["meson", "compile", "-C", str(build)], capture_output=True, text=True)
        if run.returncode != 0:
            print("the consumer did not build:\n" + run.stdout + run.stderr)
            return 1
        if not list(build.rglob("shaped_pch.hpp.*ch")):
            print("no precompiled header was built (cpp_pch): " + run.stdout[-2000:])
            return 1
        if not prints_expected(build / "consumer", expected, "with shaped as a subproject"):
            return 1
    print("dependency('shaped') from a subproject builds the example alone, its headers precompiled; its output matches")
    return 0


if __name__ == "__main__":
    sys.exit(main())
