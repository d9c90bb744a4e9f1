// libFuzzer target: any bytes as a .npy file. Every input is read by io::load_npy into tensors of each
// element type the loader takes, on run-time axes of rank 1 and 2 (so that any shape the header states can
// be the type's); it must load, or throw file_error or shape_error, never crash or read out of bounds.
// An input is counted as accepted when it loads as one of those tensors.
// Built and run by run.py (meson test --suite fuzz).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>

#include "fuzz_common.hpp"

#include <shaped/io/npy.hpp>

namespace {
struct rows : shaped::dynamic_axis<"rows"> {};
struct cols : shaped::dynamic_axis<"cols"> {};
struct six : shaped::axis<"six", 6> {};

template <class V, class... Axes>
bool attempt(const std::string& bytes) {
    std::istringstream in(bytes);
    try {
        const auto t = shaped::io::load_npy<V, Axes...>(in, "input.npy");
        // What was loaded is what the header says, and fills the input exactly.
        std::istringstream again(bytes);
        const auto h = shaped::io::read_npy_header(again, bytes.size(), "input.npy");
        FUZZ_CHECK(h.shape.size() == sizeof...(Axes));
        for (std::size_t d = 0; d < h.shape.size(); ++d) FUZZ_CHECK(t.shape.extent(d) == h.shape[d]);
        FUZZ_CHECK(h.data_offset + t.numel() * sizeof(V) == bytes.size());
        // Every element is readable: their bytes are folded together (as bytes, since an integer sum of
        // the file's values could overflow).
        volatile unsigned char fold = 0;
        const auto* bytes_read = reinterpret_cast<const unsigned char*>(t.data());
        for (std::size_t i = 0; i < t.numel() * sizeof(V); ++i) fold = static_cast<unsigned char>(fold ^ bytes_read[i]);
        (void)fold;
        return true;
    } catch (const shaped::io::file_error&) {
    } catch (const shaped::shape_error&) {
    }
    return false;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string bytes(reinterpret_cast<const char*>(data), size);
    // Every attempt runs, whatever the others gave.
    const int loaded = int{attempt<float, rows, cols>(bytes)} + int{attempt<float, rows>(bytes)} +
                       int{attempt<double, rows, six>(bytes)} + int{attempt<std::int64_t, rows, cols>(bytes)};
    ++(loaded > 0 ? counts.accepted : counts.refused);
    return 0;
}
