#!/usr/bin/env python3
"""Runs examples/gpt2_generate.cpp on a random GPT-2 124M checkpoint and on bad files.

Usage: check_gpt2_generate.py MAKER EXAMPLE EXPECTED TINY VOCAB PROMPT_EXPECTED
  MAKER     build/tests/io/make_gpt2_checkpoint: writes the checkpoint of tests/golden/make_goldens.py
            (gpt2_layout, seed 73) with shaped's bit-exact torch::randn, into a temporary folder;
  EXAMPLE   build/examples/gpt2_generate;
  EXPECTED  tests/golden/weights/gpt2_generate.out: what the book's model prints with those weights;
  TINY      tests/golden/weights/tiny_gpt2.safetensors: a checkpoint of another size;
  VOCAB     tests/data: GPT-2's encoder.json and vocab.bpe (and tokenizer_json/gpt2.json, to make its
            tokenizer.json, which a checkpoint's folder holding one gives the prompt without --vocab);
  PROMPT_EXPECTED  tests/golden/weights/gpt2_generate_prompt.out: the same run from --prompt "Every effort moves
            you": the text (tiktoken's decode of EXPECTED's ids) on one line, then EXPECTED.
Checks that both the cached and the uncached generation print EXPECTED, and that a missing file, a truncated
one and one of another size each exit non-zero, print nothing on stdout, and name the file and the problem.
Then that each bad command line (a signed or spaced number, more tokens than the context holds, an id outside the
vocabulary, a FIFO or a directory for --weights, an unknown flag, a missing value) is refused before the
checkpoint is read: within a second (loading alone takes seconds; some of these hung or ran for hours before),
with one line on stderr naming the flag, the value and the rule.
"""
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import time

IDS = ["--ids", "6109,3626,6100,345", "--max-new-tokens", "10"]
PROMPT = "6109,3626,6100,345"
REFUSAL_SECONDS = 5.0  # a refusal reads no weights (at most the tokenizer, slower on a loaded machine); a run that loads them takes longer
RULE_IDS = "ids are token ids in decimal digits (no sign, no spaces) separated by single commas"
RULE_COUNT = "not a number of tokens; write decimal digits only (no sign, no spaces)"
USAGE = "; usage: gpt2_generate --weights FILE.safetensors (--ids"


def refusal_cases(weights, tmp, vocab):
    """(label, arguments, exit code, text stderr must hold): each must be refused before the weights are read."""
    fifo = tmp / "fifo.safetensors"
    os.mkfifo(fifo)
    fits = ("the prompt's 4 ids and the new tokens must fit context_length 1024; "
            "at most 1020 new tokens after this prompt")
    w = ["--weights", str(weights)]
    return [
        ("max-new-tokens ' -3'", [*w, "--ids", PROMPT, "--max-new-tokens", " -3"], 2,
         f"gpt2_generate: --max-new-tokens ' -3': {RULE_COUNT}"),
        ("max-new-tokens -3", [*w, "--ids", PROMPT, "--max-new-tokens", "-3"], 2,
         f"gpt2_generate: --max-new-tokens '-3': {RULE_COUNT}"),
        ("max-new-tokens +5", [*w, "--ids", PROMPT, "--max-new-tokens", "+5"], 2,
         f"gpt2_generate: --max-new-tokens '+5': {RULE_COUNT}"),
        ("max-new-tokens ''", [*w, "--ids", PROMPT, "--max-new-tokens", ""], 2,
         f"gpt2_generate: --max-new-tokens '': {RULE_COUNT}"),
        ("max-new-tokens 5000 --no-cache", [*w, "--ids", PROMPT, "--max-new-tokens", "5000", "--no-cache"], 2,
         f"gpt2_generate: --max-new-tokens '5000': {fits}"),
        ("max-new-tokens 5000", [*w, "--ids", PROMPT, "--max-new-tokens", "5000"], 2,
         f"gpt2_generate: --max-new-tokens '5000': {fits}"),
        ("max-new-tokens 1021 --no-cache", [*w, "--ids", PROMPT, "--max-new-tokens", "1021", "--no-cache"], 2,
         f"gpt2_generate: --max-new-tokens '1021': {fits}"),
        ("max-new-tokens 2^64", [*w, "--ids", PROMPT, "--max-new-tokens", "18446744073709551616"], 2,
         f"gpt2_generate: --max-new-tokens '18446744073709551616': {fits}"),
        ("weights FIFO", ["--weights", str(fifo), *IDS], 1,
         f"gpt2_generate: --weights '{fifo}': a FIFO, not a regular file"),
        ("weights directory", ["--weights", str(tmp), *IDS], 1,
         f"gpt2_generate: --weights '{tmp}': a directory, not a regular file"),
        ("ids '1,'", [*w, "--ids", "1,"], 2, f"gpt2_generate: --ids '1,': id 2 of 2 is empty; {RULE_IDS}"),
        ("ids ' 5'", [*w, "--ids", " 5"], 2,
         f"gpt2_generate: --ids ' 5': id 1 of 1 ' 5' is not a token id; {RULE_IDS}"),
        ("ids +5", [*w, "--ids", "+5"], 2, f"gpt2_generate: --ids '+5': id 1 of 1 '+5' is not a token id; {RULE_IDS}"),
        ("ids -1", [*w, "--ids", "-1"], 2, f"gpt2_generate: --ids '-1': id 1 of 1 '-1' is not a token id; {RULE_IDS}"),
        ("ids ''", [*w, "--ids", ""], 2, f"gpt2_generate: --ids '': id 1 of 1 is empty; {RULE_IDS}"),
        ("ids 50257", [*w, "--ids", "6109,50257"], 2,
         "gpt2_generate: --ids '6109,50257': id 2 of 2 '50257' is not below vocab_size 50257; "
         "token ids run from 0 to 50256"),
        ("ids 2^64", [*w, "--ids", "18446744073709551616"], 2,
         "gpt2_generate: --ids '18446744073709551616': id 1 of 1 '18446744073709551616' is not below vocab_size 50257"),
        ("ids 1025 of them", [*w, "--ids", ",".join(["1"] * 1025), "--max-new-tokens", "0"], 2,
         "1025 ids; a prompt has at most 1024 (context_length)"),
        ("unknown flag", [*w, *IDS, "--temperature", "1"], 2, "gpt2_generate: unknown flag '--temperature'" + USAGE),
        ("missing value", [*w, "--ids", PROMPT, "--max-new-tokens"], 2,
         "gpt2_generate: --max-new-tokens needs a value" + USAGE),
        ("ids twice", [*w, *IDS, "--ids", "1"], 2, "gpt2_generate: --ids is given twice" + USAGE),
        ("no weights", IDS, 2, "gpt2_generate: --weights is required" + USAGE),
        ("ids and prompt", [*w, "--ids", PROMPT, "--prompt", "x"], 2,
         "gpt2_generate: --ids and --prompt are two prompts; give one" + USAGE),
        ("prompt with <|endoftext|>", [*w, "--prompt", "a<|endoftext|>b", "--vocab", vocab], 2,
         "gpt2_generate: --prompt 'a<|endoftext|>b': shaped::text::bpe_tokenizer::encode: the text holds the special "
         "token <|endoftext|>"),
        ("prompt not UTF-8", [*w, "--prompt", "a\udcffb", "--vocab", vocab], 2,
         "shaped::text::bpe_tokenizer::encode: the text is not UTF-8 (byte 1)"),
        ("empty prompt", [*w, "--prompt", "", "--vocab", vocab], 2,
         "gpt2_generate: --prompt '': the prompt needs at least one token"),
        ("vocab without a tokenizer", [*w, "--prompt", "hi", "--vocab", str(tmp)], 2,
         f"gpt2_generate: --vocab '{tmp}': no GPT-2 tokenizer there"),
        ("prompt, no tokenizer beside the weights", [*w, "--prompt", "hi"], 2,
         f"gpt2_generate: --weights' folder '{tmp}': no GPT-2 tokenizer there"),
    ]


def tokenizer_json(data):
    """GPT-2's tokenizer.json from tests/data: its piece with GPT-2's vocabulary and merges put in."""
    piece = (data / "tokenizer_json" / "gpt2.json").read_text(encoding="utf-8")
    vocab = (data / "encoder.json").read_text(encoding="utf-8").strip()
    lines = (data / "vocab.bpe").read_text(encoding="utf-8").split("\n")
    merges = [l for i, l in enumerate(lines) if l and not (i == 0 and l.startswith("#version"))]
    return piece.replace('"@VOCAB@"', vocab).replace('"@MERGES@"', json.dumps(merges, ensure_ascii=False))


def check_refusal(example, label, args, code, text):
    """A problem, or None: exit `code` within REFUSAL_SECONDS, nothing on stdout, `text` on a single stderr line."""
    start = time.monotonic()
    try:
        p = subprocess.run([example, *args], capture_output=True, text=True, errors="replace", timeout=REFUSAL_SECONDS)
    except subprocess.TimeoutExpired:
        return f"{label}: still running after {REFUSAL_SECONDS} s (killed); expected exit {code} with {text!r}"
    seconds = time.monotonic() - start
    print(f"{label}: exit {p.returncode} in {seconds:.2f} s: {p.stderr.strip()[:200]}")
    if p.returncode != code or p.stdout != "" or p.stderr.count("\n") != 1 or text not in p.stderr:
        return (f"{label}: expected exit {code}, no output and one line on stderr holding {text!r}; got exit "
                f"{p.returncode}, stdout {p.stdout[:200]!r}, stderr {p.stderr[:400]!r}")
    return None


def run(example, weights, *extra):
    return subprocess.run([example, "--weights", str(weights), *IDS, *extra], capture_output=True, text=True)


def main():
    maker, example, expected, tiny, vocab, prompt_expected = sys.argv[1:7]
    want = pathlib.Path(expected).read_text()
    want_text = pathlib.Path(prompt_expected).read_text(encoding="utf-8")
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
        # The same prompt as text: tokenized as tiktoken does, then the new tokens' text, then the same ids.
        for extra in ([], ["--no-cache"]):
            p = subprocess.run([example, "--weights", str(weights), "--prompt", "Every effort moves you", "--vocab", vocab,
                                "--max-new-tokens", "10", *extra], capture_output=True, text=True, encoding="utf-8")
            label = "--prompt " + ("cached" if not extra else "uncached")
            if p.returncode != 0 or p.stdout != want_text:
                problems.append(f"{label}: exit {p.returncode}, printed {p.stdout!r}, stderr {p.stderr!r}; "
                                f"expected {want_text!r}")
            else:
                print(f"{label}: prints the text and the ids: {p.stdout.strip()!r}")
        # A Hugging Face directory with tokenizer.json (GPT-2's, made of tests/data's vocabulary as
        # make_tokenizer_json_goldens.mjs makes it) beside the weights: picked up without --vocab.
        hf = pathlib.Path(tmp) / "hf"
        hf.mkdir()
        (hf / "model.safetensors").symlink_to(weights)
        (hf / "tokenizer.json").write_text(tokenizer_json(pathlib.Path(vocab)), encoding="utf-8")
        p = subprocess.run([example, "--weights", str(hf / "model.safetensors"), "--prompt", "Every effort moves you",
                            "--max-new-tokens", "10"], capture_output=True, text=True, encoding="utf-8")
        if p.returncode != 0 or p.stdout != want_text:
            problems.append(f"--prompt with tokenizer.json: exit {p.returncode}, printed {p.stdout!r}, stderr "
                            f"{p.stderr!r}; expected {want_text!r}")
        else:
            print(f"--prompt with the folder's tokenizer.json: prints the text and the ids: {p.stdout.strip()!r}")
        (hf / "tokenizer.json").write_text('{"model": {"type": "Unigram"}}', encoding="utf-8")
        if (problem := check_refusal(example, "tokenizer.json of another model", [
                "--weights", str(hf / "model.safetensors"), "--prompt", "Hi"], 1,
                f"{hf / 'tokenizer.json'}")) is not None:
            problems.append(problem)
        p = subprocess.run([example, "--weights", str(weights), "--ids", PROMPT, "--max-new-tokens", "0"],
                           capture_output=True, text=True)
        if p.returncode != 0 or [int(t) for t in p.stdout.strip(" \n[]tensor()").split(",")] != [6109, 3626, 6100, 345]:
            problems.append(f"max-new-tokens 0: expected the prompt back; exit {p.returncode}, printed {p.stdout!r}, "
                            f"stderr {p.stderr!r}")
        else:
            print(f"max-new-tokens 0: prints the prompt: {p.stdout.strip()}")
        # With a valid checkpoint in place: a program that read it before checking would load, then run or hang.
        for case in refusal_cases(weights, pathlib.Path(tmp), vocab):
            if (problem := check_refusal(example, *case)) is not None:
                problems.append(problem)
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
