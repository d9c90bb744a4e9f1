#!/usr/bin/python3
"""llama.cpp as a benchmark peer: GPT-2 124M with the benchmarks' random weights, in llama.cpp's llama-bench
beside shaped's gpt_bench, in the same run, in turns. Benchmark-only: nothing of it is in the library, the
tests or CI. See README.md beside this file.

Usage: /usr/bin/python3 tests/bench/llama_cpp/llama_bench.py [--gpt-bench build/tests/bench/gpt_bench]
                                                             [--rounds 3] [--reps 5] [--cache DIR]
Steps (each cached in --cache, default /tmp/llama_cpp_bench):
  1. `npm pack node-llama-cpp@3.21.1`; the llama.cpp source it bundles (a git bundle) is cloned out of it and
     llama-bench and llama-debug are built with cmake: Release, -DGGML_NATIVE=ON (-march=native), CPU only,
     static, no OpenSSL/curl.
  2. torch.manual_seed(123); the book's GPTModel(GPT_CONFIG_124M) (tests/golden/book/chapter4.py, imported),
     the weights shaped's gpt_bench draws, written as GGUF (llama.cpp's "gpt2" architecture) in float32 and
     f16 with llama.cpp's own gguf-py writer and GPT-2's tokenizer (--bpe-dir). Each
     file is checked: llama-debug's logits for "Hello, I am" against PyTorch's.
  3. Rounds: llama-bench (prefill pp512, decoding tg32 at depth 4, and tg128; -t 1 and 2; JSON) and, with
     --gpt-bench, shaped's matching benchmarks, alternating which goes first; medians of the rounds, one
     Markdown table (also written to --out).
Needs Debian's python3-numpy and python3-torch (/usr/bin/python3), npm, git, cmake and g++.
"""
import argparse
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import time

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[2]
NODE_LLAMA_CPP = "node-llama-cpp@3.21.1"
PROMPT, PROMPT_IDS = "Hello, I am", [15496, 11, 314, 716]  # GPT-2's tokens, as tests/golden/book/chapter4.py

# The tests: name -> (llama-bench arguments, shaped's gpt_bench benchmark or None, what it is).
# Decoding in llama-bench (test_gen) is one llama_decode of 1 token per step with the KV cache, the logits of
# that token computed, no sampling (the next token is random), tokens/s = n_gen / time. "-d 4" first decodes a
# 4-token prompt untimed (the depth), so tg32@d4 times the same 32 one-token steps at positions 4..35 that
# shaped's decode_cached_new32 times after its 4-token prompt ("Hello, I am"). tg128 is llama-bench's usual
# figure (positions 0..127), shown for reference.
TESTS = {
    "pp512": (["-p", "512", "-n", "0"], "prefill_t512_last",
              "prefill: 512 tokens, KV cache from empty, logits of the last position"),
    "tg32@d4": (["-p", "0", "-n", "32", "-d", "4"], "decode_cached_new32",
                "cached decoding: 4-token prompt untimed, then 32 one-token steps"),
    "tg128": (["-p", "0", "-n", "128"], None, "cached decoding: 128 one-token steps from an empty cache"),
}
# Qwen3 0.6B's, against tests/bench/model_bench (16 steps there: a step reads 2.4 GB of float32 weights).
QWEN3_TESTS = {
    "pp512": TESTS["pp512"],
    "tg16@d4": (["-p", "0", "-n", "16", "-d", "4"], "decode_cached_new16",
                "cached decoding: 4-token prompt untimed, then 16 one-token steps"),
}
# The models: --model's name -> (its tests, shaped's benchmark prefix by weight type, the GGUF files' stem).
MODELS = {
    "gpt2-124m": (TESTS, {"f32": "shaped_gpt"}, "gpt2-124m-book-seed123"),
    "qwen3-0.6b": (QWEN3_TESTS, {"f32": "shaped_qwen3_0_6b", "bf16": "shaped_qwen3_0_6b_bf16"}, "qwen3-0.6b-book-seed123"),
}


def log(*args):
    print(*args, file=sys.stderr, flush=True)


def nice(cmd):
    return ["nice", "-n", "10"] + [str(c) for c in cmd]


# ---------------------------------------------------------------------------------------------------------
# 1. llama.cpp from npm's node-llama-cpp, built natively.

def llama_source(cache):
    """The llama.cpp source that node-llama-cpp bundles: package/llama/gitRelease.bundle, a git bundle of one
    commit (llama/llama.cpp.info.json names the release)."""
    src = cache / "llama.cpp"
    if (src / "CMakeLists.txt").exists():
        return src
    pkg = cache / "npm"
    pkg.mkdir(parents=True, exist_ok=True)
    tarballs = sorted(pkg.glob("node-llama-cpp-*.tgz"))
    if not tarballs:
        log(f"npm pack {NODE_LLAMA_CPP}")
        subprocess.run(["npm", "pack", NODE_LLAMA_CPP, "--pack-destination", str(pkg)], check=True, cwd=pkg,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        tarballs = sorted(pkg.glob("node-llama-cpp-*.tgz"))
    shutil.rmtree(pkg / "package", ignore_errors=True)
    subprocess.run(["tar", "xzf", str(tarballs[-1]), "-C", str(pkg)], check=True)
    bundle = pkg / "package" / "llama" / "gitRelease.bundle"
    tmp = cache / "llama.cpp.tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    subprocess.run(["git", "-c", "advice.detachedHead=false", "clone", "--quiet", str(bundle), str(tmp)],
                   check=True)
    tmp.rename(src)
    return src


def llama_version(cache):
    info = cache / "npm" / "package" / "llama" / "llama.cpp.info.json"
    tag = json.loads(info.read_text()).get("tag", "?") if info.exists() else "?"
    head = subprocess.run(["git", "-C", str(cache / "llama.cpp"), "rev-parse", "--short=12", "HEAD"],
                          capture_output=True, text=True).stdout.strip()
    return f"{NODE_LLAMA_CPP} (llama.cpp {tag}, commit {head})"


def build_llama(cache, jobs):
    src = llama_source(cache)
    out = cache / "build"
    bins = {name: out / "bin" / name for name in ("llama-bench", "llama-debug")}
    if all(b.exists() for b in bins.values()):
        return bins
    log(f"building llama.cpp in {out} (-j{jobs}, nice 10): several minutes on 2 cores")
    subprocess.run(nice(["cmake", "-S", src, "-B", out, "-DCMAKE_BUILD_TYPE=Release", "-DGGML_NATIVE=ON",
                         "-DBUILD_SHARED_LIBS=OFF", "-DLLAMA_OPENSSL=OFF", "-DLLAMA_CURL=OFF",
                         "-DLLAMA_BUILD_TESTS=OFF", "-DLLAMA_BUILD_SERVER=OFF", "-DGGML_CUDA=OFF",
                         "-DGGML_VULKAN=OFF", "-DGGML_METAL=OFF", "-DGGML_HIP=OFF", "-DGGML_SYCL=OFF",
                         "-DGGML_OPENCL=OFF", "-DGGML_BLAS=OFF"]), check=True, stdout=subprocess.DEVNULL)
    subprocess.run(nice(["cmake", "--build", out, "-j", str(jobs), "--target", *bins]), check=True,
                   stdout=subprocess.DEVNULL)
    return bins


# ---------------------------------------------------------------------------------------------------------
# 2. GPT-2 124M, the benchmarks' weights, as GGUF.

def import_gguf(src):
    """llama.cpp's own gguf-py, from the bundled source. Its metadata module imports PyYAML (Debian's
    python3-yaml) at import time, for model cards this script does not read: a stand-in when it is missing."""
    sys.path.insert(0, str(src / "gguf-py"))
    try:
        import yaml  # noqa: F401
    except ImportError:
        import types
        sys.modules["yaml"] = types.ModuleType("yaml")
    import gguf
    return gguf


def book_gpt2_state_dict():
    """torch.manual_seed(123); GPTModel(GPT_CONFIG_124M): what shaped's gpt_bench constructs
    (shaped::torch::manual_seed(123), then gpt_model<gpt2_124m>, checked there against these weights' logits)."""
    import runpy
    import torch
    book = runpy.run_path(str(ROOT / "tests" / "golden" / "book" / "chapter4.py"))
    torch.manual_seed(123)
    model = book["GPTModel"](book["GPT_CONFIG_124M"])
    model.eval()
    with torch.no_grad():
        logits = model(torch.tensor([PROMPT_IDS]))[0, -1].numpy().copy()
    return {k: v.detach().numpy() for k, v in model.state_dict().items()}, book["GPT_CONFIG_124M"], logits


def gpt2_tensors(sd, cfg):
    """The book's state_dict under llama.cpp's GPT-2 names (llama.cpp's src/models/gpt2.cpp). nn.Linear keeps
    its weight as (out, in), which is already ggml's {in, out}: no transposition (convert_hf_to_gguf.py
    transposes Hugging Face GPT-2's Conv1D weights, which are (in, out)). The book's attention has separate
    W_query, W_key, W_value without bias (qkv_bias False); llama.cpp's GPT-2 wants one fused attn_qkv with a
    bias: the three stacked as [q; k; v] rows (each head's 64 rows in order, as both split heads), bias 0."""
    import numpy as np
    used, out = set(), {}

    def take(name):
        used.add(name)
        return sd[name]

    out["token_embd.weight"] = take("tok_emb.weight")
    out["position_embd.weight"] = take("pos_emb.weight")
    for i in range(cfg["n_layers"]):
        p = f"trf_blocks.{i}."
        out[f"blk.{i}.attn_norm.weight"] = take(p + "norm1.scale")
        out[f"blk.{i}.attn_norm.bias"] = take(p + "norm1.shift")
        qkv = [p + f"att.W_{w}." for w in ("query", "key", "value")]
        out[f"blk.{i}.attn_qkv.weight"] = np.concatenate([take(n + "weight") for n in qkv], axis=0)
        out[f"blk.{i}.attn_qkv.bias"] = (np.concatenate([take(n + "bias") for n in qkv]) if cfg["qkv_bias"]
                                         else np.zeros(3 * cfg["emb_dim"], dtype=np.float32))
        out[f"blk.{i}.attn_output.weight"] = take(p + "att.out_proj.weight")
        out[f"blk.{i}.attn_output.bias"] = take(p + "att.out_proj.bias")
        out[f"blk.{i}.ffn_norm.weight"] = take(p + "norm2.scale")
        out[f"blk.{i}.ffn_norm.bias"] = take(p + "norm2.shift")
        out[f"blk.{i}.ffn_up.weight"] = take(p + "ff.layers.0.weight")
        out[f"blk.{i}.ffn_up.bias"] = take(p + "ff.layers.0.bias")
        out[f"blk.{i}.ffn_down.weight"] = take(p + "ff.layers.2.weight")
        out[f"blk.{i}.ffn_down.bias"] = take(p + "ff.layers.2.bias")
        used.add(p + "att.mask")  # the causal mask buffer: llama.cpp masks by itself
    out["output_norm.weight"] = take("final_norm.scale")
    out["output_norm.bias"] = take("final_norm.shift")
    out["output.weight"] = take("out_head.weight")
    assert used == set(sd), f"state_dict entries not written: {sorted(set(sd) - used)}"
    return out


def gpt2_vocab(bpe_dir):
    """GPT-2's BPE tokenizer as convert_hf_to_gguf.py writes it (_set_vocab_gpt2): the tokens by id, their
    types (<|endoftext|> a control token, the rest normal) and the merges of vocab.bpe."""
    encoder = json.loads((bpe_dir / "encoder.json").read_text(encoding="utf-8"))
    tokens = [None] * len(encoder)
    for tok, i in encoder.items():
        tokens[i] = tok
    assert None not in tokens
    merges = [line for line in (bpe_dir / "vocab.bpe").read_text(encoding="utf-8").splitlines()[1:] if line]
    return tokens, merges


def write_gpt2_gguf(gguf, path, dtype, tensors, cfg, tokens, merges):
    import numpy as np
    w = gguf.GGUFWriter(str(path), gguf.MODEL_ARCH_NAMES[gguf.MODEL_ARCH.GPT2])
    w.add_name("GPT-2 124M, the book's GPTModel, torch.manual_seed(123)")
    w.add_block_count(cfg["n_layers"])
    w.add_context_length(cfg["context_length"])
    w.add_embedding_length(cfg["emb_dim"])
    w.add_feed_forward_length(4 * cfg["emb_dim"])
    w.add_head_count(cfg["n_heads"])
    w.add_layer_norm_eps(1e-5)  # the book's LayerNorm
    w.add_file_type(gguf.LlamaFileType.ALL_F32 if dtype == "f32" else gguf.LlamaFileType.MOSTLY_F16)
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre("gpt-2")
    w.add_token_list(tokens)
    eot = tokens.index("<|endoftext|>")
    w.add_token_types([gguf.TokenType.CONTROL if i == eot else gguf.TokenType.NORMAL for i in range(len(tokens))])
    w.add_token_merges(merges)
    w.add_bos_token_id(eot)
    w.add_eos_token_id(eot)
    w.add_unk_token_id(eot)
    for name, t in tensors.items():
        # As convert_hf_to_gguf.py's f16: matrices (embeddings included) in f16, vectors in float32.
        w.add_tensor(name, t.astype(np.float16 if dtype == "f16" and t.ndim >= 2 else np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


# Qwen3 0.6B (the book's QWEN_CONFIG_06_B, nn::qwen3_0_6b), as tests/golden/modern/reference.py builds it.
QWEN3_0_6B = {"vocab_size": 151_936, "context_length": 40_960, "emb_dim": 1024, "n_heads": 16, "n_kv_groups": 8,
              "head_dim": 128, "hidden_dim": 3072, "n_layers": 28, "rope_base": 1_000_000.0, "rope_freq": None,
              "rms_norm_eps": 1e-6, "tie_word_embeddings": True, "qk_norm": True}


def book_qwen3_state_dict():
    """torch.manual_seed(123); the book's Qwen3Model(QWEN_CONFIG_06_B) (reference.py's Llama3Model with
    qk_norm): the weights model_bench draws (shaped::torch::manual_seed(123), then qwen3_model<qwen3_0_6b>;
    the tied head is drawn last and dropped, so the rest are the same draws). The logits of PROMPT_IDS' last
    position, for the check."""
    import runpy
    import torch
    ref = runpy.run_path(str(ROOT / "tests" / "golden" / "modern" / "reference.py"))
    torch.manual_seed(123)
    model = ref["Llama3Model"](QWEN3_0_6B)
    model.eval()
    with torch.no_grad():
        logits = model(torch.tensor([PROMPT_IDS]))[0, -1].numpy().copy()
    sd = {k: v.detach().numpy() for k, v in model.state_dict().items() if k != "out_head.weight"}
    return sd, QWEN3_0_6B, logits


def qwen3_tensors(sd, cfg):
    """The state_dict under llama.cpp's Qwen3 names (src/models/qwen3.cpp): no output.weight (tied), the
    queries' and keys' norms per head. Hugging Face's Qwen3 keeps RoPE's halves split (llama.cpp's NEOX rope,
    its default for qwen3), as the book does: no permutation."""
    used, out = set(), {}

    def take(name):
        used.add(name)
        return sd[name]

    out["token_embd.weight"] = take("tok_emb.weight")
    names = {"att.W_query.weight": "attn_q.weight", "att.W_key.weight": "attn_k.weight",
             "att.W_value.weight": "attn_v.weight", "att.out_proj.weight": "attn_output.weight",
             "att.q_norm.scale": "attn_q_norm.weight", "att.k_norm.scale": "attn_k_norm.weight",
             "ff.fc1.weight": "ffn_gate.weight", "ff.fc2.weight": "ffn_up.weight", "ff.fc3.weight": "ffn_down.weight",
             "norm1.scale": "attn_norm.weight", "norm2.scale": "ffn_norm.weight"}
    for i in range(cfg["n_layers"]):
        for book, ours in names.items():
            out[f"blk.{i}.{ours}"] = take(f"trf_blocks.{i}.{book}")
    out["output_norm.weight"] = take("final_norm.scale")
    assert used == set(sd), f"state_dict entries not written: {sorted(set(sd) - used)}"
    return out


def write_qwen3_gguf(gguf, path, dtype, tensors, cfg, tokens, merges):
    """llama.cpp's qwen3 architecture. The tokenizer: GPT-2's BPE (Qwen's is not on this machine), its 50,257
    tokens then padding tokens up to Qwen3's 151,936 rows; llama-bench draws random ids and the check's
    prompt is GPT-2's ids, so the vocabulary's contents do not matter, only its size."""
    import numpy as np
    w = gguf.GGUFWriter(str(path), gguf.MODEL_ARCH_NAMES[gguf.MODEL_ARCH.QWEN3])
    w.add_name("Qwen3 0.6B, the book's Qwen3Model, torch.manual_seed(123)")
    w.add_block_count(cfg["n_layers"])
    w.add_context_length(cfg["context_length"])
    w.add_embedding_length(cfg["emb_dim"])
    w.add_feed_forward_length(cfg["hidden_dim"])
    w.add_head_count(cfg["n_heads"])
    w.add_head_count_kv(cfg["n_kv_groups"])
    w.add_key_length(cfg["head_dim"])
    w.add_value_length(cfg["head_dim"])
    w.add_rope_freq_base(cfg["rope_base"])
    w.add_layer_norm_rms_eps(cfg["rms_norm_eps"])
    w.add_file_type({"f32": gguf.LlamaFileType.ALL_F32, "f16": gguf.LlamaFileType.MOSTLY_F16,
                     "bf16": gguf.LlamaFileType.MOSTLY_BF16}[dtype])
    padded = tokens + [f"<|pad_{i}|>" for i in range(cfg["vocab_size"] - len(tokens))]
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre("gpt-2")
    w.add_token_list(padded)
    eot = tokens.index("<|endoftext|>")
    w.add_token_types([gguf.TokenType.CONTROL if i == eot or i >= len(tokens) else gguf.TokenType.NORMAL
                       for i in range(len(padded))])
    w.add_token_merges(merges)
    w.add_bos_token_id(eot)
    w.add_eos_token_id(eot)
    w.add_add_bos_token(False)
    for name, t in tensors.items():
        if dtype == "bf16" and t.ndim >= 2:
            w.add_tensor(name, gguf.quants.quantize(np.ascontiguousarray(t), gguf.GGMLQuantizationType.BF16),
                         raw_dtype=gguf.GGMLQuantizationType.BF16)
        else:
            w.add_tensor(name, t.astype(np.float16 if dtype == "f16" and t.ndim >= 2 else np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def check_gguf(bins, path, ref_logits, tol):
    """llama-debug's logits of the last position of "Hello, I am" against PyTorch's (float32 on the CPU)."""
    import numpy as np
    outdir = path.parent / (path.stem + "-check")
    shutil.rmtree(outdir, ignore_errors=True)
    res = subprocess.run([bins["llama-debug"], "-m", path, "-p", PROMPT, "-c", "64", "-t", "2", "--save-logits",
                          "--logits-output-dir", outdir], capture_output=True, text=True)
    if res.returncode != 0:
        raise SystemExit(f"llama-debug failed on {path}:\n{res.stdout[-3000:]}\n{res.stderr[-3000:]}")
    ids = np.fromfile(outdir / f"llamacpp-{path.stem}-tokens.bin", dtype=np.int32).tolist()
    got = np.fromfile(outdir / f"llamacpp-{path.stem}.bin", dtype=np.float32)
    if ids != PROMPT_IDS:
        raise SystemExit(f"llama.cpp tokenises {PROMPT!r} as {ids}, GPT-2 as {PROMPT_IDS}")
    diff = float(np.max(np.abs(got - ref_logits)))
    same_top = int(np.argmax(got)) == int(np.argmax(ref_logits))
    log(f"  {path.name}: tokens {ids} as GPT-2's; last position's logits: max |llama.cpp - PyTorch| = {diff:.2e}"
        f" (logits up to {float(np.max(np.abs(ref_logits))):.2f}), argmax {'the same' if same_top else 'DIFFERS'}")
    if not diff <= tol:
        raise SystemExit(f"{path}: llama.cpp's logits differ from PyTorch's by {diff} (> {tol})")
    return diff


def models(cache, src, bins, bpe_dir, dtypes, check, model="gpt2-124m"):
    stem = MODELS[model][2]
    paths = {d: cache / f"{stem}-{d}.gguf" for d in dtypes}
    if all(p.exists() for p in paths.values()) and not check:
        return paths
    if any(not p.exists() for p in paths.values()) and not bpe_dir:
        raise SystemExit("--bpe-dir (GPT-2's encoder.json and vocab.bpe) is needed to write the GGUF files")
    gguf = import_gguf(src)
    if model == "gpt2-124m":
        log("drawing GPT-2 124M with torch.manual_seed(123) (the book's GPTModel)")
        sd, cfg, ref_logits = book_gpt2_state_dict()
        tensors, write = gpt2_tensors(sd, cfg), write_gpt2_gguf
    else:
        log("drawing Qwen3 0.6B with torch.manual_seed(123) (the book's Qwen3Model)")
        sd, cfg, ref_logits = book_qwen3_state_dict()
        tensors, write = qwen3_tensors(sd, cfg), write_qwen3_gguf
    tokens, merges = gpt2_vocab(bpe_dir) if bpe_dir else (None, None)
    for d, p in paths.items():
        if not p.exists():
            log(f"writing {p}")
            tmp = p.with_suffix(".tmp")
            write(gguf, tmp, d, tensors, cfg, tokens, merges)
            tmp.rename(p)
        if check:
            if model == "gpt2-124m":
                tol = 1e-2 if d == "f32" else 1e-1
            else:  # random weights with tied N(0, 1) embeddings: logits in the hundreds, so relative to them
                import numpy as np
                tol = (2e-4 if d == "f32" else 2e-2) * float(np.max(np.abs(ref_logits)))
            check_gguf(bins, p, ref_logits, tol)
    return paths


# ---------------------------------------------------------------------------------------------------------
# 3. The runs, in turns.

def median(xs):
    xs = sorted(xs)
    n = len(xs)
    return xs[n // 2] if n % 2 else (xs[n // 2 - 1] + xs[n // 2]) / 2


def run_llama(bins, paths, tests, threads, reps, table_of=TESTS):
    """One llama-bench process per (model, test): the median tokens/s of its repetitions, keyed by
    (peer, test, threads)."""
    results, info = {}, {}
    for dtype, path in paths.items():
        for test in tests:
            cmd = [bins["llama-bench"], "-m", path, *table_of[test][0], "-t", ",".join(map(str, threads)),
                   "-r", str(reps), "-o", "json"]
            res = subprocess.run([str(c) for c in cmd], capture_output=True, text=True)
            if res.returncode != 0:
                raise SystemExit(f"llama-bench failed: {' '.join(map(str, cmd))}\n{res.stderr[-3000:]}")
            for row in json.loads(res.stdout):
                results[(f"llama.cpp {dtype}", test, row["n_threads"])] = median(row["samples_ts"])
                info = {k: row.get(k) for k in ("cpu_info", "backends", "build_commit", "build_number",
                                                 "flash_attn", "n_batch", "n_ubatch", "type_k", "type_v",
                                                 "use_mmap", "poll")}
    return results, info


def shaped_tests(gpt_bench):
    out = subprocess.run([gpt_bench, "--benchmark_list_tests"], capture_output=True, text=True, check=True).stdout
    return set(out.split())


def run_shaped(bench, tests, threads, min_time, table_of=TESTS, prefixes=None):
    """shaped's benchmarks matching `tests` under each weight type's prefix (`prefixes`, e.g. {"f32":
    "shaped_gpt"}), with machine/read_bandwidth: tokens/s keyed as run_llama's, peers "shaped f32", ..."""
    prefixes = prefixes or {"f32": "shaped_gpt"}
    names = sorted({table_of[t][1] for t in tests if table_of[t][1]})
    thr = "|".join(map(str, threads))
    flt = f"^(({'|'.join(prefixes.values())})/({'|'.join(names)})|machine/read_bandwidth)/threads:({thr})(/|$)"
    res = subprocess.run([bench, "--benchmark_format=json", f"--benchmark_min_time={min_time}",
                          "--benchmark_min_warmup_time=0.2", f"--benchmark_filter={flt}"],
                         capture_output=True, text=True)
    if res.returncode != 0:
        raise SystemExit(f"{bench} failed:\n{res.stderr[-3000:]}")
    by_prefix = {v: k for k, v in prefixes.items()}
    results = {}
    for b in json.loads(res.stdout)["benchmarks"]:
        prefix, name, thr = re.match(r"(\w+)/(\w+)/threads:(\d+)", b["name"]).groups()  # then /real_time
        if name == "read_bandwidth":
            results[("machine", "read GB/s", int(thr))] = b["GB/s"]
        if "weight_MB" in b and by_prefix.get(prefix) == "f32":
            results[("machine", "weight MB", 0)] = b["weight_MB"]
        for test in tests:
            if table_of[test][1] == name and prefix in by_prefix:
                results[(f"shaped {by_prefix[prefix]}", test, int(thr))] = b["tokens/s"]
    return results


def table(medians, tests, threads, peers):
    lines = ["| test | threads | " + " | ".join(peers) + " |",
             "| --- | ---: | " + " | ".join("---:" for _ in peers) + " |"]
    for test in tests:
        for t in threads:
            cells = [f"{medians[(p, test, t)]:.1f}" if (p, test, t) in medians else "n/a" for p in peers]
            lines.append(f"| {test} | {t} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cache", type=pathlib.Path, default=pathlib.Path("/tmp/llama_cpp_bench"),
                    help="npm package, llama.cpp source and build, GGUF files (default: %(default)s)")
    ap.add_argument("--jobs", type=int, default=2, help="build jobs (default: %(default)s)")
    ap.add_argument("--bpe-dir", type=pathlib.Path,
                    help="a folder with GPT-2's encoder.json and vocab.bpe (OpenAI's GPT-2 release; the same as "
                         "Hugging Face's vocab.json and merges.txt): needed to write the GGUF files")
    ap.add_argument("--model", default="gpt2-124m", choices=sorted(MODELS),
                    help="gpt2-124m against gpt_bench, or qwen3-0.6b against model_bench (default: %(default)s)")
    ap.add_argument("--dtypes", default="f32,f16", help="GGUF weight types, of f32, f16 and bf16 (default: %(default)s)")
    ap.add_argument("--tests", help="gpt2-124m's of " + ", ".join(TESTS) + "; qwen3-0.6b's of " +
                    ", ".join(QWEN3_TESTS) + " (default: all of the model's)")
    ap.add_argument("--threads", default="1,2", help="(default: %(default)s)")
    ap.add_argument("--reps", type=int, default=5, help="llama-bench's -r in each round (default: %(default)s)")
    ap.add_argument("--rounds", type=int, default=3, help="rounds of both peers; medians (default: %(default)s)")
    ap.add_argument("--gpt-bench", "--shaped-bench", dest="gpt_bench", type=pathlib.Path,
                    help="shaped's gpt_bench (meson: build/tests/bench/gpt_bench), or model_bench for "
                         "qwen3-0.6b: its matching benchmarks run in turns with llama-bench")
    ap.add_argument("--min-time", default="2", help="gpt_bench's --benchmark_min_time (default: %(default)s)")
    ap.add_argument("--no-check", action="store_true", help="skip the logits check of the GGUF files")
    ap.add_argument("--build-only", action="store_true", help="build llama.cpp and write the GGUF files only")
    ap.add_argument("--out", type=pathlib.Path, help="also write the table and the raw figures here (Markdown)")
    ap.add_argument("--json", type=pathlib.Path,
                    help="also write the medians here: a list of {peer, test, threads, tokens_per_s}, and the "
                         "llama.cpp build's description")
    a = ap.parse_args()
    table_of, prefixes, _ = MODELS[a.model]
    dtypes = a.dtypes.split(",")
    tests = a.tests.split(",") if a.tests else list(table_of)
    threads = [int(t) for t in a.threads.split(",")]
    assert set(dtypes) <= {"f32", "f16", "bf16"} and set(tests) <= set(table_of), "unknown --dtypes or --tests"
    a.cache.mkdir(parents=True, exist_ok=True)

    t0 = time.monotonic()
    bins = build_llama(a.cache, a.jobs)
    src = a.cache / "llama.cpp"
    paths = models(a.cache, src, bins, a.bpe_dir, dtypes, not a.no_check, a.model)
    log(f"llama.cpp ready in {time.monotonic() - t0:.0f} s: {llama_version(a.cache)}")
    if a.build_only:
        return

    peers = [f"llama.cpp {d}" for d in dtypes]
    gpt_bench = None
    if a.gpt_bench:
        gpt_bench = str(a.gpt_bench.resolve())
        have = shaped_tests(gpt_bench)
        for dtype, prefix in prefixes.items():
            missing = sorted({table_of[t][1] for t in tests if table_of[t][1]} -
                             {re.match(prefix + r"/(\w+)/", n).group(1) for n in have if n.startswith(prefix + "/")})
            if missing:
                log(f"note: {gpt_bench} has no {prefix}/{{{','.join(missing)}}}: those cells are n/a")
            peers.append(f"shaped {dtype}")

    samples = {}
    for r in range(a.rounds):
        order = ["llama", "shaped"] if r % 2 == 0 else ["shaped", "llama"]
        for who in order:
            if who == "llama":
                res, info = run_llama(bins, paths, tests, threads, a.reps, table_of)
            elif gpt_bench:
                res = run_shaped(gpt_bench, tests, threads, a.min_time, table_of, prefixes)
            else:
                continue
            for k, v in res.items():
                samples.setdefault(k, []).append(v)
        log(f"round {r + 1}/{a.rounds} done ({' then '.join(o for o in order if o == 'llama' or gpt_bench)})")
    medians = {k: median(v) for k, v in samples.items()}

    text = [f"{a.model}: tokens per second (higher is better), median of "
            f"{a.rounds} rounds; llama.cpp's figure in a round is the median of its {a.reps} repetitions.",
            "", table(medians, tests, threads, peers), ""]
    text += [f"- {t}: {table_of[t][2]}; llama-bench {' '.join(table_of[t][0])}"
             + (f"; shaped: {'/'.join(prefixes.values())}/{table_of[t][1]}" if table_of[t][1] else "") for t in tests]
    text += [f"- llama.cpp: {llama_version(a.cache)}, " + ", ".join(f"{k} {v}" for k, v in info.items())]
    if gpt_bench:
        text += [f"- shaped: {gpt_bench} ({', '.join(prefixes)} weights)"]
        mb = medians.get(("machine", "weight MB", 0))
        for t in threads:
            gbs = medians.get(("machine", "read GB/s", t))
            if gbs and mb:
                text += [f"- machine/read_bandwidth at {t} thread(s): {gbs:.1f} GB/s, so reading the {mb:.0f} MB of "
                         f"float32 weights once per token bounds decoding at {gbs * 1e3 / mb:.0f} tokens/s "
                         f"(f16 and bf16: about twice that)"]
    text += ["", "Rounds (tokens/s): " + "; ".join(
        f"{p} {test} t{t}: " + ", ".join(f"{v:.1f}" for v in samples[(p, test, t)])
        for (p, test, t) in sorted(samples) if p != "machine")]
    print("\n".join(text))
    if a.out:
        a.out.write_text("\n".join(text) + "\n")
    if a.json:
        a.json.write_text(json.dumps({
            "llama_cpp": llama_version(a.cache), "rounds": a.rounds,
            "medians": [{"peer": p, "test": test, "threads": t, "value": v}
                        for (p, test, t), v in sorted(medians.items())]}, indent=1) + "\n")


if __name__ == "__main__":
    main()
