#!/usr/bin/env python3
"""Refreshes the compiler output quoted in the docs (docs/*.md and README.md) from the compile-fail cases.

Each `<!-- error: PATH/CASE.cpp -->` block that follows a "g++ 12:" or "clang++ 14:" line is replaced by what
that compiler prints for the case with -DSHAPE_BUG, trimmed to the lines a reader needs: for g++ the user's
line ("required from here"), the error and the note with the context; for clang++ the error and the user's
line with its caret. After "g++ 12, first error line:" the block is that line alone (what `grep -m1 error:`
shows). Run from the repository's root after changing a message:
    python3 tests/compile_fail/refresh_docs.py [PATH/CASE.cpp ...]   (only those cases' blocks)
"""
import pathlib
import subprocess
import sys

sys.path.insert(0, str(pathlib.Path(__file__).parent))
import run  # noqa: E402  (the trimming the compile-fail runner checks the docs against)

ROOT = pathlib.Path(__file__).resolve().parents[2]


def output(path, compiler):
    return subprocess.run([compiler, "-std=c++20", "-fsyntax-only", "-DSHAPE_BUG", "-Iinclude", "-Itests/compile_fail",
                           path], cwd=ROOT, capture_output=True, text=True).stderr


def refresh_doc(doc, only=()):
    text = doc.read_text()
    def refresh(m):
        compiler = "g++" if m.group("cxx").startswith("g++") else "clang++"
        path = m.group("path")
        if only and path not in only:
            return m.group(0)
        out = output(path, compiler)
        if m.group("first"):
            quoted = run.first_error_line(out) + "\n"
        else:
            case_dir, name = path.rsplit("/", 1)
            quoted = run.trimmed(out, name.removesuffix(".cpp"), compiler, case_dir)
        return f"{m.group('who')}:\n\n<!-- error: {path} -->\n```text\n{quoted}```"

    new, count = run.QUOTED.subn(refresh, text)
    if count and new != text:
        doc.write_text(new)
        print(f"refreshed {count} blocks in {doc.relative_to(ROOT)}")


def main():
    for doc in [*sorted((ROOT / "docs").glob("*.md")), ROOT / "README.md"]:
        refresh_doc(doc, set(sys.argv[1:]))


if __name__ == "__main__":
    main()
