#!/usr/bin/env python3
"""examples/generate with --prompt: the text is encoded with the folder's tokenizer.json and the ids decoded back.

Usage: check_generate_prompt.py GENERATE CHECKPOINT_DIR DATA_DIR

Copies a small checkpoint (config.json, model.safetensors; a vocabulary of 50 ids) into a temporary folder with
a tokenizer.json of GPT-2's byte-level BPE (DATA_DIR/tokenizer_json/gpt2.json with GPT-2's encoder.json and
vocab.bpe), then checks that:
  1. --prompt 'Q!R#' (GPT-2's ids 48, 0, 49, 2: four one-character pieces, all within the model's 50 ids)
     prints the ids that --ids 48,0,49,2 prints, and before them the text those ids decode to (computed here
     from encoder.json and GPT-2's byte table), greedy and sampled;
  2. a prompt whose ids lie outside the model's vocabulary ('Hello' is GPT-2's 15496) is refused, naming the
     id and vocab_size, with nothing on stdout;
  3. a folder without tokenizer.json is refused, naming the file.
"""
import json
import pathlib
import shutil
import subprocess
import sys
import tempfile


def byte_table():
    """GPT-2's table from bytes to the characters its vocabulary is written in."""
    keep = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    chars, extra = keep[:], 0
    for b in range(256):
        if b not in keep:
            keep.append(b)
            chars.append(256 + extra)
            extra += 1
    return {chr(c): b for b, c in zip(keep, chars)}


def compose(data):
    """tokenizer_json/gpt2.json with "@VOCAB@" and "@MERGES@" filled in, as tests/unit/tokenizer_json.cpp does."""
    piece = (data / "tokenizer_json" / "gpt2.json").read_text(encoding="utf-8")
    vocab = (data / "encoder.json").read_text(encoding="utf-8").rstrip("\n ")
    lines = (data / "vocab.bpe").read_text(encoding="utf-8").split("\n")
    merges = [line for n, line in enumerate(lines) if line and not (n == 0 and line.startswith("#version"))]
    return piece.replace('"@VOCAB@"', vocab, 1).replace('"@MERGES@"', json.dumps(merges), 1)


def run(args):
    return subprocess.run(args, capture_output=True, text=True)


def main():
    generate, checkpoint, data = sys.argv[1], pathlib.Path(sys.argv[2]), pathlib.Path(sys.argv[3])
    decoder = {v: k for k, v in json.loads((data / "encoder.json").read_text(encoding="utf-8")).items()}
    to_byte = byte_table()
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = pathlib.Path(tmp) / "tiny"
        folder.mkdir()
        for name in ["config.json", "model.safetensors"]:
            shutil.copy(checkpoint / name, folder / name)

        # 3 first: no tokenizer.json yet.
        p = run([generate, "--model", folder, "--prompt", "Q!R#"])
        print(f"without tokenizer.json: exit {p.returncode}, stderr: {p.stderr.strip()}")
        if p.returncode == 0 or p.stdout or "tokenizer.json" not in p.stderr:
            failures.append("a folder without tokenizer.json is not refused naming the file")

        (folder / "tokenizer.json").write_text(compose(data), encoding="utf-8")
        for extra in [[], ["--temperature", "25", "--top-k", "20"]]:
            common = ["--model", folder, "--max-new-tokens", "6", *extra]
            by_prompt = run([generate, *common, "--prompt", "Q!R#"])
            by_ids = run([generate, *common, "--ids", "48,0,49,2"])
            print(f"--prompt 'Q!R#' {' '.join(extra)}:\n{by_prompt.stdout}{by_prompt.stderr}")
            if by_prompt.returncode != 0 or by_ids.returncode != 0:
                failures.append(f"generate failed {extra}: {by_prompt.stderr}{by_ids.stderr}")
                continue
            text, _, printed = by_prompt.stdout.partition("\n")
            if printed != by_ids.stdout:
                failures.append(f"--prompt printed {printed!r}, --ids printed {by_ids.stdout!r}")
            ids = [int(t) for t in by_ids.stdout.replace("tensor([[", "").replace("]])", "").split(",")]
            if ids[:4] != [48, 0, 49, 2]:
                failures.append(f"the ids do not begin with the prompt's: {ids}")
            expected = bytes(to_byte[c] for i in ids for c in decoder[i]).decode("utf-8", errors="replace")
            if text != expected:
                failures.append(f"--prompt printed the text {text!r}; the ids decode to {expected!r}")

        p = run([generate, "--model", folder, "--prompt", "Hello", "--max-new-tokens", "2"])
        print(f"--prompt 'Hello': exit {p.returncode}, stderr: {p.stderr.strip()}")
        if p.returncode == 0 or p.stdout or "15496" not in p.stderr or "vocab_size 50" not in p.stderr:
            failures.append("a prompt with ids outside the vocabulary is not refused naming the id and vocab_size")
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
