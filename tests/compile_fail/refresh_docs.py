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

ROOT = pathlib.Path(__file__).resolve().parents[2]


def trimmed(case, compiler):
    out = subprocess.run([compiler, "-std=c++20", "-fsyntax-only", "-DSHAPE_BUG", "-Iinclude", "-Itests/compile_fail",
                          f"tests/compile_fail/{case}.cpp"], cwd=ROOT, capture_output=True, text=True).stderr.splitlines()
    keep = []
    for i, line in enumerate(out):
        if compiler == "g++":
            if (("required from here" in line and f"{case}.cpp" in line) or ": error: " in line
                    or "note: ‘shaped::diag::expect" in line):
                keep.append(line)
        elif ": error: " in line:
            keep.append(line)
            if line.startswith("tests/compile_fail"):
                keep += out[i + 1:i + 3]
        elif "requested here" in line and line.startswith(f"tests/compile_fail/{case}.cpp"):
            keep += out[i:i + 3]
    return "\n".join(keep) + "\n"


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
