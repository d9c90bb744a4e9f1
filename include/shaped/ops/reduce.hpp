#ifndef SHAPED_OPS_REDUCE_HPP
#define SHAPED_OPS_REDUCE_HPP

/// \file
/// Reductions over one named axis: `sum`, `mean`, `var`, `max` and `argmax`, with PyTorch's `keepdim`.

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

// One pass per (outer, inner) position over the `len` elements `inner` apart. Sums and the variance
// accumulate in double (PyTorch's float sum is a cascade in float: results agree to float rounding).
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
        if constexpr (Kind == reduction::sum) {
            return static_cast<Out>(sum);
        } else {
            const double mean = sum / static_cast<double>(len);
            if constexpr (Kind == reduction::mean) {
                return static_cast<Out>(mean);
            } else {
                double sq = 0;
                for (std::size_t j = 0; j < len; ++j) {
                    const double d = static_cast<double>(p[j * step]) - mean;
                    sq += d * d;
                }
                const std::size_t dof = unbiased ? len - 1 : len;
                return static_cast<Out>(dof == 0 ? std::numeric_limits<double>::quiet_NaN() : sq / static_cast<double>(dof));
            }
        }
    }
}

template <reduction Kind, bool Keep, int Dim, class Value, class Layout, Axis... Axes>
auto reduce(const basic_tensor<Value, Layout, Axes...>& x, bool unbiased = true) {
    constexpr std::size_t n = sizeof...(Axes);
    constexpr bool ok = n >= 1 && dim_in_range(Dim, n);
    static_assert(diag::expect<ok, diag::dims<Dim>, described<diag::tensor_axes, Axes...>>,
                  "shaped::sum/mean/var/max/argmax<Dim>(x): dimension out of range; a tensor of rank n takes "
                  "dimensions -n to n-1");
    static_assert(Kind == reduction::argmax || Kind == reduction::max || std::is_floating_point_v<Value>,
                  "shaped::sum/mean/var(x): elements must be float or double");
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
        for (std::size_t o = 0; o < outer; ++o)
            for (std::size_t i = 0; i < inner; ++i)
                *y++ = reduce_row<Kind, out_value>(p + o * len * inner + i, len, inner, unbiased);
        return out;
    } else {
        return diag::failed_shape_check{};
    }
}

// A reduction over the axis named A, which x must have exactly once.
template <reduction Kind, bool Keep, class A, class Value, class Layout, class... Axes>
auto reduce_named(const basic_tensor<Value, Layout, Axes...>& x, bool unbiased = true) {
    constexpr bool ok = count_of_v<A, Axes...> == 1;
    static_assert(diag::expect<ok, described<diag::expected_axes, A>, described<diag::tensor_axes, Axes...>>,
                  "shaped::sum/mean/var/max/argmax<A>(x): x has no axis A to reduce over (or has it more than once); "
                  "name an axis of x, or give its dimension");
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
/// double; the sum accumulates in double (PyTorch's cascade sum in float agrees to float rounding).
/// Errors: compile time, an axis `x` does not have (or has twice), a dimension out of range. Nothing is thrown.
/// Source: `torch.sum(x, dim, keepdim)`.
/// Example: `auto total = x.sum<emb_dim>();`
template <Axis A, class V, class L, Axis... X>
auto sum(const basic_tensor<V, L, X...>& x) {
    return detail::reduce_named<detail::reduction::sum, false, A>(x);
}
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

/// The mean over the axis named `A` (or at `Dim`); shapes, errors and keepdim as `sum`.
/// Source: `torch.mean(x, dim, keepdim)`; `x.mean(dim=-1, keepdim=True)` in the book's `LayerNorm`.
/// Example: `auto mean = x.mean<emb_dim>(shaped::keepdim);   // (batch, num_tokens, reduced<emb_dim>)`
template <Axis A, class V, class L, Axis... X>
auto mean(const basic_tensor<V, L, X...>& x) {
    return detail::reduce_named<detail::reduction::mean, false, A>(x);
}
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
