// libFuzzer target: any bytes as a .safetensors file. The file is opened (every check of the header and the
// offsets), each tensor it lists is read into float, bfloat16, double or int64 elements by its dtype, and a
// small module, and the same with BF16 weights, are loaded from it with load_state_dict: each must succeed, or throw file_error or shape_error,
// never crash or read outside the file. The bytes are given to the loader as a file (a memfd), since it maps
// its input. An input is counted as accepted when the file opens (its header and offsets pass every
// check). Built and run by run.py (meson test --suite fuzz).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include <sys/mman.h>
#include <unistd.h>

#include "fuzz_common.hpp"

#include <shaped/io/state_dict.hpp>
#include <shaped/nn/linear.hpp>

namespace {
struct four : shaped::axis<"four", 4> {};
struct three : shaped::axis<"three", 3> {};
namespace io = shaped::io;

template <class V>
void read_as(const io::safetensors_file& f, const io::safetensors_entry& e) {
    try {
        f.check_dtype<V>(e);
    } catch (const io::file_error&) {
        return;
    }
    std::vector<V> out(e.numel());
    f.read(e, std::span<const std::size_t>(e.shape), "(the file's)", out.data());
}

void attempt(const std::string& path, const std::uint8_t* data, std::size_t size) {
    std::optional<io::safetensors_file> opened;
    try {
        opened.emplace(path);
        ++counts.accepted;
    } catch (const io::file_error&) {
        ++counts.refused;
        return;
    }
    const io::safetensors_file& f = *opened;
    // What an opened file promises: the tensors, in order, fill the data after the header exactly, and each
    // one's bytes are those of its dtype and shape, so every byte read lies inside the input.
    std::uint64_t header = 0;
    std::memcpy(&header, data, 8);
    std::size_t end = 0;
    for (const auto& e : f.entries()) {
        FUZZ_CHECK(e.begin == end && e.end >= e.begin);
        FUZZ_CHECK(f.bytes(e).size() == e.end - e.begin);
        FUZZ_CHECK(e.numel() * io::detail::dtype_size(e.dtype) == e.end - e.begin);
        end = e.end;
    }
    FUZZ_CHECK(8 + header + end == size);
    try {
        for (const auto& e : f.entries()) {
            read_as<float>(f, e);
            read_as<shaped::bfloat16>(f, e);
            read_as<double>(f, e);
            read_as<std::int64_t>(f, e);
        }
        shaped::nn::linear<four, three> layer(shaped::nn::skip_init);
        io::load_state_dict(layer, f);
        shaped::nn::linear<four, three, float, shaped::bfloat16> kept(shaped::nn::skip_init);
        io::load_state_dict(kept, f);
    } catch (const io::file_error&) {
    } catch (const shaped::shape_error&) {
    }
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static const int fd = ::memfd_create("fuzz.safetensors", MFD_CLOEXEC);
    static const std::string path = "/proc/self/fd/" + std::to_string(fd);
    if (fd < 0 || ::ftruncate(fd, 0) != 0 || ::lseek(fd, 0, SEEK_SET) != 0) return 0;
    for (std::size_t done = 0; done < size;) {
        const auto n = ::write(fd, data + done, size - done);
        if (n <= 0) return 0;
        done += static_cast<std::size_t>(n);
    }
    attempt(path, data, size);
    return 0;
}
