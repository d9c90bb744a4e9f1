// Writes tests/golden/tokenizer_json_goldens.hpp: the ids that transformers.js (npm @lenml/tokenizers, its
// tokenizers in a package of their own) gives for the-verdict.txt, the book's strings and the stress set under
// three Hugging Face tokenizer.json files made of GPT-2's vocabulary and merges (tests/data) and the rest of
// each model's file (tests/data/tokenizer_json/*.json): GPT-2's own, one with Llama 3's pre-tokenizer and
// ignore_merges, one with Qwen3's NFC normalizer and pre-tokenizer and added tokens both special and not.
// tests/unit/text.cpp makes the same files the same way. Run: npm ci && node make_tokenizer_json_goldens.mjs
// (in tests/golden/text); the tests never need node.
import { TokenizerLoader } from "@lenml/tokenizers";
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { dirname, join } from "node:path";
import { book, stress } from "./strings.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const data = join(here, "..", "..", "data");
const verdict = readFileSync(join(data, "the-verdict.txt"), "utf8");

// The file: the piece with "@VOCAB@" replaced by encoder.json and "@MERGES@" by vocab.bpe's merges as strings.
export function compose(piece) {
  const vocab = readFileSync(join(data, "encoder.json"), "utf8").trim();
  const merges = readFileSync(join(data, "vocab.bpe"), "utf8").split("\n").filter((l, i) => l && !(i === 0 && l.startsWith("#version")));
  // Replacer functions: a replacement string would read the vocabulary's "$$" as a pattern.
  return piece.replace('"@VOCAB@"', () => vocab).replace('"@MERGES@"', () => JSON.stringify(merges));
}

// JavaScript's \s differs from the Rust tokenizers' (Oniguruma's) and PCRE2's on U+0085 (not space in JS) and
// U+FEFF (space in JS only); the stress strings with either are left out here (GPT-2's own ids for them are
// tiktoken's, checked in tests/unit/text.cpp).
const jsWhitespaceDiffers = (s) => /[\u0085\ufeff]/.test(s);
const extra = [
  "<|begin_of_text|>Hello<|end_of_text|>",
  "<|im_start|>user\nHi there<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\nHello!<|im_end|>",
  "1234567 89 0",
  "Cafe\u0301 nai\u0308ve \u212b \ufb01",
  "DON'T I'LL You'Re",
  "a\r\n\r\nb \r\n c",
];

const cstr = (s) => {
  const bytes = Buffer.from(s, "utf8");
  let out = '"';
  for (const b of bytes) out += b >= 0x20 && b < 0x7f && b !== 0x22 && b !== 0x5c && b !== 0x3f ? String.fromCharCode(b) : "\\x" + b.toString(16).padStart(2, "0") + '""';
  return out + '"';
};
const lines = ["// transformers.js (npm @lenml/tokenizers 3.7.2) on tokenizer.json files, written by tests/golden/text/make_tokenizer_json_goldens.mjs.",
  "#ifndef SHAPED_TESTS_TOKENIZER_JSON_GOLDENS_HPP", "#define SHAPED_TESTS_TOKENIZER_JSON_GOLDENS_HPP", "",
  "#include <cstdint>", "#include <string_view>", "#include <vector>", "", "namespace golden::tokenizer_json {", "",
  "struct encoded { std::string_view text; std::vector<std::int64_t> ids; };", ""];
const all = [...book, ...stress, ...extra];
for (const name of ["gpt2", "llama3_style", "qwen3_style"]) {
  const piece = readFileSync(join(data, "tokenizer_json", name + ".json"), "utf8");
  const tok = TokenizerLoader.fromPreTrained({ tokenizerJSON: JSON.parse(compose(piece)), tokenizerConfig: {} });
  lines.push(`inline const std::vector<std::int64_t> ${name}_verdict{${tok.encode(verdict, { add_special_tokens: false }).join(", ")}};`);
  lines.push(`inline const std::vector<encoded> ${name}_strings{`);
  for (const s of all) {
    if (jsWhitespaceDiffers(s)) continue;
    lines.push(`    {${cstr(s)}, {${tok.encode(s, { add_special_tokens: false }).join(", ")}}},`);
  }
  lines.push("};", "");
}
lines.push("}  // namespace golden::tokenizer_json", "", "#endif", "");
writeFileSync(join(here, "..", "tokenizer_json_goldens.hpp"), lines.join("\n"));
