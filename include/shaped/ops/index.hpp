#ifndef SHAPED_OPS_INDEX_HPP
#define SHAPED_OPS_INDEX_HPP

/// \file
/// Indexing that keeps the types honest: `select` (one position of an axis, which disappears) and `last`
/// (the last positions of a run-time axis).

#include <algorithm>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

#include "../diagnostics.hpp"
#include "../shape.hpp"
#include "../tensor_fwd.hpp"
#include "reduce.hpp"

namespace shaped {

namespace detail {

[[noreturn, gnu::noinline, gnu::cold]] inline void select_out_of_range(const std::string& axis, std::size_t extent,
                                                                        long long index) {
    throw std::out_of_range("shaped::select<A>(x, index): index " + std::to_string(index) + " is out of range for axis " +
                            axis + ", whose extent is " + std::to_string(extent) + " (valid: -" +
                            std::to_string(extent) + " to " + std::to_string(extent - 1) + ")");
}

template <std::size_t D, class Value, class Layout, class... Axes>
auto select_at(const basic_tensor<Value, Layout, Axes...>& x, long long index) {
    constexpr std::size_t n = sizeof...(Axes);
    using plan = reduce_result<Value, D, false, std::make_index_sequence<n - 1>, Axes...>;
    using result_t = typename plan::type;
    const std::size_t len = x.shape.extent(D);
    const long long wrapped = index < 0 ? index + static_cast<long long>(len) : index;
    if (wrapped < 0 || wrapped >= static_cast<long long>(len)) [[unlikely]]
        select_out_of_range(axis_name<axis_at_t<D, Axes...>>(), len, index);
    result_t out(take_extents<typename result_t::extents_type, plan::sources>(x.shape), uninitialized);
    std::size_t inner = 1;
    for (std::size_t i = D + 1; i < n; ++i) inner *= x.shape.extent(i);
    const std::size_t outer = x.numel() / (len * inner);
    const auto& elements = x.storage();  // row-major (a copy for a strided tensor)
    const Value* src = elements.data() + static_cast<std::size_t>(wrapped) * inner;
    Value* dst = out.data();
    for (std::size_t o = 0; o < outer; ++o) dst = std::copy_n(src + o * len * inner, inner, dst);
    return out;
}

}  // namespace detail

/// The position `index` of the axis named `A` (or at dimension `Dim`), which disappears: `logits[:, -1, :]`
/// is `logits.select<num_tokens>(-1)`. A negative index counts from the end, as in PyTorch.
///
/// Shapes: `(..., A, ...)` to `(..., ...)`; contiguous (a copy). Element type: any.
/// Errors: compile time, an axis `x` does not have (or has twice), a dimension out of range, a rank-0
/// result. Thrown: `std::out_of_range` for an index outside `[-extent, extent - 1]`, naming the axis, its
/// extent and the index.
/// Source: `torch.select(x, dim, index)`, `x[:, -1, :]` (the book's `generate_text_simple`).
/// Example: `auto last_logits = logits.select<num_tokens>(-1);   // (batch, vocab_size)`
template <Axis A, class V, class L, Axis... X>
auto select(const basic_tensor<V, L, X...>& x, long long index) {
    constexpr bool ok = detail::count_of_v<A, X...> == 1 && sizeof...(X) >= 2;
    static_assert(diag::expect<ok, detail::described<diag::expected_axes, A>, detail::described<diag::tensor_axes, X...>>,
                  "shaped::select<A>(x, index): x must have the axis A exactly once, and another axis to keep");
    if constexpr (ok)
        return detail::select_at<detail::index_of<A, X...>()>(x, index);
    else
        return diag::failed_shape_check{};
}
template <int Dim, class V, class L, Axis... X>
auto select(const basic_tensor<V, L, X...>& x, long long index) {
    constexpr std::size_t n = sizeof...(X);
    constexpr bool ok = n >= 2 && detail::dim_in_range(Dim, n);
    static_assert(diag::expect<ok, diag::dims<Dim>, detail::described<diag::tensor_axes, X...>>,
                  "shaped::select<Dim>(x, index): dimension out of range (a tensor of rank n takes -n to n-1), or "
                  "nothing left to keep");
    if constexpr (ok)
        return detail::select_at<detail::wrap_dim(Dim, n)>(x, index);
    else
        return diag::failed_shape_check{};
}

/// The last `n` positions of the run-time axis named `A` (all of them when it has fewer): `idx[:, -n:]`,
/// the book's crop of the context. The result keeps the axis `A`, or takes the run-time axis `To` (a model's
/// token axis, say, where `A` is a longer sequence), with extent `min(n, x.shape[A])`.
///
/// Shapes: `(..., A, ...)` to `(..., To, ...)`; contiguous (a copy). Element type: any.
/// Errors: compile time, `A` not an axis of `x`; `A` or `To` a static axis (its extent could not change;
/// slice a static axis to a declared prefix instead). Thrown (`shape_error`): `n` is 0, or the positions kept
/// are more than `To`'s bound.
/// Source: Python slicing `x[:, -n:]`; `idx[:, -context_size:]` in the book's `generate_text_simple`.
/// Example: `auto idx_cond = shaped::last<seq_len, num_tokens>(idx, context_length::extent);`
template <Axis A, Axis To = A, class V, class L, Axis... X>
auto last(const basic_tensor<V, L, X...>& x, std::size_t n) {
    constexpr bool ok = detail::count_of_v<A, X...> == 1 && DynamicAxis<A> && A::dynamic_atoms == 1 &&
                        A::static_factor == 1 && DynamicAxis<To> && To::dynamic_atoms == 1 && To::static_factor == 1;
    static_assert(diag::expect<ok, detail::described<diag::expected_axes, A, To>,
                               detail::described<diag::tensor_axes, X...>>,
                  "shaped::last<A, To>(x, n): A must be a run-time axis of x, and To a run-time axis (their extents "
                  "change); a static axis is cut with slice<...>() to an axis declared within it");
    if constexpr (ok) {
        constexpr std::size_t d = detail::index_of<A, X...>(), rank = sizeof...(X);
        if (n == 0) throw shape_error("last<A>(x, n)", "n >= 1", "n = 0");
        const std::size_t len = x.shape.extent(d), keep = std::min(n, len);
        if constexpr (!std::is_same_v<A, To>)
            if (keep > To::bound) [[unlikely]]
                throw shape_error("last<A, To>(x, n)",
                                  axis_name<To>() + " <= " + std::to_string(To::bound) + " (its bound)",
                                  std::to_string(keep) + " positions of " + axis_name<A>() + " kept");
        using result_t = tensor<V, std::conditional_t<std::is_same_v<X, A>, To, X>...>;
        const auto e = [&] {
            auto dyn = x.shape.dynamic();
            dyn[extents<X...>::atom_offsets[d]] = keep;
            return typename result_t::extents_type(detail::adopt_tag{}, dyn);
        }();
        result_t out(e, uninitialized);
        std::size_t inner = 1;
        for (std::size_t i = d + 1; i < rank; ++i) inner *= x.shape.extent(i);
        const std::size_t outer = x.numel() / (len * inner);
        const auto& elements = x.storage();  // row-major (a copy for a strided tensor)
        V* dst = out.data();
        for (std::size_t o = 0; o < outer; ++o)
            dst = std::copy_n(elements.data() + (o * len + (len - keep)) * inner, keep * inner, dst);
        return out;
    } else {
        return diag::failed_shape_check{};
    }
}

}  // namespace shaped

#endif
