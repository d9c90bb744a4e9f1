#ifndef SHAPED_DETAIL_JSON_HPP
#define SHAPED_DETAIL_JSON_HPP

/// \file
/// A strict JSON reader for the headers of the files shaped loads (safetensors): a pull reader that hands
/// the caller one value at a time, builds no tree (memory: the keys of the open objects), bounds nesting and
/// refuses a key given twice. Internal: not part of the API.
///
/// Why not a JSON library: the reader is plain (non-template) code of a few hundred lines that the
/// compiler builds in a fraction of a second, where nlohmann-json's parser, a template instantiated in every
/// program that opens a file, cost 4 to 5 s of each such program's build at -O2. What it accepts is
/// RFC 8259 JSON exactly; tests/fuzz/fuzz_json.cpp holds it to nlohmann-json's verdict and values on
/// every input the fuzzer makes.

#include <algorithm>
#include <clocale>
#include <cmath>
#include <cstdlib>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <locale.h>
#include <stdlib.h>

namespace shaped::detail::json {

/// Why a text was refused. `what()` says where (a byte offset into the text) and what was expected.
struct error : std::runtime_error {
    enum class reason : unsigned char { syntax, too_deep, key_twice };
    reason why;
    std::size_t depth = 0;  ///< for `too_deep`: the depth reached
    std::string key;        ///< for `key_twice`: the key
    error(reason r, const std::string& message) : std::runtime_error(message), why(r) {}
};

/// The kinds of JSON value.
enum class kind : unsigned char { null, boolean, number, string, array, object };

/// A number as written; one of digits alone (no sign, fraction or exponent) below 2^64 has its value.
struct number {
    std::string_view text;
    bool is_unsigned = false;
    std::uint64_t unsigned_value = 0;
};

/// Reads one JSON value (RFC 8259; whitespace around it allowed) from `text`, in document order:
/// `next()` says what comes, and the call for that kind reads it. Throws `error`: `syntax` for text that is
/// not JSON (invalid UTF-8 in a string among it, a number beyond a double's range), `too_deep` when an
/// array or object opens at a depth over `max_depth` (the outermost value is at depth 1), `key_twice` when
/// an object that names a key twice closes. Nothing recurses deeper than `max_depth`.
class reader {
public:
    reader(std::string_view text, std::size_t max_depth) : s_(text), max_depth_(max_depth) {}
    reader(const char* text, std::size_t max_depth) : reader(std::string_view(text), max_depth) {}
    /// The reader keeps a view of the text: a temporary string would end before it.
    reader(std::string&&, std::size_t) = delete;

    /// The kind of the value that comes next; marks where it starts (`mark()`).
    kind next() {
        skip_space();
        mark_ = i_;
        if (i_ == s_.size()) fail("a value");
        switch (s_[i_]) {
            case '{': return kind::object;
            case '[': return kind::array;
            case '"': return kind::string;
            case 't':
            case 'f': return kind::boolean;
            case 'n': return kind::null;
            default:
                if (s_[i_] == '-' || digit()) return kind::number;
                fail("a value");
        }
    }

    /// Opens the object that comes next.
    void begin_object() {
        expect(kind::object);
        open();
        keys_.emplace_back();
        ++i_;
    }
    /// The next member's key (its value comes next), or false when the object closes (then checked for a key
    /// given twice).
    bool member(std::string& key) {
        if (!more('}', "',' or '}'")) {
            check_keys(keys_.back());
            keys_.pop_back();
            return false;
        }
        skip_space();
        if (!at('"')) fail("a key (a string)");
        key = parse_string();
        keys_.back().push_back(key);
        skip_space();
        if (!at(':')) fail("':'");
        ++i_;
        return true;
    }
    /// Opens the array that comes next.
    void begin_array() {
        expect(kind::array);
        open();
        keys_.emplace_back();  // no keys: keeps one entry per open container
        ++i_;
    }
    /// True when another element comes next; false when the array closes.
    bool item() {
        if (more(']', "',' or ']'")) return true;
        keys_.pop_back();
        return false;
    }

    /// The string that comes next, decoded (UTF-8).
    std::string string() {
        expect(kind::string);
        return parse_string();
    }
    /// The number that comes next.
    number read_number() {
        expect(kind::number);
        return parse_number();
    }
    /// The `true` or `false` that comes next.
    bool boolean() {
        expect(kind::boolean);
        const bool value = s_[i_] == 't';
        literal(value ? "true" : "false");
        return value;
    }
    /// The `null` that comes next.
    void null() {
        expect(kind::null);
        literal("null");
    }
    /// Reads past the value that comes next, whatever it is (every rule checked).
    void skip() {
        const std::size_t depth = keys_.size();
        std::string key;
        do {
            if (!keys_.empty() && keys_.size() > depth) {
                // Inside a container that skip() opened: its next member or element, or its end.
                const bool in_object = open_is_object_.back();
                if (!(in_object ? member(key) : item())) {
                    open_is_object_.pop_back();
                    continue;
                }
            }
            switch (next()) {
                case kind::object:
                    begin_object();
                    open_is_object_.push_back(true);
                    break;
                case kind::array:
                    begin_array();
                    open_is_object_.push_back(false);
                    break;
                case kind::string: (void)parse_string(); break;
                case kind::number: (void)parse_number(); break;
                case kind::boolean: (void)boolean(); break;
                case kind::null: null(); break;
            }
        } while (keys_.size() > depth);
    }
    /// Where the value that the last `next()` looked at starts: a byte offset into the text.
    std::size_t mark() const noexcept { return mark_; }
    /// The text from offset `start` (a `mark()`) to here: what a message quotes of the values read since.
    std::string_view text_from(std::size_t start) const noexcept { return s_.substr(start, i_ - start); }
    /// Checks that nothing but whitespace follows the value.
    void finish() {
        skip_space();
        if (i_ != s_.size()) fail("the end of the text after the value");
    }

private:
    [[noreturn]] void fail(const char* expected) const {
        std::string message = "syntax error at byte " + std::to_string(i_) + ": expected " + expected;
        if (i_ < s_.size()) {
            const auto c = static_cast<unsigned char>(s_[i_]);
            constexpr char hex[] = "0123456789abcdef";
            message += c >= 0x20 && c < 0x7f ? std::string(", found '") + static_cast<char>(c) + "'"
                                              : std::string(", found byte 0x") + hex[c >> 4] + hex[c & 15];
        } else {
            message += ", found the end of the text";
        }
        throw error(error::reason::syntax, message);
    }

    void skip_space() noexcept {
        while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n' || s_[i_] == '\r')) ++i_;
    }
    bool at(char c) const noexcept { return i_ < s_.size() && s_[i_] == c; }
    bool digit() const noexcept { return i_ < s_.size() && s_[i_] >= '0' && s_[i_] <= '9'; }

    // next(), unless the caller already looked; then the kind must be the one the caller reads.
    void expect(kind k) {
        if (next() != k) fail(k == kind::object ? "'{'" : k == kind::array ? "'['" : k == kind::string ? "a string"
                              : k == kind::number ? "a number" : k == kind::boolean ? "true or false" : "null");
    }
    void literal(std::string_view word) {
        if (s_.substr(i_, word.size()) != word) fail(word.data());  // word is a literal: NUL-terminated
        i_ += word.size();
    }
    void open() {
        if (keys_.size() + 1 > max_depth_) {
            error e(error::reason::too_deep, "nesting deeper than " + std::to_string(max_depth_));
            e.depth = keys_.size() + 1;
            throw e;
        }
        first_.push_back(true);
    }
    // After an element: true if another follows (its ',' read), false if `close` ends the container.
    bool more(char close, const char* expected) {
        skip_space();
        if (first_.back()) {
            first_.back() = false;
            if (at(close)) {
                ++i_;
                first_.pop_back();
                return false;
            }
            return true;
        }
        if (at(',')) {
            ++i_;
            return true;
        }
        if (at(close)) {
            ++i_;
            first_.pop_back();
            return false;
        }
        fail(expected);
    }

    // Keys given twice, found by sorting a list of their places: O(n log n) in the members of the object.
    static void check_keys(const std::vector<std::string>& keys) {
        if (keys.size() < 2) return;
        std::vector<std::size_t> order(keys.size());
        std::iota(order.begin(), order.end(), std::size_t{0});
        std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return keys[a] < keys[b]; });
        for (std::size_t k = 1; k < order.size(); ++k)
            if (keys[order[k]] == keys[order[k - 1]]) {
                error e(error::reason::key_twice, "the key is given twice");
                e.key = keys[order[k]];
                throw e;
            }
    }

    number parse_number() {
        number v;
        const std::size_t start = i_;
        const bool negative = at('-');
        if (negative) ++i_;
        if (at('0')) {
            ++i_;
        } else if (digit()) {
            while (digit()) ++i_;
        } else {
            fail("a digit");
        }
        bool integer = true;
        if (at('.')) {
            integer = false;
            ++i_;
            if (!digit()) fail("a digit after '.'");
            while (digit()) ++i_;
        }
        if (at('e') || at('E')) {
            integer = false;
            ++i_;
            if (at('+') || at('-')) ++i_;
            if (!digit()) fail("a digit in the exponent");
            while (digit()) ++i_;
        }
        v.text = s_.substr(start, i_ - start);
        if (!integer || negative || v.text.size() > 20) {
            // As the reference readers (serde_json, nlohmann-json) do: a number beyond a double's range is
            // refused. Read in the C locale, whatever the program's.
            static const locale_t c_locale = ::newlocale(LC_ALL_MASK, "C", locale_t{});
            if (std::isinf(::strtod_l(std::string(v.text).c_str(), nullptr, c_locale))) {
                i_ = start;
                fail("a number within a double's range");
            }
        }
        if (integer && !negative) {
            std::uint64_t n = 0;
            bool fits = true;
            for (char c : v.text) {
                const auto d = static_cast<std::uint64_t>(c - '0');
                if (n > (UINT64_MAX - d) / 10) fits = false;
                n = n * 10 + d;
            }
            v.is_unsigned = fits;
            v.unsigned_value = fits ? n : 0;
        }
        return v;
    }

    unsigned hex4() {
        unsigned u = 0;
        for (int k = 0; k < 4; ++k, ++i_) {
            if (i_ == s_.size()) fail("four hex digits after \\u");
            const char c = s_[i_];
            u <<= 4;
            if (c >= '0' && c <= '9') u |= static_cast<unsigned>(c - '0');
            else if (c >= 'a' && c <= 'f') u |= static_cast<unsigned>(c - 'a' + 10);
            else if (c >= 'A' && c <= 'F') u |= static_cast<unsigned>(c - 'A' + 10);
            else fail("four hex digits after \\u");
        }
        return u;
    }

    static void append_utf8(std::string& out, unsigned cp) {
        if (cp < 0x80) {
            out += static_cast<char>(cp);
        } else if (cp < 0x800) {
            out += static_cast<char>(0xc0 | (cp >> 6));
            out += static_cast<char>(0x80 | (cp & 0x3f));
        } else if (cp < 0x10000) {
            out += static_cast<char>(0xe0 | (cp >> 12));
            out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
            out += static_cast<char>(0x80 | (cp & 0x3f));
        } else {
            out += static_cast<char>(0xf0 | (cp >> 18));
            out += static_cast<char>(0x80 | ((cp >> 12) & 0x3f));
            out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
            out += static_cast<char>(0x80 | (cp & 0x3f));
        }
    }

    // The length of the well-formed UTF-8 sequence at i_ (Unicode's table 3-7), or 0.
    std::size_t utf8_length() const noexcept {
        const auto b = [&](std::size_t k) { return i_ + k < s_.size() ? static_cast<unsigned char>(s_[i_ + k]) : 0u; };
        const unsigned c = b(0);
        const auto cont = [&](std::size_t k, unsigned lo = 0x80, unsigned hi = 0xbf) { return b(k) >= lo && b(k) <= hi; };
        if (c >= 0xc2 && c <= 0xdf) return cont(1) ? 2 : 0;
        if (c == 0xe0) return cont(1, 0xa0) && cont(2) ? 3 : 0;
        if ((c >= 0xe1 && c <= 0xec) || c == 0xee || c == 0xef) return cont(1) && cont(2) ? 3 : 0;
        if (c == 0xed) return cont(1, 0x80, 0x9f) && cont(2) ? 3 : 0;
        if (c == 0xf0) return cont(1, 0x90) && cont(2) && cont(3) ? 4 : 0;
        if (c >= 0xf1 && c <= 0xf3) return cont(1) && cont(2) && cont(3) ? 4 : 0;
        if (c == 0xf4) return cont(1, 0x80, 0x8f) && cont(2) && cont(3) ? 4 : 0;
        return 0;
    }

    std::string parse_string() {
        ++i_;  // the opening quote
        std::string out;
        for (;;) {
            if (i_ == s_.size()) fail("'\"' to end the string");
            const auto c = static_cast<unsigned char>(s_[i_]);
            if (c == '"') {
                ++i_;
                return out;
            }
            if (c < 0x20) fail("a character of a string (control characters must be escaped)");
            if (c == '\\') {
                ++i_;
                if (i_ == s_.size()) fail("an escape after '\\'");
                const char e = s_[i_++];
                switch (e) {
                    case '"': out += '"'; break;
                    case '\\': out += '\\'; break;
                    case '/': out += '/'; break;
                    case 'b': out += '\b'; break;
                    case 'f': out += '\f'; break;
                    case 'n': out += '\n'; break;
                    case 'r': out += '\r'; break;
                    case 't': out += '\t'; break;
                    case 'u': {
                        unsigned cp = hex4();
                        if (cp >= 0xdc00 && cp <= 0xdfff) fail("a high surrogate before a low one");
                        if (cp >= 0xd800 && cp <= 0xdbff) {
                            if (!(at('\\') && i_ + 1 < s_.size() && s_[i_ + 1] == 'u'))
                                fail("\\u and a low surrogate after a high one");
                            i_ += 2;
                            const unsigned low = hex4();
                            if (low < 0xdc00 || low > 0xdfff) fail("a low surrogate after a high one");
                            cp = 0x10000 + ((cp - 0xd800) << 10) + (low - 0xdc00);
                        }
                        append_utf8(out, cp);
                        break;
                    }
                    default: --i_; fail("one of \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\u after '\\'");
                }
                continue;
            }
            if (c < 0x80) {
                out += static_cast<char>(c);
                ++i_;
                continue;
            }
            const std::size_t n = utf8_length();
            if (n == 0) fail("well-formed UTF-8");
            out.append(s_.substr(i_, n));
            i_ += n;
        }
    }

    std::string_view s_;
    std::size_t i_ = 0, mark_ = 0;
    std::size_t max_depth_;
    std::vector<std::vector<std::string>> keys_;  // per open container (arrays' lists stay empty), innermost last
    std::vector<bool> first_;                     // per open container: no element read yet
    std::vector<bool> open_is_object_;            // per container that skip() opened
};

/// `text` as a JSON string literal, quotes included: `"` and `\\` escaped, control characters as JSON
/// escapes (`\\n`, `\\u0001`), everything else as it is.
inline std::string quote(std::string_view text) {
    std::string out = "\"";
    for (char ch : text) {
        const auto c = static_cast<unsigned char>(ch);
        if (c == '"') out += "\\\"";
        else if (c == '\\') out += "\\\\";
        else if (c == '\n') out += "\\n";
        else if (c == '\t') out += "\\t";
        else if (c == '\r') out += "\\r";
        else if (c == '\b') out += "\\b";
        else if (c == '\f') out += "\\f";
        else if (c < 0x20) {
            constexpr char hex[] = "0123456789abcdef";
            out += "\\u00";
            out += hex[c >> 4];
            out += hex[c & 15];
        } else {
            out += ch;
        }
    }
    return out + "\"";
}

}  // namespace shaped::detail::json

#endif
