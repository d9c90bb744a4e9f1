#ifndef SHAPED_TORCH_NORMAL_HPP
#define SHAPED_TORCH_NORMAL_HPP

/// \file
/// `torch.randn` and `Tensor.normal_`, bit for bit with PyTorch 1.13 on the CPU (the AVX2 kernels that
/// Debian's build runs), so that `nn.Embedding` initialises as in PyTorch for the same seed.

#include <cmath>
#include <cstddef>
#include <mutex>
#include <type_traits>

#include "../detail/cephes_float.hpp"
#include "../tensor_fwd.hpp"
#include "generator.hpp"

namespace shaped::torch {

namespace detail {

// PyTorch's vectorised path for float (`normal_fill_AVX2`): Box-Muller on sixteen uniforms at a time,
// u1 = 1 - data[j] and u2 = data[j + 8], with the Cephes logarithm and sine/cosine in single precision.
inline void normal_fill_16(float* data, float mean, float std) {
    const float two_pi = static_cast<float>(2.0 * 3.14159265358979323846);
    for (int j = 0; j < 8; ++j) {
        const float radius = std::sqrt(-2.0f * shaped::detail::cephes::log(1.0f - data[j]));
        float s, c;
        shaped::detail::cephes::sincos(two_pi * data[j + 8], s, c);
        data[j] = std::fma(radius * c, std, mean);
        data[j + 8] = std::fma(radius * s, std, mean);
    }
}

// PyTorch's path for double (`normal_fill<double>`): the same scheme with the C library's functions.
inline void normal_fill_16(double* data, double mean, double std) {
    for (int j = 0; j < 8; ++j) {
        const double u1 = 1 - data[j];
        const double u2 = data[j + 8];
        const double radius = std::sqrt(-2 * std::log(u1));
        const double theta = 2.0 * 3.14159265358979323846 * u2;
        data[j] = std::fma(radius * std::cos(theta), std, mean);
        data[j + 8] = std::fma(radius * std::sin(theta), std, mean);
    }
}

template <class Value>
Value uniform_01(generator& gen) {
    if constexpr (std::is_same_v<Value, float>)
        return gen.uniform_float(0.0f, 1.0f);
    else
        return gen.uniform_double(0.0, 1.0);
}

// All n uniforms first, then every whole block of 16 transformed; when n is not a multiple of 16, sixteen
// fresh uniforms for the last 16 elements, transformed again (PyTorch's `normal_fill`).
template <class Value>
void normal_fill(Value* data, std::size_t n, Value mean, Value std, generator& gen) {
    for (std::size_t i = 0; i < n; ++i) data[i] = uniform_01<Value>(gen);
    for (std::size_t i = 0; i + 16 <= n; i += 16) normal_fill_16(data + i, mean, std);
    if (n % 16 != 0) {
        Value* tail = data + n - 16;
        for (std::size_t i = 0; i < 16; ++i) tail[i] = uniform_01<Value>(gen);
        normal_fill_16(tail, mean, std);
    }
}

}  // namespace detail

/// Fills `x` in place with normal values of mean `mean` and standard deviation `std` from `gen`.
///
/// Shapes: any. Element type: float or double. Errors: none. Nothing is thrown.
/// Source: `torch.Tensor.normal_(mean, std)` in PyTorch 1.13 on the CPU (ATen's `normal_kernel`): a
/// contiguous tensor of 16 elements or more takes the vectorised Box-Muller fill (for float, the AVX2
/// kernel's Cephes functions, reproduced bit for bit); a smaller or strided one takes one
/// `at::normal_distribution<double>` draw per element in memory order, which uses the generator's cached
/// second value of a pair. PyTorch built for CPUs without AVX2, or run with another ATEN_CPU_CAPABILITY,
/// draws the float vectorised path differently.
/// Example: `shaped::torch::normal_(weight, 0.0, 0.02);`
template <class Value, class Layout, Axis... Axes>
void normal_(basic_tensor<Value, Layout, Axes...>& x, double mean = 0.0, double std = 1.0,
             generator& gen = default_generator()) {
    static_assert(std::is_same_v<Value, float> || std::is_same_v<Value, double>,
                  "shaped::torch::normal_: elements must be float or double");
    Value* p = x.data();
    const std::size_t n = x.numel();
    const std::lock_guard<std::mutex> lock(gen.mutex());
    if (x.is_contiguous && n >= 16) {
        detail::normal_fill<Value>(p, n, static_cast<Value>(mean), static_cast<Value>(std), gen);
    } else {
        for (std::size_t i = 0; i < n; ++i) p[i] = static_cast<Value>(std::fma(gen.normal_double(), std, mean));
    }
}

/// `torch.randn(*size)`: float32 standard normal values, PyTorch's for the same seed (see `normal_`).
///
/// Shapes: `(Axes...)`; a run-time axis takes its extent from the numbers given, one per run-time axis in
/// order, as for `rand`. Element type: float. Errors: compile time, a count of numbers other than the
/// number of run-time axes. Thrown (`shape_error`): a number outside `1..bound` of its axis.
/// Source: `torch.randn`.
/// Example: `shaped::torch::manual_seed(123); auto w = shaped::torch::randn<vocab_size, emb_dim>();`
template <Axis... Axes>
tensor<float, Axes...> randn(const extents<Axes...>& shape, generator& gen = default_generator()) {
    tensor<float, Axes...> t(shape, uninitialized);
    normal_(t, 0.0, 1.0, gen);
    return t;
}
/// From `gen`, the run-time extents as numbers: `torch::randn<batch, num_tokens, d_in>(g, 2, n)`.
template <Axis... Axes, shaped::detail::extent_number... N>
    requires(sizeof...(N) == extents<Axes...>::rank_dynamic)
tensor<float, Axes...> randn(generator& gen, N... n) {
    return randn(extents<Axes...>::checked("torch::randn", n...), gen);
}
/// From the default generator, the run-time extents as numbers: `torch::randn<batch, num_tokens, d_in>(2, n)`.
template <Axis... Axes, shaped::detail::extent_number... N>
    requires(sizeof...(N) == extents<Axes...>::rank_dynamic)
tensor<float, Axes...> randn(N... n) {
    return randn(extents<Axes...>::checked("torch::randn", n...), default_generator());
}

}  // namespace shaped::torch

#endif
