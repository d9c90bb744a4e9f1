#!/usr/bin/env python3
"""Keeps the docs true: every snippet is a region of a compiled file, every error shown is asserted.

In the Markdown files given (README.md, docs/*.md):
  <!-- snippet: examples/seed_corrected.cpp#simple -->   followed by a ```cpp block: the block must be,
      line for line, the text between the two `// [simple]` markers of that file (common indent removed);
  <!-- snippet: tests/compile_fail/06_matmul_without_transpose.cpp -->   (no #region): the whole file;
  <!-- error: tests/compile_fail/06_matmul_without_transpose.cpp -->   followed by a ``` block: the block
      must contain that case's `// expect-error:` text, which the compile-fail test asserts (the compile-fail
      suite, run with --docs, also compares the whole block with the compiler's output now);
  <!-- output: tests/golden/book/chapter4.out -->   followed by a ``` block: the block must be a run of whole
      lines of that file (what PyTorch printed, which the test suite checks the example against).
In a Python file, a region is marked by `# [name]` lines.
With --all-cases DOC, every compile-fail case (but the runner's sanity cases) must be shown in DOC and
linked from its '## Find your error ...' index.
Every link to another Markdown file must find it, and its #anchor a heading of it (the site's builder
checks neither).
Usage: check_docs.py ROOT [--all-cases docs/reading-errors.md] FILE.md ...
"""
import pathlib
import re
import sys
import textwrap
import unicodedata

MARK = re.compile(r"<!--\s*(snippet|error|output):\s*(\S+?)\s*-->\s*\n```[a-z+]*\n(.*?)```", re.S)


def region(path, name):
    text = path.read_text()
    if name is None:
        return text
    comment = "#" if path.suffix == ".py" else "//"
    m = re.search(rf"^[ \t]*{comment} \[{re.escape(name)}\]\n(.*?)^[ \t]*{comment} \[{re.escape(name)}\]\n", text,
                  re.S | re.M)
    if not m:
        raise KeyError(f"{path}: no region [{name}]")
    return textwrap.dedent(m.group(1))


LINK = re.compile(r"\]\(([^)\s]+?\.md)(#[^)\s]*)?\)")


def slug(heading):
    """The anchor Python-Markdown's toc extension gives a heading (its default slugify, code spans unwrapped)."""
    text = re.sub(r"`([^`]*)`", r"\1", heading)
    text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    text = re.sub(r"[^\w\s-]", "", text).strip().lower()
    return re.sub(r"[-\s]+", "-", text)


def anchors(path):
    """The anchors of a Markdown file's headings, outside fenced code, numbered as toc numbers repeats."""
    seen, fenced = set(), False
    for line in path.read_text().splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and (m := re.match(r"#{1,6} (.+?)\s*#*$", line)):
            base = anchor = slug(m.group(1))
            n = 0
            while anchor in seen:
                n += 1
                anchor = f"{base}_{n}"
            seen.add(anchor)
    return seen


def link_problems(root, doc, text):
    problems = []
    for target, anchor in LINK.findall(text):
        if "://" in target:
            continue
        path = ((root / doc).parent / target).resolve()
        if not path.exists():
            problems.append(f"{doc}: link to {target}: no such file")
        elif anchor and anchor[1:] not in anchors(path):
            problems.append(f"{doc}: link to {target}{anchor}: no such heading there")
    return problems


def main():
    args = sys.argv[1:]
    root = pathlib.Path(args.pop(0))
    all_cases_doc = None
    if args and args[0] == "--all-cases":
        all_cases_doc = args[1]
        args = args[2:]
    problems, shown_errors, checked = [], set(), 0
    for doc in args:
        text = (root / doc).read_text()
        if "<!-- snippet" not in text and "<!-- error" not in text and doc != "README.md":
            problems.append(f"{doc}: shows no checked snippet")
        problems += link_problems(root, doc, text)
        for kind, ref, block in MARK.findall(text):
            checked += 1
            file, _, name = ref.partition("#")
            path = root / file
            if not path.exists():
                problems.append(f"{doc}: {ref}: no such file")
                continue
            if kind == "output":
                if ("\n" + block) not in ("\n" + path.read_text()):
                    problems.append(f"{doc}: the output shown from {ref} is not a run of its lines:\n{block}")
                continue
            if kind == "snippet":
                try:
                    want = region(path, name or None)
                except KeyError as e:
                    problems.append(f"{doc}: {e}")
                    continue
                if block.strip("\n") != want.strip("\n"):
                    problems.append(f"{doc}: the snippet from {ref} differs from the file:\n--- doc\n{block}--- file\n{want}")
            else:
                m = re.search(r"^//\s*expect-error:\s*(.+?)\s*$", path.read_text(), re.M)
                if not m or m.group(1) not in block:
                    problems.append(f"{doc}: the error shown for {ref} does not contain its asserted text")
                if doc == all_cases_doc:
                    shown_errors.add(path.name)
    if all_cases_doc:
        index = re.search(r"^## Find your error.*?(?=^## )", (root / all_cases_doc).read_text(), re.S | re.M)
        for case in sorted((root / "tests" / "compile_fail").glob("*.cpp")):
            if case.name.startswith("sanity_"):
                continue
            if case.name not in shown_errors:
                problems.append(f"{all_cases_doc}: compile-fail case {case.name} has no entry")
            if not index or f"](#{case.name.split('_')[0]}-" not in index.group(0):
                problems.append(f"{all_cases_doc}: compile-fail case {case.name} is not in the 'Find your error' index")
    for p in problems:
        print(p)
    print(f"{checked} snippets and errors checked in {len(args)} files; {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
