#!/usr/bin/env python3
"""Measures what shaped costs and writes docs/performance.md and docs/performance.png.

Usage (after the README's build): python3 tests/bench/report.py build [--before REV] [--llama-cpp DIR]
       python3 tests/bench/report.py --diagnostics-only   (rewrites only the diagnostic-length section)
It runs, in one go on this machine:
  1. the run-time benchmarks (build/tests/bench/mha_bench, and libtorch_bench when built): time per
     forward pass, GFLOP/s, ratios in the same run; GPT-2 124M's forward pass and greedy generation
     (gpt_bench, and libtorch_gpt when built);
  2. peak memory of one forward pass at GPT-2 small, batch 8, 1024 tokens;
  3. compile wall time and compiler peak memory for every example and unit-test file, with g++ and
     clang++ at -O2, against plain xtensor twins (tests/bench/plain/) where there is one;
  4. the length of the diagnostics of every compile-fail case;
  5. with --before REV: the compile time of every example and unit-test file at REV (checked out into a
     temporary folder) and now, in turns, medians of three rounds: what a change costs its users;
  6. with --llama-cpp DIR (tests/bench/llama_cpp/llama_bench.py's cache, llama.cpp built there): llama.cpp's
     prefill and decoding beside gpt_bench's, the two in turns.
Figures are printed, never asserted: the machine is shared, so compare the ratios of one run.
"""
import json
import os
import pathlib
import platform
import re
import shutil
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[2]
CONFIGS = ["seed", "book", "gpt2_b1_t128", "gpt2_b1_t256", "gpt2_b1_t1024", "gpt2_b8_t128", "gpt2_b8_t256",
           "gpt2_b8_t1024"]


def run_measured(cmd, cwd=ROOT, env=None):
    """Runs cmd; returns (wall seconds, peak RSS in MB of that process, completed output)."""
    start = time.monotonic()
    proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    return time.monotonic() - start, usage.ru_maxrss / 1024.0, out, proc.returncode


ROUNDS = 3  # each figure is the median of this many rounds; the peers take turns within a round
# glibc's malloc, left to itself, hands a large freed heap top back to the kernel after every forward
# pass at some sizes, so the next pass page-faults its buffers in again. These settings keep the memory.
NO_TRIM = "glibc.malloc.trim_threshold=4294967295:glibc.malloc.mmap_threshold=4294967295"
# shaped advises the kernel to back its large buffers by huge pages (detail/huge_pages.hpp); LibTorch gets the
# same help from glibc's malloc with this setting (its page faults at batch 8 × 1024 fall from 381,000 to
# 18,000), and the report's ratios are stated against LibTorch so helped.
HUGETLB = "glibc.malloc.hugetlb=1"


def peers(build, shaped_exe, torch_exe):
    """The processes of one round: shaped's, LibTorch's as it is, and LibTorch's with huge pages, whose
    benchmark names get the suffix `_hugetlb`."""
    bench = build / "tests" / "bench"
    return [(bench / shaped_exe, None, ""), (bench / torch_exe, None, ""),
            (bench / torch_exe, dict(os.environ, GLIBC_TUNABLES=HUGETLB), "_hugetlb")]


def with_tunables(env, tunables):
    """env with `tunables` added to GLIBC_TUNABLES (colon-separated), keeping what env already sets."""
    env = dict(env or os.environ)
    env["GLIBC_TUNABLES"] = ":".join(t for t in [env.get("GLIBC_TUNABLES"), tunables] if t)
    return env


def run_benchmark(path, name_filter, env=None):
    """Google Benchmark's filter is a POSIX extended regular expression (no \\w, no \\d). A warm-up
    pass comes first for every peer, so that no figure is of a first call into cold memory."""
    out = subprocess.run([str(path), "--benchmark_format=json", "--benchmark_min_time=0.3",
                          "--benchmark_min_warmup_time=0.1",
                          f"--benchmark_filter={name_filter}"], capture_output=True, text=True, check=True,
                         env=env).stdout
    for b in (json.loads(out)["benchmarks"] if out.strip() else []):
        impl, config, threads = re.match(r"(\w+)/(\w+)/threads:(\d+)", b["name"]).groups()
        yield (impl, config, int(threads)), (b["real_time"], b.get("GFLOP/s", 0.0))
        if "causal GFLOP/s" in b:
            yield (impl + "_causal", config, int(threads)), (b["real_time"], b["causal GFLOP/s"])


def benchmarks(build, configs=CONFIGS, impls="[a-z_]+", threads="[0-9]+", env=None):
    """Median time and GFLOP/s per (impl, config, threads) over ROUNDS rounds. Within a round, config by
    config, shaped's benchmarks and LibTorch's run one after the other (in turns), so that a change in the
    machine's load falls on both sides of a ratio."""
    samples = {}
    exes = peers(build, "mha_bench", "libtorch_bench")
    for r in range(ROUNDS):
        for config in configs:
            for path, peer_env, suffix in (exes if r % 2 == 0 else exes[::-1]):
                if path.exists():
                    run_env = with_tunables(env, peer_env["GLIBC_TUNABLES"]) if peer_env else env
                    for (impl, c, t), value in run_benchmark(path, f"^({impls})/{config}/threads:({threads})$",
                                                             run_env):
                        samples.setdefault((impl + suffix if impl.startswith("libtorch") else impl, c, t),
                                           []).append(value)
    median = lambda xs: sorted(xs)[len(xs) // 2]
    return {k: (median([t for t, _ in v]), median([g for _, g in v])) for k, v in samples.items()}


LINEAR_CONFIGS = [f"m{m}_k{k}_n{n}" for m, k, n in [(4, 768, 768), (1024, 768, 768), (1024, 768, 2304),
                                                    (1024, 768, 3072), (1024, 3072, 768), (1024, 768, 50257),
                                                    (8192, 768, 768), (8192, 768, 2304), (8192, 768, 3072),
                                                    (8192, 3072, 768)]]

GPT_CONFIGS = ["forward_b2_t4", "forward_b1_t1024", "generate_b1_t4_new8", "decode_uncached_new32",
               "decode_cached_new32"]


def gpt_benchmarks(build, env=None, name_filter="."):
    """Median time and tokens/s per (impl, config, threads) for GPT-2 124M. Each process draws the model's
    weights once (seconds), so a round runs every configuration in one process per peer; the peers take
    turns, round by round."""
    samples = {}
    exes = peers(build, "gpt_bench", "libtorch_gpt")
    for r in range(ROUNDS):
        for path, peer_env, suffix in (exes if r % 2 == 0 else exes[::-1]):
            if not path.exists():
                continue
            run_env = with_tunables(env, peer_env["GLIBC_TUNABLES"]) if peer_env else env
            out = subprocess.run([str(path), "--benchmark_format=json", "--benchmark_min_time=0.3",
                                  "--benchmark_min_warmup_time=0.1", f"--benchmark_filter={name_filter}"],
                                 capture_output=True, text=True, check=True, env=run_env).stdout
            for b in json.loads(out)["benchmarks"]:
                impl, config, threads = re.match(r"(\w+)/(\w+)/threads:(\d+)", b["name"]).groups()
                impl += suffix if impl.startswith("libtorch") else ""
                rate = b.get("tokens/s", b.get("GB/s", 0.0))
                samples.setdefault((impl, config, int(threads)), []).append((b["real_time"], rate))
                if "weight_MB" in b:
                    samples[("weights", "MB", 0)] = [(b["weight_MB"], 0.0)]
    median = lambda xs: sorted(xs)[len(xs) // 2]
    return {k: (median([t for t, _ in v]), median([g for _, g in v])) for k, v in samples.items()}


def gpt2_forward_flops(tokens, layers=12, width=768, hidden=3072, heads=12, vocab=50257):
    """The matrix products of one GPT-2 small forward pass over `tokens` tokens: per layer the qkv and output
    projections and the feed-forward layers, and the causal half of the scores with their product with the
    values; then the output head."""
    head_dim = width // heads
    per_layer = 2 * tokens * (3 * width * width + width * width + 2 * width * hidden) + \
        2 * 2 * heads * (tokens * (tokens + 1) / 2) * head_dim
    return layers * per_layer + 2 * tokens * width * vocab


def peak_memory(build):
    rows = []
    for exe, impl in [("mha_bench", "shaped_view"), ("mha_bench", "shaped_sdpa"), ("mha_bench", "shaped_loop"),
                      ("mha_bench", "hand_written"),
                      ("mha_bench", "hand_fused"), ("libtorch_bench", "libtorch")]:
        path = build / "tests" / "bench" / exe
        if not path.exists():
            continue
        _, rss, _, _ = run_measured([str(path), f"--benchmark_filter=^{impl}/gpt2_b8_t1024/threads:1$",
                                     "--benchmark_min_time=0"], env=dict(os.environ, SHAPED_BENCH_NO_CHECK="1"))
        rows.append((impl, rss))
    return rows


def compile_times():
    flags = ["-std=c++20", "-O2", "-Iinclude", "-Itests", "-c", "-o", "/dev/null"]
    twins = {"examples/seed_alternative.cpp": "tests/bench/plain/seed_alternative.cpp",
             "examples/book/gpt2_small.cpp": "tests/bench/plain/gpt2_small.cpp",
             "examples/seed_corrected.cpp": "tests/bench/plain/seed_corrected.cpp",
             "examples/book/chapter3.cpp": "tests/bench/plain/chapter3.cpp",
             "examples/tutorial.cpp": "tests/bench/plain/tutorial.cpp"}
    units = sorted(str(p.relative_to(ROOT)) for p in list((ROOT / "examples").rglob("*.cpp"))
                   + list((ROOT / "tests" / "unit").glob("*.cpp")))
    rows = []
    for unit in units:
        for cxx in ["g++", "clang++"]:
            extra = ['-DSHAPED_GOLDEN_DIR="' + str(ROOT / "tests" / "golden") + '"'] if "tests/unit" in unit else []
            wall, rss, out, rc = run_measured([cxx, *flags, *extra, unit])
            twin = twins.get(unit)
            twin_wall = twin_rss = None
            if twin:
                twin_wall, twin_rss, _, _ = run_measured([cxx, *flags, twin])
            rows.append((unit, cxx, wall, rss, twin_wall, twin_rss, rc))
    return rows


# The programs whose rebuild with shaped's headers precompiled the README quotes, with the headers precompiled.
PCH_UNITS = {"examples/book/chapter4.cpp": ["shaped/shaped.hpp"],
             "examples/gpt2_generate.cpp": ["shaped/shaped.hpp", "shaped/io/gpt2_weights.hpp"]}


def pch_compile_times():
    """Each of PCH_UNITS compiled as a rebuild is with a precompiled header (README, "Compile time"): the
    header is built first, untimed, with the same flags; rows as compile_times'."""
    import tempfile
    rows = []
    for unit, headers in PCH_UNITS.items():
        for cxx in ["g++", "clang++"]:
            with tempfile.TemporaryDirectory() as tmp:
                pch = pathlib.Path(tmp) / "shaped_pch.hpp"
                pch.write_text("".join(f"#include <{h}>\n" for h in headers))
                flags = ["-std=c++20", "-O2", "-Iinclude", "-Itests"]
                out = pathlib.Path(tmp) / ("shaped_pch.hpp.gch" if cxx == "g++" else "shaped_pch.hpp.pch")
                subprocess.run([cxx, *flags, "-x", "c++-header", str(pch), "-o", str(out)], cwd=ROOT, check=True)
                use = ["-include", str(pch)] if cxx == "g++" else ["-include-pch", str(out)]
                wall, rss, _, rc = run_measured([cxx, *flags, "-Winvalid-pch", *use, "-c", "-o", "/dev/null", unit])
            rows.append((unit + " (headers precompiled)", cxx, wall, rss, None, None, rc))
    return rows


LLAMA_CPP = None  # --llama-cpp DIR: the cache of tests/bench/llama_cpp/llama_bench.py (llama.cpp built, GGUF written)


def llama_cpp_results(build):
    """With --llama-cpp DIR: tests/bench/llama_cpp/llama_bench.py run against this build's gpt_bench, the two in
    turns (medians of 3 rounds). Returns tokens/s per (peer, "prefill" or "decode", threads), peer "f32", "f16"
    (llama.cpp's weights) or "shaped" (gpt_bench's figure from the same rounds, the one the ratios use), and
    ("about", "llama.cpp", 0) its version; {} without --llama-cpp (the cells then say "–")."""
    if not LLAMA_CPP:
        return {}
    out = build / "llama_cpp_results.json"
    # Debian's python3, whose torch and numpy the script needs to write the GGUF files on a first run.
    python = "/usr/bin/python3" if pathlib.Path("/usr/bin/python3").exists() else sys.executable
    subprocess.run([python, str(ROOT / "tests" / "bench" / "llama_cpp" / "llama_bench.py"),
                    "--cache", str(LLAMA_CPP), "--no-check", "--rounds", "3", "--reps", "3",
                    "--tests", "pp512,tg32@d4", "--gpt-bench", str(build / "tests" / "bench" / "gpt_bench"),
                    "--json", str(out)], check=True, stdout=subprocess.DEVNULL)
    data = json.loads(out.read_text())
    kinds = {"pp512": "prefill", "tg32@d4": "decode"}
    peer = {"llama.cpp f32": "f32", "llama.cpp f16": "f16", "shaped f32": "shaped"}
    results = {(peer[m["peer"]], kinds[m["test"]], m["threads"]): m["value"]
               for m in data["medians"] if m["peer"] in peer and m["test"] in kinds}
    results[("about", "llama.cpp", 0)] = data["llama_cpp"]
    return results


def package_version(name):
    out = subprocess.run(["dpkg-query", "-W", "-f=${Version}", name], capture_output=True, text=True)
    return out.stdout.strip() if out.returncode == 0 else "?"


def gemm_libraries():
    """Which library computes what, with the versions installed (detail/gemm.hpp and detail/weight_product.hpp
    make the choice)."""
    coretype = os.environ.get("OPENBLAS_CORETYPE")
    return (f"oneDNN {package_version('libdnnl2')} (`dnnl_sgemm`, its kernels chosen from the CPU at run time) for "
            f"float matrix products, OpenBLAS {package_version('libopenblas0-pthread')} "
            + (f"(`OPENBLAS_CORETYPE={coretype}`) " if coretype else "")
            + "for double-precision products, one thread per call; shaped's own kernel for a layer's weight "
            "times one to four rows (decoding; detail/gemm_few_rows.hpp); LibTorch "
            f"{package_version('libtorch-dev')} as Debian builds it")


def checkout(rev, folder):
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev], capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(folder)], input=archive, check=True)


def static_view_before_after(before, build):
    """The view form on static axes, built from the before tree and from now, in turns: (config, threads)
    -> (before ms, now ms). What a change costs programs whose axes are all static."""
    bbuild = before / "build-before"
    subprocess.run(["meson", "setup", str(bbuild), "-Dlibtorch=disabled"], cwd=before, check=True,
                   capture_output=True)
    subprocess.run(["meson", "compile", "-C", str(bbuild), "tests/bench/mha_bench"], check=True, capture_output=True)
    exes = {"before": bbuild / "tests" / "bench" / "mha_bench", "now": build / "tests" / "bench" / "mha_bench"}
    samples = {}
    for r in range(ROUNDS):
        for config in CONFIGS:
            for side in (["before", "now"] if r % 2 == 0 else ["now", "before"]):
                for (impl, c, t), (ms_, _) in run_benchmark(exes[side], f"^shaped_view/{config}/threads:1$"):
                    samples.setdefault((c, t, side), []).append(ms_)
    median = lambda xs: sorted(xs)[len(xs) // 2]
    return {(c, t): (median(samples[(c, t, "before")]), median(samples[(c, t, "now")]))
            for (c, t, side) in samples if side == "now" and (c, t, "before") in samples}


def compile_before_after(before):
    """(unit, compiler, before wall, after wall, before MB, after MB) for every unit present at both."""
    rows = []
    units = sorted(str(p.relative_to(ROOT)) for p in list((ROOT / "examples").rglob("*.cpp"))
                   + list((ROOT / "tests" / "unit").glob("*.cpp")))
    for unit in (u for u in units if (before / u).exists()):
        for cxx in ["g++", "clang++"]:
            samples = {"before": [], "after": []}
            for r in range(ROUNDS):
                for side in (["before", "after"] if r % 2 == 0 else ["after", "before"]):
                    root = before if side == "before" else ROOT
                    cmd = [cxx, "-std=c++20", "-O2", f"-I{root}/include", f"-I{root}/tests", "-c", "-o", "/dev/null",
                           f'-DSHAPED_GOLDEN_DIR="{root}/tests/golden"', str(root / unit)]
                    wall, rss, _, _ = run_measured(cmd, cwd=root)
                    samples[side].append((wall, rss))
            med = lambda xs: sorted(xs)[len(xs) // 2]
            rows.append((unit, cxx, med([w for w, _ in samples["before"]]), med([w for w, _ in samples["after"]]),
                         med([m for _, m in samples["before"]]), med([m for _, m in samples["after"]])))
    return rows


def diagnostics():
    """(case, compiler, lines, line of shaped's first message, error lines) for every compile-fail case."""
    from concurrent.futures import ThreadPoolExecutor

    def measure(job):
        case, cxx = job
        out = subprocess.run([cxx, "-std=c++20", "-fsyntax-only", "-DSHAPE_BUG", "-Iinclude", "-Itests/compile_fail",
                              str(case.relative_to(ROOT))], cwd=ROOT, capture_output=True, text=True).stderr
        lines = out.splitlines()
        first = next((i + 1 for i, l in enumerate(lines) if '"shaped' in l or "failed: shaped" in l), None)
        errors = sum(1 for l in lines if re.search(r"\berror:", l))
        return case.name, cxx, len(lines), first, errors

    jobs = [(case, cxx) for case in sorted((ROOT / "tests" / "compile_fail").glob("[0-9]*.cpp"))
            for cxx in ["g++", "clang++"]]
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:  # line counts do not depend on the load
        return list(pool.map(measure, jobs))


# The targets for every compile-fail case: shaped's message within the first 8 lines, the whole output
# within 15 lines on g++ and 20 on clang++.
FIRST_WITHIN, LINES_WITHIN = 8, {"g++": 15, "clang++": 20}


def diagnostics_section(diags):
    md = ["## Diagnostic length", "",
          "Lines each compiler prints for each compile-fail case, the line on which shaped's message first "
          "appears, and the number of lines that report an error. Targets: the message within the first "
          f"{FIRST_WITHIN} lines, the whole output within {LINES_WITHIN['g++']} lines on g++ 12 and "
          f"{LINES_WITHIN['clang++']} on clang++ 14.", "",
          "| case | g++ lines | g++ first | g++ errors | clang++ lines | clang++ first | clang++ errors | within targets |",
          "|---|---|---|---|---|---|---|---|"]
    by_case = {}
    for case, cxx, n, first, errors in diags:
        by_case.setdefault(case, {})[cxx] = (n, first, errors)
    misses = []
    for case, d in by_case.items():
        g, c = d.get("g++", (0, None, 0)), d.get("clang++", (0, None, 0))
        over = [cxx for cxx, (n, first, _) in (("g++", g), ("clang++", c))
                if n > LINES_WITHIN[cxx] or first is None or first > FIRST_WITHIN]
        if over:
            misses.append((case, over))
        md.append(f"| {case} | {g[0]} | {g[1]} | {g[2]} | {c[0]} | {c[1]} | {c[2]} | "
                  f"{'yes' if not over else 'no (' + ', '.join(over) + ')'} |")
    md += ["", f"{len(by_case) - len(misses)} of {len(by_case)} cases within the targets on both compilers"
           + ("." if not misses else "; over: " + ", ".join(f"{c} ({', '.join(o)})" for c, o in misses) + ".")]
    return md


HAND_WRITTEN = "not written by report.py"


def sections(text):
    """The text's `## ` and `### ` sections in order, each (heading line, text up to the next heading of
    either level); the head before the first is titled ""."""
    parts = re.split(r"\n(?=#{2,3} )", text)
    out = [("", parts[0] + "\n")]
    out += [(part.split("\n", 1)[0], part + "\n") for part in parts[1:]]
    out[-1] = (out[-1][0], out[-1][1][:-1])
    return out


def keep_hand_written(new, old):
    """The report's text with the old file's hand-written sections and subsections (those that say
    HAND_WRITTEN) kept: each after the one it followed, if the new text has it (a kept one included, so a run
    of them stays in order), else at the end."""
    old_sections, kept = sections(old), []
    for i, (title, body) in enumerate(old_sections):
        if title and HAND_WRITTEN in " ".join(body.split()):
            kept.append((old_sections[i - 1][0], title, body))
    out = sections(new)
    for after, title, body in kept:
        titles = [t for t, _ in out]
        if after in titles:
            out.insert(titles.index(after) + 1, (title, body))
        else:
            if not out[-1][1].endswith("\n"):
                out[-1] = (out[-1][0], out[-1][1] + "\n")
            out.append((title, body))
    text = "".join(b if b.endswith("\n") else b + "\n" for _, b in out)
    return text if text.endswith("\n") else text + "\n"


def refresh_diagnostics():
    """Rewrites only the diagnostic-length section of docs/performance.md (seconds, not the report's hour)."""
    path = ROOT / "docs" / "performance.md"
    text = path.read_text()
    start = text.index("## Diagnostic length")
    nxt = text.find("\n## ", start + 1)
    section = "\n".join(diagnostics_section(diagnostics())) + "\n"
    path.write_text(text[:start] + section + (text[nxt + 1:] if nxt >= 0 else ""))
    print(section)


PLOTTED = {"shaped_view": "shaped (view form)", "shaped_sdpa": "shaped (fused, scaled_dot_product_attention)",
           "shaped_loop": "shaped (loop form)",
           "hand_written": "hand-written, book's steps", "hand_fused": "hand-written, fused per head",
           "libtorch": "LibTorch"}


def plot(results, png):
    gnuplot = shutil.which("gnuplot")
    if not gnuplot:
        return False
    data = ROOT / "build-plot.dat"
    tokens = {"gpt2_b1_t128": 128, "gpt2_b1_t256": 256, "gpt2_b1_t1024": 1024}
    with open(data, "w") as f:
        for config, t in tokens.items():
            vals = [results.get((impl, config, 1), (float("nan"),))[0] for impl in PLOTTED]
            f.write(f"{t} " + " ".join(f"{v:.4f}" for v in vals) + "\n")
    script = f"""set terminal pngcairo size 800,500 noenhanced
set output '{png}'
set xrange [100:1300]
set title 'Multi-head attention forward, GPT-2 small sizes, batch 1, 1 thread'
set xlabel 'num_tokens'; set ylabel 'ms per forward pass'
set logscale xy; set key left top; set grid
plot """ + ", ".join(f"'{data if i == 0 else ''}' using 1:{i + 2} with linespoints title \"{title}\""
                    for i, title in enumerate(PLOTTED.values())) + "\n"
    subprocess.run([gnuplot], input=script, text=True, check=True)
    data.unlink()
    return True


def main():
    args = sys.argv[1:]
    if "--diagnostics-only" in args:
        return refresh_diagnostics()
    global LLAMA_CPP
    if "--llama-cpp" in args:
        i = args.index("--llama-cpp")
        LLAMA_CPP = pathlib.Path(args[i + 1]).resolve()
        del args[i:i + 2]
    before_rev = None
    if "--before" in args:
        i = args.index("--before")
        before_rev = args[i + 1]
        del args[i:i + 2]
    build = pathlib.Path(args[0] if args else "build").resolve()
    results = benchmarks(build)
    gpt2 = [c for c in CONFIGS if c.startswith("gpt2")]
    no_trim = benchmarks(build, gpt2, "shaped_view|shaped_loop|hand_written|libtorch", "1",
                         dict(os.environ, GLIBC_TUNABLES=NO_TRIM))
    linear = benchmarks(build, LINEAR_CONFIGS, "shaped_linear|onednn_sgemm")
    gpt = gpt_benchmarks(build)
    llama = llama_cpp_results(build)
    memory = peak_memory(build)
    compiles = compile_times() + pch_compile_times()
    before_after, static_before_after = [], {}
    if before_rev:
        import tempfile
        with tempfile.TemporaryDirectory() as tmp:
            before = pathlib.Path(tmp)
            checkout(before_rev, before)
            static_before_after = static_view_before_after(before, build)
            before_after = compile_before_after(before)
    diags = diagnostics()
    png_ok = plot(results, ROOT / "docs" / "performance.png")

    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
    flags = next((l.split(":", 1)[1].split() for l in open("/proc/cpuinfo") if l.startswith("flags")), [])
    simd = " ".join(f for f in flags if re.fullmatch(r"avx2|fma|avx512(f|bw|dq|vl|_bf16|_vnni)|amx\w*", f)) or "none"
    md = ["# Performance", "",
          f"Measured by `python3 tests/bench/report.py build` on a machine with {os.cpu_count()} "
          f"cores ({cpu}; SIMD flags: {simd}), {platform.system()}, on {time.strftime('%Y-%m-%d')}. Matrix "
          f"products: {gemm_libraries()}. The machine is shared: "
          "compare the ratios, which come from one run, rather than the absolute times. Each figure is the median "
          f"of {ROUNDS} rounds, and in each round shaped's benchmarks and LibTorch's take turns, configuration by "
          "configuration.", "",
          "## Run time of the multi-head attention forward pass", "",
          "Causal, evaluation mode, the book's `MultiHeadAttention`, one time per forward pass in ms.", "",
          "- `view`: `nn::multi_head_attention` (listing 3.5 in shaped);",
          "- `loop`: the same weights as head_dim-wide heads, `cat` and out_proj (`nn::split_heads`);",
          "- `hand`: the book's steps written on xtensor storage and oneDNN sgemm calls without shaped's types, "
          "every head's scores kept as the book keeps them; the abstraction's cost is `view/hand`;",
          "- `fused`: hand-written too, but one head's scores at a time (a different algorithm, for scale);",
          "- `LibTorch`: the book's class in PyTorch's C++ API, with the same number of threads for its own "
          "kernels and for OpenBLAS; `LibTorch+hp`: the same with glibc's malloc backing large blocks by huge "
          f"pages (`GLIBC_TUNABLES={HUGETLB}`), the help shaped gives itself; ratios are against this one;",
          "- `proj/sgemm`: shaped's projection (`W_query(x)`, an `nn::linear`) as a fraction of oneDNN "
          "sgemm's rate at the same size; `GFLOP/s` counts the five matrix products of the view form.", "",
          "| config | threads | view | loop | hand | fused | LibTorch | LibTorch+hp | view/hand | loop/hand | "
          "view/LibTorch+hp | view GFLOP/s | proj/sgemm |",
          "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    def get(impl, c, t, i=0):
        v = results.get((impl, c, t))
        return v[i] if v else None
    fmt = lambda v, p=3: "–" if v is None else f"{v:.{p}f}"
    ms = lambda v: "–" if v is None else (f"{v:.3g}" if v < 1 else f"{v:.2f}")
    ratio = lambda a, b: a / b if a and b else None
    targets = {"view/hand": [], "view/hand small": [], "view/LibTorch": [], "loop/LibTorch": [], "proj/sgemm": []}
    for c in CONFIGS:
        for t in (1, 2):
            sv, sl, hw, hf, lt, lh = (get(i, c, t) for i in ["shaped_view", "shaped_loop", "hand_written",
                                                             "hand_fused", "libtorch", "libtorch_hugetlb"])
            proj = ratio(get("shaped_projection", c, t, 1), get("sgemm_projection", c, t, 1))
            md.append(f"| {c} | {t} | {ms(sv)} | {ms(sl)} | {ms(hw)} | {ms(hf)} | {ms(lt)} | {ms(lh)} | "
                      f"{fmt(ratio(sv, hw), 2)} | {fmt(ratio(sl, hw), 2)} | {fmt(ratio(sv, lh), 2)} | "
                      f"{fmt(get('shaped_view', c, t, 1), 1)} | {fmt(proj, 2)} |")
            pairs = ([("view/hand", ratio(sv, hw)), ("view/LibTorch", ratio(sv, lh)),
                      ("loop/LibTorch", ratio(sl, lh)), ("proj/sgemm", proj)] if c.startswith("gpt2")
                     else [("view/hand small", ratio(sv, hw))])
            for key, v in pairs:
                if v is not None:
                    targets[key].append(v)
    span = lambda k: f"{min(targets[k]):.2f}–{max(targets[k]):.2f}" if targets[k] else "not measured"
    md += ["", "Against the targets (GPT-2 small: all six points, both thread counts):", "",
           "| measure | target | measured |", "|---|---|---|",
           f"| view/hand, GPT-2 small | ≤ 1.05 | {span('view/hand')} |",
           f"| view/hand, seed and book sizes | ≤ 1.05 | {span('view/hand small')} |",
           f"| view/LibTorch+hp, GPT-2 small | < 1 | {span('view/LibTorch')} |",
           f"| loop/LibTorch+hp, GPT-2 small | < 1 | {span('loop/LibTorch')} |",
           f"| proj/sgemm, GPT-2 small | ≥ 0.90 | {span('proj/sgemm')} |", "",
           "At the seed's and the book's sizes a forward pass takes one to two microseconds, and shaped's fixed "
           "cost per call shows: perf puts about 14% of a seed-size pass in constructing and moving the xtensor "
           "containers that carry each intermediate's shape and strides from op to op."]
    md += ["", "## nn::linear at GPT-2 small's projection sizes", "",
           "`nn::linear` (with its bias) against oneDNN's sgemm called directly on the same rows × in × out "
           "(without a bias), GFLOP/s, in the same run. Target: linear/sgemm ≥ 0.9 at every size.", "",
           "| rows × in × out | threads | linear GFLOP/s | sgemm GFLOP/s | linear/sgemm |", "|---|---|---|---|---|"]
    linear_ratios = []
    for c in LINEAR_CONFIGS:
        for t in (1, 2):
            lg = (linear.get(("shaped_linear", c, t)) or (None, None))[1]
            og = (linear.get(("onednn_sgemm", c, t)) or (None, None))[1]
            r = ratio(lg, og)
            if r is not None:
                linear_ratios.append(r)
            md.append(f"| {c.replace('m', '').replace('_k', ' × ').replace('_n', ' × ')} | {t} | {fmt(lg, 1)} | "
                      f"{fmt(og, 1)} | {fmt(r, 2)} |")
    if linear_ratios:
        md.append(f"\nlinear/sgemm over these points: {min(linear_ratios):.2f}–{max(linear_ratios):.2f}.")
    md += ["", "## The fused form: scaled_dot_product_attention", "",
           "`sdpa`: `nn::multi_head_attention_sdpa` (the bonus notebook's `MHAPyTorchScaledDotProduct`) with the "
           "view form's weights, its output checked against the view form's first (1e-5). `causal GFLOP/s` counts "
           "only what a causal pass must compute (the projections and the T·(T+1)/2 scores on or below the "
           "diagonal, with their weights' product with the values), and `of sgemm` divides it by oneDNN "
           "sgemm's rate at the projection size in the same run, the fastest matrix product on the machine. "
           "Targets: LibTorch+hp/sdpa ≥ 3.0 and view/sdpa ≥ 2.0 at batch 8 × 1024 tokens, 1 thread; sdpa faster "
           "than LibTorch+hp at every point; of sgemm ≥ 0.75 at batch 8 × 1024, 1 thread; 2 threads against 1 "
           "≥ 1.8 at batch 8 × 1024.", "",
           "| config | threads | sdpa | view | LibTorch | LibTorch+hp | LibTorch+hp/sdpa | view/sdpa | causal GFLOP/s | "
           "of sgemm |",
           "|---|---|---|---|---|---|---|---|---|---|"]
    sdpa_faster = []
    for c in gpt2:
        for t in (1, 2):
            sd, sv = get("shaped_sdpa", c, t), get("shaped_view", c, t)
            lt, lh = get("libtorch", c, t), get("libtorch_hugetlb", c, t)
            cg, sg = get("shaped_sdpa_causal", c, t, 1), get("sgemm_projection", c, t, 1)
            if ratio(lh, sd) is not None:
                sdpa_faster.append(ratio(lh, sd))
            md.append(f"| {c} | {t} | {ms(sd)} | {ms(sv)} | {ms(lt)} | {ms(lh)} | {fmt(ratio(lh, sd), 2)} | "
                      f"{fmt(ratio(sv, sd), 2)} | {fmt(cg, 1)} | {fmt(ratio(cg, sg), 2)} |")
    b8 = "gpt2_b8_t1024"
    md += ["", "| measure | target | measured |", "|---|---|---|",
           f"| LibTorch+hp/sdpa, batch 8 × 1024, 1 thread | ≥ 3.0 | "
           f"{fmt(ratio(get('libtorch_hugetlb', b8, 1), get('shaped_sdpa', b8, 1)), 2)} |",
           f"| view/sdpa, batch 8 × 1024, 1 thread | ≥ 2.0 | {fmt(ratio(get('shaped_view', b8, 1), get('shaped_sdpa', b8, 1)), 2)} |",
           f"| LibTorch+hp/sdpa, every GPT-2 small point | > 1 | "
           f"{(f'{min(sdpa_faster):.2f}–{max(sdpa_faster):.2f}' if sdpa_faster else 'not measured')} |",
           f"| of sgemm, batch 8 × 1024, 1 thread | ≥ 0.75 | "
           f"{fmt(ratio(get('shaped_sdpa_causal', b8, 1, 1), get('sgemm_projection', b8, 1, 1)), 2)} |",
           f"| 2 threads against 1, batch 8 × 1024 | ≥ 1.8 | {fmt(ratio(get('shaped_sdpa', b8, 1), get('shaped_sdpa', b8, 2)), 2)} |"]
    md += ["", "## Run-time extents", "",
           "The view form with `batch` and `num_tokens` known only at run time (`shaped::dynamic_axis`), bound "
           "to the same sizes, against the same sizes fixed at compile time, in the same run: what a prompt "
           "whose length is known only when the program runs costs. Target: within 3%.", "",
           "| config | threads | static (ms) | run-time (ms) | run-time/static |", "|---|---|---|---|---|"]
    run_time_ratios = []
    for c in CONFIGS:
        for t in (1, 2):
            sv, rv = get("shaped_view", c, t), get("shaped_view_run_time", c, t)
            r = ratio(rv, sv)
            if r is not None:
                run_time_ratios.append((c, r))
            md.append(f"| {c} | {t} | {ms(sv)} | {ms(rv)} | {fmt(r, 3)} |")
    for label, pick in [("seed and book sizes", lambda c: not c.startswith("gpt2")),
                        ("GPT-2 small", lambda c: c.startswith("gpt2"))]:
        rs = [r for c, r in run_time_ratios if pick(c)]
        if rs:
            md.append(f"\nrun-time/static at the {label}: {min(rs):.3f}–{max(rs):.3f}, median "
                      f"{sorted(rs)[len(rs) // 2]:.3f}.")
    if static_before_after:
        md += ["", f"### All-static programs, before and after `{before_rev}`", "",
               f"The view form on static axes, built from `{before_rev}` and from now, in turns, 1 thread.", "",
               "| config | before (ms) | now (ms) | now/before |", "|---|---|---|---|"]
        for (c, t), (b, a) in sorted(static_before_after.items(), key=lambda kv: CONFIGS.index(kv[0][0])):
            md.append(f"| {c} | {ms(b)} | {ms(a)} | {fmt(ratio(a, b), 3)} |")
    md += ["", "### With glibc's malloc keeping freed memory", "",
           "glibc's malloc hands a large free heap top back to the kernel; at some sizes that happens after "
           "every forward pass, for shaped, the hand-written code and LibTorch alike, and the next pass faults "
           "its buffers in again (zeroed pages, one fault per 4 KiB). The same benchmarks, 1 thread, with "
           f"`GLIBC_TUNABLES={NO_TRIM}` set for each process, same medians and turns. In a program of your own, "
           "`mallopt(M_TRIM_THRESHOLD, ...)` keeps the heap; `mallopt(M_MMAP_THRESHOLD, ...)` stops at 32 MiB "
           "(mallopt(3)), so larger buffers are still mapped afresh for each pass:", "",
           "| config | view | loop | hand | LibTorch | view/hand | view/LibTorch | loop/LibTorch |",
           "|---|---|---|---|---|---|---|---|"]
    for c in gpt2:
        sv, sl, hw, lt = ((no_trim.get((i, c, 1)) or (None,))[0]
                          for i in ["shaped_view", "shaped_loop", "hand_written", "libtorch"])
        md.append(f"| {c} | {ms(sv)} | {ms(sl)} | {ms(hw)} | {ms(lt)} | {fmt(ratio(sv, hw), 2)} | "
                  f"{fmt(ratio(sv, lt), 2)} | {fmt(ratio(sl, lt), 2)} |")
    md += ["", "## GPT-2 124M: forward pass and generation", "",
           "The book's `GPTModel` with `GPT_CONFIG_124M` (the book's chapter 4), evaluation mode: `nn::gpt_model<gpt2_124m>` "
           "against the book's classes in LibTorch's C++ API (tests/bench/libtorch_book.hpp), same threads for "
           "LibTorch's kernels and for OpenBLAS, as it is and with huge pages (`+hp`). Both peers first check "
           "their logits for the book's batch against PyTorch's. `forward_bB_tT`: one forward pass over B "
           "sequences of T tokens; `generate_b1_t4_new8`: `generate_text_simple` from \"Hello, I am\", 8 new "
           "tokens, every step recomputing the whole sequence; `prefill_t512_last`: 512 tokens into an empty "
           "cache, the last position's logits only (`nn::last_position`, what llama.cpp's prefill computes). "
           "Target: shaped no slower than LibTorch+hp (shaped/LibTorch+hp ≤ 1).", "",
           "| config | threads | shaped (ms) | LibTorch (ms) | LibTorch+hp (ms) | shaped/LibTorch+hp | shaped tokens/s | "
           "LibTorch+hp tokens/s |",
           "|---|---|---|---|---|---|---|---|"]
    gpt_ratios = []
    for c in GPT_CONFIGS + ["prefill_t512_last"]:
        for t in (1, 2):
            sg, lg, lh = (gpt.get((i, c, t)) for i in ["shaped_gpt", "libtorch_gpt", "libtorch_gpt_hugetlb"])
            r = ratio(sg[0] if sg else None, lh[0] if lh else None)
            if r is not None:
                gpt_ratios.append(r)
            md.append(f"| {c} | {t} | {ms(sg[0] if sg else None)} | {ms(lg[0] if lg else None)} | "
                      f"{ms(lh[0] if lh else None)} | {fmt(r, 2)} | {fmt(sg[1] if sg else None, 1)} | "
                      f"{fmt(lh[1] if lh else None, 1)} |")
    if gpt_ratios:
        md.append(f"\nshaped/LibTorch+hp over these points: {min(gpt_ratios):.2f}–{max(gpt_ratios):.2f}.")
    md += ["", "### The forward pass against the matrix products' limit", "",
           "A forward pass at batch 1 × 1024 is matrix products: the projections, the feed-forward layers, the "
           "causal half of the scores and their product with the values, and the output head, "
           f"{gpt2_forward_flops(1024) / 1e9:.0f} GFLOP. At oneDNN sgemm's rate at the qkv projection's size "
           "(1024 × 768 × 2304, same run) they would take the `bound`; target: bound/shaped ≥ 0.7.", "",
           "| threads | sgemm GFLOP/s | bound (ms) | shaped (ms) | bound/shaped |", "|---|---|---|---|---|"]
    for t in (1, 2):
        rate = (linear.get(("onednn_sgemm", "m1024_k768_n2304", t)) or (None, None))[1]
        fwd = (gpt.get(("shaped_gpt", "forward_b1_t1024", t)) or (None,))[0]
        bound = gpt2_forward_flops(1024) / (rate * 1e9) * 1e3 if rate else None
        md.append(f"| {t} | {fmt(rate, 1)} | {ms(bound)} | {ms(fwd)} | {fmt(ratio(bound, fwd), 2)} |")
    weight_mb = gpt.get(("weights", "MB", 0), (None,))[0]
    md += ["", "### Decoding against the machine's limit and llama.cpp", "",
           "A decoding step with the cache reads every weight once (all but the embeddings, of which it reads one "
           "row each): " + (f"{weight_mb:.0f} MB" if weight_mb else "–") + ". The machine reads memory at the rate "
           "of `machine/read_bandwidth` (the fastest of five sums over 512 MB of floats per iteration, four "
           "streams per thread in the widest vectors the CPU has), so it decodes at most bandwidth ÷ weight bytes tokens per second. The cached figures time 32 one-token "
           "steps after the prompt's pass, which is set up untimed; the uncached ones time the book's "
           "`generate_text_simple`, each step over the whole sequence. `llama.cpp` is llama-bench's `-n 32 -d 4` "
           "(32 one-token steps after a 4-token prompt, as shaped's cached figure) on the same model and weights in "
           "GGUF, float32, run in turns with gpt_bench (tests/bench/llama_cpp/; "
           + str(llama.get(("about", "llama.cpp", 0), "not run")) + "); `shaped in turns` is gpt_bench's figure "
           "from those same rounds, and `shaped/llama.cpp` compares the two. Target: at least 85% of the bound, "
           "and at least llama.cpp's rate.", "",
           "| threads | read bandwidth (GB/s) | bound (tokens/s) | shaped cached (tokens/s) | fraction of bound | "
           "llama.cpp f32 (tokens/s) | shaped in turns (tokens/s) | shaped/llama.cpp | LibTorch+hp cached (tokens/s) | "
           "shaped uncached (tokens/s) |",
           "|---|---|---|---|---|---|---|---|---|---|"]
    for t in (1, 2):
        bw = gpt.get(("machine", "read_bandwidth", t))
        sc, lc = gpt.get(("shaped_gpt", "decode_cached_new32", t)), gpt.get(("libtorch_gpt_hugetlb", "decode_cached_new32", t))
        su = gpt.get(("shaped_gpt", "decode_uncached_new32", t))
        bound = bw[1] * 1e3 / weight_mb if bw and weight_mb else None
        md.append(f"| {t} | {fmt(bw[1] if bw else None, 1)} | {fmt(bound, 1)} | {fmt(sc[1] if sc else None, 1)} | "
                  f"{fmt(ratio(sc[1] if sc else None, bound), 2)} | {fmt(llama.get(('f32', 'decode', t)), 1)} | "
                  f"{fmt(llama.get(('shaped', 'decode', t)), 1)} | "
                  f"{fmt(ratio(llama.get(('shaped', 'decode', t)), llama.get(('f32', 'decode', t))), 2)} | "
                  f"{fmt(lc[1] if lc else None, 1)} | {fmt(su[1] if su else None, 1)} |")
    md += ["", "Prefill, 512 tokens into an empty cache, the last position's logits (llama-bench's `-p 512`), "
           "tokens per second; `shaped in turns` ran in the same rounds as llama.cpp. Target: at least llama.cpp's "
           "float32 rate at 1 thread.", "",
           "| threads | shaped | shaped in turns | llama.cpp f32 | llama.cpp f16 | shaped in turns/llama.cpp f32 |",
           "|---|---|---|---|---|---|"]
    for t in (1, 2):
        sp = (gpt.get(("shaped_gpt", "prefill_t512_last", t)) or (None, None))[1]
        st, lp = llama.get(("shaped", "prefill", t)), llama.get(("f32", "prefill", t))
        md.append(f"| {t} | {fmt(sp, 1)} | {fmt(st, 1)} | {fmt(lp, 1)} | {fmt(llama.get(('f16', 'prefill', t)), 1)} | "
                  f"{fmt(ratio(st, lp), 2)} |")
    load, read = gpt.get(("shaped_gpt", "load_state_dict", 1)), gpt.get(("machine", "read_file", 1))
    if load and read and load[1] and read[1]:
        md += ["", f"Loading GPT-2 124M's state_dict from a safetensors file in the page cache: {load[0]:.0f} ms, "
               f"{load[1]:.2f} GB/s, against {read[1]:.2f} GB/s to read the file's bytes into memory "
               f"(load/read {fmt(ratio(load[1], read[1]), 2)})."]
    md += ["", "## Peak memory, GPT-2 small, batch 8, 1024 tokens", "",
           "One forward pass in a process of its own. The book's form needs the scores, (8, 12, 1024, 1024) "
           "floats, 402.7 MB; PyTorch makes the scaled scores and the weights as new tensors of that size, where "
           "shaped and the hand-written peer reuse the scores' buffer. The fused form and the loop form keep "
           "one head's scores at a time; shaped's sdpa form keeps a 64 × 128 tile of scores per thread. The "
           "input, (8, 1024, 768) floats, takes 25.2 MB, the output as much, the weights (4 × 768 × 768 and "
           "biases) 9.4 MB; each process also maps its program and libraries (LibTorch's are large).", "",
           "| implementation | peak RSS (MB) |", "|---|---|"]
    md += [f"| {impl} | {rss:.0f} |" for impl, rss in memory]
    md += ["", "## Compile time (-O2)", "", "Wall time and the compiler's peak memory per translation unit; the "
           "plain twin is the same program on xtensor without shaped (tests/bench/plain/). A row `(headers precompiled)` "
           "is a rebuild with shaped's headers (and the `<shaped/io/...>` ones it uses) in a precompiled header built "
           "beforehand, untimed, as the README's `cpp_pch` and `target_precompile_headers` do.", "",
           "| translation unit | compiler | wall (s) | peak (MB) | plain twin wall (s) | ratio |", "|---|---|---|---|---|---|"]
    for unit, cxx, wall, rss, tw, trss, rc in compiles:
        md.append(f"| {unit} | {cxx} | {wall:.1f} | {rss:.0f} | {fmt(tw, 1)} | {fmt(wall / tw if tw else None, 2)} |")
    if before_after:
        md += ["", f"### Before and after `{before_rev}`", "",
               f"Each translation unit as it was at `{before_rev}`, with that revision's headers, and as it is now, "
               f"compiled in turns, medians of {ROUNDS} rounds (-O2).", "",
               "| translation unit | compiler | before (s) | now (s) | now/before | before (MB) | now (MB) |",
               "|---|---|---|---|---|---|---|"]
        for unit, cxx, bw, aw, bm, am in before_after:
            md.append(f"| {unit} | {cxx} | {bw:.1f} | {aw:.1f} | {aw / bw:.2f} | {bm:.0f} | {am:.0f} |")
        worst = max(before_after, key=lambda r: r[3] / r[2])
        md.append(f"\nSlowest against before: {worst[0]} with {worst[1]}, {worst[3] / worst[2]:.2f}.")
    md += [""] + diagnostics_section(diags)
    if png_ok:
        md += ["", "## Time against num_tokens", "", "![time per forward pass against num_tokens](performance.png)"]
    path = ROOT / "docs" / "performance.md"
    text = keep_hand_written("\n".join(md) + "\n", path.read_text() if path.exists() else "")
    path.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
