#ifndef SHAPED_OPS_MATH_HPP
#define SHAPED_OPS_MATH_HPP

/// \file
/// Elementwise functions: `exp`, `log`, `sqrt`, `rsqrt`, `tanh`, `pow` (scalar exponent), `abs`, `relu`,
/// `sigmoid`, `silu` and the tanh approximation of GELU, as the book writes it (`gelu`) and as PyTorch's
/// kernel computes it (`gelu_tanh`). Float `exp`, `tanh`, `sigmoid`, `silu`, `gelu` and `gelu_tanh` run on the
/// widest vectors the CPU has, chosen at run time, and on shaped's threads for large tensors
/// (detail/vector_math.hpp); the rest, and double elements, on xsimd's batches at the compile flags' width.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <type_traits>
#include <utility>
#include <xsimd/xsimd.hpp>

#include "../detail/vector_math.hpp"
#include "../shape.hpp"
#include "../tensor_fwd.hpp"
#include "../threads.hpp"

namespace shaped {

namespace detail {

// y = f(x) for every element, f written once for xsimd batches: whole batches in place, then the last
// partial batch through a padded copy, so that every element goes through the same code. A temporary's
// buffer becomes the result's.
template <class Value, class Layout, Axis... Axes, class F>
auto map_elements(basic_tensor<Value, Layout, Axes...> x, F f) {
    static_assert(std::is_same_v<Value, float> || std::is_same_v<Value, double>,
                  "shaped: elementwise functions take float or double elements");
    using batch = xsimd::batch<Value>;
    constexpr std::size_t width = batch::size;
    const auto e = x.shape;
    typename tensor<Value, Axes...>::storage_type s = std::move(x).storage();  // row-major
    Value* p = s.data();
    const std::size_t n = s.size();
    std::size_t i = 0;
    for (; i + width <= n; i += width) f(batch::load_unaligned(p + i)).store_unaligned(p + i);
    if (i < n) {
        alignas(64) Value tail[width] = {};
        std::copy(p + i, p + n, tail);
        f(batch::load_unaligned(tail)).store_unaligned(tail);
        std::copy(tail, tail + (n - i), p + i);
    }
    return tensor<Value, Axes...>(adopt_tag{}, e, std::move(s));
}

// e^x and tanh in place: on xsimd's batches (double elements), or on the vectors of vector_math.hpp (float).
template <class T, class A>
void exp_in_place(xsimd::batch<T, A>& b) {
    b = xsimd::exp(b);
}
template <class F>
[[gnu::always_inline]] inline void exp_in_place(F& x) {
    vmath::exp(x);
}
template <class T, class A>
void tanh_in_place(xsimd::batch<T, A>& b) {
    b = xsimd::tanh(b);
}
template <class F>
[[gnu::always_inline]] inline void tanh_in_place(F& x) {
    vmath::tanh(x);
}

// As map_elements for an `op` that updates its argument in place and uses only arithmetic, comparisons,
// exp_in_place and tanh_in_place, so that it runs on any vector: float elements on the widest vectors the
// CPU has (chosen at run time, vector_math.hpp), in blocks shared among shaped's threads on large tensors
// (an elementwise function gives the same bits at any split); double elements on xsimd's batches.
template <class Value, class Layout, Axis... Axes, class Op>
auto map_lanes(basic_tensor<Value, Layout, Axes...> x, const Op& op) {
    if constexpr (std::is_same_v<Value, float>) {
        const auto e = x.shape;
        typename tensor<Value, Axes...>::storage_type s = std::move(x).storage();  // row-major
        float* p = s.data();
        parallel_for(s.size(), std::size_t{1} << 16, [&](std::size_t b, std::size_t end) { vmath::apply(p + b, end - b, op); });
        return tensor<Value, Axes...>(adopt_tag{}, e, std::move(s));
    } else {
        return map_elements(std::move(x), [&op](auto b) {
            op(b);
            return b;
        });
    }
}

}  // namespace detail

/// `e^x` elementwise. Shapes: unchanged (contiguous result). Element type: float or double. Errors: none.
/// Source: `torch.exp`. Within 1.2 units in the last place of the exact value for float (0 below ln FLT_MIN,
/// where PyTorch gives subnormals), xsimd's exp for double.
template <class V, class L, Axis... X>
auto exp(basic_tensor<V, L, X...> x) {
    return detail::map_lanes(std::move(x), [](auto& b) SHAPED_INLINE_LAMBDA { detail::exp_in_place(b); });
}
/// The natural logarithm elementwise (NaN below 0, -inf at 0). As `exp`. Source: `torch.log`.
template <class V, class L, Axis... X>
auto log(basic_tensor<V, L, X...> x) {
    return detail::map_elements(std::move(x), [](auto b) { return xsimd::log(b); });
}
/// The square root elementwise (correctly rounded). As `exp`. Source: `torch.sqrt`.
template <class V, class L, Axis... X>
auto sqrt(basic_tensor<V, L, X...> x) {
    return detail::map_elements(std::move(x), [](auto b) { return xsimd::sqrt(b); });
}
/// `1 / sqrt(x)` elementwise, divided exactly. As `exp`. Source: `torch.rsqrt`.
template <class V, class L, Axis... X>
auto rsqrt(basic_tensor<V, L, X...> x) {
    return detail::map_elements(std::move(x), [](auto b) { return decltype(b)(1) / xsimd::sqrt(b); });
}
/// The hyperbolic tangent elementwise. As `exp`. Source: `torch.tanh`.
template <class V, class L, Axis... X>
auto tanh(basic_tensor<V, L, X...> x) {
    return detail::map_lanes(std::move(x), [](auto& b) SHAPED_INLINE_LAMBDA { detail::tanh_in_place(b); });
}
/// |x| elementwise. As `exp`. Source: `torch.abs`.
template <class V, class L, Axis... X>
auto abs(basic_tensor<V, L, X...> x) {
    return detail::map_elements(std::move(x), [](auto b) { return xsimd::abs(b); });
}
/// `max(x, 0)` elementwise; NaN stays NaN. As `exp`. Source: `torch.relu`.
template <class V, class L, Axis... X>
auto relu(basic_tensor<V, L, X...> x) {
    return detail::map_elements(std::move(x), [](auto b) { return xsimd::select(b < decltype(b)(0), decltype(b)(0), b); });
}

/// `x` to the power `p` elementwise; 2 and 3 are products, as PyTorch computes them (`x * x`, `x * x * x`),
/// 0.5 a square root, other exponents `std::pow`'s xsimd counterpart. Shapes: unchanged. Element type:
/// float or double. Errors: none. Source: `torch.pow(x, p)`; `torch.pow(x, 3)` in the book's `GELU`.
template <class V, class L, Axis... X>
auto pow(basic_tensor<V, L, X...> x, std::type_identity_t<V> p) {
    if (p == V(2)) return detail::map_elements(std::move(x), [](auto b) { return b * b; });
    if (p == V(3)) return detail::map_elements(std::move(x), [](auto b) { return b * b * b; });
    if (p == V(0.5)) return detail::map_elements(std::move(x), [](auto b) { return xsimd::sqrt(b); });
    return detail::map_elements(std::move(x), [p](auto b) { return xsimd::pow(b, decltype(b)(p)); });
}

/// The tanh approximation of GELU, step for step as the book's `GELU` computes it in float:
/// `0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3)))`, within 4 units in the last place of PyTorch's
/// (tanh is shaped's own; on AVX2/AVX-512 the compiler may fuse a multiply and an add).
/// Shapes: unchanged. Element type: float or double. Errors: none.
/// Source: the book's `GELU` (chapter 4). `torch.nn.functional.gelu(x, approximate="tanh")` computes the same
/// formula with its constant rounded otherwise: that one is `gelu_tanh`.
template <class V, class L, Axis... X>
auto gelu(basic_tensor<V, L, X...> x) {
    // torch.sqrt(torch.tensor(2.0 / torch.pi)): the double quotient rounded to the element type, then its root.
    const V c = std::sqrt(static_cast<V>(2.0 / 3.14159265358979323846));
    return detail::map_lanes(std::move(x), [c](auto& b) SHAPED_INLINE_LAMBDA {
        using batch = std::remove_reference_t<decltype(b)>;
        const batch cube = b * b * b;
        const batch inner = b + static_cast<V>(0.044715) * cube;
        batch t = c * inner;
        detail::tanh_in_place(t);
        b = V(0.5) * b * (V(1) + t);
    });
}

/// The tanh approximation of GELU as PyTorch's kernel computes it: `0.5 * x * (1 + tanh(k * (x + 0.044715 *
/// x^3)))` with `k = sqrt(2) * (2 / sqrt(pi)) * 0.5` rounded once from double. It differs from `gelu` (the
/// book's steps) by the rounding of `k`, which for large negative `x`, where `1 + tanh(...)` cancels, is tens
/// of units in the last place of a result near zero. Shapes: unchanged (contiguous result). Element type:
/// float or double. Errors: none. Source: `torch.nn.functional.gelu(x, approximate="tanh")`, Gemma 3's
/// feed-forward gate (the book's ch05/12_gemma3 `FeedForward`).
template <class V, class L, Axis... X>
auto gelu_tanh(basic_tensor<V, L, X...> x) {
    return detail::map_lanes(std::move(x), [](auto& b) SHAPED_INLINE_LAMBDA {
        using batch = std::remove_reference_t<decltype(b)>;
        constexpr V beta = static_cast<V>(1.41421356237309504880 * 1.12837916709551257390 * 0.5);  // M_SQRT2 * M_2_SQRTPI * 0.5
        const batch cube = b * b * b;
        batch inner = beta * (b + static_cast<V>(0.044715) * cube);
        detail::tanh_in_place(inner);
        b = V(0.5) * b * (V(1) + inner);
    });
}

/// The logistic function `1 / (1 + e^-x)` elementwise: 0 and 1 at the infinities, NaN stays NaN.
/// Shapes: unchanged (contiguous result). Element type: float or double. Errors: none.
/// Source: `torch.sigmoid` (exp within 1.2 units in the last place for float, as `exp`).
template <class V, class L, Axis... X>
auto sigmoid(basic_tensor<V, L, X...> x) {
    return detail::map_lanes(std::move(x), [](auto& b) SHAPED_INLINE_LAMBDA {
        using batch = std::remove_reference_t<decltype(b)>;
        batch e = -b;
        detail::exp_in_place(e);
        b = V(1) / (V(1) + e);
    });
}

/// SiLU (swish), `x * sigmoid(x)`, computed as PyTorch's CPU kernel computes it, `x / (1 + e^-x)`: the gate
/// of Llama's, Qwen's and Mistral's feed-forward layers. Shapes: unchanged (contiguous result). Element type:
/// float or double. Errors: none. Source: `torch.nn.functional.silu`; the book's Llama 3 and Qwen3
/// `FeedForward` (`silu(fc1(x)) * fc2(x)`).
template <class V, class L, Axis... X>
auto silu(basic_tensor<V, L, X...> x) {
    return detail::map_lanes(std::move(x), [](auto& b) SHAPED_INLINE_LAMBDA {
        using batch = std::remove_reference_t<decltype(b)>;
        batch e = -b;
        detail::exp_in_place(e);
        b = b / (V(1) + e);
    });
}

}  // namespace shaped

#endif
