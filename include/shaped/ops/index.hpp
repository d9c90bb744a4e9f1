#ifndef SHAPED_OPS_INDEX_HPP
#define SHAPED_OPS_INDEX_HPP

/// \file
/// Indexing that keeps the types honest: `select` (one position of an axis, which disappears), `last`
/// (the last positions of a run-time axis) and `narrow` (a run of positions, onto an axis declared within).

#include <algorithm>
#include <array>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <limits>
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

// Positions start .. start + length - 1 of axis D of x, on the run-time axis To (one atom): a copy.
// The axes X... with the one at D (by position: a mask's two axes may be the same) replaced by To.
template <std::size_t D, class To, class V, class Idx, class... X>
struct narrowed;
template <std::size_t D, class To, class V, std::size_t... I, class... X>
struct narrowed<D, To, V, std::index_sequence<I...>, X...> {
    using type = tensor<V, std::conditional_t<I == D, To, axis_at_t<I, X...>>...>;
};

template <std::size_t D, class To, class V, class L, class... X>
auto narrow_copy(const basic_tensor<V, L, X...>& x, std::size_t start, std::size_t length) {
    using result_t = typename narrowed<D, To, V, std::make_index_sequence<sizeof...(X)>, X...>::type;
    constexpr std::size_t rank = sizeof...(X);
    const std::size_t len = x.shape.extent(D);
    auto dyn = [&] {
        std::array<std::size_t, result_t::extents_type::rank_dynamic> r{};
        const auto src = x.shape.dynamic();
        // The result's run-time atoms: x's, with D's (if it had one) replaced by To's, in axis order.
        std::size_t k = 0, j = 0;
        for (std::size_t i = 0; i < rank; ++i) {
            const std::size_t atoms = extents<X...>::atom_counts[i];
            if (i == D) {
                r[k++] = length;
                j += atoms;
            } else {
                for (std::size_t a = 0; a < atoms; ++a) r[k++] = src[j++];
            }
        }
        return r;
    }();
    result_t out(typename result_t::extents_type(adopt_tag{}, dyn), uninitialized);
    std::size_t inner = 1;
    for (std::size_t i = D + 1; i < rank; ++i) inner *= x.shape.extent(i);
    const std::size_t outer = x.numel() / (len * inner);
    const auto& elements = x.storage();  // row-major (a copy for a strided tensor)
    V* dst = out.data();
    for (std::size_t o = 0; o < outer; ++o)
        dst = std::copy_n(elements.data() + (o * len + start) * inner, length * inner, dst);
    return out;
}

}  // namespace detail

/// The position `index` of the axis named `A` (or at dimension `Dim`), which disappears: `logits[:, -1, :]`
/// is `logits.select<num_tokens>(-1)`. A negative index counts from the end, as in PyTorch.
///
/// Shapes: `(..., A, ...)` to `(..., ...)`; contiguous (a copy). Element type: any.
/// Errors: compile time, an axis `x` does not have (or has twice), a dimension out of range. A rank-1 `x`
/// gives a rank-0 tensor (`top_logits[-1]`), as in PyTorch. Thrown: `std::out_of_range` for an index outside `[-extent, extent - 1]`, naming the axis, its
/// extent and the index.
/// Source: `torch.select(x, dim, index)`, `x[:, -1, :]` (the book's `generate_text_simple`).
/// Example: `auto last_logits = logits.select<num_tokens>(-1);   // (batch, vocab_size)`
template <Axis A, class V, class L, Axis... X>
auto select(const basic_tensor<V, L, X...>& x, long long index) {
    constexpr bool ok = detail::count_of_v<A, X...> == 1;
    static_assert(diag::expect<ok, detail::described<diag::expected_axes, A>, detail::described<diag::tensor_axes, X...>>,
                  "shaped::select<A>(x, index): x must have the axis A exactly once");
    if constexpr (ok)
        return detail::select_at<detail::index_of<A, X...>()>(x, index);
    else
        return diag::failed_shape_check{};
}
template <int Dim, class V, class L, Axis... X>
auto select(const basic_tensor<V, L, X...>& x, long long index) {
    constexpr std::size_t n = sizeof...(X);
    constexpr bool ok = detail::dim_in_range(Dim, n);
    static_assert(diag::expect<ok, diag::dims<Dim>, detail::described<diag::tensor_axes, X...>>,
                  "shaped::select<Dim>(x, index): dimension out of range (a tensor of rank n takes -n to n-1)");
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
/// slice a static axis to a declared prefix instead); `n` not an integer. Thrown (`shape_error`): `n` below 1
/// or above `PTRDIFF_MAX` (what a negative count becomes as a `std::size_t`), or the positions kept are more
/// than `To`'s bound.
/// Source: Python slicing `x[:, -n:]`; `idx[:, -context_size:]` in the book's `generate_text_simple`.
/// Example: `auto idx_cond = shaped::last<seq_len, num_tokens>(idx, context_length::extent);`
template <Axis A, Axis To = A, class V, class L, Axis... X>
auto last(const basic_tensor<V, L, X...>& x, std::integral auto n) {
    constexpr bool ok = detail::count_of_v<A, X...> == 1 && DynamicAxis<A> && A::dynamic_atoms == 1 &&
                        A::static_factor == 1 && DynamicAxis<To> && To::dynamic_atoms == 1 && To::static_factor == 1;
    static_assert(diag::expect<ok, detail::described<diag::expected_axes, A, To>,
                               detail::described<diag::tensor_axes, X...>>,
                  "shaped::last<A, To>(x, n): A must be a run-time axis of x, and To a run-time axis (their extents "
                  "change); a static axis is cut with slice<...>() to an axis declared within it");
    if constexpr (ok) {
        constexpr std::size_t d = detail::index_of<A, X...>(), rank = sizeof...(X);
        // A count below 1, or one that a negative count became when it was converted to an unsigned type
        // (size_t(-1) would otherwise keep everything, where Python's x[:, -(-1):] drops the first position).
        if (n < 1) throw shape_error("last<A>(x, n)", "n >= 1", "n = " + std::to_string(n));
        if (static_cast<std::uintmax_t>(n) > static_cast<std::uintmax_t>(std::numeric_limits<std::ptrdiff_t>::max()))
            throw shape_error("last<A>(x, n)", "n <= " + std::to_string(std::numeric_limits<std::ptrdiff_t>::max()),
                              "n = " + std::to_string(n) + " (a negative count converted to an unsigned type?)");
        const std::size_t len = x.shape.extent(d), keep = std::min(static_cast<std::size_t>(n), len);
        if constexpr (!std::is_same_v<A, To>)
            if (keep > To::bound) [[unlikely]]
                throw shape_error("last<A, To>(x, n)",
                                  axis_name<To>() + " <= " + std::to_string(To::bound) + " (its bound)",
                                  std::to_string(keep) + " positions of " + axis_name<A>() + " kept");
        (void)rank;
        return detail::narrow_copy<d, To>(x, len - keep, keep);
    } else {
        return diag::failed_shape_check{};
    }
}

/// The positions `start` to `start + length - 1` of the axis at dimension `Dim` (negative counting from the
/// end), put on the run-time axis `To`, which must be that axis or one declared within it: `x.narrow(dim, start,
/// length)`. What a KV cache needs of the causal mask: the rows of the new tokens, which begin after the
/// cached ones (`narrow<0, num_tokens>(mask, cached_before, n)`).
///
/// Shapes: `(..., A, ...)` to `(..., To, ...)`, extent `length`; contiguous (a copy). Element type: any.
/// Errors: compile time, a dimension out of range, a `To` that is not a run-time axis declared within `A`
/// (`struct num_tokens : shaped::dynamic_axis<"num_tokens", shaped::at_most<context_length>> {};`), as for
/// `slice`. Thrown (`shape_error`): `length` 0 or above `To`'s bound, or `start + length` past `A`'s extent.
/// Source: `torch.narrow(x, dim, start, length)`, `x[start:start + length]`.
/// Example: `auto rows = shaped::narrow<0, num_tokens>(mask, cache_size, n);   // mask[cache_size:cache_size + n]`
template <int Dim, Axis To, class V, class L, Axis... X>
auto narrow(const basic_tensor<V, L, X...>& x, std::size_t start, std::size_t length) {
    constexpr std::size_t n = sizeof...(X);
    static_assert(diag::expect<detail::dim_in_range(Dim, n), diag::dims<Dim>, detail::described<diag::tensor_axes, X...>>,
                  "shaped::narrow<Dim, To>(x, start, length): dimension out of range; a tensor of rank n takes -n to n-1");
    if constexpr (detail::dim_in_range(Dim, n)) {
        constexpr std::size_t d = detail::wrap_dim(Dim, n);
        using A = detail::axis_at_t<d, X...>;
        constexpr bool ok = DynamicAxis<To> && To::dynamic_atoms == 1 && To::static_factor == 1 &&
                            detail::prefix_of<To, A>();
        static_assert(diag::expect<ok, detail::described<diag::to_axes, To>, detail::described<diag::tensor_axes, X...>>,
                      "shaped::narrow<Dim, To>(x, start, length): To must be a run-time axis declared within the axis it "
                      "cuts (struct num_tokens : shaped::dynamic_axis<\"num_tokens\", shaped::at_most<context_length>> "
                      "{};), not only be short enough");
        if constexpr (ok) {
            const std::size_t len = x.shape.extent(d);
            if (length == 0 || length > To::bound || start > len || length > len - start) [[unlikely]]
                throw shape_error("narrow<Dim, To>(x, start, length)",
                                  "1 <= length <= " + std::to_string(To::bound) + " (" + axis_name<To>() +
                                      "'s bound) and start + length <= " + std::to_string(len) + " (" + axis_name<A>() +
                                      ")",
                                  "start = " + std::to_string(start) + ", length = " + std::to_string(length));
            return detail::narrow_copy<d, To>(x, start, length);
        } else {
            return diag::failed_shape_check{};
        }
    } else {
        return diag::failed_shape_check{};
    }
}

}  // namespace shaped

#endif
