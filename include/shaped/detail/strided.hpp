#ifndef SHAPED_DETAIL_STRIDED_HPP
#define SHAPED_DETAIL_STRIDED_HPP

/// \file
/// Walking a strided tensor's buffer: the offset of an index, and a row-major copy of the elements.

#include <algorithm>
#include <array>
#include <cstddef>
#include <stdexcept>
#include <string>

#include "../diagnostics.hpp"

namespace shaped::detail {

/// Tag for the constructor of a strided tensor over a buffer and its strides.
struct strided_tag {
    explicit strided_tag() = default;
};

template <std::size_t N>
constexpr std::array<std::size_t, N> row_major_strides(const std::array<std::size_t, N>& extent) {
    std::array<std::size_t, N> stride{};
    std::size_t step = 1;
    for (std::size_t k = N; k-- > 0;) {
        stride[k] = step;
        step *= extent[k];
    }
    return stride;
}

// Throws std::out_of_range when an index lies outside its axis; a negative index is reported as given.
[[noreturn, gnu::noinline, gnu::cold]] inline void index_out_of_range(const std::string& index, const std::string& axis,
                                                                       std::size_t dim, std::size_t extent) {
    throw std::out_of_range("shaped::tensor::at: index " + index + " is out of range for axis " + axis + " (dimension " +
                            std::to_string(dim) + "), whose extent is " + std::to_string(extent));
}

// Throws shape_error unless a buffer of `size` elements holds every element that the extents and
// strides reach. The message is built out of line, so that each strided tensor type does not carry it.
[[noreturn, gnu::noinline]] inline void short_strided_buffer(const std::size_t* extent, const std::size_t* stride,
                                                             std::size_t rank, std::size_t needed, std::size_t size,
                                                             bool wraps) {
    std::string extents, strides;
    for (std::size_t k = 0; k < rank; ++k) {
        extents += (k ? ", " : "") + std::to_string(extent[k]);
        strides += (k ? ", " : "") + std::to_string(stride[k]);
    }
    throw shape_error("strided tensor",
                      (wraps ? "more than " + std::to_string(size) : std::to_string(needed)) + " elements for extents (" + extents + ") and strides (" + strides + ")",
                      std::to_string(size) + " elements in the buffer");
}

template <std::size_t N>
void check_strided_buffer(const std::array<std::size_t, N>& extent, const std::array<std::size_t, N>& stride,
                          std::size_t size) {
    // needed = 1 + Σ (extent - 1) · stride, computed so that a huge stride cannot wrap around.
    std::size_t needed = 1;
    bool wraps = false;
    for (std::size_t k = 0; k < N; ++k) {
        if (extent[k] == 0) return;
        const std::size_t reach = extent[k] - 1;
        if (reach != 0 && stride[k] > (size - std::min(needed, size)) / reach) {
            wraps = true;  // more than the buffer holds, whatever the other axes add
            break;
        }
        needed += reach * stride[k];
    }
    if (wraps || needed > size) short_strided_buffer(extent.data(), stride.data(), N, needed, size, wraps);
}

template <std::size_t N>
constexpr std::size_t dot_strides(const std::array<std::size_t, N>& strides, const std::array<std::size_t, N>& index) {
    std::size_t offset = 0;
    for (std::size_t k = 0; k < N; ++k) offset += strides[k] * index[k];
    return offset;
}

// out[i...] = in[Σ i_k · stride_k], out row-major with the given extents. Walks the output in order,
// moving the input offset by the strides, and copies runs along the last axis in a tight loop (a
// general xtensor strided assignment is several times slower here).
template <class Value, std::size_t N>
void gather_strided(const Value* in, Value* out, const std::array<std::size_t, N>& extent,
                    const std::array<std::size_t, N>& stride) {
    if constexpr (N == 0) {
        *out = *in;
    } else {
        std::size_t total = 1;
        for (auto e : extent) total *= e;
        if (total == 0) return;
        const std::size_t run = extent[N - 1], step = stride[N - 1];
        std::array<std::size_t, N> index{};
        std::size_t offset = 0;
        for (std::size_t done = 0; done < total; done += run) {
            const Value* src = in + offset;
            if (step == 1)
                std::copy_n(src, run, out);
            else
                for (std::size_t j = 0; j < run; ++j) out[j] = src[j * step];
            out += run;
            // Advance the index over all but the last axis, carrying like an odometer.
            for (std::size_t k = N - 1; k-- > 0;) {
                offset += stride[k];
                if (++index[k] < extent[k]) break;
                offset -= stride[k] * extent[k];
                index[k] = 0;
            }
        }
    }
}

}  // namespace shaped::detail

#endif
