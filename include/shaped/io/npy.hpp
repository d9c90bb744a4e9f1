#ifndef SHAPED_IO_NPY_HPP
#define SHAPED_IO_NPY_HPP

/// \file
/// `io::load_npy`: a tensor from a NumPy `.npy` file (what `np.save(path, tensor.numpy())` writes), and
/// `io::read_npy_header`, the reader of its header: the format as NumPy's `numpy/lib/format.py` reads it,
/// parsed here with every length bounded by the file's size before anything is allocated.

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <istream>
#include <limits>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>
#include <vector>

#include "../diagnostics.hpp"
#include "../tensor.hpp"
#include "file_error.hpp"

namespace shaped::io {

/// What the header of a `.npy` file says: the element type, the order and the shape, and where the
/// elements begin.
///
/// Shapes: `shape` as the file states it, outermost first (empty for a scalar). Element type: none of its
/// own. Errors: none of its own. Source: NumPy's `numpy.lib.format.read_array_header_1_0` / `_2_0`.
/// Example: `io::npy_header h = io::read_npy_header(in, size, "W_query.npy");  // h.shape == {64, 64}`
struct npy_header {
    /// The dtype's description as the file gives it, e.g. `<f4`.
    std::string descr;
    /// Whether the elements are in Fortran (column-major) order.
    bool fortran_order = false;
    /// The extents, outermost first.
    std::vector<std::size_t> shape;
    /// The byte offset of the first element: the magic, version, length and header before it.
    std::size_t data_offset = 0;
    /// The number of elements: the product of `shape` (1 for a scalar); checked not to overflow when read.
    std::size_t numel() const noexcept {
        std::size_t n = 1;
        for (auto d : shape) n *= d;
        return n;
    }
};

/// NumPy's bound on a header's length (`max_header_size` of `numpy.load`, 10000 bytes): a longer header is
/// refused before it is read, as NumPy refuses it.
inline constexpr std::size_t npy_max_header_size = 10000;

namespace detail {

// The header's dictionary, as `ast.literal_eval` would read the literals NumPy writes: a dict of exactly the
// keys 'descr' (a string), 'fortran_order' (True or False) and 'shape' (a tuple of non-negative integers),
// each once, with an optional trailing comma and whitespace around everything. Integers are digits only,
// without a leading zero, as Python's grammar has them; no escapes in strings. No recursion: a tuple holds
// integers only, so the input's depth is at most two.
class npy_header_parser {
public:
    explicit npy_header_parser(std::string_view text) : s_(text) {}

    // Fills h (all but data_offset); returns an empty string, or what is wrong.
    std::string parse(npy_header& h) {
        bool seen_descr = false, seen_order = false, seen_shape = false;
        space();
        if (!eat('{')) return "the header is not a Python dict literal (it does not begin with '{')";
        for (;;) {
            space();
            if (eat('}')) break;
            std::string_view key;
            if (!string(key)) return error_ ? error_ : "a key of the header's dict is not a quoted string";
            space();
            if (!eat(':')) return "no ':' after the key '" + std::string(key) + "'";
            space();
            if (key == "descr") {
                if (seen_descr) return "the key 'descr' is given twice";
                seen_descr = true;
                std::string_view d;
                if (!string(d))
                    return error_ ? error_ : "'descr' is not a quoted dtype string (structured dtypes are not read)";
                h.descr = std::string(d);
            } else if (key == "fortran_order") {
                if (seen_order) return "the key 'fortran_order' is given twice";
                seen_order = true;
                if (word("True"))
                    h.fortran_order = true;
                else if (word("False"))
                    h.fortran_order = false;
                else
                    return "'fortran_order' is not True or False";
            } else if (key == "shape") {
                if (seen_shape) return "the key 'shape' is given twice";
                seen_shape = true;
                if (auto e = tuple(h.shape); !e.empty()) return e;
            } else {
                return "unexpected key '" + std::string(key) + "' (a header has descr, fortran_order and shape)";
            }
            space();
            if (eat(',')) continue;
            space();
            if (eat('}')) break;
            return "expected ',' or '}' after the value of '" + std::string(key) + "'";
        }
        space();
        if (i_ != s_.size()) return "bytes after the header's dict";
        if (!seen_descr || !seen_order || !seen_shape)
            return std::string("the key '") + (!seen_descr ? "descr" : !seen_order ? "fortran_order" : "shape") +
                   "' is missing (a header has descr, fortran_order and shape)";
        return {};
    }

private:
    void space() {
        while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n' || s_[i_] == '\r' || s_[i_] == '\f'))
            ++i_;
    }
    bool eat(char c) {
        if (i_ < s_.size() && s_[i_] == c) {
            ++i_;
            return true;
        }
        return false;
    }
    bool word(std::string_view w) {
        if (s_.substr(i_, w.size()) != w) return false;
        const std::size_t end = i_ + w.size();
        if (end < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[end])) || s_[end] == '_')) return false;
        i_ = end;
        return true;
    }
    bool string(std::string_view& out) {
        if (i_ >= s_.size() || (s_[i_] != '\'' && s_[i_] != '"')) return false;
        const char quote = s_[i_++];
        const std::size_t begin = i_;
        while (i_ < s_.size() && s_[i_] != quote) {
            if (s_[i_] == '\\' || s_[i_] == '\n') {
                error_ = "an escape or a line break in a string of the header";
                return false;
            }
            ++i_;
        }
        if (i_ >= s_.size()) {
            error_ = "a string of the header is not closed";
            return false;
        }
        out = s_.substr(begin, i_ - begin);
        ++i_;
        return true;
    }
    // One extent: digits only, no sign, no leading zero (Python's decimal literal), within size_t.
    std::string integer(std::size_t& out) {
        const std::size_t begin = i_;
        while (i_ < s_.size() && s_[i_] >= '0' && s_[i_] <= '9') ++i_;
        const std::string_view digits = s_.substr(begin, i_ - begin);
        const bool more = i_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[i_])) || s_[i_] == '_' ||
                                             s_[i_] == '.');
        if (digits.empty() || more || (digits.size() > 1 && digits[0] == '0')) {
            std::size_t end = i_;
            while (end < s_.size() && end - begin < 24 && s_[end] != ',' && s_[end] != ')') ++end;
            return "the shape holds '" + std::string(s_.substr(begin, end - begin)) +
                   "', which is not a non-negative integer";
        }
        const auto r = std::from_chars(digits.data(), digits.data() + digits.size(), out);
        if (r.ec != std::errc{}) return "the extent " + std::string(digits) + " does not fit in 64 bits";
        return {};
    }
    // A Python tuple of integers: (), (n,), (n, m), (n, m,), ... ; (n) is an integer, not a tuple.
    std::string tuple(std::vector<std::size_t>& shape) {
        shape.clear();
        if (!eat('(')) return "'shape' is not a tuple";
        space();
        if (eat(')')) return {};
        for (;;) {
            std::size_t d = 0;
            if (auto e = integer(d); !e.empty()) return e;
            shape.push_back(d);
            space();
            const bool comma = eat(',');
            space();
            if (eat(')')) {
                if (shape.size() == 1 && !comma) return "'shape' is (n), an integer, not the tuple (n,)";
                return {};
            }
            if (!comma) return "expected ',' or ')' in 'shape'";
        }
    }

    std::string_view s_;
    std::size_t i_ = 0;
    const char* error_ = nullptr;
};

inline std::uint32_t little_endian(const unsigned char* p, std::size_t n) {
    std::uint32_t v = 0;
    for (std::size_t i = n; i-- > 0;) v = (v << 8) | p[i];
    return v;
}

template <class V>
constexpr const char* npy_descr() {
    if constexpr (std::is_same_v<V, float>)
        return "<f4";
    else if constexpr (std::is_same_v<V, double>)
        return "<f8";
    else
        return "<i8";
}

}  // namespace detail

/// Reads the header of the `.npy` data in `in` (positioned at its first byte), `size` bytes in all, and
/// leaves `in` at the first element. `name` names the data in errors (the file's path).
///
/// The format: the magic `\x93NUMPY`, a version byte pair (1.0, 2.0 or 3.0), the header's length (2 bytes
/// little-endian in 1.0, 4 bytes in 2.0 and 3.0), then the header: a Python dict literal
/// `{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }` padded with spaces and a newline.
/// Shapes: none of its own. Element type: any descr is returned as the file gives it.
/// Errors: thrown, `file_error` naming `name` for data shorter than the magic, a wrong magic or version, a
/// header longer than what follows it or than `npy_max_header_size`, a header that is not the dict above
/// (an extent that is not a plain non-negative integer, `(2.9, 3)` or `(2abc, 3)` among them; a missing,
/// unknown or repeated key), and a shape whose elements take more bytes than `size`. Nothing is allocated
/// beyond the header itself, and that only after its length has been checked against `size`.
/// Source: NumPy's `numpy/lib/format.py` (`read_magic`, `_read_array_header`), whose `safe_eval` this
/// follows for the literals NumPy writes.
/// Example: `std::ifstream in(path, std::ios::binary);  auto h = io::read_npy_header(in, size, path);`
inline npy_header read_npy_header(std::istream& in, std::size_t size, const std::string& name) {
    const auto refuse = [&](const std::string& problem) { return file_error("load_npy", name, problem); };
    unsigned char lead[12] = {};
    if (size < 10) throw refuse("not a .npy file (" + std::to_string(size) + " bytes; the magic and lengths take 10)");
    if (!in.read(reinterpret_cast<char*>(lead), 8)) throw refuse("not a .npy file (cannot read its first bytes)");
    if (std::string_view(reinterpret_cast<const char*>(lead), 6) != "\x93NUMPY")
        throw refuse("not a .npy file (no \\x93NUMPY magic)");
    const unsigned major = lead[6], minor = lead[7];
    if (minor != 0 || major < 1 || major > 3)
        throw refuse("not a .npy file (version " + std::to_string(major) + "." + std::to_string(minor) +
                     "; NumPy writes 1.0, 2.0 and 3.0)");
    const std::size_t length_bytes = major == 1 ? 2 : 4;
    if (size < 8 + length_bytes)
        throw refuse("not a .npy file (" + std::to_string(size) + " bytes end inside the header's length)");
    if (!in.read(reinterpret_cast<char*>(lead + 8), static_cast<std::streamsize>(length_bytes)))
        throw refuse("not a .npy file (cannot read the header's length)");
    const std::size_t header_length = detail::little_endian(lead + 8, length_bytes);
    const std::size_t header_at = 8 + length_bytes;
    if (header_length == 0) throw refuse("the header is empty");
    if (header_length > npy_max_header_size)
        throw refuse("the header's length, " + std::to_string(header_length) + " bytes, is over NumPy's bound of " +
                     std::to_string(npy_max_header_size));
    if (header_length > size - header_at)
        throw refuse("the header's length, " + std::to_string(header_length) + " bytes, runs past the end of the " +
                     std::to_string(size) + "-byte file");
    std::string text(header_length, '\0');
    if (!in.read(text.data(), static_cast<std::streamsize>(header_length))) throw refuse("cannot read the header");
    npy_header h;
    if (auto problem = detail::npy_header_parser(text).parse(h); !problem.empty())
        throw refuse("the header is not a .npy header (" + problem + ")");
    h.data_offset = header_at + header_length;
    const std::size_t available = size - h.data_offset;
    // The element count must have a value; the caller, which knows the element type, checks its bytes
    // against the file.
    std::size_t n = 1;
    for (auto d : h.shape) {
        if (d != 0 && n > std::numeric_limits<std::size_t>::max() / d)
            throw refuse("the header's shape " + shaped::detail::format_extents(h.shape) +
                         " has more elements than any file holds (the file has " + std::to_string(available) +
                         " bytes of data)");
        n *= d;
    }
    return h;
}

/// The tensor stored in `.npy` form in `in` (the whole stream, from its current position to its end);
/// `name` names it in errors. As `load_npy(path)` below, for data that is not in a file of its own.
template <class V, Axis... Axes>
tensor<V, Axes...> load_npy(std::istream& in, const std::string& name) {
    static_assert(std::is_same_v<V, float> || std::is_same_v<V, double> || std::is_same_v<V, std::int64_t>,
                  "shaped::io::load_npy: float, double or std::int64_t elements");
    const auto begin = in.tellg();
    in.seekg(0, std::ios::end);
    const auto end = in.tellg();
    in.seekg(begin);
    if (begin < 0 || end < begin || !in) throw file_error("load_npy", name, "cannot tell the size of the data");
    const auto size = static_cast<std::size_t>(end - begin);
    const npy_header h = read_npy_header(in, size, name);
    if (h.descr != detail::npy_descr<V>())
        throw file_error("load_npy", name, "the elements are " + h.descr + "; this tensor takes " + detail::npy_descr<V>());
    if (h.fortran_order)
        throw file_error("load_npy", name, "the elements are in Fortran order; save a C-ordered array");
    const std::size_t available = size - h.data_offset, numel = h.numel();
    const bool fits = numel <= std::numeric_limits<std::size_t>::max() / sizeof(V);  // the byte count has a value
    if (!fits || numel * sizeof(V) != available)
        throw file_error("load_npy", name,
                         "the header's shape " + shaped::detail::format_extents(h.shape) + " of " + h.descr + " needs " +
                             (fits ? std::to_string(numel * sizeof(V)) + " bytes" : std::string("more bytes than the file has")) +
                             ", and the file holds " + std::to_string(available));
    constexpr std::size_t rank = sizeof...(Axes);
    if (h.shape.size() != rank)
        throw shape_error("io::load_npy(" + name + ")", std::to_string(rank) + " axes",
                          shaped::detail::format_extents(h.shape));
    std::array<std::size_t, rank> sizes{};
    std::copy(h.shape.begin(), h.shape.end(), sizes.begin());
    // The extents against the type before the elements are allocated.
    using tensor_t = tensor<V, Axes...>;
    tensor_t t(tensor_t::checked_extents("io::load_npy(" + name + ")", sizes), uninitialized);
    if (!in.read(reinterpret_cast<char*>(t.data()), static_cast<std::streamsize>(available)))
        throw file_error("load_npy", name, "cannot read the elements");
    return t;
}

/// The tensor stored in the `.npy` file at `path`, whose shape must be the type's.
///
/// Shapes: `(Axes...)`; a run-time axis takes the file's extent, checked against its bound. Element type:
/// float (`<f4`), double (`<f8`) or `std::int64_t` (`<i8`), little-endian, in C order.
/// Errors: thrown, `file_error` naming the file when it does not exist, is not a regular file (a directory, a
/// FIFO: refused before it is opened, so nothing blocks), is not a `.npy` file (see `read_npy_header`), holds
/// another dtype, is in Fortran order, or has more or fewer bytes than its header gives (checked before the
/// elements are allocated or read); `shape_error` naming the file and both shapes when the extents are not
/// the type's. Under a second and a few kilobytes beyond the elements for any file.
/// Source: `numpy.save` / `numpy.load`.
/// Example: `auto w = shaped::io::load_npy<float, d_out, d_in>("W_query.npy");`
template <class V, Axis... Axes>
tensor<V, Axes...> load_npy(const std::string& path) {
    std::error_code ec;
    const auto status = std::filesystem::status(path, ec);
    if (ec || !std::filesystem::exists(status)) throw file_error("load_npy", path, "cannot open");
    if (!std::filesystem::is_regular_file(status)) throw file_error("load_npy", path, "not a regular file");
    std::ifstream in(path, std::ios::binary);
    if (!in) throw file_error("load_npy", path, "cannot open");
    return load_npy<V, Axes...>(in, path);
}

}  // namespace shaped::io

#endif
