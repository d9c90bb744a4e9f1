#ifndef SHAPED_OPS_REPEAT_HPP
#define SHAPED_OPS_REPEAT_HPP

/// \file
/// `repeat_interleave` and `repeat` along one axis: the two ways of tiling a tensor into a merged axis,
/// which name their factors in the order the elements come.

#include <algorithm>
#include <array>
#include <cstddef>
#include <utility>

#include "../diagnostics.hpp"
#include "../shape.hpp"
#include "../tensor_fwd.hpp"

namespace shaped {

namespace detail {
template <class Value, std::size_t D, class Merged, class Idx, class... Axes>
struct replace_axis;
template <class Value, std::size_t D, class Merged, std::size_t... I, class... Axes>
struct replace_axis<Value, D, Merged, std::index_sequence<I...>, Axes...> {
    using type = tensor<Value, std::conditional_t<I == D, Merged, axis_at_t<I, Axes...>>...>;
};

// out[o, i * n + r, :] = x[o, i, :] (interleave) or out[o, r * a + i, :] = x[o, i, :] (tile).
template <bool Interleave, class Value>
void tile(const Value* x, Value* out, std::size_t outer, std::size_t a, std::size_t n, std::size_t inner) {
    for (std::size_t o = 0; o < outer; ++o)
        for (std::size_t i = 0; i < a; ++i)
            for (std::size_t r = 0; r < n; ++r) {
                const std::size_t j = Interleave ? i * n + r : r * a + i;
                std::copy_n(x + (o * a + i) * inner, inner, out + (o * a * n + j) * inner);
            }
}

template <bool Interleave, Axis New, int Dim, class Value, class Layout, Axis... Axes>
auto repeat_along(const basic_tensor<Value, Layout, Axes...>& x) {
    constexpr std::size_t n = sizeof...(Axes);
    constexpr bool ok = dim_in_range(Dim, n);
    using context = described<diag::tensor_axes, Axes...>;
    static_assert(diag::expect<ok || Interleave, diag::dims<Dim>, context>,
                  "shaped::repeat<New, Dim>(x): dimension out of range (PyTorch's -rank <= Dim < rank)");
    static_assert(diag::expect<ok || !Interleave, diag::dims<Dim>, context>,
                  "shaped::repeat_interleave<New, Dim>(x): dimension out of range (PyTorch's -rank <= Dim < rank)");
    if constexpr (ok) {
        constexpr std::size_t d = wrap_dim(Dim, n);
        using a = axis_at_t<d, Axes...>;
        using merged_t = std::conditional_t<Interleave, merged<a, New>, merged<New, a>>;
        using result_t = typename replace_axis<Value, d, merged_t, std::make_index_sequence<n>, Axes...>::type;
        static_assert(StaticAxis<New> || Interleave,
                      "shaped::repeat<New, Dim>(x): the number of copies must be a static axis");
        static_assert(StaticAxis<New> || !Interleave,
                      "shaped::repeat_interleave<New, Dim>(x): the number of copies must be a static axis");
        static constexpr auto sources = [] {
            std::array<axis_source, n> s{};
            for (std::size_t i = 0; i < n; ++i) s[i] = {0, i};
            return s;
        }();
        const auto e = take_extents<typename result_t::extents_type, sources>(x.shape);
        std::size_t inner = 1;
        for (std::size_t i = d + 1; i < n; ++i) inner *= x.shape.extent(i);
        result_t out(e, uninitialized);
        tile<Interleave>(x.storage().data(), out.data(), x.numel() / (x.shape.extent(d) * inner), x.shape.extent(d), New::extent,
                         inner);
        return out;
    } else {
        return diag::failed_shape_check{};
    }
}
}  // namespace detail

/// Repeats each element `New::extent` times along `Dim`, consecutively: the axis `A` at `Dim` becomes
/// `merged<A, New>` (A outer, the copies inner).
///
/// Shapes: `(..., A, ...)` to `(..., merged<A, New>, ...)`; contiguous. Errors: compile time, `Dim` out of
/// range. Nothing is thrown.
/// Source: `torch.repeat_interleave(x, repeats, dim)`; a per-batch mask made per head for
/// `(batch * num_heads, ...)` scores.
/// Example: `auto m = mask.repeat_interleave<num_heads, 0>();  // (merged<batch, num_heads>, q, k)`
template <Axis New, int Dim, class Value, class Layout, Axis... Axes>
auto repeat_interleave(const basic_tensor<Value, Layout, Axes...>& x) {
    return detail::repeat_along<true, New, Dim>(x);
}

/// Tiles the whole axis `New::extent` times along `Dim`: the axis `A` at `Dim` becomes `merged<New, A>`
/// (the copies outer, A inner).
///
/// Shapes: `(..., A, ...)` to `(..., merged<New, A>, ...)`; contiguous. Errors: compile time, `Dim` out of
/// range. Nothing is thrown.
/// Source: `torch.Tensor.repeat(*sizes)` with `New::extent` at `Dim` and 1 elsewhere.
/// Example: `auto m = mask.repeat<num_heads, 0>();   // (merged<num_heads, batch>, q, k)`
template <Axis New, int Dim, class Value, class Layout, Axis... Axes>
auto repeat(const basic_tensor<Value, Layout, Axes...>& x) {
    return detail::repeat_along<false, New, Dim>(x);
}

}  // namespace shaped

#endif
