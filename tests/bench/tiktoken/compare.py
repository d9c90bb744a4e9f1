#!/usr/bin/env python3
"""GPT-2's tokenizer on one thread, shaped against tiktoken (npm) on the same text in the same run, in turns.

    cd tests/bench/tiktoken && npm ci && cd - && python3 tests/bench/tiktoken/compare.py build/tests/bench/text_bench

Each round runs text_bench's 1 MB encode and decode, then tiktoken's, and the medians of the rounds are printed
with their ratio (shaped / tiktoken; the issue's target is >= 1.0 for encoding). Benchmark-only: the suite runs
text_bench once, not this."""
import json, pathlib, statistics, subprocess, sys

here = pathlib.Path(__file__).resolve().parent
data = here.parent.parent / "data"


def main():
    bench, rounds = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 5
    ours = {"encode": [], "decode": []}
    theirs = {"encode": [], "decode": []}
    for _ in range(rounds):
        out = subprocess.run([bench, "--benchmark_filter=/verdict/50", "--benchmark_format=json",
                              "--benchmark_min_time=1"], capture_output=True, text=True, check=True).stdout
        for b in json.loads(out)["benchmarks"]:
            kind = "encode" if "encode" in b["name"] else "decode"
            ours[kind].append(b["bytes_per_second"] / 1e6)
        lines = subprocess.run(["node", str(here / "tiktoken_bench.mjs"), str(data), "50", "3"], cwd=here,
                               capture_output=True, text=True, check=True).stdout.splitlines()
        for line in lines:
            r = json.loads(line)
            theirs["encode"].append(r["encode_mb_s"])
            theirs["decode"].append(r["decode_mb_s"])
    print("GPT-2 BPE, 1 thread, the-verdict.txt x 50 (1.02 MB), medians of rounds in turns:")
    print("| | shaped (MB/s) | tiktoken npm (MB/s) | ratio |")
    print("|---|---|---|---|")
    for kind in ("encode", "decode"):
        a, b = statistics.median(ours[kind]), statistics.median(theirs[kind])
        print(f"| {kind} | {a:.1f} | {b:.1f} | {a / b:.2f} |")


if __name__ == "__main__":
    main()
