// Writes tests/golden/text_goldens.hpp and tests/golden/weights/gpt2_generate_prompt.out: tiktoken's GPT-2 ids for the-verdict.txt, the strings the book
// encodes and a stress set of our own, and tiktoken's decode of single tokens (the bytes of a character split
// between tokens replaced by U+FFFD, as Python's tiktoken decodes with errors="replace" and TextDecoder does).
// Run: npm ci && node make_text_goldens.mjs  (in tests/golden/text); the tests never need node.
import { get_encoding } from "tiktoken";
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { dirname, join } from "node:path";

const here = dirname(fileURLToPath(import.meta.url));
const enc = get_encoding("gpt2");
const verdict = readFileSync(join(here, "..", "..", "data", "the-verdict.txt"), "utf8");

import { book, stress } from "./strings.mjs";

const lines = [];
const ids = (name, s) => {
  const t = Array.from(enc.encode(s, "all"));
  lines.push(`// ${JSON.stringify(s).slice(0, 100).replace(/\\+$/, "")}`);
  lines.push(`inline constexpr std::array<std::int64_t, ${t.length}> ${name}{${t.join(", ")}};`);
  return t;
};
const cstr = (s) => {
  const bytes = Buffer.from(s, "utf8");
  let out = '"';
  for (const b of bytes) out += b >= 0x20 && b < 0x7f && b !== 0x22 && b !== 0x5c && b !== 0x3f ? String.fromCharCode(b) : "\\x" + b.toString(16).padStart(2, "0") + '""';
  return out + '"';
};

lines.push("// tiktoken (npm, 1.0.22) get_encoding(\"gpt2\"), written by tests/golden/text/make_text_goldens.mjs.");
lines.push("#ifndef SHAPED_TESTS_TEXT_GOLDENS_HPP", "#define SHAPED_TESTS_TEXT_GOLDENS_HPP", "",
           "#include <array>", "#include <cstdint>", "#include <string_view>", "", "namespace golden::text {", "");
ids("verdict", verdict);
lines.push("");
lines.push(`inline constexpr std::array<std::string_view, ${book.length}> book_strings{${book.map(cstr).join(",\n    ")}};`);
book.forEach((s, i) => ids(`book_${i}`, s));
lines.push("");
lines.push(`inline constexpr std::array<std::string_view, ${stress.length}> stress_strings{${stress.map(cstr).join(",\n    ")}};`);
stress.forEach((s, i) => ids(`stress_${i}`, s));
// Each stress string's tokens decoded one at a time, joined by '|': the replacement of split characters.
const decoder = new TextDecoder("utf-8", { fatal: false });
lines.push("");
lines.push("// Each token of the stress strings decoded alone (U+FFFD for a split character), joined by '|'.");
lines.push(`inline constexpr std::array<std::string_view, ${stress.length}> stress_single_decodes{${stress
  .map((s) => cstr(Array.from(enc.encode(s, "all")).map((id) => decoder.decode(enc.decode(new Uint32Array([id])))).join("|")))
  .join(",\n    ")}};`);
// Every id: the mergeable tokens and <|endoftext|> (the JS binding has no n_vocab).
lines.push(`inline constexpr std::int64_t n_vocab = ${enc.token_byte_values().length + 1};`);
lines.push(`inline constexpr std::int64_t eot_token = ${enc.encode("<|endoftext|>", "all")[0]};`);
lines.push("", "}  // namespace golden::text", "", "#endif", "");
writeFileSync(join(here, "..", "text_goldens.hpp"), lines.join("\n"));
// examples/gpt2_generate --prompt "Every effort moves you" prints the text of the ids it generates, then the ids
// as tests/golden/weights/gpt2_generate.out has them (the book's model on the random checkpoint).
const generated = readFileSync(join(here, "..", "weights", "gpt2_generate.out"), "utf8");
const generatedIds = generated.match(/\d+/g).map(Number);
const generatedText = new TextDecoder().decode(enc.decode(new Uint32Array(generatedIds)));
writeFileSync(join(here, "..", "weights", "gpt2_generate_prompt.out"), generatedText + "\n" + generated);
enc.free();
