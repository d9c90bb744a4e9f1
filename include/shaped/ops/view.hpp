#ifndef SHAPED_OPS_VIEW_HPP
#define SHAPED_OPS_VIEW_HPP

/// \file
/// `view`, `reshape` and `rename`: the same elements under other axes.

#include <algorithm>
#include <array>
#include <string>
#include <tuple>
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
// `view` keeps every run-time atom in its place (the view rule compares atoms in order), so the run-time
// extents carry over as they are.
template <class Value, Axis... To, std::size_t N, std::size_t D>
auto relabel(xt::xtensor<Value, N>&& storage, const std::array<std::size_t, D>& dynamic) {
    using result = tensor<Value, To...>;
    const typename result::extents_type e(detail::adopt_tag{}, dynamic);
    typename result::storage_type::inner_shape_type shape{};
    const auto sizes = e.sizes();
    std::copy(sizes.begin(), sizes.end(), shape.begin());
    typename result::storage_type::inner_strides_type strides{};
    xt::compute_strides(shape, xt::layout_type::row_major, strides);
    return result(detail::adopt_tag{}, e,
                  typename result::storage_type(std::move(storage.storage()), std::move(shape), std::move(strides)));
}

// rename's rule for one axis: the same static extent; a static extent into a run-time axis whose bound
// holds it; a run-time axis into a static one (checked when it runs); a run-time axis into another with the
// same atoms and no smaller bounds, or into a plain run-time axis whose bound holds the whole extent.
template <class From, class To>
constexpr bool renames_to() {
    if constexpr (StaticAxis<From> && StaticAxis<To>) {
        return From::extent == To::extent;
    } else if constexpr (StaticAxis<From>) {
        return To::dynamic_atoms == 1 && From::extent % To::static_factor == 0 &&
               From::extent / To::static_factor <= To::dynamic_bounds[0];
    } else if constexpr (StaticAxis<To>) {
        return true;
    } else {
        constexpr bool same_atoms = [] {
            if constexpr (From::dynamic_atoms == To::dynamic_atoms) {
                if (From::static_factor != To::static_factor) return false;
                for (std::size_t k = 0; k < From::dynamic_atoms; ++k)
                    if (To::dynamic_bounds[k] < From::dynamic_bounds[k]) return false;
                return true;
            } else {
                return false;
            }
        }();
        return same_atoms || (To::dynamic_atoms == 1 && To::static_factor == 1 && To::bound >= From::bound);
    }
}

// The run-time extents axis I of `x` hands to the axis `To` it is renamed to.
template <class To, std::size_t I, class E>
auto renamed_atoms(const E& e) {
    using From = typename extents_parts<E>::template axis<I>;
    if constexpr (StaticAxis<To>) {
        if constexpr (!StaticAxis<From>)
            if (e[I] != To::extent) [[unlikely]]
                throw shape_error("rename<...>(x)", axis_name<To>() + "=" + std::to_string(To::extent) + " at dimension " +
                                                        std::to_string(I),
                                  axis_name<From>() + "=" + std::to_string(e[I]) + " in " + e.text());
        return no_atoms;
    } else if constexpr (StaticAxis<From>) {
        return std::array<std::size_t, 1>{From::extent / To::static_factor};
    } else if constexpr (From::dynamic_atoms == To::dynamic_atoms && From::static_factor == To::static_factor) {
        return e.template atoms_of<I>();
    } else {
        return std::array<std::size_t, 1>{e[I]};
    }
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
    // With run-time axes, the static parts must agree, and the regroup rule below compares the rest.
    constexpr bool count_ok = detail::static_numel_v<From...> == detail::static_numel_v<To...> ||
                              extents<From...>::rank_dynamic != extents<To...>::rank_dynamic;
    static_assert(
        diag::expect<count_ok, detail::described<diag::from_axes, From...>, detail::described<diag::to_axes, To...>,
                     diag::element_counts<diag::numbers<detail::static_numel_v<From...>, detail::static_numel_v<To...>>>>,
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
                return detail::relabel<Value, To...>(std::move(x).storage(), x.shape.dynamic());
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
    const auto e = x.shape;
    return view<To...>(tensor<Value, From...>(detail::adopt_tag{}, e, std::move(x).storage()));
}

/// The same elements with each axis renamed, one for one: the explicit rename that `view` never does.
///
/// Shapes: `(From...)` to `(To...)`, the same rank and, axis for axis, the same extent. It is also the
/// conversion between static and run-time axes: a static axis becomes a run-time one whose bound holds its
/// extent, and a run-time axis becomes a static one when its extent, checked as the call runs, is the
/// static one's.
/// Errors: compile time, another rank or an extent that differs (a static extent above a run-time axis's
/// bound, a run-time axis into one with a smaller bound), or a target axis that `x` has at another position
/// (a transpose written as a rename). Thrown: `shape_error`, a run-time extent renamed to a static axis of
/// another extent.
/// Source: `torch.Tensor.rename` (named tensors).
/// Example: `auto keys_k = keys.rename<batch, key<num_tokens>, d_out>();`
///          `auto fixed = x.rename<batch, six_tokens, d_in>();   // throws unless x.shape[1] == 6`
template <Axis... To, class Value, class Layout, Axis... From>
auto rename(basic_tensor<Value, Layout, From...> x) {
    constexpr bool ok = sizeof...(To) == sizeof...(From) && [] {
        if constexpr (sizeof...(To) == sizeof...(From))
            return (detail::renames_to<From, To>() && ...);
        else
            return false;
    }();
    static_assert(
        diag::expect<ok, detail::described<diag::from_axes, From...>, detail::described<diag::to_axes, To...>>,
        "shaped::rename<To...>(x): rename keeps the rank and every extent; give one new axis of the "
        "same extent for each axis (a run-time axis takes a static extent up to its bound)");
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
    if constexpr (ok && !moves) {
        using result_t = basic_tensor<Value, Layout, To...>;
        const auto e = [&]<std::size_t... I>(std::index_sequence<I...>) {
            if constexpr (result_t::is_static && extents<From...>::is_static) {
                return typename result_t::extents_type{};
            } else {
                const std::tuple blocks{detail::renamed_atoms<To, I>(x.shape)...};  // left to right
                return std::apply(
                    [](const auto&... b) { return detail::make_extents<typename result_t::extents_type>(b...); }, blocks);
            }
        }(std::make_index_sequence<sizeof...(To)>{});
        if constexpr (std::is_same_v<Layout, layout::contiguous>) {
            return result_t(detail::adopt_tag{}, e, std::move(x).storage());
        } else {  // strided: the same buffer and strides under the new names
            const auto strides = x.stride();
            return result_t(detail::adopt_tag{}, detail::strided_tag{}, e, std::move(x).buffer(), strides);
        }
    } else {
        return diag::failed_shape_check{};
    }
}

}  // namespace shaped

#endif
