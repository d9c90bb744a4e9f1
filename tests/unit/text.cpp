// GPT-2's byte-level BPE against tiktoken's "gpt2" encoding (tests/golden/text/make_text_goldens.mjs, with
// npm's tiktoken): the-verdict.txt, the book's strings and a stress set encoded to the same ids, decoded back
// to the same text, single tokens decoded with split characters replaced as tiktoken does; and what the
// tokenizer refuses: missing or corrupt vocabulary files, ids outside it, special tokens not allowed, text
// that is not UTF-8.
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <set>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "check.hpp"
#include "golden/text_goldens.hpp"

#include <shaped/text/bpe_tokenizer.hpp>

namespace {

namespace text = shaped::text;
const std::filesystem::path data = std::filesystem::path(SHAPED_GOLDEN_DIR).parent_path() / "data";

const text::bpe_tokenizer& gpt2() {
    static const text::bpe_tokenizer tok = text::bpe_tokenizer::gpt2(data / "encoder.json", data / "vocab.bpe");
    return tok;
}

template <std::size_t N>
std::vector<std::int64_t> ids_of(const std::array<std::int64_t, N>& golden) {
    return {golden.begin(), golden.end()};
}

std::string read(const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), {}};
}

// A scratch file with the given contents, removed at the end of the test.
struct scratch_file {
    std::filesystem::path path;
    scratch_file(const std::string& name, const std::string& contents)
        : path(std::filesystem::temp_directory_path() / ("shaped_text_" + name)) {
        std::ofstream(path, std::ios::binary) << contents;
    }
    ~scratch_file() { std::filesystem::remove(path); }
};

}  // namespace

TEST_CASE("GPT-2's BPE encodes the-verdict.txt to tiktoken's 5,145 ids and decodes them back to the text") {
    const auto& tok = gpt2();
    CHECK(tok.n_vocab() == golden::text::n_vocab);
    CHECK(tok.eot_token() == golden::text::eot_token);
    const std::string verdict = read(data / "the-verdict.txt");
    REQUIRE(verdict.size() == 20479);
    // [encode]
    const std::vector<std::int64_t> ids = tok.encode(verdict);  // tiktoken's enc.encode(raw_text)
    // [encode]
    CHECK(ids.size() == 5145);
    CHECK(ids == ids_of(golden::text::verdict));
    CHECK(tok.decode(ids) == verdict);
}

TEST_CASE("GPT-2's BPE gives tiktoken's ids for every string the book encodes, <|endoftext|> allowed") {
    const auto& tok = gpt2();
    const std::vector<std::vector<std::int64_t>> expected{
        ids_of(golden::text::book_0), ids_of(golden::text::book_1), ids_of(golden::text::book_2),
        ids_of(golden::text::book_3), ids_of(golden::text::book_4), ids_of(golden::text::book_5),
        ids_of(golden::text::book_6)};
    REQUIRE(expected.size() == golden::text::book_strings.size());
    for (std::size_t i = 0; i < expected.size(); ++i) {
        const auto s = golden::text::book_strings[i];
        INFO(s);
        CHECK(tok.encode(s, {"<|endoftext|>"}) == expected[i]);
        CHECK(tok.decode(expected[i]) == s);
    }
    // The book's chapter 2 example, as it prints it.
    CHECK(tok.encode("Hello, do you like tea? <|endoftext|> In the sunlit terraces of someunknownPlace.",
                     {"<|endoftext|>"}) ==
          std::vector<std::int64_t>{15496, 11, 466, 345, 588, 8887, 30, 220, 50256, 554, 262, 4252, 18250, 8812, 2114,
                                    286, 617, 34680, 27271, 13});
}

TEST_CASE("GPT-2's BPE equals tiktoken on a stress set: Unicode, emoji, whitespace runs, digits, contractions") {
    const auto& tok = gpt2();
    const std::vector<std::vector<std::int64_t>> expected{
        ids_of(golden::text::stress_0),  ids_of(golden::text::stress_1),  ids_of(golden::text::stress_2),
        ids_of(golden::text::stress_3),  ids_of(golden::text::stress_4),  ids_of(golden::text::stress_5),
        ids_of(golden::text::stress_6),  ids_of(golden::text::stress_7),  ids_of(golden::text::stress_8),
        ids_of(golden::text::stress_9),  ids_of(golden::text::stress_10), ids_of(golden::text::stress_11),
        ids_of(golden::text::stress_12), ids_of(golden::text::stress_13), ids_of(golden::text::stress_14),
        ids_of(golden::text::stress_15), ids_of(golden::text::stress_16), ids_of(golden::text::stress_17),
        ids_of(golden::text::stress_18), ids_of(golden::text::stress_19), ids_of(golden::text::stress_20),
        ids_of(golden::text::stress_21), ids_of(golden::text::stress_22), ids_of(golden::text::stress_23),
        ids_of(golden::text::stress_24), ids_of(golden::text::stress_25), ids_of(golden::text::stress_26),
        ids_of(golden::text::stress_27), ids_of(golden::text::stress_28), ids_of(golden::text::stress_29),
        ids_of(golden::text::stress_30), ids_of(golden::text::stress_31), ids_of(golden::text::stress_32)};
    REQUIRE(expected.size() == golden::text::stress_strings.size());
    const std::set<std::string, std::less<>> eot{"<|endoftext|>"};
    for (std::size_t i = 0; i < expected.size(); ++i) {
        const auto s = golden::text::stress_strings[i];
        INFO("stress string ", i, ": ", s);
        const auto ids = tok.encode(s, eot);
        CHECK(ids == expected[i]);
        CHECK(tok.decode(ids) == s);  // the round trip
        // One token at a time: a character split between tokens decodes to U+FFFD, as tiktoken's decode.
        std::string singles;
        for (std::size_t k = 0; k < ids.size(); ++k)
            singles += (k ? "|" : "") + tok.decode(std::span<const std::int64_t>(&ids[k], 1));
        CHECK(singles == golden::text::stress_single_decodes[i]);
    }
}

TEST_CASE("encode refuses a special token it was not allowed; encode_ordinary reads it as text") {
    const auto& tok = gpt2();
    const std::string s = "before<|endoftext|>after";
    CHECK(test::thrown<text::disallowed_special_token>([&] { (void)tok.encode(s); }) ==
          "shaped::text::bpe_tokenizer::encode: the text holds the special token <|endoftext|>, which this call does "
          "not allow: pass it in allowed_special to encode it as its id, or call encode_ordinary to encode it as "
          "plain text");
    const auto plain = tok.encode_ordinary(s);
    CHECK(std::find(plain.begin(), plain.end(), 50256) == plain.end());
    CHECK(tok.decode(plain) == s);
    CHECK(tok.encode(s, {"<|endoftext|>"}).size() == 3);
}

TEST_CASE("encode<num_tokens> types the ids along a run-time token axis within its bound") {
    const auto& tok = gpt2();
    struct context_length : shaped::axis<"context_length", 4> {};
    struct num_tokens : shaped::dynamic_axis<"num_tokens", shaped::at_most<context_length>> {};
    // [typed]
    const auto ids = tok.encode<num_tokens>("Every effort moves you");  // tensor<std::int64_t, num_tokens>
    // [typed]
    static_assert(std::is_same_v<std::remove_cvref_t<decltype(ids)>, shaped::tensor<std::int64_t, num_tokens>>);
    CHECK(ids.shape.extent(0) == 4);
    CHECK(std::vector<std::int64_t>(ids.data(), ids.data() + 4) == std::vector<std::int64_t>{6109, 3626, 6100, 345});
    CHECK(tok.decode(ids) == "Every effort moves you");
    CHECK(test::thrown<shaped::shape_error>([&] { (void)tok.encode<num_tokens>("Every effort moves you now"); }) ==
          "shaped::text::bpe_tokenizer::encode<T>(text): expected 1 to 4 tokens along num_tokens, got 5 tokens");
    CHECK_THROWS_AS((void)tok.encode<num_tokens>(""), shaped::shape_error);
}

TEST_CASE("decode refuses ids outside the vocabulary; encode refuses text that is not UTF-8") {
    const auto& tok = gpt2();
    const std::vector<std::int64_t> bad{15496, 50257};
    CHECK(test::thrown<std::invalid_argument>([&] { (void)tok.decode(bad); }) ==
          "shaped::text::bpe_tokenizer::decode: id 50257 is outside the vocabulary of 50257 ids");
    const std::vector<std::int64_t> negative{-1};
    CHECK_THROWS_AS((void)tok.decode(negative), std::invalid_argument);
    CHECK(test::thrown<std::invalid_argument>([&] { (void)tok.encode("ok \xff no"); }) ==
          "shaped::text::bpe_tokenizer::encode: the text is not UTF-8 (byte 3)");
    CHECK_THROWS_AS((void)tok.encode_ordinary("\xed\xa0\x80"), std::invalid_argument);  // a surrogate
    CHECK_THROWS_AS((void)tok.encode_ordinary("\xc0\xaf"), std::invalid_argument);      // overlong
    // Bytes that are not UTF-8 decode with U+FFFD for each maximal invalid part, as Python and TextDecoder.
    CHECK(text::bpe_tokenizer::replace_invalid_utf8("a\xf0\x9f\x98" "b\xff\xc3") == "a\xef\xbf\xbd" "b\xef\xbf\xbd\xef\xbf\xbd");
}

TEST_CASE("a missing or corrupt vocabulary file throws file_error naming the file and the problem") {
    const auto encoder = data / "encoder.json", merges = data / "vocab.bpe";
    const auto missing = data / "no-such-encoder.json";
    CHECK(test::thrown<shaped::io::file_error>([&] { (void)text::bpe_tokenizer::gpt2(missing, merges); }) ==
          "shaped::text::bpe_tokenizer::gpt2 (encoder.json): " + missing.string() + ": cannot open the file");
    {
        scratch_file f("not_json.json", "{\"a\": 0,");
        CHECK(test::thrown<shaped::io::file_error>([&] { (void)text::bpe_tokenizer::gpt2(f.path, merges); })
                  .rfind("shaped::text::bpe_tokenizer::gpt2 (encoder.json): " + f.path.string() + ": not JSON: ", 0) == 0);
    }
    {
        scratch_file f("ids_twice.json", "{\"a\": 0, \"b\": 0}");
        CHECK(test::thrown<shaped::io::file_error>([&] { (void)text::bpe_tokenizer::gpt2(f.path, merges); }) ==
              "shaped::text::bpe_tokenizer::gpt2 (encoder.json): " + f.path.string() +
                  ": the id 0 of \"b\" is given to another token too");
    }
    {
        scratch_file f("not_an_id.json", "{\"a\": -1}");
        CHECK(test::thrown<shaped::io::file_error>([&] { (void)text::bpe_tokenizer::gpt2(f.path, merges); }) ==
              "shaped::text::bpe_tokenizer::gpt2 (encoder.json): " + f.path.string() + ": the value of \"a\" is not an id: -1");
    }
    {
        scratch_file f("few_bytes.json", "{\"a\": 0, \"<|endoftext|>\": 1}");
        CHECK(test::thrown<shaped::io::file_error>([&] { (void)text::bpe_tokenizer::gpt2(f.path, merges); }) ==
              "shaped::text::bpe_tokenizer::gpt2 (encoder.json): " + f.path.string() + ": byte 0 has no token");
    }
    CHECK(test::thrown<shaped::io::file_error>([&] { (void)text::bpe_tokenizer::gpt2(data, merges); }) ==
          "shaped::text::bpe_tokenizer::gpt2 (encoder.json): " + data.string() + ": a directory, not a file");
    {  // a token missing: the last id is then past the end
        std::string e = read(encoder);
        const std::size_t at = e.find("\"!\": 0, ");
        REQUIRE(at != std::string::npos);
        scratch_file f("missing_token.json", e.erase(at, 8));
        CHECK(test::thrown<shaped::io::file_error>([&] { (void)text::bpe_tokenizer::gpt2(f.path, merges); }) ==
              "shaped::text::bpe_tokenizer::gpt2 (encoder.json): " + f.path.string() +
                  ": the id of \"<|endoftext|>\" is 50256, not below the number of tokens, 50256 (the ids are 0 to "
                  "50255 once each: is a token missing?)");
    }
    // vocab.bpe: a merge of a token the vocabulary lacks; a merge out of order; merges missing at the end.
    std::string m = read(merges);
    {  // CRLF line ends are read as tiktoken reads them
        std::string crlf;
        for (const char c : m) crlf += c == '\n' ? std::string("\r\n") : std::string(1, c);
        scratch_file f("crlf.bpe", crlf);
        const auto tok = text::bpe_tokenizer::gpt2(encoder, f.path);
        CHECK(tok.encode(golden::text::book_strings[6]) == ids_of(golden::text::book_6));
    }
    {
        scratch_file f("unknown.bpe", "#version: 0.2\n\xc4\xa0 zzzqqq\n");
        CHECK(test::thrown<shaped::io::file_error>([&] { (void)text::bpe_tokenizer::gpt2(encoder, f.path); }) ==
              "shaped::text::bpe_tokenizer::gpt2 (vocab.bpe): " + f.path.string() +
                  ": line 2: merges tokens the vocabulary lacks, or into one it lacks");
    }
    {
        const std::size_t second = m.find('\n', m.find('\n') + 1) + 1;  // swap the first two merges
        const std::size_t third = m.find('\n', second) + 1;
        const std::string first_line = m.substr(m.find('\n') + 1, second - m.find('\n') - 1);
        std::string swapped = m.substr(0, m.find('\n') + 1) + m.substr(second, third - second) + first_line + m.substr(third);
        scratch_file f("swapped.bpe", swapped);
        CHECK(test::thrown<shaped::io::file_error>([&] { (void)text::bpe_tokenizer::gpt2(encoder, f.path); }) ==
              "shaped::text::bpe_tokenizer::gpt2 (vocab.bpe): " + f.path.string() +
                  ": line 2: the merged token's id is 257, not 256 (256 + its rank), as GPT-2's files number them");
    }
    {
        scratch_file f("short.bpe", m.substr(0, m.find('\n', m.size() / 2)));
        CHECK(test::thrown<shaped::io::file_error>([&] { (void)text::bpe_tokenizer::gpt2(encoder, f.path); })
                  .find("merges for a vocabulary of 50257 tokens") != std::string::npos);
    }
}

TEST_CASE("one tokenizer encodes on several threads at once (const calls share the compiled pattern)") {
    const auto& tok = gpt2();
    const std::string verdict = read(data / "the-verdict.txt");
    std::vector<std::vector<std::int64_t>> out(4);
    std::vector<std::thread> threads;
    for (std::size_t i = 0; i < out.size(); ++i) threads.emplace_back([&, i] { out[i] = tok.encode(verdict); });
    for (auto& t : threads) t.join();
    for (const auto& ids : out) CHECK(ids == ids_of(golden::text::verdict));
}

TEST_CASE("utf8_stream gives whole characters as token bytes arrive, and U+FFFD for one never finished") {
    const auto& tok = gpt2();
    for (const auto s : golden::text::stress_strings) {
        INFO(s);
        const auto ids = tok.encode(s, {"<|endoftext|>"});
        shaped::text::utf8_stream stream;
        std::string out;
        for (const auto id : ids) {
            const std::string part = stream.push(tok.token_bytes(id));
            CHECK(shaped::text::bpe_tokenizer::replace_invalid_utf8(part) == part);  // only whole characters
            out += part;
        }
        out += stream.finish();
        CHECK(out == s);
    }
    shaped::text::utf8_stream stream;
    CHECK(stream.push("ok \xf0\x9f") == "ok ");  // the first half of an emoji waits
    CHECK(stream.push("\x98") == "");
    CHECK(stream.finish() == "\xef\xbf\xbd");    // never completed: one U+FFFD, as decode gives
    CHECK(stream.push("\xff!") == "\xef\xbf\xbd!");
    CHECK(stream.push("\xff") == "\xef\xbf\xbd");  // bytes no later token can complete: replaced at once
    CHECK(stream.push("\x80") == "\xef\xbf\xbd");
    CHECK(stream.finish().empty());
}
