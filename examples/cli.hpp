// What the example programs share for their command lines: a value quoted as typed, and decimal digits
// checked by hand. Not part of the library.
#ifndef SHAPED_EXAMPLES_CLI_HPP
#define SHAPED_EXAMPLES_CLI_HPP

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>

namespace {

// A value as the user typed it, in quotes, with control characters escaped so that every message stays one line,
// and cut after 60 characters (a prompt of a thousand ids would otherwise fill the screen).
std::string as_typed(std::string_view text) {
    constexpr std::size_t shown = 60;
    std::string q = "'";
    for (const char c : text.substr(0, shown)) {
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
            char hex[8];
            std::snprintf(hex, sizeof hex, "\\x%02x", static_cast<unsigned char>(c));
            q += hex;
        } else {
            q += c;
        }
    }
    q += text.size() > shown ? "'..." : "'";
    return q;
}

// Decimal digits and nothing else. std::stoul takes " -3" (and wraps it to 2^64 - 3), std::stoll takes " 5" and
// "+5"; std::from_chars takes neither spaces nor '+', but does take '-' for a signed type, hence the digit check.
// Empty when the text is not digits only or does not fit std::uint64_t (too_large tells which).
std::optional<std::uint64_t> parse_digits(std::string_view text, bool& too_large) {
    too_large = false;
    if (text.empty() || !std::ranges::all_of(text, [](char c) { return c >= '0' && c <= '9'; })) return {};
    std::uint64_t value = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error == std::errc::result_out_of_range) too_large = true;
    if (error != std::errc{} || end != text.data() + text.size()) return {};
    return value;
}

}  // namespace

#endif
