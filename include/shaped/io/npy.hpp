#ifndef SHAPED_IO_NPY_HPP
#define SHAPED_IO_NPY_HPP

/// \file
/// `io::load_npy`: a tensor from a NumPy `.npy` file (what `np.save(path, tensor.numpy())` writes), its header
/// read with xtensor's `.npy` reader and checked against the file's size before any element is read.

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <fstream>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>
#include <xtensor/xnpy.hpp>
#include <xtensor/xtensor.hpp>

#include "../diagnostics.hpp"
#include "../tensor.hpp"
#include "file_error.hpp"

namespace shaped::io {

namespace detail {
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

/// The tensor stored in the `.npy` file at `path`, whose shape must be the type's.
///
/// Shapes: `(Axes...)`; a run-time axis takes the file's extent, checked against its bound. Element type:
/// float (`<f4`), double (`<f8`) or `std::int64_t` (`<i8`), little-endian, in C order.
/// Errors: thrown, `file_error` naming the file when it cannot be opened, is not a `.npy` file (magic,
/// version, header), holds another dtype, is in Fortran order, or has more or fewer bytes than its header
/// gives (a truncated file is refused before anything is read or allocated); `shape_error` naming the file
/// and both shapes when the extents are not the type's.
/// Source: `numpy.save` / `numpy.load`; xtensor's `xt::load_npy` reads the header.
/// Example: `auto w = shaped::io::load_npy<float, d_out, d_in>("W_query.npy");`
template <class V, Axis... Axes>
tensor<V, Axes...> load_npy(const std::string& path) {
    static_assert(std::is_same_v<V, float> || std::is_same_v<V, double> || std::is_same_v<V, std::int64_t>,
                  "shaped::io::load_npy: float, double or std::int64_t elements");
    std::ifstream in(path, std::ios::binary | std::ios::ate);
    if (!in) throw file_error("load_npy", path, "cannot open");
    const auto size = static_cast<std::size_t>(in.tellg());
    in.seekg(0);
    std::string header;
    unsigned char major = 0, minor = 0;
    try {
        xt::detail::read_magic(in, &major, &minor);
        if (major == 1 && minor == 0)
            header = xt::detail::read_header_1_0(in);
        else if (major == 2 && minor == 0)
            header = xt::detail::read_header_2_0(in);
        else
            throw std::runtime_error("unsupported version " + std::to_string(major) + "." + std::to_string(minor));
    } catch (const std::exception& e) {
        throw file_error("load_npy", path, std::string("not a .npy file (") + e.what() + ")");
    }
    if (!in) throw file_error("load_npy", path, "not a .npy file (the header runs past the end of the file)");
    std::string descr;
    bool fortran = false;
    std::vector<std::size_t> shape;
    try {
        xt::detail::parse_header(header, descr, &fortran, shape);
    } catch (const std::exception& e) {
        throw file_error("load_npy", path, std::string("the header is not a .npy header (") + e.what() + ")");
    }
    if (descr != detail::npy_descr<V>())
        throw file_error("load_npy", path, "the elements are " + descr + "; this tensor takes " + detail::npy_descr<V>());
    if (fortran) throw file_error("load_npy", path, "the elements are in Fortran order; save a C-ordered array");
    std::size_t n = sizeof(V);
    for (auto d : shape) {
        if (d != 0 && n > size / d) {
            n = size + 1;  // more than the file holds, however large the header says
            break;
        }
        n *= d;
    }
    const auto data_at = static_cast<std::size_t>(in.tellg());
    if (data_at > size || n != size - data_at)
        throw file_error("load_npy", path,
                         "the header's shape " + shaped::detail::format_extents(shape) + " of " + descr + " needs " +
                             (n > size ? std::string("more bytes than the file has") : std::to_string(n) + " bytes") +
                             ", and the file holds " + std::to_string(data_at > size ? 0 : size - data_at));
    constexpr std::size_t rank = sizeof...(Axes);
    if (shape.size() != rank)
        throw shape_error("io::load_npy(" + path + ")", std::to_string(rank) + " axes",
                          shaped::detail::format_extents(shape));
    std::array<std::size_t, rank> extents{};
    std::copy(shape.begin(), shape.end(), extents.begin());
    typename tensor<V, Axes...>::storage_type values(extents);
    in.read(reinterpret_cast<char*>(values.data()), static_cast<std::streamsize>(n));
    if (!in) throw file_error("load_npy", path, "cannot read the elements");
    try {
        return tensor<V, Axes...>(std::move(values));
    } catch (const shape_error& e) {
        throw shape_error("io::load_npy(" + path + ")", e.expected(), e.actual());
    }
}

}  // namespace shaped::io

#endif
