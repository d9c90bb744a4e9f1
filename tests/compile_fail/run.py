#!/usr/bin/env python3
"""Compile-fail runner: each case compiles without SHAPE_BUG and fails with it, printing the expected text.

A case is one .cpp file whose bad line(s) sit behind `#ifdef SHAPE_BUG` and whose comments state
  // expect-error: <text that the first error line must contain>
  // expect-context: <text that must appear somewhere in the compiler's output>   (optional, repeatable)
  // expect-errors: <N>   (optional: exactly N lines report an error, so later uses add none)
For every compiler given, the runner checks:
  1. the file without SHAPE_BUG compiles (the twin: a typo cannot pass as a success);
  2. with -DSHAPE_BUG it fails;
  3. the first line that reports an error contains the expect-error text (our message comes first);
  4. every expect-context text appears in the output (axes and extents are named);
  5. with expect-errors, the number of error lines;
  6. with --docs DIR (or FILE.md; repeatable), every block of the docs that quotes this compiler's output
     for the case (`g++ 12:` or `clang++ 14:`, then `<!-- error: PATH/CASE.cpp -->` and a ```text block,
     PATH relative to --root) is what the compiler prints now, trimmed as refresh_docs.py trims it, file:line
     included (paths relative to --root, `dir/../` folded); a block after `g++ 12, first error line:` is
     that line alone, as `grep -m1 error:` shows it. A quoted error cannot drift from the headers.
A case may live outside tests/compile_fail (examples/first_program.cpp is one).
Usage: run.py --cxx g++ --cxx clang++ [--flag=-I...] [--pch DIR] [--docs DIR ... --root DIR] case.cpp
       run.py --cxx g++ --cxx clang++ [--flag=-I...] --build-pch DIR
With --pch, each compiler includes DIR/<compiler>/pch.hpp first (shaped's headers), precompiled by
--build-pch with the same flags: the cases then compile in about a quarter of the time. Nothing else changes:
the header guards make each case's own includes of those headers no-ops, and the messages are the same.
"""
import argparse
import pathlib
import re
import subprocess
import sys


def expectations(source):
    errors = re.findall(r"^//\s*expect-error:\s*(.+?)\s*$", source, re.M)
    contexts = re.findall(r"^//\s*expect-context:\s*(.+?)\s*$", source, re.M)
    return errors, contexts


# The headers a case may include, precompiled once per compiler with --build-pch.
PCH_HEADERS = ["shaped/shaped.hpp", "shaped/ops/scaled_dot_product_attention.hpp",
               "shaped/nn/multi_head_attention_sdpa.hpp", "shaped/nn/grouped_query_attention.hpp",
               "shaped/nn/multi_head_latent_attention.hpp"]
WARNINGS = ["-Wall", "-Wextra", "-Wpedantic"]


def pch_header(pch_dir, cxx):
    return pathlib.Path(pch_dir) / pathlib.Path(cxx).name / "pch.hpp"


def build_pch(cxx, flags, pch_dir):
    header = pch_header(pch_dir, cxx)
    header.parent.mkdir(parents=True, exist_ok=True)
    header.write_text("".join(f"#include <{h}>\n" for h in PCH_HEADERS))
    out = header.with_name("pch.hpp.pch" if "clang" in pathlib.Path(cxx).name else "pch.hpp.gch")
    cmd = [cxx, "-std=c++20", *WARNINGS, *flags, "-x", "c++-header", str(header), "-o", str(out)]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        print(f"[{cxx}] could not precompile {header}:\n  {' '.join(cmd)}\n{proc.stdout}{proc.stderr}")
    return proc.returncode


def compile_case(cxx, flags, case, bug):
    cmd = [cxx, "-std=c++20", "-fsyntax-only", *WARNINGS, *flags, str(case)]
    if bug:
        cmd.insert(1, "-DSHAPE_BUG")
    proc = subprocess.run(cmd, capture_output=True, text=True)
    return proc.returncode, proc.stdout + proc.stderr, " ".join(cmd)


def first_error_line(output):
    for line in output.splitlines():
        if re.search(r"\berror\b", line) and "In instantiation" not in line and "required from" not in line:
            return line
    return ""


def trimmed(output, case_name, compiler, case_dir="tests/compile_fail"):
    """The lines of a compiler's output that the docs quote: for g++ the user's line ("required from here"),
    the errors and the note with the context; for clang++ the errors (with the user's line and its caret when
    the error is in the case) and the user's line that requested the instantiation, with its caret."""
    out = output.splitlines()
    keep = []
    for i, line in enumerate(out):
        if compiler == "g++":
            if (("required from here" in line and f"{case_name}.cpp" in line) or ": error: " in line
                    or "note: ‘shaped::diag::expect" in line):
                keep.append(line)
        elif ": error: " in line:
            keep.append(line)
            if line.startswith(case_dir):
                keep += out[i + 1:i + 3]
        elif "requested here" in line and line.startswith(f"{case_dir}/{case_name}.cpp"):
            keep += out[i:i + 3]
    # clang++ names the include chain of a later error, which differs with precompiled headers: left out.
    return "\n".join(line for line in keep if not line.startswith("In file included from")) + "\n"


def folded(text):
    """Paths with `dir/../` folded, which differ with the order headers were first included in."""
    previous = None
    while previous != text:
        previous, text = text, re.sub(r"[A-Za-z0-9_.+-]+/\.\./", "", text)
    return text


def case_path(case, root):
    """The case's path as the docs name it: relative to the repository's root."""
    if root:
        try:
            return case.resolve().relative_to(pathlib.Path(root).resolve()).as_posix()
        except ValueError:
            pass
    return f"tests/compile_fail/{case.name}"


# A quoted error in the docs: "g++ 12:", "clang++ 14:" or "g++ 12, first error line:", a blank line, the
# case's marker and a text block. refresh_docs.py rewrites the blocks this finds.
QUOTED = re.compile(r"^(?P<who>(?P<cxx>g\+\+ 12|clang\+\+ 14)(?P<first>, first error line)?):\n\n"
                    r"<!-- error: (?P<path>[^ ]+?\.cpp) -->\n```text\n(?P<block>.*?)```", re.S | re.M)


def docs_problems(cxx, output, case, docs, root):
    """Blocks of the docs that quote this compiler's output for the case as it no longer is."""
    name = pathlib.Path(cxx).name
    compiler = "clang++" if "clang" in name else "g++"
    label = "clang++ 14" if compiler == "clang++" else "g++ 12"
    if root:
        output = output.replace(str(pathlib.Path(root).resolve()) + "/", "")
    path = case_path(case, root)
    quoted = {label: folded(trimmed(output, case.stem, compiler, path.rsplit("/", 1)[0])),
              label + ", first error line": folded(first_error_line(output)) + "\n"}
    files = [f for d in docs for f in (sorted(d.glob("*.md")) if d.is_dir() else [d])]
    problems = []
    for doc in files:
        for m in QUOTED.finditer(doc.read_text()):
            if m["path"] != path or m["who"] not in quoted:
                continue
            now = quoted[m["who"]]
            if folded(m["block"]) != now:
                problems.append(f"[{cxx}] {doc.name} quotes {path}'s error as it no longer is (run "
                                f"tests/compile_fail/refresh_docs.py):\n--- quoted ---\n{m['block']}--- now ---\n{now}")
    return problems


def check(cxx, flags, case, docs=None, root=None):
    source = case.read_text()
    problems = []
    if "SHAPE_BUG" not in source:
        return [f"{case.name}: no SHAPE_BUG line, so there is no compiling twin"]
    errors, contexts = expectations(source)
    if len(errors) != 1:
        return [f"{case.name}: needs exactly one '// expect-error:' line, found {len(errors)}"]
    rc, out, cmd = compile_case(cxx, flags, case, bug=False)
    if rc != 0 or re.search(r"\bwarning\b", out):
        problems.append(f"[{cxx}] the twin (without SHAPE_BUG) must compile warning-free:\n  {cmd}\n{out}")
    rc, out, cmd = compile_case(cxx, flags, case, bug=True)
    if rc == 0:
        problems.append(f"[{cxx}] with SHAPE_BUG it compiled, but it must not:\n  {cmd}")
        return problems
    first = first_error_line(out)
    if errors[0] not in first:
        problems.append(f"[{cxx}] the first error does not contain the expected text\n"
                        f"  expected: {errors[0]}\n  first error: {first}\n--- output ---\n{out}")
    count = re.search(r"^//\s*expect-errors:\s*(\d+)\s*$", source, re.M)
    errors_seen = sum(1 for line in out.splitlines() if re.search(r"\berror:", line))
    if count and errors_seen != int(count.group(1)):
        problems.append(f"[{cxx}] {errors_seen} error lines, expected {count.group(1)}\n--- output ---\n{out}")
    for text in contexts:
        if text not in out:
            problems.append(f"[{cxx}] the output does not name '{text}'\n--- output ---\n{out}")
    if docs:
        problems += docs_problems(cxx, out, case, docs, root)
    lines = len(out.splitlines())
    print(f"[{cxx}] {case.name}: fails as expected; {lines} lines of diagnostics")
    return problems


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--cxx", action="append", required=True)
    parser.add_argument("--flag", action="append", default=[])
    parser.add_argument("--pch", help="use the headers precompiled in this directory by --build-pch")
    parser.add_argument("--build-pch", help="precompile shaped's headers for each compiler into this directory")
    parser.add_argument("--docs", type=pathlib.Path, action="append", help="a folder of .md files (or one file) "
                        "whose quoted compiler output for the case must be current; repeatable")
    parser.add_argument("--root", help="the repository's root: stripped from paths in the compiler's output")
    parser.add_argument("case", type=pathlib.Path, nargs="?")
    args = parser.parse_args()
    if args.build_pch:
        return max(build_pch(cxx, args.flag, args.build_pch) for cxx in args.cxx)
    if args.case is None:
        parser.error("a case is needed")
    problems = []
    for cxx in args.cxx:
        flags = list(args.flag)
        if args.pch:
            header = pch_header(args.pch, cxx)
            if not header.exists():
                return print(f"{header} is missing: build it with --build-pch") or 1
            flags += ["-include", str(header)]
        problems += check(cxx, flags, args.case, args.docs, args.root)
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
