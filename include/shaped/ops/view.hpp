#ifndef SHAPED_OPS_VIEW_HPP
#define SHAPED_OPS_VIEW_HPP

/// \file
/// `view`, `reshape` and `rename`: the same elements under other axes.

#include <algorithm>
#include <boost/hana/contains.hpp>
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

namespace detail {

// What a view that does not regroup got wrong, for its hint.
enum class regroup_miss {
    split_reordered,         // a merged axis split back in another order than it was merged (swap two targets)
    transpose_after,         // a split that lands the axes in another order: view, then transpose (swap two targets)
    transpose_first,         // a merge of axes that are apart or out of order: transpose, then view (swap two sources)
    merged_back_out_first,   // a merged axis of x regrouped with others: view it back out into its factors first
    other_axes,              // the target's axes are not x's split or merged (a rename, say)
};

// Axes... with the I-th and the J-th swapped, as a hana tuple of types.
template <std::size_t I, std::size_t J, class... Axes>
constexpr auto swapped() {
    return []<std::size_t... K>(std::index_sequence<K...>) {
        return hana::tuple_t<axis_at_t<(K == I ? J : K == J ? I : K), Axes...>...>;
    }(std::make_index_sequence<sizeof...(Axes)>{});
}

// The first pair (i, j), i < j, as i * n + j, whose swap among To... makes the view regroup; -1 if none.
template <class... To, class... From>
constexpr int swap_fixing_to(axis_pack<From...>) {
    constexpr std::size_t n = sizeof...(To);
    return []<std::size_t... P>(std::index_sequence<P...>) {
        constexpr std::array<bool, n * n + 1> fixes{
            (P / n < P % n && view_regroups(hana::tuple_t<From...>, swapped<P / n, P % n, To...>()))..., false};
        for (std::size_t p = 0; p < n * n; ++p)
            if (fixes[p]) return static_cast<int>(p);
        return -1;
    }(std::make_index_sequence<n * n>{});
}

template <class... From, class... To>
constexpr int swap_fixing_from(axis_pack<To...>) {
    constexpr std::size_t n = sizeof...(From);
    return []<std::size_t... P>(std::index_sequence<P...>) {
        constexpr std::array<bool, n * n + 1> fixes{
            (P / n < P % n && view_regroups(swapped<P / n, P % n, From...>(), hana::tuple_t<To...>))..., false};
        for (std::size_t p = 0; p < n * n; ++p)
            if (fixes[p]) return static_cast<int>(p);
        return -1;
    }(std::make_index_sequence<n * n>{});
}

// Whether the targets I and J are both factors of one merged axis of x.
template <class A, class B, class... From>
constexpr bool factors_of_one_axis() {
    return ((has_factors<From> && hana::value(hana::contains(atoms(hana::type_c<From>), hana::type_c<A>)) &&
             hana::value(hana::contains(atoms(hana::type_c<From>), hana::type_c<B>))) ||
            ...);
}

/// Why `(From...)` does not view as `(To...)` though the element counts agree, and the pair of dimensions a
/// transpose should swap: `{kind, i, j}`.
template <class... From, class... To>
constexpr std::array<int, 3> regroup_miss_of(axis_pack<From...>, axis_pack<To...>) {
    constexpr int nt = static_cast<int>(sizeof...(To)), nf = static_cast<int>(sizeof...(From));
    constexpr int t = swap_fixing_to<To...>(axis_pack<From...>{});
    if constexpr (t >= 0) {
        constexpr bool one_axis = factors_of_one_axis<axis_at_t<t / nt, To...>, axis_at_t<t % nt, To...>, From...>();
        return {static_cast<int>(one_axis ? regroup_miss::split_reordered : regroup_miss::transpose_after), t / nt,
                t % nt};
    } else {
        constexpr int f = swap_fixing_from<From...>(axis_pack<To...>{});
        if constexpr (f >= 0) {
            return {static_cast<int>(regroup_miss::transpose_first), f / nf, f % nf};
        } else {
            constexpr bool merged_regrouped = ((has_factors<From> && count_same_v<From, To...> == 0) || ...);
            return {static_cast<int>(merged_regrouped ? regroup_miss::merged_back_out_first : regroup_miss::other_axes),
                    0, 0};
        }
    }
}

// What view and reshape check, computed once for both.
template <bool Reshape, class Layout, class F, class T>
struct view_check;
template <bool Reshape, class Layout, class... From, class... To>
struct view_check<Reshape, Layout, axis_pack<From...>, axis_pack<To...>> {
    // With run-time axes, the static parts must agree, and the regroup rule compares the rest.
    static constexpr bool count_ok = static_numel_v<From...> == static_numel_v<To...> ||
                                     extents<From...>::rank_dynamic != extents<To...>::rank_dynamic;
    static constexpr bool contiguous_ok = Reshape || std::is_same_v<Layout, layout::contiguous>;
    static constexpr bool regroup_ok =
        !count_ok || !contiguous_ok || view_regroups(hana::tuple_t<From...>, hana::tuple_t<To...>);
    static constexpr bool ok = count_ok && contiguous_ok && regroup_ok;
    static constexpr std::array<int, 3> why = [] {
        if constexpr (regroup_ok)
            return std::array<int, 3>{-1, 0, 0};
        else
            return regroup_miss_of(axis_pack<From...>{}, axis_pack<To...>{});
    }();
    // Whether the regroup rule failed for this reason.
    static constexpr bool missed(regroup_miss m) { return why[0] == static_cast<int>(m); }
    using from_t = described<diag::from_axes, From...>;
    using to_t = described<diag::to_axes, To...>;
    using counts_t = diag::element_counts<diag::numbers<static_numel_v<From...>, static_numel_v<To...>>>;
    using after_t = diag::transpose_after<diag::dims<why[1], why[2]>>;
    using first_t = diag::transpose_first<diag::dims<why[1], why[2]>>;
};

// The same elements under To..., once the checks passed (a strided x is copied first: reshape).
template <class Value, Axis... To, class Layout, Axis... From>
auto view_unchecked(basic_tensor<Value, Layout, From...> x) {
    if constexpr (std::is_same_v<Layout, layout::contiguous>) {
        return relabel<Value, To...>(std::move(x).storage(), x.shape.dynamic());
    } else {
        const auto e = x.shape;
        tensor<Value, From...> copy(adopt_tag{}, e, std::move(x).storage());
        return relabel<Value, To...>(std::move(copy).storage(), copy.shape.dynamic());
    }
}

// The hints that view and reshape share; each message starts with the op's own name.
#define SHAPED_DETAIL_COUNT_HINT                                                                              \
    "<To...>(x): the element count must not change; the new axes' extents must multiply to the old ones' "   \
    "product"
#define SHAPED_DETAIL_SPLIT_REORDERED_HINT                                                                    \
    "<To...>(x): view only splits and merges adjacent axes, in order; a merged axis is split back in another " \
    "order than it was merged: split it in its own order (merged<a, b> into a, b), then transpose the pair in " \
    "transpose_after<dims<i, j>> if the other order was meant"
#define SHAPED_DETAIL_TRANSPOSE_AFTER_HINT                                                                    \
    "<To...>(x): view only splits and merges adjacent axes, in order; split in x's order, then transpose the " \
    "pair in transpose_after<dims<i, j>> (e.g. view to (b, num_tokens, num_heads, head_dim), then "           \
    "transpose<1, 2>())"
#define SHAPED_DETAIL_TRANSPOSE_FIRST_HINT                                                                    \
    "<To...>(x): view only splits and merges adjacent axes, in order; the axes to merge are apart or out of "  \
    "order: transpose the pair in transpose_first<dims<i, j>>, then merge (e.g. "                             \
    "context_vec.transpose<1, 2>().reshape<b, num_tokens, d_out>())"
#define SHAPED_DETAIL_MERGED_BACK_OUT_HINT                                                                    \
    "<To...>(x): view only splits and merges adjacent axes, in order; x has a merged axis whose factors go to " \
    "different places: view it back out into its factors first, transpose, then merge"
#define SHAPED_DETAIL_OTHER_AXES_HINT                                                                         \
    "<To...>(x): view only splits and merges adjacent axes, in order, so the axes must be x's factors; these " \
    "are other axes: to give an axis another name, use rename<...>()"

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
    using c = detail::view_check<false, Layout, detail::axis_pack<From...>, detail::axis_pack<To...>>;
    using m = detail::regroup_miss;
    static_assert(diag::expect<c::count_ok, typename c::from_t, typename c::to_t, typename c::counts_t>,
                  "shaped::view" SHAPED_DETAIL_COUNT_HINT);
    static_assert(diag::expect<!c::count_ok || c::contiguous_ok, detail::described<diag::tensor_axes, From...>>,
                  "shaped::view<To...>(x): view size is not compatible with input tensor's size and stride: x was "
                  "transposed, so it is not contiguous; call x.contiguous().view<...>() or x.reshape<...>()");
    static_assert(diag::expect<!c::missed(m::split_reordered), typename c::from_t, typename c::to_t, typename c::after_t>,
                  "shaped::view" SHAPED_DETAIL_SPLIT_REORDERED_HINT);
    static_assert(diag::expect<!c::missed(m::transpose_after), typename c::from_t, typename c::to_t, typename c::after_t>,
                  "shaped::view" SHAPED_DETAIL_TRANSPOSE_AFTER_HINT);
    static_assert(diag::expect<!c::missed(m::transpose_first), typename c::from_t, typename c::to_t, typename c::first_t>,
                  "shaped::view" SHAPED_DETAIL_TRANSPOSE_FIRST_HINT);
    static_assert(diag::expect<!c::missed(m::merged_back_out_first), typename c::from_t, typename c::to_t>,
                  "shaped::view" SHAPED_DETAIL_MERGED_BACK_OUT_HINT);
    static_assert(diag::expect<!c::missed(m::other_axes), typename c::from_t, typename c::to_t>,
                  "shaped::view" SHAPED_DETAIL_OTHER_AXES_HINT);
    if constexpr (c::ok)
        return detail::view_unchecked<Value, To...>(std::move(x));
    else
        return diag::failed_shape_check{};
}

/// `view` for a tensor of any layout: PyTorch's `reshape`, which copies when the input is not contiguous.
///
/// Shapes and errors: those of `view`, except that a strided `x` is allowed. Nothing is thrown.
/// Source: `torch.Tensor.reshape`.
/// Example: `auto c = context_vec.transpose<1, 2>().reshape<batch, num_tokens, d_out>();`
template <Axis... To, class Value, class Layout, Axis... From>
auto reshape(basic_tensor<Value, Layout, From...> x) {
    using c = detail::view_check<true, Layout, detail::axis_pack<From...>, detail::axis_pack<To...>>;
    using m = detail::regroup_miss;
    static_assert(diag::expect<c::count_ok, typename c::from_t, typename c::to_t, typename c::counts_t>,
                  "shaped::reshape" SHAPED_DETAIL_COUNT_HINT);
    static_assert(diag::expect<!c::missed(m::split_reordered), typename c::from_t, typename c::to_t, typename c::after_t>,
                  "shaped::reshape" SHAPED_DETAIL_SPLIT_REORDERED_HINT);
    static_assert(diag::expect<!c::missed(m::transpose_after), typename c::from_t, typename c::to_t, typename c::after_t>,
                  "shaped::reshape" SHAPED_DETAIL_TRANSPOSE_AFTER_HINT);
    static_assert(diag::expect<!c::missed(m::transpose_first), typename c::from_t, typename c::to_t, typename c::first_t>,
                  "shaped::reshape" SHAPED_DETAIL_TRANSPOSE_FIRST_HINT);
    static_assert(diag::expect<!c::missed(m::merged_back_out_first), typename c::from_t, typename c::to_t>,
                  "shaped::reshape" SHAPED_DETAIL_MERGED_BACK_OUT_HINT);
    static_assert(diag::expect<!c::missed(m::other_axes), typename c::from_t, typename c::to_t>,
                  "shaped::reshape" SHAPED_DETAIL_OTHER_AXES_HINT);
    if constexpr (c::ok)
        return detail::view_unchecked<Value, To...>(std::move(x));
    else
        return diag::failed_shape_check{};
}

#undef SHAPED_DETAIL_COUNT_HINT
#undef SHAPED_DETAIL_SPLIT_REORDERED_HINT
#undef SHAPED_DETAIL_TRANSPOSE_AFTER_HINT
#undef SHAPED_DETAIL_TRANSPOSE_FIRST_HINT
#undef SHAPED_DETAIL_MERGED_BACK_OUT_HINT
#undef SHAPED_DETAIL_OTHER_AXES_HINT

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
