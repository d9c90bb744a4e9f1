#ifndef SHAPED_OPS_VIEW_HPP
#define SHAPED_OPS_VIEW_HPP

/// \file
/// `view`, `reshape` and `rename`: the same elements under other axes.

#include <algorithm>
#include <type_traits>
#include <utility>
#include <xtensor/xstrides.hpp>
#include <xtensor/xtensor.hpp>

#include "../diagnostics.hpp"
#include "../shape.hpp"
#include "../tensor_fwd.hpp"

namespace shaped {

namespace detail {
// The same elements in the same (row-major) order under another shape: the buffer changes hands, no
// element is copied (xtensor's strides are recomputed, 0 along extent-1 axes as xtensor keeps them).
template <class Value, Axis... To, std::size_t N>
auto relabel(xt::xtensor<Value, N>&& storage) {
    using result = tensor<Value, To...>;
    typename result::storage_type::inner_shape_type shape{To::extent...};
    typename result::storage_type::inner_strides_type strides{};
    xt::compute_strides(shape, xt::layout_type::row_major, strides);
    return result(detail::adopt_tag{}, typename result::storage_type(std::move(storage.storage()), std::move(shape), std::move(strides)));
}
}  // namespace detail

/// The same elements under axes `To...`, which split and merge adjacent axes of `x` in order.
///
/// Shapes: `(From...)` to `(To...)` with the same element count and the same axes, factor for factor:
/// `(batch, num_tokens, d_out)` views as `(batch, num_tokens, num_heads, head_dim)` when `head_dim` is
/// `quotient<"head_dim", d_out, num_heads>`, and back. An axis kept one-to-one keeps its name.
/// Errors (compile time, in this order): the element count changes; `x` is strided (transposed),
/// PyTorch's run-time "view size is not compatible with input tensor's size and stride", whose fix is
/// `contiguous()` or `reshape`; the target regroups axes in another order (e.g. straight from
/// `(b, num_tokens, d_out)` to `(b, num_heads, num_tokens, head_dim)`, which needs a transpose) or
/// renames an axis (use `rename`). Nothing is thrown.
/// Source: `torch.Tensor.view`; the book's `MultiHeadAttention.forward` (listing 3.5).
/// Example: `auto q4 = q.view<batch, num_tokens, num_heads, head_dim>();`
template <Axis... To, class Value, class Layout, Axis... From>
auto view(basic_tensor<Value, Layout, From...> x) {
    constexpr bool count_ok = detail::numel_v<From...> == detail::numel_v<To...>;
    static_assert(
        diag::expect<count_ok, detail::described<diag::from_axes, From...>, detail::described<diag::to_axes, To...>,
                     diag::element_counts<diag::numbers<detail::numel_v<From...>, detail::numel_v<To...>>>>,
        "shaped::view<To...>(x): the element count must not change; the new axes' extents must "
        "multiply to the old ones' product");
    if constexpr (count_ok) {
        constexpr bool contiguous_ok = std::is_same_v<Layout, layout::contiguous>;
        static_assert(diag::expect<contiguous_ok, detail::described<diag::tensor_axes, From...>>,
                      "shaped::view<To...>(x): view size is not compatible with input tensor's size and "
                      "stride: x was transposed, so it is not contiguous; call x.contiguous().view<...>() "
                      "or x.reshape<...>()");
        if constexpr (contiguous_ok) {
            constexpr bool regroup_ok = detail::view_regroups(hana::tuple_t<From...>, hana::tuple_t<To...>);
            static_assert(diag::expect<regroup_ok, detail::described<diag::from_axes, From...>,
                                       detail::described<diag::to_axes, To...>>,
                          "shaped::view<To...>(x): view only splits and merges adjacent axes, in order, so "
                          "the axes must be the same factors in the same order; to move an axis, transpose "
                          "first (e.g. view to (b, num_tokens, num_heads, head_dim), then transpose<1, 2>()); "
                          "to give an axis another name, use rename<...>()");
            if constexpr (regroup_ok)
                return detail::relabel<Value, To...>(std::move(x).storage());
            else
                return diag::failed_shape_check{};
        } else {
            return diag::failed_shape_check{};
        }
    } else {
        return diag::failed_shape_check{};
    }
}

/// `view` for a tensor of any layout: PyTorch's `reshape`, which copies when the input is not contiguous.
///
/// Shapes and errors: those of `view`, except that a strided `x` is allowed. Nothing is thrown.
/// Source: `torch.Tensor.reshape`.
/// Example: `auto c = context_vec.transpose<1, 2>().reshape<batch, num_tokens, d_out>();`
template <Axis... To, class Value, class Layout, Axis... From>
auto reshape(basic_tensor<Value, Layout, From...> x) {
    return view<To...>(tensor<Value, From...>(detail::adopt_tag{}, std::move(x).storage()));
}

/// The same elements with each axis renamed, one for one: the explicit rename that `view` never does.
///
/// Shapes: `(From...)` to `(To...)`, the same rank and, axis for axis, the same extent.
/// Errors: compile time, another rank or an extent that differs, or a target axis that `x` has at
/// another position (a transpose written as a rename). Nothing is thrown.
/// Source: `torch.Tensor.rename` (named tensors).
/// Example: `auto keys_k = keys.rename<batch, num_tokens_k, d_out>();`
template <Axis... To, class Value, class Layout, Axis... From>
auto rename(basic_tensor<Value, Layout, From...> x) {
    constexpr bool ok = sizeof...(To) == sizeof...(From) && [] {
        if constexpr (sizeof...(To) == sizeof...(From))
            return ((To::extent == From::extent) && ...);
        else
            return false;
    }();
    static_assert(
        diag::expect<ok, detail::described<diag::from_axes, From...>, detail::described<diag::to_axes, To...>>,
        "shaped::rename<To...>(x): rename keeps the rank and every extent; give one new axis of the "
        "same extent for each axis");
    constexpr bool moves = [] {
        if constexpr (sizeof...(To) == sizeof...(From)) {
            constexpr std::size_t n = sizeof...(From);
            return []<std::size_t... I>(std::index_sequence<I...>) {
                // Does target axis I name a source axis that stands at another place?
                return ((detail::index_of<detail::axis_at_t<I, To...>, From...>() != I &&
                         detail::index_of<detail::axis_at_t<I, To...>, From...>() != n) ||
                        ...);
            }(std::make_index_sequence<n>{});
        } else {
            return false;
        }
    }();
    static_assert(diag::expect<!ok || !moves, detail::described<diag::from_axes, From...>,
                               detail::described<diag::to_axes, To...>>,
                  "shaped::rename<To...>(x): rename gives new names in place; it does not move axes, and a target "
                  "axis that x has at another place means a transpose was meant (transpose<i, j>() first)");
    if constexpr (ok && !moves && std::is_same_v<Layout, layout::contiguous>) {
        return basic_tensor<Value, Layout, To...>(detail::adopt_tag{}, std::move(x).storage());
    } else if constexpr (ok && !moves) {  // strided: the same buffer and strides under the new names
        const auto strides = x.stride();
        return basic_tensor<Value, Layout, To...>(detail::strided_tag{}, std::move(x).buffer(), strides);
    } else {
        return diag::failed_shape_check{};
    }
}

}  // namespace shaped

#endif
