#!/usr/bin/env python3
"""Writes the fuzzers' seed corpora: small valid files of each format, written byte for byte as NumPy's
np.save and the reference safetensors writer lay them out (no NumPy or PyTorch needed).

    python3 tests/fuzz/make_corpus.py      # rewrites tests/fuzz/corpus/{npy,safetensors,json}/
"""
import json, os, struct

here = os.path.dirname(os.path.abspath(__file__))


def npy(major, descr, shape, fortran=False, data=b"", pad_to=64):
    shape_text = "(" + "".join(f"{d}, " if len(shape) > 1 else f"{d}," for d in shape).rstrip(" ") + ")"
    if len(shape) > 1:
        shape_text = "(" + ", ".join(str(d) for d in shape) + ")"
    header = f"{{'descr': '{descr}', 'fortran_order': {fortran}, 'shape': {shape_text}, }}"
    lead = 10 if major == 1 else 12
    total = lead + len(header) + 1
    header += " " * ((pad_to - total % pad_to) % pad_to) + "\n"
    length = struct.pack("<H" if major == 1 else "<I", len(header))
    return b"\x93NUMPY" + bytes([major, 0]) + length + header.encode() + data


def floats(n, fmt="<f"):
    return b"".join(struct.pack(fmt, (i * 0.37) % 3 - 1) for i in range(n))


def safetensors(tensors, metadata=None):
    header, data = {}, b""
    if metadata is not None:
        header["__metadata__"] = metadata
    for name, dtype, shape, raw in tensors:
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    text = json.dumps(header, separators=(",", ":"))
    text += " " * ((8 - len(text) % 8) % 8)
    return struct.pack("<Q", len(text)) + text.encode() + data


seeds = {
    "npy/seed_f4_2x3.npy": npy(1, "<f4", (2, 3), data=floats(6)),
    "npy/seed_f8_4x6.npy": npy(1, "<f8", (4, 6), data=floats(24, "<d")),
    "npy/seed_i8_5.npy": npy(1, "<i8", (5,), data=b"".join(struct.pack("<q", i * 7 - 3) for i in range(5))),
    "npy/seed_v2_f4_3x2.npy": npy(2, "<f4", (3, 2), data=floats(6)),
    "npy/seed_v3_f4_1x4.npy": npy(3, "<f4", (1, 4), data=floats(4)),
    "npy/seed_fortran_2x2.npy": npy(1, "<f4", (2, 2), fortran=True, data=floats(4)),
    "npy/seed_scalar.npy": npy(1, "<f4", (), data=floats(1)),
    "npy/seed_long_header.npy": npy(1, "<f4", (2, 3), data=floats(6), pad_to=192),
    "safetensors/seed_linear.safetensors": safetensors(
        [("weight", "F32", [3, 4], floats(12)), ("bias", "F32", [3], floats(3))], {"format": "pt"}),
    "safetensors/seed_halves.safetensors": safetensors(
        [("h", "F16", [2, 2], struct.pack("<4H", 0x3C00, 0xC100, 0x7BFF, 0x0001)),
         ("b", "BF16", [4], struct.pack("<4H", 0x3F80, 0xC020, 0x477F, 0x7F80))]),
    "safetensors/seed_mixed.safetensors": safetensors(
        [("ids", "I64", [2], struct.pack("<2q", 5, -1)), ("x", "F64", [1], struct.pack("<d", 2.5)),
         ("empty", "F32", [0, 3], b""), ("flag", "BOOL", [2], b"\x01\x00")]),
    "safetensors/seed_empty.safetensors": safetensors([]),
    # The JSON reader's target takes the text alone: a real header, and each kind of value and escape.
    "json/seed_header.json": (lambda f: f[8:8 + struct.unpack("<Q", f[:8])[0]].rstrip())(
        safetensors([("weight", "F32", [3, 4], floats(12)), ("bias", "F32", [3], floats(3))], {"format": "pt"})),
    "json/seed_numbers.json": b"[0, -0, 1.5e3, -2E-2, 18446744073709551615, 18446744073709551616, 1e-400, true, false, null]",
    "json/seed_strings.json": '{"a\\u00e9\\ud83d\\ude00\\n\\/": "\u00e9\U0001F600", "b": [[[]]], "c": {}}'.encode(),
    "json/seed_key_twice.json": b'{"a": 1, "a": 2}',
    "json/seed_too_deep.json": b"[[[[1]]]]",
    "json/seed_overflow.json": b'{"a": 1e400}',
    "json/seed_lone_surrogate.json": b'"\\udc00"',
}


def bytes_to_unicode():
    # GPT-2's mapping of bytes to visible characters (text/bpe_tokenizer.hpp).
    keep = list(range(33, 127)) + list(range(161, 173)) + list(range(174, 256))
    extra = iter(range(256, 512))
    return {b: chr(b) if b in keep else chr(next(extra)) for b in range(256)}


def bpe(merges, text):
    # A small GPT-2-style vocabulary: the 256 bytes, then each merge's result, then <|endoftext|>; the
    # target's input is encoder.json, a NUL, vocab.bpe, a NUL, then text to encode.
    u = bytes_to_unicode()
    enc = {u[b]: b for b in range(256)}
    lines = ["#version: 0.2"]
    for a, b in merges:
        ua, ub = "".join(u[c] for c in a.encode()), "".join(u[c] for c in b.encode())
        enc[ua + ub] = len(enc)
        lines.append(ua + " " + ub)
    enc["<|endoftext|>"] = len(enc)
    return (json.dumps(enc).encode() + b"\0" + "\n".join(lines).encode() + b"\n\0" + text.encode())


seeds.update({
    "bpe/seed_small.bin": bpe([(" ", "t"), ("h", "e"), (" t", "he"), ("i", "n"), (" ", "a")],
                              "in the heat, a theme<|endoftext|> \u00e9t\u00e9 \U0001F600 12 34"),
    "bpe/seed_bytes_only.bin": bpe([], "only bytes \n\n  here"),
})


def tokenizer_json(merges, text, pre_tokenizer=None, normalizer=None, added=(), ignore_merges=False):
    # A small Hugging Face tokenizer.json: the 256 byte tokens, each merge's result, then added tokens; the
    # target's input is the file, a NUL, then text to encode.
    u = bytes_to_unicode()
    vocab = {u[b]: b for b in range(256)}
    listed = []
    for a, b in merges:
        ua, ub = "".join(u[c] for c in a.encode()), "".join(u[c] for c in b.encode())
        vocab[ua + ub] = len(vocab)
        listed.append(ua + " " + ub)
    added_tokens = [{"id": len(vocab) + i, "content": c, "single_word": False, "lstrip": False, "rstrip": False,
                     "normalized": False, "special": special} for i, (c, special) in enumerate(added)]
    doc = {"version": "1.0", "added_tokens": added_tokens, "normalizer": normalizer,
           "pre_tokenizer": pre_tokenizer or {"type": "ByteLevel", "add_prefix_space": False, "use_regex": True},
           "decoder": {"type": "ByteLevel"},
           "model": {"type": "BPE", "dropout": None, "byte_fallback": False, "ignore_merges": ignore_merges,
                     "vocab": vocab, "merges": listed}}
    return json.dumps(doc).encode() + b"\0" + text.encode()


split = {"type": "Sequence", "pretokenizers": [
    {"type": "Split", "pattern": {"Regex": r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"},
     "behavior": "Isolated", "invert": False},
    {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False}]}
seeds.update({
    "tokenizer_json/seed_gpt2.bin": tokenizer_json([(" ", "t"), ("h", "e"), (" t", "he")], "the heat\n 12 34",
                                                   added=[("<|endoftext|>", True)]),
    "tokenizer_json/seed_llama3.bin": tokenizer_json([("1", "2"), ("12", "3"), ("i", "n")], "in 123456 DON'T",
                                                     pre_tokenizer=split, ignore_merges=True,
                                                     added=[("<|begin_of_text|>", True)]),
    "tokenizer_json/seed_qwen3.bin": tokenizer_json([("e", "\u0301".encode().decode())], "Cafe\u0301 <think>x",
                                                    pre_tokenizer=split, normalizer={"type": "NFC"},
                                                    added=[("<|im_start|>", True), ("<think>", False)]),
})
# Inputs that crashed, hung or were misread before (the reliability issue's reproductions): read on every run.
linear = [("weight", "F32", [3, 4], floats(12)), ("bias", "F32", [3], floats(3))]
good = safetensors(linear)
n = struct.unpack("<Q", good[:8])[0]
seeds.update({
    "npy/regression_13_bytes.npy": b"\x93NUMPY\x02\x00\x00\x00\x00\x80\x00",
    "npy/regression_empty_header.npy": b"\x93NUMPY\x01\x00\x00\x00",
    "npy/regression_header_length_134.npy": npy(1, "<f4", (2, 3), data=floats(6), pad_to=144),
    "npy/regression_v2_header_length_154.npy": npy(2, "<f4", (2, 3), data=floats(6), pad_to=166),
    "npy/regression_shape_2.9.npy": npy(1, "<f4", (2, 3), data=floats(6)).replace(b"(2, 3)", b"(2.9, 3)"),
    "npy/regression_shape_2abc.npy": npy(1, "<f4", (2, 3), data=floats(6)).replace(b"(2, 3)", b"(2abc, 3)"),
    "safetensors/regression_deep.safetensors":
        (lambda h: struct.pack("<Q", len(h)) + h)(b"{\"a\":" + b"[" * 2000 + b"]" * 2000 + b"}"),
    "safetensors/regression_hole.safetensors": safetensors([("weight", "F32", [3, 4], floats(12))]) + b"\0" * 4,
    "safetensors/regression_nul_padding.safetensors": struct.pack("<Q", n) + good[8:8 + n].replace(b" ", b"\0") + good[8 + n:],
    "safetensors/regression_key_twice.safetensors":
        (lambda h: struct.pack("<Q", len(h)) + h + floats(12) + floats(3))(
            good[8:8 + n].rstrip().replace(b"}}", b"},\"bias\":{\"dtype\":\"F32\",\"shape\":[3],\"data_offsets\":[48,60]}}")),
    # Found by the .npy fuzzer: int64 values whose sum overflows (a bug of the fuzz target's own check).
    "npy/regression_i8_values_overflow_a_sum.npy":
        npy(3, "<i8", (1, 2), data=struct.pack("<2q", -4674376122371145728, -5845312025503916360)),
})
for name, data in seeds.items():
    path = os.path.join(here, "corpus", name)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)
print(f"wrote {len(seeds)} seeds")
