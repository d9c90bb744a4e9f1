#!/usr/bin/env python3
"""Builds one libFuzzer target with clang++ (-fsanitize=fuzzer,address,undefined) and runs it: first over its
committed corpus (valid files and every crash found so far), then fuzzing for --seconds from that corpus.

Limits, the ones docs/reliability.md states: each input within 1 s (-timeout=1), no allocation over 64 MB
(-malloc_limit_mb=64), 2 GB in all. Exit 77 (meson's "skipped") when clang++ or its libFuzzer runtime is
absent, unless SHAPED_REQUIRE_FUZZ=1 (CI), where that is a failure.

    run.py --cxx clang++ --flag=-I... TARGET.cpp CORPUS_DIR [--seconds 60] [--work DIR]
"""
import argparse, os, re, shutil, subprocess, sys, tempfile, time

p = argparse.ArgumentParser()
p.add_argument("--cxx", default="clang++")
p.add_argument("--flag", action="append", default=[])
p.add_argument("--link", action="append", default=[])
p.add_argument("--seconds", type=int, default=60)
p.add_argument("--work", help="keep the binary and the grown corpus here (default: a temporary folder)")
p.add_argument("source")
p.add_argument("corpus")
a = p.parse_args()
required = os.environ.get("SHAPED_REQUIRE_FUZZ") == "1"


def skip(why):
    print(f"skipped: {why}")
    sys.exit(1 if required else 77)


cxx = shutil.which(a.cxx)
if not cxx:
    skip(f"{a.cxx} not found")
work = a.work or tempfile.mkdtemp(prefix="shaped_fuzz_")
os.makedirs(work, exist_ok=True)
name = os.path.splitext(os.path.basename(a.source))[0]
binary = os.path.join(work, name)
probe = subprocess.run([cxx, "-fsanitize=fuzzer", "-x", "c++", "-", "-o", os.path.join(work, "probe")],
                       input=b'extern "C" int LLVMFuzzerTestOneInput(const char*, unsigned long) { return 0; }',
                       capture_output=True)
if probe.returncode != 0:
    skip("clang's libFuzzer runtime is not installed (Debian: libclang-rt-14-dev)")

build = [cxx, "-std=c++20", "-O1", "-g", "-fno-omit-frame-pointer", "-fsanitize=fuzzer,address,undefined",
         "-fno-sanitize-recover=undefined", *a.flag, a.source, "-o", binary, *a.link]
t = time.time()
r = subprocess.run(build, capture_output=True, text=True)
if r.returncode != 0:
    print(" ".join(build)); print(r.stdout, r.stderr); sys.exit(1)
print(f"built {name} in {time.time() - t:.0f} s")

# The committed corpus is read, never written: libFuzzer grows a copy.
grown = os.path.join(work, "corpus")
shutil.rmtree(grown, ignore_errors=True)
shutil.copytree(a.corpus, grown)
env = dict(os.environ, ASAN_OPTIONS="detect_leaks=1:allocator_may_return_null=0",
           UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1")
limits = ["-timeout=1", "-malloc_limit_mb=64", "-rss_limit_mb=2048"]
files = sorted(os.path.join(a.corpus, f) for f in os.listdir(a.corpus))
r = subprocess.run([binary, *limits, *files], env=env, capture_output=True, text=True)
if r.returncode != 0:
    print(r.stdout[-4000:], r.stderr[-8000:]); print(f"FAILED on the committed corpus ({len(files)} inputs)"); sys.exit(1)
print(f"committed corpus: {len(files)} inputs, no crash")

artifacts = os.path.join(work, "crashes") + os.sep
os.makedirs(artifacts, exist_ok=True)
run = [binary, *limits, f"-max_total_time={a.seconds}", f"-artifact_prefix={artifacts}", "-print_final_stats=1", grown]
r = subprocess.run(run, env=env, capture_output=True, text=True)
stats = dict(re.findall(r"stat::(\w+):\s+(\d+)", r.stderr))
counts = re.findall(r"shaped_fuzz: accepted (\d+), refused (\d+)", r.stderr)
outcome = f"{counts[-1][0]} accepted, {counts[-1][1]} refused as expected, " if counts else ""
print(f"fuzzed {a.seconds} s: {stats.get('number_of_executed_units', '?')} inputs tried, {outcome}"
      f"corpus {len(os.listdir(grown))} files, peak RSS {stats.get('peak_rss_mb', '?')} MB")
if r.returncode != 0:
    print(r.stderr[-8000:])
    print(f"FAILED: crash inputs in {artifacts}; add each to {a.corpus} once fixed")
    sys.exit(1)
print("0 crashes, 0 sanitizer reports")
