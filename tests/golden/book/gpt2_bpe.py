# GPT-2's byte-level BPE in plain Python, for the golden scripts of the book's chapters 2 and 5 (tiktoken is
# not a Debian package): the pre-tokenizer pattern, the byte-to-character table and the merge loop of
# OpenAI's GPT-2 encoder, with `<|endoftext|>` encoded only where allowed, as tiktoken does. The ids it gives
# for the-verdict.txt are checked against tiktoken's (tests/golden/text) by make_text_goldens.mjs's numbers.
import json
import pathlib

import regex

DATA = pathlib.Path(__file__).resolve().parents[2] / "data"
PATTERN = regex.compile(r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+""")
EOT = "<|endoftext|>"


def byte_table():
    keep = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    chars = keep[:]
    extra = 0
    for b in range(256):
        if b not in keep:
            keep.append(b)
            chars.append(256 + extra)
            extra += 1
    return {b: chr(c) for b, c in zip(keep, chars)}


class Tokenizer:
    def __init__(self, data=DATA):
        self.encoder = json.loads((data / "encoder.json").read_text(encoding="utf-8"))
        self.decoder = {v: k for k, v in self.encoder.items()}
        lines = (data / "vocab.bpe").read_text(encoding="utf-8").split("\n")[1:]
        self.ranks = {tuple(line.split()): i for i, line in enumerate(l for l in lines if l)}
        self.to_char = byte_table()
        self.to_byte = {c: b for b, c in self.to_char.items()}

    def _bpe(self, word):
        parts = list(word)
        while len(parts) > 1:
            pairs = [(self.ranks.get((a, b), float("inf")), i) for i, (a, b) in enumerate(zip(parts, parts[1:]))]
            rank, i = min(pairs)
            if rank == float("inf"):
                break
            first, second = parts[i], parts[i + 1]
            merged, j = [], 0
            while j < len(parts):  # every occurrence of the pair, left to right
                if j + 1 < len(parts) and parts[j] == first and parts[j + 1] == second:
                    merged.append(first + second)
                    j += 2
                else:
                    merged.append(parts[j])
                    j += 1
            parts = merged
        return parts

    def encode(self, text, allowed_special=()):
        ids = []
        pieces = text.split(EOT) if EOT in allowed_special else [text]
        for k, piece in enumerate(pieces):
            if k > 0:
                ids.append(self.encoder[EOT])
            if EOT in piece:
                raise ValueError("disallowed special token " + EOT)
            for word in PATTERN.findall(piece):
                chars = "".join(self.to_char[b] for b in word.encode("utf-8"))
                ids.extend(self.encoder[p] for p in self._bpe(chars))
        return ids

    def decode(self, ids):
        data = bytes(self.to_byte[c] for i in ids for c in self.decoder[i])
        return data.decode("utf-8", errors="replace")
