// libFuzzer target: any bytes as a Hugging Face tokenizer.json, a NUL byte, then a text (a missing text is
// empty). The file must load or throw file_error; a loaded tokenizer must encode the text (or refuse it with
// invalid_argument when it is not UTF-8, or disallowed_special_token) to ids within its vocabulary whose
// bytes are the text's (after NFC, when the file asks for it), never crash or read out of bounds. An input is
// counted as accepted when its file loads.
// Built and run by run.py (meson test --suite fuzz).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_common.hpp"

#include <shaped/text/bpe_tokenizer.hpp>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view input(reinterpret_cast<const char*>(data), size);
    const std::size_t nul = input.find('\0');
    const std::string_view file = input.substr(0, nul);
    const std::string_view text = nul == std::string_view::npos ? std::string_view() : input.substr(nul + 1);
    try {
        const auto tok = shaped::text::bpe_tokenizer::from_tokenizer_json_contents(file);
        ++counts.accepted;
        try {
            const auto ids = tok.encode_ordinary(text);
            for (const auto id : ids) FUZZ_CHECK(id >= 0 && static_cast<std::size_t>(id) < tok.n_vocab());
            const std::string normalized = tok.decode_bytes(ids);
            // Encoding the decoded text again gives the same bytes (NFC is idempotent; BPE keeps bytes).
            FUZZ_CHECK(tok.decode_bytes(tok.encode_ordinary(normalized)) == normalized);
            (void)tok.decode(ids);
        } catch (const std::invalid_argument&) {  // not UTF-8 (disallowed_special_token is one too)
        }
    } catch (const shaped::io::file_error&) {
        ++counts.refused;
    }
    return 0;
}
