#ifndef SHAPED_OPS_SOFTMAX_HPP
#define SHAPED_OPS_SOFTMAX_HPP

/// \file
/// `softmax` over one axis.

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <limits>
#include <utility>
#include <type_traits>
#include <xsimd/xsimd.hpp>
#include <xtensor/xtensor.hpp>

#include "../detail/vector_math.hpp"
#include "../diagnostics.hpp"
#include "../shape.hpp"
#include "../tensor_fwd.hpp"
#include "../threads.hpp"

namespace shaped {

namespace detail {
// The rest of a softmax over one contiguous row whose maximum is `mx` and whose elements outside
// [lo, hi) are -inf: exp(x - mx), their sum, one division per element, on SIMD vectors as PyTorch's
// vectorised softmax kernel does: for float, the widest the CPU has, chosen at run time
// (detail/vector_math.hpp); for double, xsimd's batches at the width the compiler flags allow. Under a
// finite maximum a -inf element gives exactly 0, so the elements outside [lo, hi) are set to 0 without
// either step: on causal scores that is half of every row.
template <class Value>
void softmax_finish(Value* row, std::size_t len, Value mx, std::size_t lo, std::size_t hi) {
    constexpr Value minus_inf = -std::numeric_limits<Value>::infinity();
    if (mx == minus_inf) {  // an all -inf row: exp(nan) everywhere, NaN as in PyTorch
        Value sum = 0;
        for (std::size_t j = 0; j < len; ++j) sum += (row[j] = std::exp(row[j] - mx));
        for (std::size_t j = 0; j < len; ++j) row[j] /= sum;
        return;
    }
    Value sum;
    if constexpr (std::is_same_v<Value, float>) {
        sum = vmath::exp_shift_sum(row + lo, hi - lo, mx);
    } else {
        using batch = xsimd::batch<Value>;
        constexpr std::size_t width = batch::size;
        const batch max_b(mx);
        batch sum_b(Value(0));
        std::size_t j = lo;
        for (; j + width <= hi; j += width) {
            const batch e = xsimd::exp(batch::load_unaligned(row + j) - max_b);
            e.store_unaligned(row + j);
            sum_b += e;
        }
        sum = xsimd::hadd(sum_b);
        for (; j < hi; ++j) sum += (row[j] = row[j] == minus_inf ? Value(0) : std::exp(row[j] - mx));
    }
    std::fill(row, row + lo, Value(0));
    std::fill(row + hi, row + len, Value(0));
    if (sum != sum) {  // a NaN in the row (or +inf): every element becomes NaN through the division
        lo = 0;
        hi = len;
    }
    if constexpr (std::is_same_v<Value, float>) {
        vmath::apply(row + lo, hi - lo, vmath::divide_by{sum});  // exact: the same bits at any width
    } else {
        using batch = xsimd::batch<Value>;
        constexpr std::size_t width = batch::size;
        const batch sum_all(sum);
        std::size_t j = lo;
        for (; j + width <= hi; j += width) (batch::load_unaligned(row + j) / sum_all).store_unaligned(row + j);
        for (; j < hi; ++j) row[j] /= sum;
    }
}

// The maximum of a contiguous row, and the bounds [lo, hi) of its elements that are not -inf.
template <class Value>
Value row_max(const Value* row, std::size_t len, std::size_t& lo, std::size_t& hi) {
    constexpr Value minus_inf = -std::numeric_limits<Value>::infinity();
    Value mx = minus_inf;
    lo = len;
    hi = 0;
    for (std::size_t j = 0; j < len; ++j) {
        mx = std::max(mx, row[j]);
        if (row[j] != minus_inf) {
            lo = std::min(lo, j);
            hi = j + 1;
        }
    }
    if (lo > hi) lo = hi;
    return mx;
}
}  // namespace detail

/// `exp(x) / sum(exp(x))` along dimension `Dim` (negative counts from the end), computed as
/// `exp(x - max)` for stability, as PyTorch does.
///
/// Shapes: unchanged; each slice along `Dim` sums to 1. Element type: float or double. A slice that is
/// all `-inf` (a fully masked row) gives NaN, as in PyTorch.
/// Errors: compile time, `Dim` outside `[-rank, rank - 1]`; a tensor with a `key<...>` axis (attention
/// scores) normalised over any other axis. Nothing is thrown.
/// Source: `torch.softmax(x, dim)`; `torch.softmax(attn_scores / keys.shape[-1]**0.5, dim=-1)` (listing 3.5).
/// Example: `auto attn_weights = shaped::softmax<-1>(attn_scores);`
template <int Dim, class Value, class Layout, Axis... Axes>
auto softmax(basic_tensor<Value, Layout, Axes...> x) {
    static_assert(std::is_floating_point_v<Value>, "shaped::softmax<Dim>(x): elements must be float or double");
    constexpr std::size_t n = sizeof...(Axes);
    constexpr bool ok = detail::dim_in_range(Dim, n) && std::is_floating_point_v<Value>;
    static_assert(diag::expect<detail::dim_in_range(Dim, n), diag::dims<Dim>, detail::described<diag::tensor_axes, Axes...>>,
                  "shaped::softmax<Dim>(x): dimension out of range; a tensor of rank n takes dimensions -n to n-1");
    if constexpr (ok) {
        constexpr std::size_t d = detail::wrap_dim(Dim, n);
        constexpr bool over_keys = !(detail::is_key<Axes> || ...) || detail::is_key<detail::axis_at_t<d, Axes...>>;
        static_assert(diag::expect<over_keys, diag::dims<Dim>, detail::described<diag::tensor_axes, Axes...>>,
                      "shaped::softmax<Dim>(scores): attention weights are normalised over the keys; take the "
                      "softmax over the key<...> axis (dim=-1 of the scores), not over the queries or the heads");
        // Rows along `d` are visited in place as (outer, d, inner): max, exp(x - max) and its sum, then one
        // division per element (PyTorch's order). Plain loops: xtensor's keep_dims reducers are several
        // times slower here, and broadcast wrongly when left unevaluated (xtensor 0.24).
        const auto extent = x.shape.sizes();
        const std::size_t len = extent[d];
        std::size_t inner = 1;
        for (std::size_t i = d + 1; i < n; ++i) inner *= extent[i];
        const std::size_t outer = x.numel() / (len * inner);
        const auto e = x.shape;
        tensor<Value, Axes...> result(detail::adopt_tag{}, e, std::move(x).storage());
        Value* p = result.data();
        if (inner == 1) {  // contiguous rows, independent: shared among shaped's threads on large inputs
            const std::size_t grain = std::max<std::size_t>(1, std::size_t{32768} / std::max<std::size_t>(len, 1));
            detail::parallel_for(outer, grain, [&](std::size_t o0, std::size_t o1) {
                for (std::size_t o = o0; o < o1; ++o) {
                    std::size_t lo, hi;
                    Value* row = p + o * len;
                    const Value mx = detail::row_max(row, len, lo, hi);
                    detail::softmax_finish(row, len, mx, lo, hi);
                }
            });
            return result;
        }
        for (std::size_t o = 0; o < outer; ++o)
            for (std::size_t i = 0; i < inner; ++i) {
                Value* row = p + o * len * inner + i;
                Value mx = -std::numeric_limits<Value>::infinity();
                for (std::size_t j = 0; j < len; ++j) mx = std::max(mx, row[j * inner]);
                Value sum = 0;
                for (std::size_t j = 0; j < len; ++j) sum += (row[j * inner] = std::exp(row[j * inner] - mx));
                for (std::size_t j = 0; j < len; ++j) row[j * inner] /= sum;
            }
        return result;
    } else {
        return diag::failed_shape_check{};
    }
}

/// `softmax` over the axis named `A`, which `x` must have exactly once.
/// Shapes, element type, source: as the positional form. Errors: compile time, `A` absent or repeated.
template <Axis A, class Value, class Layout, Axis... Axes>
auto softmax(basic_tensor<Value, Layout, Axes...> x) {
    constexpr bool ok = detail::count_of_v<A, Axes...> == 1;
    static_assert(
        diag::expect<ok, detail::described<diag::expected_axes, A>, detail::described<diag::tensor_axes, Axes...>>,
        "shaped::softmax<A>(x): the named axis must appear exactly once in x");
    if constexpr (ok)
        return softmax<static_cast<int>(detail::index_of<A, Axes...>())>(std::move(x));
    else
        return diag::failed_shape_check{};
}

/// `log(softmax(x))` along the axis named `A` (or at dimension `Dim`), computed as `x - max - log(sum(exp(x -
/// max)))`, as PyTorch does, so that it stays finite where `softmax` underflows to 0.
///
/// Shapes: unchanged, contiguous. Element type: float or double; the sum of exponentials is taken in the
/// element type, so results agree with PyTorch's to the element type's rounding (not bit for bit). A slice
/// that is all `-inf` gives NaN, as in PyTorch.
/// Errors: compile time, `A` absent or repeated, `Dim` out of range. Nothing is thrown.
/// Source: `torch.log_softmax(x, dim)`; the first step of `torch.nn.functional.cross_entropy`.
/// Example: `auto log_probas = shaped::log_softmax<vocab_size>(logits);`
template <int Dim, class Value, class Layout, Axis... Axes>
auto log_softmax(basic_tensor<Value, Layout, Axes...> x) {
    static_assert(std::is_floating_point_v<Value>, "shaped::log_softmax<Dim>(x): elements must be float or double");
    constexpr std::size_t n = sizeof...(Axes);
    constexpr bool ok = detail::dim_in_range(Dim, n) && std::is_floating_point_v<Value>;
    static_assert(diag::expect<detail::dim_in_range(Dim, n), diag::dims<Dim>, detail::described<diag::tensor_axes, Axes...>>,
                  "shaped::log_softmax<Dim>(x): dimension out of range; a tensor of rank n takes dimensions -n to n-1");
    if constexpr (ok) {
        constexpr std::size_t d = detail::wrap_dim(Dim, n);
        const auto extent = x.shape.sizes();
        const std::size_t len = extent[d];
        std::size_t inner = 1;
        for (std::size_t i = d + 1; i < n; ++i) inner *= extent[i];
        const std::size_t outer = x.numel() / (len * inner);
        const auto e = x.shape;
        tensor<Value, Axes...> result(detail::adopt_tag{}, e, std::move(x).storage());
        Value* p = result.data();
        for (std::size_t o = 0; o < outer; ++o)
            for (std::size_t i = 0; i < inner; ++i) {
                Value* row = p + o * len * inner + i;
                Value mx = -std::numeric_limits<Value>::infinity();
                for (std::size_t j = 0; j < len; ++j) mx = std::max(mx, row[j * inner]);
                Value sum = 0;
                for (std::size_t j = 0; j < len; ++j) sum += std::exp(row[j * inner] - mx);
                const Value shift = mx + std::log(sum);
                for (std::size_t j = 0; j < len; ++j) row[j * inner] -= shift;
            }
        return result;
    } else {
        return diag::failed_shape_check{};
    }
}
/// `log_softmax` over the axis named `A`, which `x` must have exactly once (see above).
template <Axis A, class Value, class Layout, Axis... Axes>
auto log_softmax(basic_tensor<Value, Layout, Axes...> x) {
    constexpr bool ok = detail::count_of_v<A, Axes...> == 1;
    static_assert(
        diag::expect<ok, detail::described<diag::expected_axes, A>, detail::described<diag::tensor_axes, Axes...>>,
        "shaped::log_softmax<A>(x): the named axis must appear exactly once in x");
    if constexpr (ok)
        return log_softmax<static_cast<int>(detail::index_of<A, Axes...>())>(std::move(x));
    else
        return diag::failed_shape_check{};
}

/// After a failed shape check, no further errors (see `diag::failed_shape_check`).
template <auto>
diag::failed_shape_check softmax(diag::failed_shape_check) {
    return {};
}
template <class>
diag::failed_shape_check softmax(diag::failed_shape_check) {
    return {};
}

}  // namespace shaped

#endif
