// Hugging Face tokenizer.json files of byte-level BPE models against transformers.js
// (tests/golden/text/make_tokenizer_json_goldens.mjs): GPT-2's own file, and GPT-2's vocabulary under Llama
// 3's pre-tokenizer and ignore_merges and under Qwen3's NFC normalizer, pre-tokenizer and added tokens, each
// made here as the script makes it (tests/data/tokenizer_json/*.json with GPT-2's encoder.json and
// vocab.bpe). The same ids for the-verdict.txt, the book's strings and the stress set; decode back to the
// (normalized) text; special tokens only where allowed, other added tokens always; and every file that is
// not such a model refused with a message naming what it holds.
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "check.hpp"
#include "golden/tokenizer_json_goldens.hpp"

#include <shaped/text/bpe_tokenizer.hpp>

namespace {

namespace text = shaped::text;
const std::filesystem::path data = std::filesystem::path(SHAPED_GOLDEN_DIR).parent_path() / "data";

std::string read(const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), {}};
}

std::string replace_once(std::string s, const std::string& from, const std::string& to) {
    const auto at = s.find(from);
    REQUIRE(at != std::string::npos);
    return s.replace(at, from.size(), to);
}

// The tokenizer.json of the piece `name`: "@VOCAB@" replaced by encoder.json, "@MERGES@" by vocab.bpe's merges
// as a JSON array of strings (as the golden script's compose does).
std::string compose(const std::string& piece) {
    std::string vocab = read(data / "encoder.json");
    while (!vocab.empty() && (vocab.back() == '\n' || vocab.back() == ' ')) vocab.pop_back();
    std::ifstream in(data / "vocab.bpe", std::ios::binary);
    std::string line, merges = "[";
    for (std::size_t n = 0; std::getline(in, line); ++n) {
        if (line.empty() || (n == 0 && line.rfind("#version", 0) == 0)) continue;
        merges += merges.size() > 1 ? ",\"" : "\"";
        for (const char c : line) {
            if (c == '"' || c == '\\') merges += '\\';
            merges += c;
        }
        merges += '"';
    }
    merges += "]";
    return replace_once(replace_once(piece, "\"@VOCAB@\"", vocab), "\"@MERGES@\"", merges);
}

const text::bpe_tokenizer& from_piece(const std::string& name) {
    static std::map<std::string, text::bpe_tokenizer> loaded;
    auto it = loaded.find(name);
    if (it == loaded.end()) {
        const std::string contents = compose(read(data / "tokenizer_json" / (name + ".json")));
        it = loaded.emplace(name, text::bpe_tokenizer::from_tokenizer_json_contents(contents, name + ".json")).first;
    }
    return it->second;
}

const std::set<std::string, std::less<>> all_special = {"<|endoftext|>", "<|begin_of_text|>", "<|end_of_text|>",
                                                         "<|im_start|>", "<|im_end|>"};

void check_goldens(const std::string& name, const std::vector<std::int64_t>& verdict,
                   const std::vector<golden::tokenizer_json::encoded>& strings) {
    const auto& tok = from_piece(name);
    CAPTURE(name);
    CHECK(tok.encode(read(data / "the-verdict.txt")) == verdict);
    CHECK(tok.decode(verdict) == read(data / "the-verdict.txt"));
    for (const auto& e : strings) {
        CAPTURE(e.text);
        CHECK(tok.encode(e.text, all_special) == e.ids);
    }
}

}  // namespace

TEST_CASE("GPT-2's tokenizer.json gives transformers.js's ids, and tiktoken's") {
    check_goldens("gpt2", golden::tokenizer_json::gpt2_verdict, golden::tokenizer_json::gpt2_strings);
    const auto& tok = from_piece("gpt2");
    CHECK(tok.n_vocab() == 50257);
    CHECK(tok.eot_token() == 50256);
    CHECK(golden::tokenizer_json::gpt2_verdict.size() == 5145);  // tiktoken's count: the two agree
}

TEST_CASE("Llama 3's pre-tokenizer and ignore_merges give transformers.js's ids") {
    check_goldens("llama3_style", golden::tokenizer_json::llama3_style_verdict,
                  golden::tokenizer_json::llama3_style_strings);
    const auto& tok = from_piece("llama3_style");
    CHECK(tok.encode("1234567") == std::vector<std::int64_t>{from_piece("gpt2").encode("123")[0],
                                                              from_piece("gpt2").encode("456")[0],
                                                              from_piece("gpt2").encode("7")[0]});  // \p{N}{1,3}
    CHECK(tok.special_token("<|begin_of_text|>") == 50257);
    CHECK(tok.eot_token() == 50256);
    CHECK_THROWS_AS(tok.encode("<|begin_of_text|>Hi"), text::disallowed_special_token);
}

TEST_CASE("Qwen3's NFC normalizer, pre-tokenizer and added tokens give transformers.js's ids") {
    check_goldens("qwen3_style", golden::tokenizer_json::qwen3_style_verdict,
                  golden::tokenizer_json::qwen3_style_strings);
    const auto& tok = from_piece("qwen3_style");
    // NFC: a decomposed e + U+0301 encodes as the precomposed character does.
    CHECK(tok.encode("Cafe\xcc\x81") == tok.encode("Caf\xc3\xa9"));
    CHECK(tok.decode(tok.encode("Cafe\xcc\x81")) == "Caf\xc3\xa9");
    // <think> is an added token that is not special: always its id, allowed or not; <|im_start|> only allowed.
    CHECK(tok.encode("a<think>b") == std::vector<std::int64_t>{64, 50259, 65});
    CHECK_THROWS_WITH_AS(tok.encode("<|im_start|>user"), doctest::Contains("<|im_start|>"), text::disallowed_special_token);
    CHECK(tok.encode_ordinary("<think>") != std::vector<std::int64_t>{50259});
    CHECK(tok.decode(std::vector<std::int64_t>{50257, 50259}) == "<|im_start|><think>");
}

TEST_CASE("a tokenizer.json that is not a byte-level BPE model, or is inconsistent, throws naming what it holds") {
    const std::string gpt2 = compose(read(data / "tokenizer_json" / "gpt2.json"));
    auto fails_with = [&](const std::string& contents, const std::string& message) {
        CAPTURE(message);
        CHECK_THROWS_WITH_AS(text::bpe_tokenizer::from_tokenizer_json_contents(contents, "model/tokenizer.json"),
                             doctest::Contains(message.c_str()), shaped::io::file_error);
        CHECK_THROWS_WITH_AS(text::bpe_tokenizer::from_tokenizer_json_contents(contents, "model/tokenizer.json"),
                             doctest::Contains("model/tokenizer.json"), shaped::io::file_error);
    };
    fails_with(replace_once(gpt2, "\"byte_fallback\": false", "\"byte_fallback\": true"), "model.byte_fallback is true");
    fails_with(replace_once(gpt2, "\"type\": \"BPE\"", "\"type\": \"WordPiece\""), "model.type is \"WordPiece\"");
    fails_with(replace_once(gpt2, "\"dropout\": null", "\"dropout\": 0.1"), "model.dropout is 0.1");
    fails_with(replace_once(gpt2, "\"add_prefix_space\": false", "\"add_prefix_space\": true"), "adds a prefix space");
    fails_with(replace_once(gpt2, "\"pre_tokenizer\": {\n    \"type\": \"ByteLevel\"", "\"pre_tokenizer\": {\n    \"type\": \"Metaspace\""),
               "the pre-tokenizer is \"Metaspace\"");
    fails_with(replace_once(gpt2, "\"normalizer\": null", "\"normalizer\": {\"type\": \"NFKC\"}"), "the normalizer is \"NFKC\"");
    fails_with(replace_once(gpt2, "\"lstrip\": false", "\"lstrip\": true"), "strips spaces");
    fails_with(replace_once(gpt2, "\"\\u0120the\": 262", "\"\\u0120the\": 263"), "is given to another token too");
    fails_with(replace_once(gpt2, "[\"\xc4\xa0 t\"", "[\"\xc4\xa0 zzzq\""), "merges tokens the vocabulary lacks");
    fails_with(gpt2.substr(0, gpt2.size() / 2), "not JSON");
    fails_with("[]", "expected a JSON object");
    fails_with("{\"model\": {\"type\": \"BPE\", \"vocab\": {}, \"merges\": []}, \"pre_tokenizer\": {\"type\": \"ByteLevel\"}}",
               "model.vocab has no tokens");
    const std::string qwen = compose(read(data / "tokenizer_json" / "qwen3_style.json"));
    fails_with(replace_once(qwen, "\"Isolated\"", "\"Removed\""), "behavior Isolated");
    fails_with(replace_once(qwen, "(?i:'s", "(?i:'s("), "does not compile");
    CHECK_THROWS_WITH_AS(text::bpe_tokenizer::from_tokenizer_json(data / "tokenizer_json" / "missing.json"),
                         doctest::Contains("missing.json"), shaped::io::file_error);
    CHECK_THROWS_WITH_AS(text::bpe_tokenizer::from_tokenizer_json(data / "tokenizer_json"),
                         doctest::Contains("a directory"), shaped::io::file_error);
}
