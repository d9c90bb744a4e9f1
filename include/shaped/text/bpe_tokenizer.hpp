#ifndef SHAPED_TEXT_BPE_TOKENIZER_HPP
#define SHAPED_TEXT_BPE_TOKENIZER_HPP

/// \file
/// `text::bpe_tokenizer`: byte-level byte-pair encoding, text to token ids and back, loaded from GPT-2's
/// `encoder.json` and `vocab.bpe` (Hugging Face's `vocab.json` and `merges.txt`) or from a Hugging Face
/// `tokenizer.json` of a byte-level BPE model (GPT-2's, Llama 3's, Qwen's). The text is split into words by
/// the model's pattern (PCRE2, a Debian library, with its JIT), each word's UTF-8 bytes merged pair by pair in
/// the merges' order, as tiktoken's `gpt2` encoding and Hugging Face's `tokenizers` do. Qwen's NFC normalizer
/// runs on ICU.

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <system_error>
#include <fstream>
#include <limits>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#ifndef PCRE2_CODE_UNIT_WIDTH
/// PCRE2's 8-bit library (UTF-8 text), which `pcre2.h` asks its includer to choose.
#define PCRE2_CODE_UNIT_WIDTH 8
#endif
#include <pcre2.h>
#include <unicode/normalizer2.h>
#include <unicode/unistr.h>

#include "../detail/json.hpp"
#include "../io/file_error.hpp"
#include "../tensor.hpp"

namespace shaped::text {

/// Thrown by `encode` when the text holds a special token (`<|endoftext|>`) that the call did not allow,
/// as tiktoken raises: such a string typed by a user must not end a document by accident. Its `token()` is
/// the special token found.
///
/// Shapes: none. Errors: none of its own. Source: tiktoken's `ValueError: Encountered text corresponding to
/// disallowed special token`.
class disallowed_special_token : public std::invalid_argument {
public:
    /// The message names the token and the way to allow it, or to encode it as plain text.
    explicit disallowed_special_token(std::string token)
        : std::invalid_argument("shaped::text::bpe_tokenizer::encode: the text holds the special token " + token +
                                ", which this call does not allow: pass it in allowed_special to encode it as "
                                "its id, or call encode_ordinary to encode it as plain text"),
          token_(std::move(token)) {}
    /// The special token found in the text.
    const std::string& token() const noexcept { return token_; }

private:
    std::string token_;
};

namespace detail {

// GPT-2's bytes_to_unicode: the printable bytes stand for themselves, the others for code points from 256 on,
// in byte order, so that every byte has a visible character in encoder.json and vocab.bpe.
inline const std::array<char32_t, 256>& byte_to_unicode() {
    static const std::array<char32_t, 256> table = [] {
        std::array<char32_t, 256> t{};
        char32_t next = 256;
        for (unsigned b = 0; b < 256; ++b) {
            const bool printable = (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174);
            t[b] = printable ? char32_t(b) : next++;
        }
        return t;
    }();
    return table;
}

// The bytes a string of encoder.json or vocab.bpe stands for: each code point mapped back through
// byte_to_unicode. Returns false for a code point that stands for no byte (or invalid UTF-8).
inline bool unicode_to_bytes(std::string_view s, std::string& out) {
    static const std::unordered_map<char32_t, unsigned char> inverse = [] {
        std::unordered_map<char32_t, unsigned char> m;
        for (unsigned b = 0; b < 256; ++b) m.emplace(byte_to_unicode()[b], static_cast<unsigned char>(b));
        return m;
    }();
    out.clear();
    for (std::size_t i = 0; i < s.size();) {
        const auto c = static_cast<unsigned char>(s[i]);
        char32_t cp;
        std::size_t len;
        if (c < 0x80) { cp = c; len = 1; }
        else if ((c & 0xe0) == 0xc0) { cp = c & 0x1f; len = 2; }
        else if ((c & 0xf0) == 0xe0) { cp = c & 0x0f; len = 3; }
        else return false;  // the table's code points are below U+0800... and 4-byte sequences stand for none
        if (i + len > s.size()) return false;
        for (std::size_t k = 1; k < len; ++k) {
            const auto cc = static_cast<unsigned char>(s[i + k]);
            if ((cc & 0xc0) != 0x80) return false;
            cp = (cp << 6) | (cc & 0x3f);
        }
        const auto it = inverse.find(cp);
        if (it == inverse.end()) return false;
        out.push_back(static_cast<char>(it->second));
        i += len;
    }
    return true;
}

// The length of the valid UTF-8 sequence at s[i], or 0 when there is none (the WHATWG / Unicode "maximal
// subpart" rules: overlong forms, surrogates and code points above U+10FFFF are invalid).
inline std::size_t utf8_sequence(std::string_view s, std::size_t i, std::size_t* maximal_subpart = nullptr) {
    const auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
    const unsigned char c = b(i);
    std::size_t len;
    unsigned char lo = 0x80, hi = 0xbf;
    if (c < 0x80) return 1;
    if (c >= 0xc2 && c <= 0xdf) len = 2;
    else if (c >= 0xe0 && c <= 0xef) {
        len = 3;
        if (c == 0xe0) lo = 0xa0;
        if (c == 0xed) hi = 0x9f;
    } else if (c >= 0xf0 && c <= 0xf4) {
        len = 4;
        if (c == 0xf0) lo = 0x90;
        if (c == 0xf4) hi = 0x8f;
    } else {
        if (maximal_subpart) *maximal_subpart = 1;
        return 0;
    }
    std::size_t k = 1;
    for (; k < len && i + k < s.size(); ++k) {
        const unsigned char cc = b(i + k);
        if (k == 1 ? (cc < lo || cc > hi) : (cc & 0xc0) != 0x80) break;
    }
    if (k == len) return len;
    if (maximal_subpart) *maximal_subpart = k;
    return 0;
}

// Heterogeneous lookup of byte strings by string_view.
struct bytes_hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
};

// A compiled PCRE2 pattern, shared read-only by every call (PCRE2's compiled code is thread-safe).
class pattern {
public:
    explicit pattern(std::string_view source) {
        int code = 0;
        PCRE2_SIZE offset = 0;
        re_.reset(pcre2_compile(reinterpret_cast<PCRE2_SPTR>(source.data()), source.size(), PCRE2_UTF | PCRE2_UCP,
                                &code, &offset, nullptr));
        if (!re_) {
            std::array<PCRE2_UCHAR, 256> message{};
            pcre2_get_error_message(code, message.data(), message.size());
            throw std::invalid_argument("shaped::text: the pre-tokenizer pattern does not compile at offset " +
                                        std::to_string(offset) + ": " + reinterpret_cast<const char*>(message.data()));
        }
        pcre2_jit_compile(re_.get(), PCRE2_JIT_COMPLETE);  // interpreted where the JIT is missing
    }
    // Calls f(word) for each match in `text`, left to right; text is valid UTF-8 (checked by the caller).
    // With `gaps`, the text between matches is a word too (Hugging Face's Split with behavior "Isolated").
    template <class F>
    void for_each_match(std::string_view text, F&& f, bool gaps = false) const {
        const std::unique_ptr<pcre2_match_data, decltype(&pcre2_match_data_free)> md(
            pcre2_match_data_create_from_pattern(re_.get(), nullptr), &pcre2_match_data_free);
        const auto subject = reinterpret_cast<PCRE2_SPTR>(text.data());
        PCRE2_SIZE at = 0, gap = 0;  // gap: where the text not yet given to f begins
        while (at < text.size()) {
            const int rc = pcre2_match(re_.get(), subject, text.size(), at, PCRE2_NO_UTF_CHECK, md.get(), nullptr);
            if (rc == PCRE2_ERROR_NOMATCH) break;
            if (rc < 0) throw std::runtime_error("shaped::text: PCRE2 match error " + std::to_string(rc));
            const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(md.get());
            if (ov[1] == ov[0]) {  // an empty match (none of the patterns here makes one): step over a character
                at = ov[0] + std::max<std::size_t>(1, utf8_sequence(text, ov[0]));
                continue;
            }
            if (gaps && ov[0] > gap) f(text.substr(gap, ov[0] - gap));
            f(text.substr(ov[0], ov[1] - ov[0]));
            at = gap = ov[1];
        }
        if (gaps && gap < text.size()) f(text.substr(gap));
    }

private:
    struct code_free {
        void operator()(pcre2_code* c) const noexcept { pcre2_code_free(c); }
    };
    std::unique_ptr<pcre2_code, code_free> re_;
};

// `text` in Unicode's normalization form C (ICU), for Qwen's normalizer; `text` is valid UTF-8.
inline std::string nfc(std::string_view text) {
    if (std::all_of(text.begin(), text.end(), [](char c) { return static_cast<unsigned char>(c) < 0x80; }))
        return std::string(text);  // ASCII is its own NFC
    if (text.size() > static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max()))
        throw std::invalid_argument("shaped::text: text of 2 GiB or more between special tokens cannot be normalized");
    UErrorCode status = U_ZERO_ERROR;
    const icu::Normalizer2* normalizer = icu::Normalizer2::getNFCInstance(status);
    if (U_FAILURE(status)) throw std::runtime_error("shaped::text: ICU's NFC normalizer is unavailable");
    const auto source = icu::UnicodeString::fromUTF8(icu::StringPiece(text.data(), static_cast<std::int32_t>(text.size())));
    const icu::UnicodeString normalized = normalizer->normalize(source, status);
    if (U_FAILURE(status)) throw std::runtime_error("shaped::text: ICU's NFC normalization failed");
    std::string out;
    normalized.toUTF8String(out);
    return out;
}

inline std::string read_file(const std::filesystem::path& path, const char* reader) {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) throw io::file_error(reader, path.string(), "a directory, not a file");
    std::ifstream in(path, std::ios::binary);
    if (!in) throw io::file_error(reader, path.string(), "cannot open the file");
    std::ostringstream ss;
    ss << in.rdbuf();
    if (in.bad()) throw io::file_error(reader, path.string(), "cannot read the file");
    return std::move(ss).str();
}

}  // namespace detail

/// Text from a stream of token bytes, for printing tokens as they are generated: `push` gives the complete
/// UTF-8 characters so far and keeps the bytes of a character that a later token completes; `finish` gives
/// what is left, an unfinished character as U+FFFD (as `decode` would).
///
/// Shapes: none. Errors: none (invalid bytes become U+FFFD). Source: what tiktoken's users write with
/// `decode_single_token_bytes` and an incremental UTF-8 decoder; Hugging Face's `DecodeStream`.
/// Example: `text::utf8_stream out; ... std::cout << out.push(tok.token_bytes(id)) << std::flush;`
class utf8_stream {
public:
    /// Appends `bytes` and gives the text that is now complete.
    std::string push(std::string_view bytes) {
        pending_ += bytes;
        std::size_t i = 0, done = 0;
        while (i < pending_.size()) {
            std::size_t bad = 1;
            const std::size_t n = detail::utf8_sequence(pending_, i, &bad);
            if (n) {
                i += n;
                done = i;
            } else if (i + bad == pending_.size() && static_cast<unsigned char>(pending_[i]) >= 0xc2 &&
                       static_cast<unsigned char>(pending_[i]) <= 0xf4) {
                break;  // a character's first bytes: a later token may complete it
            } else {
                i += bad;
                done = i;
            }
        }
        std::string out = replace_invalid(std::string_view(pending_).substr(0, done));
        pending_.erase(0, done);
        return out;
    }
    /// What is left: an unfinished character as U+FFFD; the stream is then empty.
    std::string finish() {
        std::string out = replace_invalid(pending_);
        pending_.clear();
        return out;
    }

private:
    static std::string replace_invalid(std::string_view bytes);
    std::string pending_;
};

/// GPT-2's pre-tokenizer pattern, as tiktoken's `gpt2` (r50k_base) encoding writes it: contractions, letters
/// with one leading space, numbers likewise, other symbols likewise, whitespace not followed by a non-space,
/// other whitespace. `\s` is Unicode's White_Space, spelled out as tiktoken's regex has it.
inline constexpr std::string_view gpt2_pattern =
    R"('(?:[sdmt]|ll|ve|re)| ?\p{L}+| ?\p{N}+| ?[^\t\n\v\f\r \x{85}\x{A0}\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029})"
    R"(\x{202F}\x{205F}\x{3000}\p{L}\p{N}]+|[\t\n\v\f\r \x{85}\x{A0}\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F})"
    R"(\x{205F}\x{3000}]+(?![^\t\n\v\f\r \x{85}\x{A0}\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F})"
    R"(\x{3000}])|[\t\n\v\f\r \x{85}\x{A0}\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000}]+)";

/// A byte-level BPE tokenizer: GPT-2's (tiktoken's `gpt2`, Hugging Face's `GPT2Tokenizer`).
///
/// Shapes: `encode<T>(text)` gives `tensor<std::int64_t, T>`, one id per token along `T`, a run-time axis
/// (`shaped::dynamic_axis<"num_tokens", shaped::at_most<context_length>>`), or a `std::vector<std::int64_t>`
/// without `T`; `decode` takes ids of either kind. Element type: `std::int64_t` (PyTorch's `torch.long`).
/// Errors, thrown: `io::file_error` naming the file for a vocabulary that cannot be read or is not GPT-2's
/// format (a value that is not an id, ids that are not 0..n-1 once each, a string that stands for no bytes,
/// a merge of tokens the vocabulary lacks or whose result is not the id after its rank); `std::invalid_argument`
/// for text that is not UTF-8 (naming the byte offset) and for an id outside the vocabulary (naming it and
/// `n_vocab()`); `disallowed_special_token` for `<|endoftext|>` in text that did not allow it; `shape_error`
/// when `encode<T>` gives more tokens than `T`'s bound. Threads: `const` calls may run concurrently.
/// Source: tiktoken's `tiktoken.get_encoding("gpt2")` (`encode`, `encode_ordinary`, `decode`,
/// `decode_bytes`, `n_vocab`, `eot_token`), which the book uses from chapter 2 on; OpenAI's `encoder.py`.
/// Letters and digits are those of the Unicode version of the PCRE2 it runs on (Debian 12's 10.42: Unicode
/// 14); tiktoken 1.0.22's are Unicode 16's. Text with characters assigned in Unicode 15 or 16 (CJK extension
/// H, Kawi, ...) beside an apostrophe or a space may split into other words, and so other ids; all other text
/// gives tiktoken's ids.
/// From a Hugging Face `tokenizer.json` (`from_tokenizer_json`): a BPE model with a byte-level pre-tokenizer,
/// GPT-2's (`ByteLevel` with its regex) or a `Split` pattern followed by `ByteLevel` (Llama 3's, Qwen's), no
/// normalizer or NFC (Qwen's), merges ranked by their order (pairs, as `tokenizers` ranks them), and
/// `ignore_merges` (Llama 3's: a word in the vocabulary is one token). Its added tokens are found in the text
/// before anything else: the special ones (`"special": true`, `<|begin_of_text|>`, `<|im_start|>`) as
/// tiktoken's `allowed_special` says, the others (Qwen's `<think>`) always, as `tokenizers` does. `encode`
/// adds no BOS token (the post-processor's `add_special_tokens` is the caller's to do). Anything else in the
/// file (byte fallback, a word prefix or suffix, other normalizers and pre-tokenizers, an added token that
/// strips spaces) is refused with `io::file_error` naming it, rather than encoded differently.
/// Example: `auto tok = shaped::text::bpe_tokenizer::gpt2("encoder.json", "vocab.bpe");`
///          `auto ids = tok.encode<num_tokens>("Every effort moves you");  // 6109, 3626, 6100, 345`
///          `auto qwen = shaped::text::bpe_tokenizer::from_tokenizer_json("Qwen3-0.6B/tokenizer.json");`
class bpe_tokenizer {
public:
    /// Loads GPT-2's vocabulary: `encoder_json` maps each token's characters (GPT-2's byte-to-unicode
    /// mapping) to its id, `vocab_bpe` lists the merges in rank order after a `#version` line. The id of
    /// `<|endoftext|>` in the vocabulary is the special token's. Throws `io::file_error` as the class says.
    static bpe_tokenizer gpt2(const std::filesystem::path& encoder_json, const std::filesystem::path& vocab_bpe) {
        bpe_tokenizer t;
        t.load_encoder(detail::read_file(encoder_json, encoder_reader), encoder_json.string());
        t.load_merges(detail::read_file(vocab_bpe, merges_reader), vocab_bpe.string());
        return t;
    }
    /// The same from the files' contents, already in memory (a vocabulary embedded in a program); `names`
    /// stand for the files in messages. Throws `io::file_error` as `gpt2`.
    static bpe_tokenizer gpt2_from_contents(std::string_view encoder_json, std::string_view vocab_bpe,
                                            const std::string& encoder_name = "encoder.json",
                                            const std::string& merges_name = "vocab.bpe") {
        bpe_tokenizer t;
        t.load_encoder(encoder_json, encoder_name);
        t.load_merges(vocab_bpe, merges_name);
        return t;
    }

    /// Loads a Hugging Face `tokenizer.json` of a byte-level BPE model (see the class). Throws
    /// `io::file_error` naming the file and what it holds that is not such a model, or is inconsistent (an id
    /// given twice or missing, a merge of tokens the vocabulary lacks, a byte without a token).
    static bpe_tokenizer from_tokenizer_json(const std::filesystem::path& tokenizer_json) {
        return from_tokenizer_json_contents(detail::read_file(tokenizer_json, json_reader), tokenizer_json.string());
    }
    /// The same from the file's contents; `name` stands for the file in messages.
    static bpe_tokenizer from_tokenizer_json_contents(std::string_view contents,
                                                      const std::string& name = "tokenizer.json") {
        bpe_tokenizer t;
        t.load_tokenizer_json(contents, name);
        return t;
    }

    /// The number of ids: GPT-2's 50,257 (50,000 merges, 256 bytes, `<|endoftext|>`).
    std::size_t n_vocab() const noexcept { return tokens_.size(); }
    /// The id of `<|endoftext|>` (50256 for GPT-2; Qwen's 151643), or of Llama 3's `<|end_of_text|>`; -1 when
    /// a tokenizer.json has neither.
    std::int64_t eot_token() const noexcept { return eot_; }
    /// The id of the added or special token `content` (`"<|im_start|>"`), if the tokenizer has one.
    std::optional<std::int64_t> special_token(std::string_view content) const {
        if (const auto it = specials_.find(std::string(content)); it != specials_.end()) return it->second;
        if (const auto it = added_.find(std::string(content)); it != added_.end()) return it->second;
        return std::nullopt;
    }

    /// The ids of `text`, every special token string in it encoded as plain text (tiktoken's
    /// `encode_ordinary`). Throws `std::invalid_argument` for text that is not UTF-8.
    std::vector<std::int64_t> encode_ordinary(std::string_view text) const {
        check_utf8(text);
        std::vector<std::int64_t> ids;
        encode_words(text, ids);
        return ids;
    }

    /// The ids of `text`, the special tokens listed in `allowed_special` (`{"<|endoftext|>"}`) encoded as
    /// their ids; any other special token in the text throws `disallowed_special_token` (tiktoken's `encode`
    /// with its defaults). Throws `std::invalid_argument` for text that is not UTF-8.
    std::vector<std::int64_t> encode(std::string_view text, const std::set<std::string, std::less<>>& allowed_special = {}) const {
        check_utf8(text);
        std::vector<std::int64_t> ids;
        std::size_t from = 0;
        for (;;) {
            // The first special token in the rest of the text.
            std::size_t at = std::string_view::npos;
            const std::string* which = nullptr;
            std::int64_t which_id = -1;
            bool special = false;
            auto earliest = [&](const auto& tokens, bool are_special) {  // the leftmost, then the longest
                for (const auto& [token, id] : tokens) {
                    const std::size_t p = text.find(token, from);
                    if (p < at || (p == at && p != std::string_view::npos && token.size() > which->size())) {
                        at = p;
                        which = &token;
                        which_id = id;
                        special = are_special;
                    }
                }
            };
            earliest(specials_, true);
            earliest(added_, false);
            if (!which) break;
            if (special && !allowed_special.contains(*which)) throw disallowed_special_token(*which);
            encode_words(text.substr(from, at - from), ids);
            ids.push_back(which_id);
            from = at + which->size();
        }
        encode_words(text.substr(from), ids);
        return ids;
    }

    /// `encode(text, allowed_special)` typed along the token axis `T`: `tensor<std::int64_t, T>`, `T` a
    /// run-time axis whose bound the number of tokens must not pass (else `shape_error`, naming both), or a
    /// static axis whose extent it must equal.
    template <Axis T>
    tensor<std::int64_t, T> encode(std::string_view text, const std::set<std::string, std::less<>>& allowed_special = {}) const {
        const auto ids = encode(text, allowed_special);
        if constexpr (StaticAxis<T>) {
            if (ids.size() != T::extent)
                throw shape_error("text::bpe_tokenizer::encode<T>(text)", "(" + axis_name<T>() + "=" +
                                  std::to_string(T::extent) + ")", std::to_string(ids.size()) + " tokens");
            tensor<std::int64_t, T> out;
            std::copy(ids.begin(), ids.end(), out.data());
            return out;
        } else {
            if (ids.empty() || ids.size() > T::bound)
                throw shape_error("text::bpe_tokenizer::encode<T>(text)",
                                  "1 to " + std::to_string(T::bound) + " tokens along " + axis_name<T>(),
                                  std::to_string(ids.size()) + " tokens");
            tensor<std::int64_t, T> out(tensor<std::int64_t, T>::extents_type::checked(
                                            "text::bpe_tokenizer::encode<T>(text)", ids.size()),
                                        uninitialized);
            std::copy(ids.begin(), ids.end(), out.data());
            return out;
        }
    }

    /// The bytes the ids stand for, concatenated (tiktoken's `decode_bytes`): possibly a partial UTF-8
    /// character where a token splits one. Throws `std::invalid_argument` for an id outside the vocabulary.
    std::string decode_bytes(std::span<const std::int64_t> ids) const {
        std::string out;
        for (const std::int64_t id : ids) {
            if (id < 0 || static_cast<std::uint64_t>(id) >= tokens_.size())
                throw std::invalid_argument("shaped::text::bpe_tokenizer::decode: id " + std::to_string(id) +
                                            " is outside the vocabulary of " + std::to_string(tokens_.size()) + " ids");
            out += tokens_[static_cast<std::size_t>(id)];
        }
        return out;
    }
    /// The ids of a rank-1 tensor (`encode<T>`'s result, a row of a batch).
    template <class L, Axis T>
    std::string decode_bytes(const basic_tensor<std::int64_t, L, T>& ids) const {
        const auto& e = ids.storage();
        return decode_bytes(std::span<const std::int64_t>(e.data(), ids.numel()));
    }

    /// The text the ids stand for, each invalid UTF-8 sequence (a character split between tokens) replaced by
    /// U+FFFD as tiktoken's `decode` (Python's `errors="replace"`) does. Throws as `decode_bytes`.
    std::string decode(std::span<const std::int64_t> ids) const { return replace_invalid_utf8(decode_bytes(ids)); }
    /// The same for a rank-1 tensor of ids.
    template <class L, Axis T>
    std::string decode(const basic_tensor<std::int64_t, L, T>& ids) const {
        return replace_invalid_utf8(decode_bytes(ids));
    }

    /// The bytes of one token (tiktoken's `decode_single_token_bytes`). Throws as `decode_bytes`.
    const std::string& token_bytes(std::int64_t id) const {
        if (id < 0 || static_cast<std::uint64_t>(id) >= tokens_.size())
            throw std::invalid_argument("shaped::text::bpe_tokenizer::token_bytes: id " + std::to_string(id) +
                                        " is outside the vocabulary of " + std::to_string(tokens_.size()) + " ids");
        return tokens_[static_cast<std::size_t>(id)];
    }

    /// `bytes` with each maximal invalid UTF-8 subpart replaced by U+FFFD (the Unicode standard's practice,
    /// which Python's and the WHATWG decoders follow).
    static std::string replace_invalid_utf8(std::string_view bytes) {
        std::string out;
        out.reserve(bytes.size());
        for (std::size_t i = 0; i < bytes.size();) {
            std::size_t bad = 1;
            const std::size_t n = detail::utf8_sequence(bytes, i, &bad);
            if (n) {
                out.append(bytes.substr(i, n));
                i += n;
            } else {
                out += "\xef\xbf\xbd";
                i += bad;
            }
        }
        return out;
    }

private:
    bpe_tokenizer() : pattern_(std::make_shared<detail::pattern>(gpt2_pattern)) {}

    static void check_utf8(std::string_view text) {
        for (std::size_t i = 0; i < text.size();) {
            const std::size_t n = detail::utf8_sequence(text, i);
            if (!n)
                throw std::invalid_argument("shaped::text::bpe_tokenizer::encode: the text is not UTF-8 (byte " +
                                            std::to_string(i) + ")");
            i += n;
        }
    }

    // Each word of `text` (the pattern's matches), its bytes merged by rank, appended to `ids`.
    void encode_words(std::string_view text, std::vector<std::int64_t>& ids) const {
        if (text.empty()) return;
        const std::string normalized = nfc_ ? detail::nfc(text) : std::string();
        const std::string_view words = nfc_ ? std::string_view(normalized) : text;
        if (pair_ranks_.empty())
            pattern_->for_each_match(words, [&](std::string_view word) { merge(word, ids); }, isolated_);
        else
            pattern_->for_each_match(words, [&](std::string_view word) { merge_pairs(word, ids); }, isolated_);
    }

    // Hugging Face's BPE word merge: start from the tokens of single bytes; while some adjacent pair is a
    // merge, merge the pair listed first (the leftmost among equals) into its token. With ignore_merges, a
    // word in the vocabulary is one token.
    void merge_pairs(std::string_view word, std::vector<std::int64_t>& ids) const {
        if (ignore_merges_) {
            if (const auto it = ids_.find(word); it != ids_.end()) {
                ids.push_back(it->second);
                return;
            }
        }
        std::vector<std::int64_t> parts(word.size());
        for (std::size_t i = 0; i < word.size(); ++i) parts[i] = byte_ids_[static_cast<unsigned char>(word[i])];
        constexpr std::uint32_t none = std::numeric_limits<std::uint32_t>::max();
        auto rank_of = [&](std::size_t k) -> std::pair<std::uint32_t, std::int64_t> {
            const auto it = pair_ranks_.find(pair_key(parts[k], parts[k + 1]));
            return it == pair_ranks_.end() ? std::pair{none, std::int64_t{-1}} : it->second;
        };
        while (parts.size() > 1) {
            std::pair<std::uint32_t, std::int64_t> best{none, -1};
            std::size_t at = 0;
            for (std::size_t k = 0; k + 1 < parts.size(); ++k) {
                const auto r = rank_of(k);
                if (r.first < best.first) {
                    best = r;
                    at = k;
                }
            }
            if (best.first == none) break;
            parts[at] = best.second;
            parts.erase(parts.begin() + static_cast<std::ptrdiff_t>(at) + 1);
        }
        ids.insert(ids.end(), parts.begin(), parts.end());
    }

    static std::uint64_t pair_key(std::int64_t a, std::int64_t b) noexcept {
        return (static_cast<std::uint64_t>(a) << 32) | static_cast<std::uint64_t>(b);
    }

    // tiktoken's byte_pair_merge: start from single bytes; while some adjacent pair's concatenation has a
    // rank, merge the pair of lowest rank (the leftmost among equals); each part is then a token.
    void merge(std::string_view word, std::vector<std::int64_t>& ids) const {
        if (const auto it = ids_.find(word); it != ids_.end()) {  // a whole word in the vocabulary
            ids.push_back(it->second);
            return;
        }
        constexpr std::uint32_t none = std::numeric_limits<std::uint32_t>::max();
        std::vector<std::size_t> starts(word.size() + 1);  // part k is word[starts[k], starts[k + 1])
        for (std::size_t i = 0; i <= word.size(); ++i) starts[i] = i;
        auto rank_of = [&](std::size_t k) -> std::uint32_t {  // the rank of parts k and k + 1 merged
            if (k + 2 >= starts.size()) return none;
            const auto it = ranks_.find(word.substr(starts[k], starts[k + 2] - starts[k]));
            return it == ranks_.end() ? none : it->second;
        };
        std::vector<std::uint32_t> rank(starts.size() - 1);
        for (std::size_t k = 0; k < rank.size(); ++k) rank[k] = rank_of(k);
        while (rank.size() > 1) {
            const auto best = std::min_element(rank.begin(), rank.end() - 1);
            if (*best == none) break;
            const auto k = static_cast<std::size_t>(best - rank.begin());
            starts.erase(starts.begin() + static_cast<std::ptrdiff_t>(k) + 1);
            rank.erase(rank.begin() + static_cast<std::ptrdiff_t>(k) + 1);
            rank[k] = rank_of(k);
            if (k > 0) rank[k - 1] = rank_of(k - 1);
        }
        for (std::size_t k = 0; k + 1 < starts.size(); ++k)
            ids.push_back(ids_.find(word.substr(starts[k], starts[k + 1] - starts[k]))->second);
    }

    static constexpr const char* json_reader = "text::bpe_tokenizer::from_tokenizer_json";

    // A JSON value of the small sections of tokenizer.json (normalizer, pre_tokenizer, decoder, an added token).
    struct json_member;
    struct json_value {
        shaped::detail::json::kind kind{};
        std::string text;                  // a string's value, a number's or boolean's text
        std::vector<json_value> items;     // an array's elements
        std::vector<json_member> members;  // an object's members, in order
    };
    struct json_member {
        std::string key;
        json_value value;
    };
    static const json_value* get_of(const json_value& v, std::string_view key) {
        for (const auto& m : v.members)
            if (m.key == key) return &m.value;
        return nullptr;
    }
    static std::string str_of(const json_value& v, std::string_view key) {
        const json_value* m = get_of(v, key);
        return m && m->kind == shaped::detail::json::kind::string ? m->text : std::string();
    }
    static bool true_of(const json_value& v, std::string_view key) {
        const json_value* m = get_of(v, key);
        return m && m->kind == shaped::detail::json::kind::boolean && m->text == "true";
    }
    static json_value parse_value(shaped::detail::json::reader& r) {
        namespace json = shaped::detail::json;
        json_value v;
        v.kind = r.next();
        switch (v.kind) {
            case json::kind::null: r.null(); break;
            case json::kind::boolean: v.text = r.boolean() ? "true" : "false"; break;
            case json::kind::number: v.text = std::string(r.read_number().text); break;
            case json::kind::string: v.text = r.string(); break;
            case json::kind::array:
                r.begin_array();
                while (r.item()) v.items.push_back(parse_value(r));
                break;
            case json::kind::object: {
                r.begin_object();
                std::string key;
                while (r.member(key)) {
                    json_member m{key, {}};
                    m.value = parse_value(r);
                    v.members.push_back(std::move(m));
                }
                break;
            }
        }
        return v;
    }

    void load_tokenizer_json(std::string_view text, const std::string& path) {
        namespace json = shaped::detail::json;
        auto fail = [&](const std::string& problem) { throw io::file_error(json_reader, path, problem); };
        std::vector<json_value> added;
        json_value normalizer, pre_tokenizer, decoder;
        std::vector<std::pair<std::string, std::uint64_t>> vocab;
        std::vector<std::pair<std::string, std::string>> merges;
        bool saw_model = false;
        try {
            json::reader r(text, 8);
            if (r.next() != json::kind::object) fail("expected a JSON object");
            r.begin_object();
            std::string key;
            while (r.member(key)) {
                if (key == "added_tokens") {
                    if (r.next() != json::kind::array) fail("added_tokens is not an array");
                    r.begin_array();
                    while (r.item()) added.push_back(parse_value(r));
                } else if (key == "normalizer") {
                    normalizer = parse_value(r);
                } else if (key == "pre_tokenizer") {
                    pre_tokenizer = parse_value(r);
                } else if (key == "decoder") {
                    decoder = parse_value(r);
                } else if (key == "model") {
                    saw_model = true;
                    if (r.next() != json::kind::object) fail("model is not an object");
                    r.begin_object();
                    std::string mkey;
                    while (r.member(mkey)) {
                        if (mkey == "vocab") {
                            if (r.next() != json::kind::object) fail("model.vocab is not an object of tokens to ids");
                            r.begin_object();
                            std::string token;
                            while (r.member(token)) {
                                if (r.next() != json::kind::number) fail("the id of \"" + token + "\" is not a number");
                                const auto n = r.read_number();
                                if (!n.is_unsigned) fail("the id of \"" + token + "\" is not an id: " + std::string(n.text));
                                vocab.emplace_back(token, n.unsigned_value);
                            }
                        } else if (mkey == "merges") {
                            if (r.next() != json::kind::array) fail("model.merges is not an array");
                            r.begin_array();
                            while (r.item()) {
                                if (r.next() == json::kind::string) {  // "a b"
                                    const std::string m = r.string();
                                    const std::size_t space = m.find(' ');
                                    if (space == std::string::npos || m.find(' ', space + 1) != std::string::npos)
                                        fail("the merge \"" + m + "\" is not two tokens separated by one space");
                                    merges.emplace_back(m.substr(0, space), m.substr(space + 1));
                                } else {  // ["a", "b"]
                                    const json_value pair = parse_value(r);
                                    if (pair.kind != json::kind::array || pair.items.size() != 2 ||
                                        pair.items[0].kind != json::kind::string || pair.items[1].kind != json::kind::string)
                                        fail("a merge is neither \"a b\" nor [\"a\", \"b\"]");
                                    merges.emplace_back(pair.items[0].text, pair.items[1].text);
                                }
                            }
                        } else {
                            const json_value v = parse_value(r);
                            using json::kind;
                            auto refuse = [&](const std::string& what) {
                                fail("model." + mkey + " is " + what + ": only byte-level BPE without it is supported");
                            };
                            if (mkey == "type" && v.text != "BPE") fail("model.type is \"" + v.text + "\", not \"BPE\"");
                            if (mkey == "byte_fallback" && v.text == "true") refuse("true");
                            if ((mkey == "continuing_subword_prefix" || mkey == "end_of_word_suffix") &&
                                v.kind == kind::string && !v.text.empty())
                                refuse("\"" + v.text + "\"");
                            if (mkey == "dropout" && v.kind != kind::null) refuse(v.text);
                            if (mkey == "ignore_merges") ignore_merges_ = v.text == "true";
                        }
                    }
                } else {
                    r.skip();  // version, truncation, padding, post_processor: not part of encode
                }
            }
            r.finish();
        } catch (const json::error& e) {
            fail(std::string("not JSON: ") + e.what());
        }
        if (!saw_model) fail("no model");

        // normalizer: none, or NFC
        if (normalizer.kind == json::kind::object) {
            const std::string type = str_of(normalizer, "type");
            if (type != "NFC") fail("the normalizer is \"" + type + "\": only none or NFC is supported");
            nfc_ = true;
        } else if (normalizer.kind != json::kind::null) {
            fail("the normalizer is not an object or null");
        }
        // pre_tokenizer: ByteLevel with GPT-2's regex, or Sequence[Split(Regex, Isolated), ByteLevel(no regex)]
        auto byte_level_ok = [&](const json_value& b, bool regex) {
            if (str_of(b, "type") != "ByteLevel") return false;
            if (true_of(b, "add_prefix_space")) fail("the ByteLevel pre-tokenizer adds a prefix space: not supported");
            const json_value* use_regex = get_of(b, "use_regex");
            const bool uses = !use_regex || use_regex->text == "true";
            return uses == regex;
        };
        if (pre_tokenizer.kind != json::kind::object) fail("no pre_tokenizer: a byte-level one is needed");
        if (str_of(pre_tokenizer, "type") == "ByteLevel") {
            if (!byte_level_ok(pre_tokenizer, true)) fail("the ByteLevel pre-tokenizer does not use its regex");
        } else if (str_of(pre_tokenizer, "type") == "Sequence") {
            const json_value* list = get_of(pre_tokenizer, "pretokenizers");
            if (!list || list->items.size() != 2) fail("the pre-tokenizer Sequence is not [Split, ByteLevel]");
            const json_value& split = list->items[0];
            const json_value* pattern = get_of(split, "pattern");
            if (str_of(split, "type") != "Split" || !pattern || str_of(*pattern, "Regex").empty() ||
                str_of(split, "behavior") != "Isolated" || true_of(split, "invert"))
                fail("the pre-tokenizer Sequence does not begin with a Split on a Regex, behavior Isolated, not inverted");
            if (!byte_level_ok(list->items[1], false))
                fail("the pre-tokenizer Sequence does not end with a ByteLevel without its regex");
            try {
                pattern_ = std::make_shared<detail::pattern>(str_of(*pattern, "Regex"));
            } catch (const std::invalid_argument& e) {
                fail(e.what());
            }
            isolated_ = true;
        } else {
            fail("the pre-tokenizer is \"" + str_of(pre_tokenizer, "type") + "\": only ByteLevel, or Split then ByteLevel, is supported");
        }
        if (decoder.kind == json::kind::object && str_of(decoder, "type") != "ByteLevel")
            fail("the decoder is \"" + str_of(decoder, "type") + "\", not ByteLevel");

        // Vocabulary and added tokens: ids 0 .. n-1, once each.
        std::size_t n = vocab.size();
        std::vector<std::pair<std::string, std::uint64_t>> added_entries;
        std::vector<bool> added_special;
        for (const json_value& a : added) {
            const json_value* id = get_of(a, "id");
            const std::string content = str_of(a, "content");
            if (!id || id->kind != json::kind::number || content.empty()) fail("an added token without an id or content");
            if (true_of(a, "lstrip") || true_of(a, "rstrip") || true_of(a, "single_word"))
                fail("the added token \"" + content + "\" strips spaces or matches single words: not supported");
            std::uint64_t value = 0;
            for (const char c : id->text) {
                if (c < '0' || c > '9' || value > (std::uint64_t{1} << 40)) fail("the id of \"" + content + "\" is not an id");
                value = value * 10 + static_cast<std::uint64_t>(c - '0');
            }
            added_entries.emplace_back(content, value);
            added_special.push_back(true_of(a, "special"));
            n = std::max<std::size_t>(n, value + 1);
        }
        if (vocab.empty()) fail("model.vocab has no tokens");
        if (n > (std::size_t{1} << 32)) fail("more than 2^32 ids");
        tokens_.assign(n, std::string());
        std::vector<bool> seen(n);
        std::string bytes;
        for (const auto& entry : vocab) {
            const std::string& key = entry.first;
            const std::uint64_t id = entry.second;
            if (id >= n) fail("the id of \"" + key + "\" is " + std::to_string(id) + ", beyond the " + std::to_string(n) + " ids");
            if (seen[id]) fail("the id " + std::to_string(id) + " of \"" + key + "\" is given to another token too");
            seen[id] = true;
            if (!detail::unicode_to_bytes(key, bytes)) {
                // Not byte-level text: an added token's own entry (GPT-2's "<|endoftext|>" is both), else refused.
                const bool is_added = std::any_of(added_entries.begin(), added_entries.end(),
                                                  [&](const auto& e) { return e.first == key && e.second == id; });
                if (!is_added) fail("the token \"" + key + "\" stands for no bytes (not a byte-level vocabulary)");
                tokens_[id] = key;
                continue;
            }
            tokens_[id] = bytes;
            if (!ids_.emplace(bytes, static_cast<std::int64_t>(id)).second)
                fail("two tokens stand for the same bytes (\"" + key + "\")");
        }
        for (std::size_t k = 0; k < added_entries.size(); ++k) {
            const auto& [content, id] = added_entries[k];
            if (seen[id] && tokens_[id] != content)
                fail("the added token \"" + content + "\" has the id " + std::to_string(id) + " of another token");
            seen[id] = true;
            tokens_[id] = content;
            (added_special[k] ? specials_ : added_).emplace(content, static_cast<std::int64_t>(id));
            if (content == "<|endoftext|>" || (content == "<|end_of_text|>" && eot_ < 0))
                eot_ = static_cast<std::int64_t>(id);
        }
        for (std::size_t id = 0; id < n; ++id)
            if (!seen[id]) fail("no token has the id " + std::to_string(id) + " (the ids are 0 to " + std::to_string(n - 1) + ")");
        for (unsigned b = 0; b < 256; ++b) {
            const auto it = ids_.find(std::string_view(reinterpret_cast<const char*>(&b), 1));
            if (it == ids_.end()) fail("byte " + std::to_string(b) + " has no token");
            byte_ids_[b] = it->second;
        }
        // Merges, ranked by their order: the pair (a, b) becomes the token a + b.
        std::string a, b;
        std::uint32_t rank = 0;
        for (const auto& [left, right] : merges) {
            if (!detail::unicode_to_bytes(left, a) || !detail::unicode_to_bytes(right, b))
                fail("the merge \"" + left + " " + right + "\" has a token that stands for no bytes");
            const auto ia = ids_.find(a), ib = ids_.find(b), im = ids_.find(a + b);
            if (ia == ids_.end() || ib == ids_.end() || im == ids_.end())
                fail("the merge \"" + left + " " + right + "\" merges tokens the vocabulary lacks, or into one it lacks");
            pair_ranks_.emplace(pair_key(ia->second, ib->second), std::pair{rank, im->second});  // the first listing wins
            ++rank;
        }
        if (pair_ranks_.empty()) fail("model.merges has no merges");
    }

    static constexpr const char* encoder_reader = "text::bpe_tokenizer::gpt2 (encoder.json)";
    static constexpr const char* merges_reader = "text::bpe_tokenizer::gpt2 (vocab.bpe)";

    void load_encoder(std::string_view text, const std::string& path) {
        auto fail = [&](const std::string& problem) { throw io::file_error(encoder_reader, path, problem); };
        std::vector<std::pair<std::string, std::uint64_t>> entries;
        try {
            shaped::detail::json::reader r(text, 2);
            if (r.next() != shaped::detail::json::kind::object) fail("expected a JSON object of token strings to ids");
            r.begin_object();
            std::string key;
            while (r.member(key)) {
                if (r.next() != shaped::detail::json::kind::number) fail("the value of \"" + key + "\" is not an id");
                const auto n = r.read_number();
                if (!n.is_unsigned) fail("the value of \"" + key + "\" is not an id: " + std::string(n.text));
                entries.emplace_back(key, n.unsigned_value);
            }
            r.finish();
        } catch (const shaped::detail::json::error& e) {
            fail(std::string("not JSON: ") + e.what());
        }
        if (entries.empty()) fail("no tokens");
        tokens_.assign(entries.size(), std::string());
        std::vector<bool> seen(entries.size());
        std::string bytes;
        for (auto& [key, id] : entries) {
            if (id >= entries.size())
                fail("the id of \"" + key + "\" is " + std::to_string(id) + ", not below the number of tokens, " +
                     std::to_string(entries.size()) + " (the ids are 0 to " + std::to_string(entries.size() - 1) +
                     " once each: is a token missing?)");
            if (seen[id]) fail("the id " + std::to_string(id) + " of \"" + key + "\" is given to another token too");
            seen[id] = true;
            if (key == "<|endoftext|>") {  // the special token: never a merge's result
                specials_.emplace(key, static_cast<std::int64_t>(id));
                eot_ = static_cast<std::int64_t>(id);
                tokens_[id] = key;
                continue;
            }
            if (!detail::unicode_to_bytes(key, bytes)) fail("the token \"" + key + "\" stands for no bytes");
            tokens_[id] = bytes;
            if (!ids_.emplace(bytes, static_cast<std::int64_t>(id)).second)
                fail("two tokens stand for the same bytes (\"" + key + "\")");
        }
        for (unsigned b = 0; b < 256; ++b)
            if (!ids_.contains(std::string_view(reinterpret_cast<const char*>(&b), 1)))
                fail("byte " + std::to_string(b) + " has no token");
        if (eot_ < 0) fail("no <|endoftext|> token");
    }

    void load_merges(std::string_view text, const std::string& path) {
        auto fail = [&](std::size_t line, const std::string& problem) {
            throw io::file_error(merges_reader, path, "line " + std::to_string(line) + ": " + problem);
        };
        std::istringstream in{std::string(text)};
        std::string line, a, b;
        std::size_t number = 0;
        std::uint32_t rank = 0;
        while (std::getline(in, line)) {
            ++number;
            if (!line.empty() && line.back() == '\r') line.pop_back();  // CRLF line ends, as tiktoken reads them
            if (number == 1 && line.rfind("#version", 0) == 0) continue;
            if (line.empty()) continue;
            const std::size_t space = line.find(' ');
            if (space == std::string::npos || line.find(' ', space + 1) != std::string::npos)
                fail(number, "expected two tokens separated by one space");
            if (!detail::unicode_to_bytes(std::string_view(line).substr(0, space), a) ||
                !detail::unicode_to_bytes(std::string_view(line).substr(space + 1), b))
                fail(number, "a token that stands for no bytes");
            const auto merged = ids_.find(a + b);
            if (!ids_.contains(a) || !ids_.contains(b) || merged == ids_.end())
                fail(number, "merges tokens the vocabulary lacks, or into one it lacks");
            // GPT-2's vocabulary numbers merged tokens in merge order, after the 256 bytes: the rank is the id.
            if (merged->second != 256 + static_cast<std::int64_t>(rank))
                fail(number, "the merged token's id is " + std::to_string(merged->second) + ", not " +
                                 std::to_string(256 + rank) + " (256 + its rank), as GPT-2's files number them");
            ranks_.emplace(a + b, static_cast<std::uint32_t>(merged->second));
            ++rank;
        }
        if (ranks_.size() + 256 + specials_.size() != tokens_.size())
            throw io::file_error(merges_reader, path,
                                 std::to_string(ranks_.size()) + " merges for a vocabulary of " +
                                     std::to_string(tokens_.size()) + " tokens (expected that less 256 bytes and " +
                                     std::to_string(specials_.size()) + " special)");
    }

    std::shared_ptr<const detail::pattern> pattern_;
    std::unordered_map<std::string, std::int64_t, detail::bytes_hash, std::equal_to<>> ids_;     // bytes -> id
    std::unordered_map<std::string, std::uint32_t, detail::bytes_hash, std::equal_to<>> ranks_;  // merged -> rank
    std::unordered_map<std::string, std::int64_t> specials_;                                       // string -> id
    std::unordered_map<std::string, std::int64_t> added_;  // tokenizer.json's added tokens that are not special
    // tokenizer.json: merges ranked by pair (first two ids) to (rank, merged id); empty for GPT-2's files,
    // whose ranks_ rank by the merged bytes as tiktoken does.
    std::unordered_map<std::uint64_t, std::pair<std::uint32_t, std::int64_t>> pair_ranks_;
    std::array<std::int64_t, 256> byte_ids_{};  // the token of each single byte (tokenizer.json)
    bool ignore_merges_ = false;  // tokenizer.json's model.ignore_merges
    bool isolated_ = false;       // Split's "Isolated": the text between matches is a word too
    bool nfc_ = false;            // the NFC normalizer
    std::vector<std::string> tokens_;                                                              // id -> bytes
    std::int64_t eot_ = -1;
};

inline std::string utf8_stream::replace_invalid(std::string_view bytes) { return bpe_tokenizer::replace_invalid_utf8(bytes); }

}  // namespace shaped::text

#endif
