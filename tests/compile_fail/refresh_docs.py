#!/usr/bin/env python3
"""Refreshes the compiler output shown in the docs (docs/*.md) from the compile-fail cases.

Each `<!-- error: tests/compile_fail/CASE.cpp -->` block that follows a "g++ 12:" or "clang++ 14:" line is
replaced by what that compiler prints for the case with -DSHAPE_BUG, trimmed to the lines a reader needs:
for g++ the user's line ("required from here"), the error and the note with the context; for clang++ the
error and the user's line with its caret. Run from the repository's root after changing a message:
    python3 tests/compile_fail/refresh_docs.py
"""
import pathlib
import re
import subprocess
import sys

sys.path.insert(0, str(pathlib.Path(__file__).parent))
import run  # noqa: E402  (the trimming the compile-fail runner checks the docs against)

ROOT = pathlib.Path(__file__).resolve().parents[2]


def trimmed(case, compiler):
    out = subprocess.run([compiler, "-std=c++20", "-fsyntax-only", "-DSHAPE_BUG", "-Iinclude", "-Itests/compile_fail",
                          f"tests/compile_fail/{case}.cpp"], cwd=ROOT, capture_output=True, text=True).stderr
    return run.trimmed(out, case, compiler)


def refresh_doc(doc):
    text = doc.read_text()
    pattern = re.compile(r"(?P<who>g\+\+ 12|clang\+\+ 14):\n\n<!-- error: tests/compile_fail/(?P<case>[^ ]+?)\.cpp -->\n```text\n.*?```",
                         re.S)

    def refresh(m):
        compiler = "g++" if m.group("who").startswith("g++") else "clang++"
        case = m.group("case")
        return f"{m.group('who')}:\n\n<!-- error: tests/compile_fail/{case}.cpp -->\n```text\n{trimmed(case, compiler)}```"

    new, count = pattern.subn(refresh, text)
    if count:
        doc.write_text(new)
        print(f"refreshed {count} blocks in {doc.relative_to(ROOT)}")


def main():
    for doc in sorted((ROOT / "docs").glob("*.md")):
        refresh_doc(doc)


if __name__ == "__main__":
    main()
