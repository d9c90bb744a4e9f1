// tiktoken (npm) on the text of tests/bench/text_bench.cpp: the-verdict.txt repeated `copies` times, encoded
// (encode_ordinary) and decoded `rounds` times; prints one JSON line per round with MB/s. Run by compare.py.
import { get_encoding } from "tiktoken";
import { readFileSync } from "node:fs";

const [dataDir, copies = "50", rounds = "5"] = process.argv.slice(2);
const enc = get_encoding("gpt2");
const text = readFileSync(`${dataDir}/the-verdict.txt`, "utf8").repeat(Number(copies));
const bytes = Buffer.byteLength(text, "utf8");
enc.encode_ordinary(text);  // warm-up
for (let r = 0; r < Number(rounds); ++r) {
  let t0 = performance.now();
  const ids = enc.encode_ordinary(text);
  const encodeSeconds = (performance.now() - t0) / 1000;
  t0 = performance.now();
  enc.decode(ids);
  const decodeSeconds = (performance.now() - t0) / 1000;
  console.log(JSON.stringify({ tokens: ids.length, encode_mb_s: bytes / encodeSeconds / 1e6,
                               decode_mb_s: bytes / decodeSeconds / 1e6 }));
}
enc.free();
