#!/usr/bin/env python3
"""Runs an example and checks what it prints.

Usage:
  check_output.py EXECUTABLE EXPECTED [EXPECTED ...] [--args ARG ...]
      exits 0 and prints the expected files' text, in order (what PyTorch printed for the same program:
      tests/golden/**/*.out): the same text, and the same numbers to within one unit in the last digit
      printed. Products of matrices round differently with each BLAS kernel (OpenBLAS picks one per CPU,
      and PyTorch calls it with other arguments), so a value that lies near a rounding boundary of the
      printout may print one digit apart; a number that differs by more, an integer (a token id, an extent)
      that differs at all, or text that differs at all, fails;
  check_output.py EXECUTABLE --args ARG ... --fails-with TEXT
      exits with a status other than 0, prints nothing on stdout, and TEXT on stderr.
"""
import argparse
import decimal
import difflib
import pathlib
import re
import subprocess
import sys

NUMBER = re.compile(r"-?(?:\d+\.?\d*|\.\d+)(?:e[+-]?\d+)?")


def last_digit(token):
    """One unit in the last digit printed: 0.0001 for '-0.0152', 1e-12 for '9.9341e-09'."""
    mantissa, _, exponent = token.partition("e")
    decimals = len(mantissa.partition(".")[2])
    return decimal.Decimal(1).scaleb(-decimals + (int(exponent) if exponent else 0))


def same_printout(expected, actual, rtol=0.0):
    """The same text, and numbers that agree to within one unit in their last printed digit (or, for numbers
    with a decimal point, to within rtol of the expected value, when rtol is given)."""
    e_tokens, a_tokens = NUMBER.split(expected), NUMBER.split(actual)
    e_numbers, a_numbers = NUMBER.findall(expected), NUMBER.findall(actual)
    if e_tokens != a_tokens or len(e_numbers) != len(a_numbers):
        return False
    for e, a in zip(e_numbers, a_numbers):
        integer = not any(c in e + a for c in ".e")  # token ids, extents, counts: exact
        if e != a and not integer and rtol and abs(decimal.Decimal(e) - decimal.Decimal(a)) <= \
                decimal.Decimal(rtol) * abs(decimal.Decimal(e)):
            continue
        if e != a and (integer or last_digit(e) != last_digit(a) or
                       abs(decimal.Decimal(e) - decimal.Decimal(a)) > last_digit(e)):
            return False
    return True


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("exe")
    parser.add_argument("expected", nargs="*")
    parser.add_argument("--args", nargs="+", default=[],
                        help="the program's arguments; ones that begin with '-' (its own flags) are taken as they are, "
                             "up to --fails-with or --rtol")
    parser.add_argument("--fails-with")
    parser.add_argument("--rtol", type=float, default=0.0,
                        help="numbers with a decimal point may differ by this much relative to the expected one")
    # argparse would take a program's flag after --args (--model) for one of its own: set them apart first.
    argv, program_args = sys.argv[1:], []
    if "--args" in argv:
        at = argv.index("--args")
        end = next((i for i in range(at + 1, len(argv)) if argv[i] in ("--fails-with", "--rtol")), len(argv))
        program_args, argv = argv[at + 1:end], argv[:at] + argv[end:]
    a = parser.parse_args(argv)
    a.args = program_args
    proc = subprocess.run([a.exe, *a.args], capture_output=True, text=True)
    name = " ".join([pathlib.Path(a.exe).name, *a.args])
    if a.fails_with is not None:
        ok = proc.returncode != 0 and proc.stdout == "" and a.fails_with in proc.stderr
        print(f"{name}: exit status {proc.returncode}, stderr:\n{proc.stderr}")
        if not ok:
            print(f"expected a non-zero exit, no output, and on stderr: {a.fails_with}")
        return 0 if ok else 1
    sys.stderr.write(proc.stderr)
    expected = "".join(pathlib.Path(f).read_text() for f in a.expected)
    ok = True
    if proc.returncode != 0:
        print(f"{name} exited with {proc.returncode}")
        ok = False
    if proc.stdout != expected and not same_printout(expected, proc.stdout, a.rtol):
        print("output differs from PyTorch's:")
        sys.stdout.writelines(difflib.unified_diff(expected.splitlines(True), proc.stdout.splitlines(True),
                                                   "PyTorch", name))
        ok = False
    if ok:
        how = "" if proc.stdout == expected else ", some numbers one digit apart"
        print(f"{name}: prints what PyTorch prints ({len(expected.splitlines())} lines{how})")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
