#ifndef SHAPED_OPS_REDUCE_HPP
#define SHAPED_OPS_REDUCE_HPP

/// \file
/// Reductions over one named axis: `sum`, `mean`, `var`, `max` and `argmax`, with PyTorch's `keepdim`.

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <utility>

#include "../diagnostics.hpp"
#include "../shape.hpp"
#include "../tensor_fwd.hpp"

namespace shaped {

/// Tag for a reduction that keeps the reduced axis as `reduced<A>` of extent 1 (PyTorch's `keepdim=True`).
struct keepdim_t {
    explicit keepdim_t() = default;
};
/// `x.mean<emb_dim>(shaped::keepdim)` is `x.mean(dim=-1, keepdim=True)`.
inline constexpr keepdim_t keepdim{};

namespace detail {

enum class reduction { sum, mean, var, max, argmax };

// The axes of a reduction's result: the axis at D removed, or replaced by reduced<axis> with keepdim.
template <class Value, std::size_t D, bool Keep, class Idx, class... Axes>
struct reduce_result;
template <class Value, std::size_t D, bool Keep, std::size_t... I, class... Axes>
struct reduce_result<Value, D, Keep, std::index_sequence<I...>, Axes...> {
    template <std::size_t J>
    static auto pick() {
        if constexpr (Keep)
            return hana::type_c<std::conditional_t<J == D, reduced<axis_at_t<D, Axes...>>, axis_at_t<J, Axes...>>>;
        else
            return hana::type_c<axis_at_t<(J < D ? J : J + 1), Axes...>>;
    }
    using type = tensor<Value, typename decltype(pick<I>())::type...>;
    // Where each result axis takes its extents from (none for reduced<...>).
    static constexpr auto sources = [] {
        std::array<axis_source, sizeof...(I)> s{};
        for (std::size_t j = 0; j < sizeof...(I); ++j)
            s[j] = Keep ? (j == D ? axis_source{} : axis_source{0, j}) : axis_source{0, j < D ? j : j + 1};
        return s;
    }();
};

// PyTorch 1.13's CPU sum, in its order of additions, so that sums and means are bit for bit PyTorch's
// (aten/src/ATen/native/cpu/SumKernel.cpp, `cascade_sum`, at the AVX2 capability: 32-byte vectors). The
// elements are added in the element type, in up to four levels of chunks so that only partial sums of
// similar size meet (`multi_row_sum`), four rows at a time (`row_sum`). A reduction over the last axis sums
// each row in vectors, then adds the tail and the lanes; one over another axis sums columns, 32-byte vectors
// of them side by side, then one by one.
template <class T, std::size_t W>
struct sum_lanes {
    std::array<T, W> v{};
    sum_lanes& operator+=(const sum_lanes& o) noexcept {
        for (std::size_t l = 0; l < W; ++l) v[l] += o.v[l];
        return *this;
    }
};

constexpr std::size_t ceil_log2(std::size_t x) noexcept { return x <= 2 ? 1 : std::bit_width(x - 1); }

// `Rows` sums at once over `size` steps; `load(i, k)` is step i of sum k.
template <class Acc, std::size_t Rows, class Load>
std::array<Acc, Rows> multi_row_sum(Load load, std::size_t size) {
    constexpr std::size_t levels = 4;
    const std::size_t power = std::max<std::size_t>(4, ceil_log2(size) / levels), step = std::size_t{1} << power;
    const std::size_t mask = step - 1;
    std::array<std::array<Acc, Rows>, levels> acc{};
    std::size_t i = 0;
    while (i + step <= size) {
        for (std::size_t j = 0; j < step; ++j, ++i)
            for (std::size_t k = 0; k < Rows; ++k) acc[0][k] += load(i, k);
        for (std::size_t j = 1; j < levels; ++j) {
            for (std::size_t k = 0; k < Rows; ++k) {
                acc[j][k] += acc[j - 1][k];
                acc[j - 1][k] = Acc{};
            }
            if ((i & (mask << (j * power))) != 0) break;
        }
    }
    for (; i < size; ++i)
        for (std::size_t k = 0; k < Rows; ++k) acc[0][k] += load(i, k);
    for (std::size_t j = 1; j < levels; ++j)
        for (std::size_t k = 0; k < Rows; ++k) acc[0][k] += acc[j][k];
    return acc[0];
}

// One sum of `size` terms, `load(i)`, as four interleaved partial sums.
template <class Acc, class Load>
Acc row_sum(Load load, std::size_t size) {
    constexpr std::size_t ilp = 4;
    const std::size_t quads = size / ilp;
    auto partial = multi_row_sum<Acc, ilp>([&](std::size_t i, std::size_t k) { return load(i * ilp + k); }, quads);
    for (std::size_t i = quads * ilp; i < size; ++i) partial[0] += load(i);
    for (std::size_t k = 1; k < ilp; ++k) partial[0] += partial[k];
    return partial[0];
}

template <class T>
inline constexpr std::size_t sum_width = 32 / sizeof(T);

template <class T>
sum_lanes<T, sum_width<T>> load_lanes(const T* p) noexcept {
    sum_lanes<T, sum_width<T>> l;
    std::copy_n(p, sum_width<T>, l.v.data());
    return l;
}

// The sum of `p[0..n)`.
template <class T>
T inner_sum(const T* p, std::size_t n) {
    constexpr std::size_t w = sum_width<T>;
    if (n < w) return row_sum<T>([p](std::size_t i) { return p[i]; }, n);
    const std::size_t vectors = n / w;
    const auto lanes = row_sum<sum_lanes<T, w>>([p](std::size_t i) { return load_lanes(p + i * w); }, vectors);
    T total = 0;
    for (std::size_t k = vectors * w; k < n; ++k) total += p[k];
    for (std::size_t l = 0; l < w; ++l) total += lanes.v[l];
    return total;
}

// out[j] = the sum over i < len of p[i * cols + j], for every j < cols.
template <class T>
void outer_sum(const T* p, std::size_t len, std::size_t cols, T* out) {
    constexpr std::size_t w = sum_width<T>;
    using lanes = sum_lanes<T, w>;
    std::size_t j = 0;
    const auto column = [&](std::size_t c) { return row_sum<T>([&](std::size_t i) { return p[i * cols + c]; }, len); };
    if (cols >= w) {
        for (; j + 4 * w <= cols; j += 4 * w) {
            const auto s = multi_row_sum<lanes, 4>(
                [&](std::size_t i, std::size_t k) { return load_lanes(p + i * cols + j + k * w); }, len);
            for (std::size_t k = 0; k < 4; ++k) std::copy_n(s[k].v.data(), w, out + j + k * w);
        }
        for (; j + w <= cols; j += w) {
            const auto s = row_sum<lanes>([&](std::size_t i) { return load_lanes(p + i * cols + j); }, len);
            std::copy_n(s.v.data(), w, out + j);
        }
    } else {
        for (; j + 4 <= cols; j += 4) {
            const auto s = multi_row_sum<T, 4>([&](std::size_t i, std::size_t k) { return p[i * cols + j + k]; }, len);
            std::copy_n(s.data(), 4, out + j);
        }
    }
    for (; j < cols; ++j) out[j] = column(j);
}

// max, argmax and var of the `len` elements `step` apart. The variance accumulates in double, as PyTorch's
// Welford reduction does (the float result agrees with PyTorch's to its rounding).
template <reduction Kind, class Out, class In>
Out reduce_row(const In* p, std::size_t len, std::size_t step, bool unbiased) {
    if constexpr (Kind == reduction::max || Kind == reduction::argmax) {
        In best = p[0];
        std::size_t at = 0;
        for (std::size_t j = 1; j < len; ++j) {
            const In v = p[j * step];
            if (std::isnan(best)) break;  // NaN wins, as in PyTorch
            if (v > best || std::isnan(v)) {
                best = v;
                at = j;
            }
        }
        if constexpr (Kind == reduction::max)
            return best;
        else
            return static_cast<Out>(at);
    } else {
        double sum = 0;
        for (std::size_t j = 0; j < len; ++j) sum += static_cast<double>(p[j * step]);
        const double mean = sum / static_cast<double>(len);
        double sq = 0;
        for (std::size_t j = 0; j < len; ++j) {
            const double d = static_cast<double>(p[j * step]) - mean;
            sq += d * d;
        }
        const std::size_t dof = unbiased ? len - 1 : len;
        return static_cast<Out>(dof == 0 ? std::numeric_limits<double>::quiet_NaN() : sq / static_cast<double>(dof));
    }
}

template <reduction Kind, bool Keep, int Dim, class Value, class Layout, Axis... Axes>
auto reduce(const basic_tensor<Value, Layout, Axes...>& x, bool unbiased = true) {
    constexpr std::size_t n = sizeof...(Axes);
    constexpr bool ok = n >= 1 && dim_in_range(Dim, n);
    // One message per op, so that each names itself as it was called (only the op's own can fire).
    static_assert(diag::expect<ok || Kind != reduction::sum, diag::dims<Dim>, described<diag::tensor_axes, Axes...>>,
                  "shaped::sum<Dim>(x): dimension out of range; a tensor of rank n takes dimensions -n to n-1");
    static_assert(diag::expect<ok || Kind != reduction::mean, diag::dims<Dim>, described<diag::tensor_axes, Axes...>>,
                  "shaped::mean<Dim>(x): dimension out of range; a tensor of rank n takes dimensions -n to n-1");
    static_assert(diag::expect<ok || Kind != reduction::var, diag::dims<Dim>, described<diag::tensor_axes, Axes...>>,
                  "shaped::var<Dim>(x): dimension out of range; a tensor of rank n takes dimensions -n to n-1");
    static_assert(diag::expect<ok || Kind != reduction::max, diag::dims<Dim>, described<diag::tensor_axes, Axes...>>,
                  "shaped::max<Dim>(x): dimension out of range; a tensor of rank n takes dimensions -n to n-1");
    static_assert(diag::expect<ok || Kind != reduction::argmax, diag::dims<Dim>, described<diag::tensor_axes, Axes...>>,
                  "shaped::argmax<Dim>(x): dimension out of range; a tensor of rank n takes dimensions -n to n-1");
    static_assert(Kind == reduction::argmax || Kind == reduction::max || std::is_floating_point_v<Value>,
                  "shaped::sum/mean/var(x): elements must be float or double; convert integers with .to<float>()");
    if constexpr (ok) {
        constexpr std::size_t d = wrap_dim(Dim, n);
        using out_value = std::conditional_t<Kind == reduction::argmax, std::int64_t, Value>;
        using plan = reduce_result<out_value, d, Keep, std::make_index_sequence<Keep ? n : n - 1>, Axes...>;
        using result_t = typename plan::type;
        result_t out(take_extents<typename result_t::extents_type, plan::sources>(x.shape), uninitialized);
        const auto& elements = x.storage();  // row-major (a copy for a strided tensor)
        const Value* p = elements.data();
        const std::size_t len = x.shape.extent(d);
        std::size_t inner = 1;
        for (std::size_t i = d + 1; i < n; ++i) inner *= x.shape.extent(i);
        const std::size_t outer = x.numel() / (len * inner);
        out_value* y = out.data();
        if constexpr (Kind == reduction::sum || Kind == reduction::mean) {
            for (std::size_t o = 0; o < outer; ++o, y += inner) {
                if (inner == 1)
                    *y = inner_sum(p + o * len, len);
                else
                    outer_sum(p + o * len * inner, len, inner, y);
            }
            if constexpr (Kind == reduction::mean) {  // PyTorch's CPU mean: the sum, then `div_(len)`
                const Value n = static_cast<Value>(len);
                for (std::size_t i = 0; i < out.numel(); ++i) out.data()[i] /= n;
            }
        } else {
            for (std::size_t o = 0; o < outer; ++o)
                for (std::size_t i = 0; i < inner; ++i)
                    *y++ = reduce_row<Kind, out_value>(p + o * len * inner + i, len, inner, unbiased);
        }
        return out;
    } else {
        return diag::failed_shape_check{};
    }
}

// A reduction over the axis named A, which x must have exactly once.
template <reduction Kind, bool Keep, class A, class Value, class Layout, class... Axes>
auto reduce_named(const basic_tensor<Value, Layout, Axes...>& x, bool unbiased = true) {
    constexpr bool ok = count_of_v<A, Axes...> == 1;
    // One message per op, so that each names itself as it was called (only the op's own can fire).
    static_assert(diag::expect<ok || Kind != reduction::sum, described<diag::expected_axes, A>,
                               described<diag::tensor_axes, Axes...>>,
                  "shaped::sum<A>(x): x has no axis A to reduce over (or has it more than once); name an axis of x, "
                  "or give its dimension");
    static_assert(diag::expect<ok || Kind != reduction::mean, described<diag::expected_axes, A>,
                               described<diag::tensor_axes, Axes...>>,
                  "shaped::mean<A>(x): x has no axis A to reduce over (or has it more than once); name an axis of x, "
                  "or give its dimension");
    static_assert(diag::expect<ok || Kind != reduction::var, described<diag::expected_axes, A>,
                               described<diag::tensor_axes, Axes...>>,
                  "shaped::var<A>(x): x has no axis A to reduce over (or has it more than once); name an axis of x, "
                  "or give its dimension");
    static_assert(diag::expect<ok || Kind != reduction::max, described<diag::expected_axes, A>,
                               described<diag::tensor_axes, Axes...>>,
                  "shaped::max<A>(x): x has no axis A to reduce over (or has it more than once); name an axis of x, "
                  "or give its dimension");
    static_assert(diag::expect<ok || Kind != reduction::argmax, described<diag::expected_axes, A>,
                               described<diag::tensor_axes, Axes...>>,
                  "shaped::argmax<A>(x): x has no axis A to reduce over (or has it more than once); name an axis of x, "
                  "or give its dimension");
    if constexpr (ok)
        return reduce<Kind, Keep, static_cast<int>(index_of<A, Axes...>())>(x, unbiased);
    else
        return diag::failed_shape_check{};
}

}  // namespace detail

/// Sum over the axis named `A` (or at dimension `Dim`, negative counting from the end), which disappears;
/// with `keepdim` it stays as `reduced<A>`, of extent 1.
///
/// Shapes: `(..., A, ...)` to `(..., ...)`, or `(..., reduced<A>, ...)` with keepdim. Element type: float or
/// double; the sum adds in the element type in PyTorch 1.13's order (its CPU cascade sum at the AVX2
/// capability), so it is PyTorch's bit for bit, except for a 1-d tensor of 32768 elements or more, which
/// PyTorch splits between its threads (then equal to float rounding).
/// Errors: compile time, an axis `x` does not have (or has twice), a dimension out of range. Nothing is thrown.
/// Source: `torch.sum(x, dim, keepdim)`.
/// Example: `auto total = x.sum<emb_dim>();`
template <Axis A, class V, class L, Axis... X>
auto sum(const basic_tensor<V, L, X...>& x) {
    return detail::reduce_named<detail::reduction::sum, false, A>(x);
}
/// With `keepdim`: the reduced axis stays, as `reduced<A>` of extent 1 (PyTorch's `keepdim=True`).
template <Axis A, class V, class L, Axis... X>
auto sum(const basic_tensor<V, L, X...>& x, keepdim_t) {
    return detail::reduce_named<detail::reduction::sum, true, A>(x);
}
template <int Dim, class V, class L, Axis... X>
auto sum(const basic_tensor<V, L, X...>& x) {
    return detail::reduce<detail::reduction::sum, false, Dim>(x);
}
template <int Dim, class V, class L, Axis... X>
auto sum(const basic_tensor<V, L, X...>& x, keepdim_t) {
    return detail::reduce<detail::reduction::sum, true, Dim>(x);
}

/// The mean over the axis named `A` (or at `Dim`); shapes, errors and keepdim as `sum`. As PyTorch's CPU
/// mean, the sum divided by the extent: bit for bit PyTorch's where the sum is.
/// Source: `torch.mean(x, dim, keepdim)`; `x.mean(dim=-1, keepdim=True)` in the book's `LayerNorm`.
/// Example: `auto mean = x.mean<emb_dim>(shaped::keepdim);   // (batch, num_tokens, reduced<emb_dim>)`
template <Axis A, class V, class L, Axis... X>
auto mean(const basic_tensor<V, L, X...>& x) {
    return detail::reduce_named<detail::reduction::mean, false, A>(x);
}
/// With `keepdim`: the reduced axis stays, as `reduced<A>` of extent 1 (PyTorch's `keepdim=True`).
template <Axis A, class V, class L, Axis... X>
auto mean(const basic_tensor<V, L, X...>& x, keepdim_t) {
    return detail::reduce_named<detail::reduction::mean, true, A>(x);
}
template <int Dim, class V, class L, Axis... X>
auto mean(const basic_tensor<V, L, X...>& x) {
    return detail::reduce<detail::reduction::mean, false, Dim>(x);
}
template <int Dim, class V, class L, Axis... X>
auto mean(const basic_tensor<V, L, X...>& x, keepdim_t) {
    return detail::reduce<detail::reduction::mean, true, Dim>(x);
}

/// The variance over the axis named `A` (or at `Dim`): the squared deviations from the mean, divided by
/// `n - 1` (`unbiased`, PyTorch's default) or by `n`. Shapes, errors and keepdim as `sum`; one element with
/// `unbiased` gives NaN, as in PyTorch.
/// Source: `torch.var(x, dim, unbiased, keepdim)`; `x.var(dim=-1, keepdim=True, unbiased=False)` in the book's
/// `LayerNorm`.
/// Example: `auto var = x.var<emb_dim>(shaped::keepdim, false);`
template <Axis A, class V, class L, Axis... X>
auto var(const basic_tensor<V, L, X...>& x, bool unbiased = true) {
    return detail::reduce_named<detail::reduction::var, false, A>(x, unbiased);
}
/// With `keepdim`: the reduced axis stays, as `reduced<A>` of extent 1 (PyTorch's `keepdim=True`).
template <Axis A, class V, class L, Axis... X>
auto var(const basic_tensor<V, L, X...>& x, keepdim_t, bool unbiased = true) {
    return detail::reduce_named<detail::reduction::var, true, A>(x, unbiased);
}
template <int Dim, class V, class L, Axis... X>
auto var(const basic_tensor<V, L, X...>& x, bool unbiased = true) {
    return detail::reduce<detail::reduction::var, false, Dim>(x, unbiased);
}
template <int Dim, class V, class L, Axis... X>
auto var(const basic_tensor<V, L, X...>& x, keepdim_t, bool unbiased = true) {
    return detail::reduce<detail::reduction::var, true, Dim>(x, unbiased);
}

/// The largest value over the axis named `A` (or at `Dim`): the values of `torch.max(x, dim)`. NaN wins.
/// Shapes, errors and keepdim as `sum`; any element type. Source: `torch.max(x, dim, keepdim).values`,
/// `torch.amax`.
template <Axis A, class V, class L, Axis... X>
auto max(const basic_tensor<V, L, X...>& x) {
    return detail::reduce_named<detail::reduction::max, false, A>(x);
}
/// With `keepdim`: the reduced axis stays, as `reduced<A>` of extent 1 (PyTorch's `keepdim=True`).
template <Axis A, class V, class L, Axis... X>
auto max(const basic_tensor<V, L, X...>& x, keepdim_t) {
    return detail::reduce_named<detail::reduction::max, true, A>(x);
}
template <int Dim, class V, class L, Axis... X>
auto max(const basic_tensor<V, L, X...>& x) {
    return detail::reduce<detail::reduction::max, false, Dim>(x);
}
template <int Dim, class V, class L, Axis... X>
auto max(const basic_tensor<V, L, X...>& x, keepdim_t) {
    return detail::reduce<detail::reduction::max, true, Dim>(x);
}

/// The position of the largest value over the axis named `A` (or at `Dim`), as `std::int64_t` (PyTorch's
/// `torch.long`); the first of equal maxima, a NaN's if there is one. Shapes and errors as `sum`.
/// Source: `torch.argmax(x, dim, keepdim)`; `torch.argmax(logits, dim=-1, keepdim=True)` in the book's
/// `generate_text_simple`.
/// Example: `auto idx_next = logits.argmax<vocab_size>(shaped::keepdim);   // (batch, reduced<vocab_size>)`
template <Axis A, class V, class L, Axis... X>
auto argmax(const basic_tensor<V, L, X...>& x) {
    return detail::reduce_named<detail::reduction::argmax, false, A>(x);
}
/// With `keepdim`: the reduced axis stays, as `reduced<A>` of extent 1 (PyTorch's `keepdim=True`).
template <Axis A, class V, class L, Axis... X>
auto argmax(const basic_tensor<V, L, X...>& x, keepdim_t) {
    return detail::reduce_named<detail::reduction::argmax, true, A>(x);
}
template <int Dim, class V, class L, Axis... X>
auto argmax(const basic_tensor<V, L, X...>& x) {
    return detail::reduce<detail::reduction::argmax, false, Dim>(x);
}
template <int Dim, class V, class L, Axis... X>
auto argmax(const basic_tensor<V, L, X...>& x, keepdim_t) {
    return detail::reduce<detail::reduction::argmax, true, Dim>(x);
}

}  // namespace shaped

#endif
