// libFuzzer target: any bytes as the JSON text of a file's header. shaped's reader (detail/json.hpp, depth
// bound 3) is held to nlohmann-json's verdict and values: where nlohmann-json refuses the text (or stops at
// a NUL byte, which it reads as the end), shaped's reader refuses it; where nlohmann-json reads it, shaped's
// reader reads the same values, unless the text nests deeper than 3 (refused as too deep) or names a key
// twice in one object (refused; nlohmann keeps the last), which a SAX pass of nlohmann-json sees. Reading
// the text value by value and skipping it whole (skip()) must give the same verdict. An input is counted as
// accepted when shaped's reader reads it. Built and run by run.py (meson test --suite fuzz).
#include <algorithm>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <locale.h>
#include <stdlib.h>

#include <nlohmann/json.hpp>

#include "fuzz_common.hpp"

#include <shaped/detail/json.hpp>

namespace {
namespace ours = shaped::detail::json;
using nl = nlohmann::json;

// What a SAX pass of nlohmann-json sees that its tree does not: the deepest nesting and a key given twice.
struct shape_of_text {
    std::size_t depth = 0, deepest = 0;
    bool key_twice = false;
    std::vector<std::set<std::string>> keys;
    bool open() {
        deepest = std::max(deepest, ++depth);
        return true;
    }
    bool null() { return true; }
    bool boolean(bool) { return true; }
    bool number_integer(nl::number_integer_t) { return true; }
    bool number_unsigned(nl::number_unsigned_t) { return true; }
    bool number_float(nl::number_float_t, const nl::string_t&) { return true; }
    bool string(nl::string_t&) { return true; }
    bool binary(nl::binary_t&) { return true; }
    bool start_object(std::size_t) {
        keys.emplace_back();
        return open();
    }
    bool key(nl::string_t& k) {
        if (!keys.back().insert(k).second) key_twice = true;
        return true;
    }
    bool end_object() {
        keys.pop_back();
        --depth;
        return true;
    }
    bool start_array(std::size_t) { return open(); }
    bool end_array() {
        --depth;
        return true;
    }
    bool parse_error(std::size_t, const std::string&, const nl::exception&) { return false; }
};

// A value as shaped's reader hands it over, kept whole to compare with nlohmann-json's tree.
struct node {
    ours::kind type = ours::kind::null;
    bool boolean = false;
    ours::number number;
    std::string text;
    std::vector<std::string> keys;
    std::vector<node> items;
};

node read(ours::reader& r) {
    node n;
    n.type = r.next();
    switch (n.type) {
        case ours::kind::null: r.null(); break;
        case ours::kind::boolean: n.boolean = r.boolean(); break;
        case ours::kind::number: n.number = r.read_number(); break;
        case ours::kind::string: n.text = r.string(); break;
        case ours::kind::array:
            r.begin_array();
            while (r.item()) n.items.push_back(read(r));
            break;
        case ours::kind::object: {
            r.begin_object();
            std::string key;
            while (r.member(key)) {
                n.keys.push_back(key);
                n.items.push_back(read(r));
            }
            break;
        }
    }
    return n;
}

bool same(const node& a, const nl& b) {
    using k = ours::kind;
    switch (a.type) {
        case k::null: return b.is_null();
        case k::boolean: return b.is_boolean() && b.get<bool>() == a.boolean;
        case k::string: return b.is_string() && b.get_ref<const std::string&>() == a.text;
        case k::number: {
            const ours::number& n = a.number;
            if (b.is_number_unsigned()) return n.is_unsigned && n.unsigned_value == b.get<std::uint64_t>();
            if (n.is_unsigned) return false;
            if (b.is_number_integer()) {
                std::int64_t v = 0;
                const auto r = std::from_chars(n.text.data(), n.text.data() + n.text.size(), v);
                return r.ec == std::errc() && r.ptr == n.text.data() + n.text.size() && v == b.get<std::int64_t>();
            }
            if (b.is_number_float()) {
                static const locale_t c = ::newlocale(LC_ALL_MASK, "C", locale_t{});
                return ::strtod_l(std::string(n.text).c_str(), nullptr, c) == b.get<double>();
            }
            return false;
        }
        case k::array:
            if (!b.is_array() || b.size() != a.items.size()) return false;
            for (std::size_t i = 0; i < a.items.size(); ++i)
                if (!same(a.items[i], b[i])) return false;
            return true;
        case k::object:
            if (!b.is_object() || b.size() != a.items.size()) return false;
            for (std::size_t i = 0; i < a.items.size(); ++i) {
                const auto it = b.find(a.keys[i]);
                if (it == b.end() || !same(a.items[i], *it)) return false;
            }
            return true;
    }
    return false;
}

// The reader's verdict on `text`: read whole (a tree), or skipped.
template <class F>
std::optional<ours::error::reason> verdict(F&& f) {
    try {
        f();
    } catch (const ours::error& e) {
        return e.why;
    }
    return std::nullopt;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    // nlohmann-json skips a UTF-8 byte-order mark, which JSON does not allow and shaped's reader refuses.
    if (text.starts_with("\xEF\xBB\xBF")) return 0;
    shape_of_text shape;
    const bool nl_reads = nl::sax_parse(text.begin(), text.end(), &shape);
    std::optional<node> v;
    const auto why = verdict([&] {
        ours::reader r(text, 3);
        v = read(r);
        r.finish();
    });
    // skip() checks what reading does.
    FUZZ_CHECK(why == verdict([&] {
                   ours::reader r(text, 3);
                   r.skip();
                   r.finish();
               }));
    ++(why ? counts.refused : counts.accepted);
    // nlohmann-json reads a NUL byte as the end of the text; JSON allows it nowhere, and shaped's reader
    // refuses it.
    if (!nl_reads || text.find('\0') != std::string_view::npos) {
        FUZZ_CHECK(why.has_value());
        return 0;
    }
    if (shape.deepest > 3) {
        // Refused, as too deep, or for a key given twice at a depth reached first.
        FUZZ_CHECK(why == ours::error::reason::too_deep || (why == ours::error::reason::key_twice && shape.key_twice));
        return 0;
    }
    if (shape.key_twice) {
        FUZZ_CHECK(why == ours::error::reason::key_twice);
        return 0;
    }
    FUZZ_CHECK(!why && v.has_value());
    FUZZ_CHECK(same(*v, nl::parse(text.begin(), text.end())));
    return 0;
}
