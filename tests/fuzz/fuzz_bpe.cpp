// libFuzzer target: any bytes as a GPT-2 vocabulary and a text, `encoder.json`, a NUL byte, `vocab.bpe`, a
// NUL byte, then the text (a missing part is empty). The vocabulary must load or throw file_error; a loaded
// tokenizer must encode the text (or refuse it with invalid_argument when it is not UTF-8, or
// disallowed_special_token) to ids within its vocabulary that decode to the text exactly, never crash or read
// out of bounds. An input is counted as accepted when its vocabulary loads.
// Built and run by run.py (meson test --suite fuzz).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_common.hpp"

#include <shaped/text/bpe_tokenizer.hpp>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view input(reinterpret_cast<const char*>(data), size);
    const std::size_t a = input.find('\0');
    const std::size_t b = a == std::string_view::npos ? a : input.find('\0', a + 1);
    const std::string_view encoder = input.substr(0, a);
    const std::string_view merges = a == std::string_view::npos ? std::string_view() : input.substr(a + 1, b - a - 1);
    const std::string_view text = b == std::string_view::npos ? std::string_view() : input.substr(b + 1);
    try {
        const auto tok = shaped::text::bpe_tokenizer::gpt2_from_contents(encoder, merges);
        ++counts.accepted;
        try {
            const auto ids = tok.encode_ordinary(text);
            for (const auto id : ids) FUZZ_CHECK(id >= 0 && static_cast<std::size_t>(id) < tok.n_vocab());
            FUZZ_CHECK(tok.decode_bytes(ids) == text);
            const auto with_special = tok.encode(text, {"<|endoftext|>"});
            FUZZ_CHECK(tok.decode_bytes(with_special) == text);
            (void)tok.decode(ids);
        } catch (const std::invalid_argument&) {  // not UTF-8 (disallowed_special_token is one too)
        }
    } catch (const shaped::io::file_error&) {
        ++counts.refused;
    }
    return 0;
}
