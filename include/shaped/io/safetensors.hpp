#ifndef SHAPED_IO_SAFETENSORS_HPP
#define SHAPED_IO_SAFETENSORS_HPP

/// \file
/// `io::safetensors_file`: the tensors of a `.safetensors` file (what model hubs ship), mapped into memory,
/// checked once when the file is opened, and copied into typed tensors whose shape they must have; and
/// `io::save_safetensors`, which writes one. The JSON header is read by shaped's strict JSON reader
/// (detail/json.hpp).

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../bfloat16.hpp"
#include "../detail/json.hpp"
#include "../diagnostics.hpp"
#include "../tensor.hpp"
#include "file_error.hpp"

namespace shaped::io {

static_assert(std::endian::native == std::endian::little,
              "shaped::io::safetensors: the format is little-endian, and so must the machine be");

namespace detail {

// Bytes per element of each dtype the format names; 0 for a name it does not.
inline std::size_t dtype_size(std::string_view dtype) noexcept {
    if (dtype == "F64" || dtype == "I64" || dtype == "U64" || dtype == "C64") return 8;
    if (dtype == "F32" || dtype == "I32" || dtype == "U32") return 4;
    if (dtype == "F16" || dtype == "BF16" || dtype == "I16" || dtype == "U16") return 2;
    if (dtype == "I8" || dtype == "U8" || dtype == "BOOL" || dtype == "F8_E4M3" || dtype == "F8_E5M2" ||
        dtype == "F8_E8M0" || dtype == "F8_E4M3FNUZ" || dtype == "F8_E5M2FNUZ")
        return 1;
    return 0;
}

// IEEE 754 binary16 to float, exactly (every half is a float).
inline float half_to_float(std::uint16_t h) noexcept {
    const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
    std::uint32_t exponent = (h >> 10) & 0x1fu, mantissa = h & 0x3ffu;
    if (exponent == 0x1f) return std::bit_cast<float>(sign | 0x7f800000u | (mantissa << 13));  // inf, NaN
    if (exponent == 0) {
        if (mantissa == 0) return std::bit_cast<float>(sign);                                 // ±0
        const float f = static_cast<float>(mantissa) * 0x1p-24f;                              // subnormal
        return sign ? -f : f;
    }
    return std::bit_cast<float>(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

inline float bfloat16_to_float(std::uint16_t b) noexcept { return std::bit_cast<float>(static_cast<std::uint32_t>(b) << 16); }

inline std::string dims_text(const std::vector<std::size_t>& dims) { return shaped::detail::format_extents(dims); }

// A key or value from a file, as a message shows it: control characters (NUL among them, which would end
// what()) escaped, and cut after 80 characters (a key may be as long as the header).
inline std::string shown(std::string_view text, std::size_t limit = 80) {
    std::string out;
    for (std::size_t i = 0; i < text.size() && out.size() < limit; ++i) {
        const auto c = static_cast<unsigned char>(text[i]);
        if (c < 0x20 || c == 0x7f) {
            constexpr char hex[] = "0123456789abcdef";
            out += "\\x";
            out += hex[c >> 4];
            out += hex[c & 15];
        } else {
            out += static_cast<char>(c);
        }
    }
    if (out.size() >= limit && text.size() > limit) out += "...";
    return out;
}

// A file mapped read-only for the lifetime of the object (an empty file maps nothing).
class mapped_file {
public:
    mapped_file(const std::string& reader, const std::string& path) {
        // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer; it is refused below.
        const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
        if (fd < 0) throw file_error(reader, path, std::string("cannot open: ") + std::strerror(errno));
        struct stat st {};
        if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
            ::close(fd);
            throw file_error(reader, path, "not a regular file");
        }
        size_ = static_cast<std::size_t>(st.st_size);
        if (size_ > 0) {
            // Not populated here: the header is checked first, touching its pages only, so that a large file
            // that is not a safetensors file is refused without being read; a tensor's pages are read when it
            // is copied (populate), and given back after (release).
            void* p = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
            if (p == MAP_FAILED) {
                ::close(fd);
                throw file_error(reader, path, std::string("cannot map: ") + std::strerror(errno));
            }
            data_ = static_cast<const std::byte*>(p);
        }
        ::close(fd);
    }
    mapped_file(mapped_file&& o) noexcept : data_(std::exchange(o.data_, nullptr)), size_(std::exchange(o.size_, 0)) {}
    mapped_file& operator=(mapped_file&& o) noexcept {
        std::swap(data_, o.data_);
        std::swap(size_, o.size_);
        return *this;
    }
    mapped_file(const mapped_file&) = delete;
    mapped_file& operator=(const mapped_file&) = delete;
    ~mapped_file() {
        if (data_) ::munmap(const_cast<std::byte*>(data_), size_);
    }
    const std::byte* data() const noexcept { return data_; }
    std::size_t size() const noexcept { return size_; }
    // Reads the pages of bytes [offset, offset + length) in one pass rather than a fault per page (advice
    // only: errors ignored).
    void populate(std::size_t offset, std::size_t length) const noexcept {
        const auto [begin, end] = pages(offset, offset + length, true);
        if (begin >= end) return;
#ifdef MADV_POPULATE_READ
        if (::madvise(const_cast<std::byte*>(data_) + begin, end - begin, MADV_POPULATE_READ) == 0) return;
#endif
        ::madvise(const_cast<std::byte*>(data_) + begin, end - begin, MADV_WILLNEED);
    }
    // Gives back the pages that lie wholly inside bytes [offset, offset + length): they leave the process's
    // resident memory, and are read from the file again if touched again (the mapping is private and never
    // written, so nothing is lost). Advice only: errors ignored.
    void release(std::size_t offset, std::size_t length) const noexcept {
        const auto [begin, end] = pages(offset, offset + length, false);
        if (begin < end) ::madvise(const_cast<std::byte*>(data_) + begin, end - begin, MADV_DONTNEED);
    }

private:
    // The page-aligned byte range of [from, to) within the file: the pages it touches (outward), or the pages
    // it holds whole (inward).
    std::pair<std::size_t, std::size_t> pages(std::size_t from, std::size_t to, bool outward) const noexcept {
        const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
        to = std::min(to, size_);
        if (!data_ || from >= to) return {0, 0};
        if (outward) return {from / page * page, std::min(size_, (to + page - 1) / page * page)};
        const std::size_t end = to == size_ ? size_ : to / page * page;  // the file's last page is whole
        return {(from + page - 1) / page * page, end};
    }

    const std::byte* data_ = nullptr;
    std::size_t size_ = 0;
};

}  // namespace detail

/// One tensor of a safetensors file: its key, element type, extents and place in the data section.
struct safetensors_entry {
    /// The tensor's key, e.g. `wpe.weight`.
    std::string name;
    std::string dtype;  ///< The element type as the file names it: "F32", "F16", "BF16", "F64", "I64", ...
    /// The extents, outermost first, as the file states them.
    std::vector<std::size_t> shape;
    /// Byte offset of the tensor's first byte in the data section.
    std::size_t begin = 0, end = 0;  ///< Byte offset one past its last byte (end exclusive).
    /// The number of elements: the product of `shape` (1 for a scalar).
    std::size_t numel() const noexcept {
        std::size_t n = 1;
        for (auto d : shape) n *= d;
        return n;
    }
};

/// The tensors of a `.safetensors` file, mapped into memory.
///
/// The format: 8 bytes, a little-endian `u64` N; N bytes of JSON, an object from each key to
/// `{"dtype", "shape", "data_offsets": [begin, end]}` (and an optional `"__metadata__"` object); then the
/// data, each tensor row-major at its offsets.
/// Shapes: each entry's extents, as the file states them; `read` copies a tensor into one of the same
/// extents. Element type: F32, F16 and BF16 read into float tensors (F16 and BF16 converted exactly) and
/// into bfloat16 ones (BF16 kept as it is, F32 and F16 rounded to the nearest), F64 into double ones, I64
/// into `std::int64_t` ones; other pairings are refused.
/// Errors: thrown, `file_error` naming the file when it cannot be opened, is not a regular file (a FIFO is
/// refused without waiting for a writer), or is not a safetensors file as the reference reader
/// (huggingface/safetensors' `validate`) defines one: shorter than its 8-byte header length, a header length
/// past the end of the file or over 100,000,000 bytes, a header whose JSON does not begin with '{' (after
/// optional whitespace), holds a NUL byte or is not a JSON object, a key given twice, a value nested deeper than a shape, a `__metadata__` that
/// is not a map of strings to strings, an entry without a known dtype, a shape or two offsets, offsets
/// outside the data or in the wrong order, a byte count other than the shape and dtype give, two tensors that
/// overlap, bytes of the data that belong to no tensor (a hole, or bytes after the last one). Everything is
/// checked when the file is opened, so that nothing is ever read outside the mapping; no check recurses on a
/// depth the file chooses. Memory: opening reads the header's pages alone; `read` reads a tensor's pages as
/// it copies them, in slices of 16 MiB, and gives each slice's pages back after (a model's load peaks at the
/// model's own memory, not the model's and the file's). `read` throws `file_error` for a
/// missing key or a dtype the tensor cannot take, and `shape_error` (naming the file and the key, the
/// expected extents with their axis names, and the file's) for other extents.
/// Source: the safetensors format (huggingface/safetensors), as `safetensors.torch.load_file` reads it.
/// Example: `io::safetensors_file f("gpt2.safetensors");  f.read("wpe.weight", model.pos_emb.weight);`
class safetensors_file {
public:
    /// Maps the file at `path` and reads its header. Throws `file_error` as listed above.
    explicit safetensors_file(std::string path) : path_(std::move(path)), map_("safetensors", path_) { parse(); }

    /// The file's path, as given.
    const std::string& path() const noexcept { return path_; }
    /// Every tensor, in the order of their offsets.
    const std::vector<safetensors_entry>& entries() const noexcept { return entries_; }
    /// The tensor under `key`, or null.
    const safetensors_entry* find(std::string_view key) const noexcept {
        for (const auto& e : entries_)
            if (e.name == key) return &e;
        return nullptr;
    }
    /// The bytes of `e`, inside the mapping (checked to lie there when the file was opened).
    std::span<const std::byte> bytes(const safetensors_entry& e) const noexcept {
        return {data_ + e.begin, e.end - e.begin};
    }

    /// Copies the tensor under `key` into `t`, which must have its extents; converts F16 and BF16 to float.
    template <class V, class L, Axis... A>
    void read(std::string_view key, basic_tensor<V, L, A...>& t) const {
        const safetensors_entry* e = find(key);
        if (!e) throw file_error("safetensors", path_, "no tensor " + detail::shown(key));
        read(*e, t);
    }
    /// Copies the tensor `e` (one of `entries()`) into `t`, as `read(key, t)` does.
    template <class V, class L, Axis... A>
    void read(const safetensors_entry& e, basic_tensor<V, L, A...>& t) const {
        static_assert(std::is_same_v<L, layout::contiguous>, "shaped::io::safetensors_file::read: into a contiguous tensor");
        check_extents(e, t.shape.sizes(), t.shape.text());
        convert(e, t.data());
    }

    /// Copies the tensor `e` into `n` elements at `out` (its dtype converted as `read` converts it), after
    /// checking that the file's extents are `expected` (`expected_text` names them in the error).
    template <class V>
    void read(const safetensors_entry& e, std::span<const std::size_t> expected, const std::string& expected_text,
              V* out) const {
        check_extents(e, expected, expected_text);
        convert(e, out);
    }

    /// Throws `file_error` unless a tensor of `V` elements can take `e`'s dtype: F32, F16 or BF16 for float
    /// and for bfloat16, F64 for double, I64 for `std::int64_t`.
    template <class V>
    void check_dtype(const safetensors_entry& e) const {
        static_assert(std::is_same_v<V, float> || std::is_same_v<V, bfloat16> || std::is_same_v<V, double> ||
                          std::is_same_v<V, std::int64_t>,
                      "shaped::io::safetensors_file::read: into float, bfloat16, double or std::int64_t tensors");
        if constexpr (std::is_same_v<V, float>) {
            if (e.dtype != "F32" && e.dtype != "F16" && e.dtype != "BF16") refuse(e, "a float tensor takes F32, F16 or BF16");
        } else if constexpr (std::is_same_v<V, bfloat16>) {
            if (e.dtype != "F32" && e.dtype != "F16" && e.dtype != "BF16") refuse(e, "a bfloat16 tensor takes BF16, F32 or F16");
        } else if constexpr (std::is_same_v<V, double>) {
            if (e.dtype != "F64") refuse(e, "a double tensor takes F64");
        } else {
            if (e.dtype != "I64") refuse(e, "a std::int64_t tensor takes I64");
        }
    }

    /// Throws `shape_error` (naming the file, the key, `expected_text` and the file's extents) unless `e`'s
    /// extents are `expected`: what `read` checks before it copies, for loaders that check every tensor before
    /// they copy any.
    template <class Sizes>
    void check_extents(const safetensors_entry& e, const Sizes& expected, const std::string& expected_text) const {
        const bool same = e.shape.size() == std::size(expected) &&
                          std::equal(e.shape.begin(), e.shape.end(), std::begin(expected));
        if (!same)
            throw shape_error("io::safetensors_file::read(" + path_ + "): " + detail::shown(e.name), expected_text,
                              detail::dims_text(e.shape));
    }

private:

    // Copies `e` into `out` in slices of 16 MiB of the file, each read in one pass before it is copied and
    // given back after: loading holds the tensors it fills, not the file as well (a checkpoint's F32 file
    // would otherwise double the memory a model's load takes at its peak).
    template <class V>
    void convert(const safetensors_entry& e, V* out) const {
        check_dtype<V>(e);
        const std::size_t n = e.numel();
        if (n == 0) return;  // a zero-size tensor: memcpy may not be given the null data of an empty buffer
        const bool half = e.dtype == "F16", bfloat = e.dtype == "BF16";
        const std::size_t size = half || bfloat ? 2 : e.dtype == "F32" ? 4 : sizeof(V);
        const std::size_t slice = (std::size_t{1} << 24) / size;
        const std::size_t at = static_cast<std::size_t>(data_ - map_.data()) + e.begin;  // in the file
        for (std::size_t i = 0; i < n; i += slice) {
            const std::size_t m = std::min(slice, n - i);
            const std::byte* p = data_ + e.begin + i * size;
            map_.populate(at + i * size, m * size);
            if constexpr (std::is_same_v<V, bfloat16>) {  // BF16 as it is; F16 and F32 rounded once
                for (std::size_t j = 0; j < m; ++j) {
                    if (size == 4) {
                        float v;
                        std::memcpy(&v, p + 4 * j, 4);
                        out[i + j] = bfloat16(v);
                    } else {
                        std::uint16_t v;
                        std::memcpy(&v, p + 2 * j, 2);
                        out[i + j] = half ? bfloat16(detail::half_to_float(v)) : bfloat16::from_bits(v);
                    }
                }
            } else if (half || bfloat) {
                for (std::size_t j = 0; j < m; ++j) {
                    std::uint16_t v;
                    std::memcpy(&v, p + 2 * j, 2);
                    out[i + j] = half ? detail::half_to_float(v) : detail::bfloat16_to_float(v);
                }
            } else {
                std::memcpy(out + i, p, m * sizeof(V));
            }
            map_.release(at + i * size, m * size);
        }
    }

    [[noreturn]] void refuse(const safetensors_entry& e, const std::string& what) const {
        throw file_error("safetensors", path_, detail::shown(e.name) + " is " + detail::shown(e.dtype) + "; " + what);
    }

    [[noreturn]] void corrupt(const std::string& problem) const { throw file_error("safetensors", path_, problem); }

    // A value of the header as a message quotes it: its text, cut short (a value from the file may be long).
    static std::string brief(std::string_view text) {
        return text.size() > 48 ? std::string(text.substr(0, 40)) + "..." : std::string(text);
    }

    // What one entry of the header says, read in the order written and checked afterwards in a fixed order.
    struct entry_fields {
        bool object = false, dtype = false, shape = false, offsets = false;  // present
        bool dtype_is_string = false, shape_is_array = false, offsets_is_array = false;
        bool shape_ok = true, offsets_ok = true;  // every element an unsigned integer that fits in size_t
        std::string dtype_name;
        std::vector<std::size_t> shape_values;
        std::size_t offsets_count = 0, offsets_values[2] = {0, 0};
        std::string_view dtype_text, shape_text, offsets_text;  // as written, for messages
    };

    // The unsigned integers of the array that comes next, as far as they go; false if any element is not one.
    static bool read_sizes(shaped::detail::json::reader& r, std::vector<std::size_t>* out, std::size_t* count,
                           std::size_t* pair) {
        namespace json = shaped::detail::json;
        bool ok = true;
        r.begin_array();
        while (r.item()) {
            std::size_t v = 0;
            if (r.next() == json::kind::number) {
                const json::number n = r.read_number();
                if (!n.is_unsigned || n.unsigned_value > std::numeric_limits<std::size_t>::max()) ok = false;
                v = static_cast<std::size_t>(n.unsigned_value);
            } else {
                r.skip();
                ok = false;
            }
            if (out) out->push_back(v);
            if (pair && *count < 2) pair[*count] = v;
            ++*count;
        }
        return ok;
    }

    static entry_fields read_entry(shaped::detail::json::reader& r) {
        namespace json = shaped::detail::json;
        entry_fields f;
        if (r.next() != json::kind::object) {
            r.skip();
            return f;
        }
        f.object = true;
        r.begin_object();
        std::string field;
        while (r.member(field)) {
            const json::kind k = r.next();
            const std::size_t start = r.mark();
            if (field == "dtype") {
                f.dtype = true;
                f.dtype_is_string = k == json::kind::string;
                if (f.dtype_is_string) f.dtype_name = r.string();
                else r.skip();
                f.dtype_text = r.text_from(start);
            } else if (field == "shape") {
                f.shape = true;
                f.shape_is_array = k == json::kind::array;
                std::size_t count = 0;
                if (f.shape_is_array) f.shape_ok = read_sizes(r, &f.shape_values, &count, nullptr);
                else r.skip();
                f.shape_text = r.text_from(start);
            } else if (field == "data_offsets") {
                f.offsets = true;
                f.offsets_is_array = k == json::kind::array;
                if (f.offsets_is_array) f.offsets_ok = read_sizes(r, nullptr, &f.offsets_count, f.offsets_values);
                else r.skip();
                f.offsets_text = r.text_from(start);
            } else {
                r.skip();  // a field the format does not name: ignored, as the reference reader ignores it
            }
        }
        return f;
    }

    // The reference reader's rules (huggingface/safetensors, `SafeTensors::read_metadata` and
    // `Metadata::validate`): a header of at most 100,000,000 bytes that is a JSON object, padded with JSON
    // whitespace only; `__metadata__` a map of strings to strings (or null); each tensor with a known
    // dtype, a shape and offsets whose length is its bytes; the tensors, in the order of their offsets,
    // filling the data exactly, without a hole, an overlap or a byte after the last one. Stricter than JSON
    // alone: a key given twice (JSON leaves that open; many readers keep the last) is refused, and no value may
    // nest deeper than a shape does, so that nothing that follows recurses on a depth the file chooses.
    void parse() {
        const std::size_t size = map_.size();
        if (size < 8) corrupt("too short for a safetensors file (" + std::to_string(size) + " bytes; the header length alone takes 8)");
        std::uint64_t n = 0;
        std::memcpy(&n, map_.data(), 8);
        if (n > size - 8)
            corrupt("the header length, " + std::to_string(n) + " bytes, runs past the end of the file (" +
                    std::to_string(size) + " bytes)");
        if (n > max_header_size)
            corrupt("the header length, " + std::to_string(n) + " bytes, is over the format's bound of " +
                    std::to_string(max_header_size));
        const char* header = reinterpret_cast<const char*>(map_.data() + 8);
        data_ = map_.data() + 8 + n;
        const std::size_t data_size = size - 8 - static_cast<std::size_t>(n);
        if (std::memchr(header, 0, n))
            corrupt("the header holds a NUL byte (it is JSON, padded with spaces, never with NULs)");
        // JSON whitespace around the object is padding (the reference reader trims both ends); the parser is
        // given the object alone.
        const auto space = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; };
        std::size_t first = 0, last = n;
        while (first < last && space(header[first])) ++first;
        while (last > first && space(header[last - 1])) --last;
        if (first == last || header[first] != '{') corrupt("the header does not begin with '{'");
        // Nothing nests deeper than a tensor's shape (depth 3), so that neither the reader nor what follows
        // recurses on a depth the file chooses; a key given twice is refused (JSON leaves that open).
        namespace json = shaped::detail::json;
        const std::string_view text(header + first, last - first);
        try {
            // First the whole text as JSON, as the reference reader parses it before it looks at a value.
            json::reader all(text, 3);
            all.skip();
            all.finish();
        } catch (const json::error& ex) {
            if (ex.why == json::error::reason::too_deep)
                corrupt("the header nests values deeper than a tensor's shape (depth " + std::to_string(ex.depth) + ")");
            if (ex.why == json::error::reason::key_twice)
                corrupt("the key \"" + detail::shown(ex.key) + "\" is given twice in the header");
            corrupt("the header is not JSON (" + detail::shown(ex.what(), 240) + ")");
        }
        // Then its values, in the order written; the text is JSON, so nothing below throws json::error.
        json::reader r(text, 3);
        r.begin_object();
        std::string key, field;
        while (r.member(key)) {
            if (key == "__metadata__") {
                const json::kind k = r.next();
                if (k == json::kind::null) {  // the reference reads null as no metadata
                    r.null();
                    continue;
                }
                if (k != json::kind::object) corrupt("__metadata__ is not a map of strings to strings");
                r.begin_object();
                while (r.member(field)) {
                    const bool is_string = r.next() == json::kind::string;
                    const std::size_t start = r.mark();
                    r.skip();
                    if (!is_string)
                        corrupt("__metadata__: " + detail::shown(field) + " is not a string but " + brief(r.text_from(start)));
                }
                continue;
            }
            const entry_fields f = read_entry(r);
            if (!f.object || !f.dtype || !f.shape || !f.offsets)
                corrupt(detail::shown(key) + ": an entry needs dtype, shape and data_offsets");
            safetensors_entry e;
            e.name = key;
            e.dtype = f.dtype_name;
            if (!f.dtype_is_string || detail::dtype_size(e.dtype) == 0)
                corrupt(detail::shown(key) + ": unknown dtype " + brief(f.dtype_text));
            if (!f.shape_is_array) corrupt(detail::shown(key) + ": the shape is not a list of extents");
            if (!f.offsets_is_array || f.offsets_count != 2) corrupt(detail::shown(key) + ": data_offsets is not [begin, end]");
            bool ok = f.shape_ok;
            std::size_t bytes = detail::dtype_size(e.dtype);
            e.shape = f.shape_values;
            for (const std::size_t extent : e.shape) {
                if (ok && extent != 0 && bytes > std::numeric_limits<std::size_t>::max() / extent) ok = false;
                bytes *= extent;
            }
            if (!ok) corrupt(detail::shown(key) + ": the shape " + brief(f.shape_text) + " is not a list of extents that fit in memory");
            if (!f.offsets_ok) corrupt(detail::shown(key) + ": data_offsets " + brief(f.offsets_text) + " are not byte offsets");
            e.begin = f.offsets_values[0];
            e.end = f.offsets_values[1];
            if (e.begin > e.end || e.end > data_size)
                corrupt(detail::shown(key) + ": data_offsets " + brief(f.offsets_text) + " lie outside the data (" +
                        std::to_string(data_size) + " bytes)");
            if (e.end - e.begin != bytes)
                corrupt(detail::shown(key) + ": " + std::to_string(e.end - e.begin) + " bytes for " + e.dtype + " " +
                        detail::dims_text(e.shape) + ", which takes " + std::to_string(bytes));
            entries_.push_back(std::move(e));
        }
        std::sort(entries_.begin(), entries_.end(),
                  [](const auto& a, const auto& b) { return std::pair(a.begin, a.end) < std::pair(b.begin, b.end); });
        std::size_t end = 0;
        for (std::size_t i = 0; i < entries_.size(); ++i) {
            const auto& e = entries_[i];
            if (e.begin < end) corrupt(detail::shown(entries_[i - 1].name) + " and " + detail::shown(e.name) + " overlap in the data");
            if (e.begin > end)
                corrupt("bytes " + std::to_string(end) + " to " + std::to_string(e.begin) + " of the data belong to no tensor (" +
                        (i == 0 ? "before " + detail::shown(e.name) : "between " + detail::shown(entries_[i - 1].name) + " and " + detail::shown(e.name)) + ")");
            end = e.end;
        }
        if (end != data_size)
            corrupt(std::to_string(data_size - end) + " bytes after the last tensor belong to no tensor (the data ends at " +
                    std::to_string(end) + ", the file " + std::to_string(data_size) + " bytes after its header)");
    }

    // The reference reader's bound on the header (`MAX_HEADER_SIZE`).
    static constexpr std::uint64_t max_header_size = 100'000'000;

    std::string path_;
    detail::mapped_file map_;
    const std::byte* data_ = nullptr;
    std::vector<safetensors_entry> entries_;
};

/// One tensor to write: its key, extents and float elements (row-major).
struct safetensors_tensor {
    /// The key to write it under, e.g. `wpe.weight`.
    std::string name;
    /// The extents, outermost first.
    std::vector<std::size_t> shape;
    /// The elements, row-major: a view, so they must outlive the call.
    std::span<const float> values;
};

/// Writes `tensors` to `path` as a safetensors file of F32 tensors, in the order given, the header padded
/// with spaces to a multiple of 8 bytes (as the reference writer does).
///
/// Shapes: each tensor's `values` must hold the product of its `shape`. Element type: float.
/// Errors: thrown, `file_error` when the file cannot be written, `std::invalid_argument` for a tensor whose
/// values are not as many as its shape gives, a key given twice or a key that is not UTF-8. Source: `safetensors.torch.save_file`.
/// Example: `io::save_safetensors("w.safetensors", {{"weight", {2, 3}, std::span<const float>(w.data(), w.numel())}});`
inline void save_safetensors(const std::string& path, const std::vector<safetensors_tensor>& tensors) {
    namespace json = shaped::detail::json;
    std::vector<std::string_view> keys;
    for (const auto& t : tensors) keys.push_back(t.name);
    std::sort(keys.begin(), keys.end());
    if (const auto twice = std::adjacent_find(keys.begin(), keys.end()); twice != keys.end())
        throw std::invalid_argument("shaped::io::save_safetensors: the key " + std::string(*twice) + " is given twice");
    std::string text = "{";
    std::size_t offset = 0;
    for (const auto& t : tensors) {
        std::size_t n = 1;
        for (auto d : t.shape) n *= d;
        if (n != t.values.size())
            throw std::invalid_argument("shaped::io::save_safetensors: " + t.name + " has " +
                                        std::to_string(t.values.size()) + " values for the shape " +
                                        detail::dims_text(t.shape));
        std::string key = json::quote(t.name);
        try {
            json::reader(key, 0).skip();
        } catch (const json::error&) {
            throw std::invalid_argument("shaped::io::save_safetensors: the key " + detail::shown(t.name) + " is not UTF-8");
        }
        if (text.size() > 1) text += ',';
        text += key + ":{\"dtype\":\"F32\",\"shape\":[";
        for (std::size_t i = 0; i < t.shape.size(); ++i) text += (i ? "," : "") + std::to_string(t.shape[i]);
        text += "],\"data_offsets\":[" + std::to_string(offset) + "," + std::to_string(offset + 4 * n) + "]}";
        offset += 4 * n;
    }
    text += '}';
    text.append((8 - text.size() % 8) % 8, ' ');
    std::ofstream out(path, std::ios::binary);
    const std::uint64_t n = text.size();
    out.write(reinterpret_cast<const char*>(&n), 8);
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    for (const auto& t : tensors)
        out.write(reinterpret_cast<const char*>(t.values.data()), static_cast<std::streamsize>(4 * t.values.size()));
    if (!out) throw file_error("save_safetensors", path, "cannot write");
}

}  // namespace shaped::io

#endif
