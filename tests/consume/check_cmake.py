#!/usr/bin/env python3
"""Installs shaped into a staging directory and builds a program against it from a CMake project, with
find_package(shaped CONFIG REQUIRED) and the target shaped::shaped (tests/consume/cmake/CMakeLists.txt).

Usage: check_cmake.py BUILD_DIR PROGRAM.cpp EXPECTED_OUTPUT CXX
"""
import pathlib
import shutil
import subprocess
import sys
import tempfile

from consumer import prints_expected, stage_install

HERE = pathlib.Path(__file__).resolve().parent


def main():
    build, program, expected, cxx = sys.argv[1:]
    if shutil.which("cmake") is None:
        print("cmake is not installed (Debian: apt-get install cmake)")
        return 1
    with tempfile.TemporaryDirectory() as tmp:
        stage = pathlib.Path(tmp) / "stage"
        stage_install(build, stage)
        configs = list(stage.rglob("shapedConfig.cmake"))
        if len(configs) != 1 or not (configs[0].parent / "shapedConfigVersion.cmake").exists():
            print(f"expected one installed shapedConfig.cmake beside its version file, found {configs}")
            return 1
        prefix = configs[0].parents[3]  # <prefix>/share/cmake/shaped/shapedConfig.cmake
        project = pathlib.Path(tmp) / "build"
        generator = ["-G", "Ninja"] if shutil.which("ninja") else []
        subprocess.run(["cmake", "-S", str(HERE / "cmake"), "-B", str(project), *generator,
                        f"-DCMAKE_PREFIX_PATH={prefix}", f"-DCMAKE_CXX_COMPILER={cxx}",
                        "-DCMAKE_BUILD_TYPE=Release", f"-DSHAPED_PROGRAM={pathlib.Path(program).resolve()}"],
                       check=True, capture_output=True, text=True)
        cache = (project / "CMakeCache.txt").read_text()
        found = next((l.split("=", 1)[1] for l in cache.splitlines() if l.startswith("shaped_DIR:")), "")
        if not found.startswith(str(stage)):
            print(f"find_package found shaped at {found!r}, not in the staged install {stage}")
            return 1
        run = subprocess.run(["cmake", "--build", str(project)], capture_output=True, text=True)
        if run.returncode != 0:
            print("the CMake project did not build:\n" + run.stdout + run.stderr)
            return 1
        if not [f for f in project.rglob("cmake_pch.hxx.*") if f.suffix in (".gch", ".pch")]:
            print("no precompiled header was built (target_precompile_headers): " + run.stdout[-2000:])
            return 1
        if not prints_expected(project / "consumer", expected, "by CMake against the installed package"):
            return 1
    print("find_package(shaped) and shaped::shaped build the example, its headers precompiled; its output matches")
    return 0


if __name__ == "__main__":
    sys.exit(main())
