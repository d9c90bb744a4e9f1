#!/usr/bin/env python3
"""Runs examples/gpt2_generate.cpp on a random GPT-2 124M checkpoint and on bad files.

Usage: check_gpt2_generate.py MAKER EXAMPLE EXPECTED TINY
  MAKER     build/tests/io/make_gpt2_checkpoint: writes the checkpoint of tests/golden/make_goldens.py
            (gpt2_layout, seed 73) with shaped's bit-exact torch::randn, into a temporary folder;
  EXAMPLE   build/examples/gpt2_generate;
  EXPECTED  tests/golden/weights/gpt2_generate.out: what the book's model prints with those weights;
  TINY      tests/golden/weights/tiny_gpt2.safetensors: a checkpoint of another size.
Checks that both the cached and the uncached generation print EXPECTED, and that a missing file, a truncated
one and one of another size each exit non-zero, print nothing on stdout, and name the file and the problem.
"""
import pathlib
import subprocess
import sys
import tempfile

IDS = ["--ids", "6109,3626,6100,345", "--max-new-tokens", "10"]


def run(example, weights, *extra):
    return subprocess.run([example, "--weights", str(weights), *IDS, *extra], capture_output=True, text=True)


def main():
    maker, example, expected, tiny = sys.argv[1:5]
    want = pathlib.Path(expected).read_text()
    problems = []
    with tempfile.TemporaryDirectory() as tmp:
        weights = pathlib.Path(tmp) / "gpt2.safetensors"
        subprocess.run([maker, str(weights)], check=True)
        for extra in ([], ["--no-cache"]):
            p = run(example, weights, *extra)
            label = "cached" if not extra else "uncached"
            if p.returncode != 0 or p.stdout != want:
                problems.append(f"{label}: exit {p.returncode}, printed {p.stdout!r}, stderr {p.stderr!r}; "
                                f"PyTorch printed {want!r}")
            else:
                print(f"{label}: prints what PyTorch prints: {p.stdout.strip()}")
        truncated = pathlib.Path(tmp) / "truncated.safetensors"
        with open(weights, "rb") as f:
            truncated.write_bytes(f.read(100000))
        weights.unlink()
        cases = [(pathlib.Path(tmp) / "missing.safetensors", "cannot open"),
                 (truncated, "lie outside the data"),
                 (pathlib.Path(tiny), "not a GPT-2 checkpoint of this configuration (12 layers); missing key(s)")]
        for path, text in cases:
            p = run(example, path)
            ok = p.returncode == 1 and p.stdout == "" and str(path) in p.stderr and text in p.stderr
            print(f"{path.name}: exit {p.returncode}: {p.stderr.strip()}")
            if not ok:
                problems.append(f"{path.name}: expected exit 1, no output, and on stderr the file's name and {text!r}")
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
