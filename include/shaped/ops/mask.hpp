#ifndef SHAPED_OPS_MASK_HPP
#define SHAPED_OPS_MASK_HPP

/// \file
/// What causal attention needs for its mask: `ones`, `zeros`, `triu`, leading slices (`mask[:n, :n]`)
/// and `masked_fill`.

#include <algorithm>
#include <array>
#include <cstddef>
#include <string>
#include <utility>
#include <type_traits>
#include <vector>
#include <xtensor/xoperation.hpp>
#include <xtensor/xstrided_view.hpp>
#include <xtensor/xtensor.hpp>

#include "../diagnostics.hpp"
#include "../shape.hpp"
#include "../tensor_fwd.hpp"

namespace shaped {

namespace detail {
// (A separate template: g++ 12 crashes on this pack expansion written inside a generic lambda.)
template <class Value, class Prefix, std::size_t K, class Rest, class... Axes>
struct slice_result;
template <class Value, class... P, std::size_t K, std::size_t... I, class... Axes>
struct slice_result<Value, axis_pack<P...>, K, std::index_sequence<I...>, Axes...> {
    using type = tensor<Value, P..., axis_at_t<K + I, Axes...>...>;
};
}  // namespace detail

/// A float tensor of ones. Shapes: `(Axes...)`; one number per run-time axis, in order. Errors: thrown
/// (`shape_error`), a run-time extent outside `1..bound`. Source: `torch.ones(*size)`.
/// Example: `auto mask = shaped::triu<1>(shaped::ones<context_length, context_length>());`
template <Axis... Axes, detail::extent_number... N>
    requires(sizeof...(N) == extents<Axes...>::rank_dynamic)
tensor<float, Axes...> ones(N... n) {
    const auto e = extents<Axes...>::checked("ones", n...);
    typename tensor<float, Axes...>::storage_type s(tensor<float, Axes...>(e, uninitialized).storage());
    std::fill(s.begin(), s.end(), 1.0f);
    return tensor<float, Axes...>(detail::adopt_tag{}, e, std::move(s));
}

/// A float tensor of zeros. Shapes: `(Axes...)`; one number per run-time axis, in order. Errors: thrown
/// (`shape_error`), a run-time extent outside `1..bound`. Source: `torch.zeros(*size)`.
template <Axis... Axes, detail::extent_number... N>
    requires(sizeof...(N) == extents<Axes...>::rank_dynamic)
tensor<float, Axes...> zeros(N... n) {
    return tensor<float, Axes...>(extents<Axes...>::checked("zeros", n...));
}

/// The upper triangle of the last two axes, from diagonal `Diagonal` up; the rest set to zero.
///
/// Shapes: unchanged, rank at least 2. Errors: compile time, rank below 2. Nothing is thrown.
/// Source: `torch.triu(input, diagonal)`; `torch.triu(torch.ones(context_length, context_length),
/// diagonal=1)` is the book's causal mask (listing 3.3).
template <int Diagonal = 0, class Value, class Layout, Axis... Axes>
auto triu(const basic_tensor<Value, Layout, Axes...>& x) {
    constexpr std::size_t n = sizeof...(Axes);
    static_assert(diag::expect<(n >= 2), detail::described<diag::tensor_axes, Axes...>>,
                  "shaped::triu<Diagonal>(x): x needs at least two axes");
    if constexpr (n >= 2) {
        tensor<Value, Axes...> out(detail::adopt_tag{}, x.shape, x.storage());
        const std::size_t rows = x.shape.extent(n - 2), cols = x.shape.extent(n - 1);
        Value* p = out.data();
        for (std::size_t b = 0; b < out.numel() / (rows * cols); ++b)
            for (std::size_t i = 0; i < rows; ++i)
                for (std::size_t j = 0; j < cols; ++j)
                    if (static_cast<long>(j) - static_cast<long>(i) < Diagonal)
                        p[(b * rows + i) * cols + j] = Value{};
        return out;
    } else {
        return diag::failed_shape_check{};
    }
}

namespace detail {
// Whether every prefix axis is at most as long as the axis it cuts (by bound, for a run-time one).
template <class Prefixes, class Axes>
struct slice_rule;
template <class... P, class... A>
struct slice_rule<axis_pack<P...>, axis_pack<A...>> {
    template <std::size_t... I>
    static constexpr bool fits(std::index_sequence<I...>) {
        return ((P::bound <= axis_at_t<I, A...>::bound) && ...);
    }
    template <std::size_t... I>
    static constexpr bool declared(std::index_sequence<I...>) {
        return (prefix_of<P, axis_at_t<I, A...>>() && ...);
    }
};

[[noreturn, gnu::noinline, gnu::cold]] inline void slice_too_long(const std::string& prefix, std::size_t n,
                                                                   const std::string& shape, std::size_t extent) {
    throw shape_error("slice<...>(x, n...)", prefix + " <= " + std::to_string(extent) + " (the extent it cuts in " +
                                                 shape + ")",
                      prefix + " = " + std::to_string(n));
}
}  // namespace detail

/// The leading part of the first axes: axis `i` is cut to its first entries and takes the name
/// `Prefix_i`; later axes are kept. `mask.slice<num_tokens, key<num_tokens>>(t, t)` is
/// `mask[:num_tokens, :num_tokens]`. A static prefix has its own extent; a run-time prefix takes one
/// number, in order.
///
/// Shapes: `(A_0, ..., A_k-1, Rest...)` to `(Prefix_0, ..., Prefix_k-1, Rest...)`; each `Prefix_i` must be
/// declared as a prefix of `A_i`: `A_i` itself, an axis declared `at_most<A_i>` (a run-time `num_tokens`
/// or a static `six_tokens`), or `key<>` of one. The result is contiguous (a copy).
/// Errors: compile time, more prefix axes than `x` has; a prefix longer than its axis (a causal mask for
/// `context_length` 6 applied to 7 tokens); a prefix not declared within the axis it cuts (a mask can no
/// longer be sliced to any axis that happens to be short enough). Thrown (`shape_error`): a run-time
/// length outside `1..bound`, or longer than the run-time axis it cuts.
/// Source: Python slicing `x[:n, :m]`; `self.mask.bool()[:num_tokens, :num_tokens]` (listing 3.3).
template <Axis... Prefix, class Value, class Layout, Axis... Axes, detail::extent_number... N>
auto slice(const basic_tensor<Value, Layout, Axes...>& x, N... lengths) {
    constexpr std::size_t k = sizeof...(Prefix), n = sizeof...(Axes);
    static_assert(diag::expect<(k <= n), detail::described<diag::to_axes, Prefix...>,
                               detail::described<diag::tensor_axes, Axes...>>,
                  "shaped::slice<Prefix...>(x): more prefix axes than x has");
    if constexpr (k <= n) {
        using rule = detail::slice_rule<detail::axis_pack<Prefix...>, detail::axis_pack<Axes...>>;
        constexpr bool fits = rule::fits(std::make_index_sequence<k>{});
        static_assert(diag::expect<fits, detail::described<diag::to_axes, Prefix...>,
                                   detail::described<diag::tensor_axes, Axes...>>,
                      "shaped::slice<Prefix...>(x): a slice cannot be longer than its axis (e.g. num_tokens must "
                      "not exceed context_length: make context_length at least the number of tokens)");
        constexpr bool declared = !fits || rule::declared(std::make_index_sequence<k>{});
        static_assert(diag::expect<declared, detail::described<diag::to_axes, Prefix...>,
                                   detail::described<diag::tensor_axes, Axes...>>,
                      "shaped::slice<Prefix...>(x): each prefix axis must be declared as a prefix of the axis it "
                      "cuts (struct num_tokens : shaped::dynamic_axis<\"num_tokens\", shaped::at_most<context_length>>, "
                      "or shaped::axis<\"num_tokens\", 6, shaped::at_most<context_length>>), not only be short enough");
        constexpr std::size_t run_time_prefixes = (std::size_t{0} + ... + Prefix::dynamic_atoms);
        static_assert(((Prefix::dynamic_atoms <= 1) && ...) && sizeof...(N) == run_time_prefixes,
                      "shaped::slice<Prefix...>(x, n...): give one length for each run-time prefix axis, in order");
        if constexpr (fits && declared && sizeof...(N) == run_time_prefixes) {
            using result_t = typename detail::slice_result<Value, detail::axis_pack<Prefix...>, k,
                                                           std::make_index_sequence<n - k>, Axes...>::type;
            const auto prefix_extents = extents<Prefix...>::checked("slice<...>(x, n...)", lengths...);
            // A run-time prefix of a run-time axis may not be longer than that axis is now.
            if constexpr ((DynamicAxis<Axes> || ...)) {
                constexpr std::array<bool, n> run_time{DynamicAxis<Axes>...};
                for (std::size_t i = 0; i < k; ++i)
                    if (run_time[i] && prefix_extents.extent(i) > x.shape.extent(i))
                        detail::slice_too_long(prefix_extents.atom_name(extents<Prefix...>::atom_offsets[i]), prefix_extents.extent(i), x.shape.text(), x.shape.extent(i));
            }
            static constexpr auto sources = [] {
                std::array<detail::axis_source, n> s{};
                for (std::size_t i = 0; i < n; ++i) s[i] = i < k ? detail::axis_source{0, i} : detail::axis_source{1, i};
                return s;
            }();
            const auto e = detail::take_extents<typename result_t::extents_type, sources>(prefix_extents, x.shape);
            xt::xstrided_slice_vector sv;
            for (std::size_t i = 0; i < k; ++i) sv.push_back(xt::range(std::size_t{0}, e[i]));
            typename result_t::storage_type out = xt::strided_view(x.storage(), sv);
            return result_t(detail::adopt_tag{}, e, std::move(out));
        } else {
            return diag::failed_shape_check{};
        }
    } else {
        return diag::failed_shape_check{};
    }
}

/// `x` with `value` wherever `mask` is true (nonzero), broadcasting `mask` over `x`'s leading axes.
///
/// Shapes: `mask`'s axes, aligned from the right with `x`'s, must be the same axes; the result has
/// `x`'s axes (contiguous). Element type: `mask` may be bool or numeric (PyTorch wants `mask.bool()`).
/// Errors: compile time, a mask axis that is not the aligned axis of `x` (or `shaped::one`), a mask of
/// higher rank, or, on attention scores (a tensor with a `key<...>` axis), a mask without the key axis; on
/// scores over a KV cache's keys (`cached<num_tokens>`), a mask over the new tokens' own keys.
/// Thrown: `shape_error` when the same run-time axis has other extents in `x` and in `mask`.
/// Source: `torch.Tensor.masked_fill(mask, value)`; `attn_scores.masked_fill_(mask_bool, -torch.inf)`
/// (listing 3.3).
template <class Value, class LX, class M, class LM, Axis... X, Axis... MA>
auto masked_fill(basic_tensor<Value, LX, X...> x, const basic_tensor<M, LM, MA...>& mask,
                 std::type_identity_t<Value> value) {
    constexpr bool ok =
        sizeof...(MA) <= sizeof...(X) && detail::broadcast_lhs<X...>::template first_mismatch<MA...>() < 0;
    // Scores over a KV cache's keys and a mask over the new tokens' own: the fix is another slice of the mask.
    constexpr bool cache_mask = !ok && (detail::is_cached<X> || ...) && !(detail::is_cached<MA> || ...);
    using xa = detail::described<diag::tensor_axes, X...>;
    using ma = detail::described<diag::mask_axes, MA...>;
    static_assert(diag::expect<!cache_mask, xa, ma>,
                  "shaped::masked_fill(scores, mask, value): the scores run over the KV cache's keys, "
                  "cached<num_tokens>, and a mask for the new tokens alone does not cover them; take the rows after "
                  "the cached tokens: narrow<0, num_tokens>(mask, cached_before, n).slice<num_tokens, "
                  "cached<num_tokens>>(n, cached_before + n)");
    // A merged axis tiled in the other order (repeat for repeat_interleave), or the right axes transposed.
    constexpr auto miss = detail::broadcast_miss_of(detail::axis_pack<X...>{}, detail::axis_pack<MA...>{});
    constexpr bool reordered = !ok && !cache_mask && miss == detail::broadcast_miss::factors_reordered;
    constexpr bool permuted = !ok && !cache_mask && miss == detail::broadcast_miss::permuted;
    static_assert(diag::expect<!reordered, xa, ma>,
                  "shaped::masked_fill(x, mask, value): mask's axes, aligned from the right, must be the same axes as "
                  "x's; a merged axis has the same factors in another order (merged<a, b> against merged<b, a>): "
                  "tile the mask with repeat_interleave<New, Dim>() where repeat<New, Dim>() was used, or the reverse");
    static_assert(diag::expect<!permuted, xa, ma>,
                  "shaped::masked_fill(x, mask, value): mask's axes, aligned from the right, must be the same axes as "
                  "x's; they are x's axes in another order: transpose the mask to x's order");
    static_assert(diag::expect<ok || cache_mask || reordered || permuted, xa, ma>,
                  "shaped::masked_fill(x, mask, value): mask's axes, aligned from the right, must be the same axes "
                  "as x's or shaped::one; slice a causal mask to the tokens (mask.slice<num_tokens, "
                  "key<num_tokens>>()), rename a padding mask's token axis to key<num_tokens>, or unsqueeze a mask "
                  "over axes it lacks");
    constexpr bool keys_ok = !(detail::is_key<X> || ...) || (detail::is_key<MA> || ...);
    static_assert(diag::expect<!ok || keys_ok, xa, ma>,
                  "shaped::masked_fill(scores, mask, value): a mask on attention scores must lie along the key<...> "
                  "axis; a mask without it blanks whole query rows (softmax then gives NaN): rename the padding "
                  "mask's token axis to key<num_tokens> and unsqueeze it over the queries");
    if constexpr (ok && keys_ok) {
        constexpr std::size_t n = sizeof...(X), nm = sizeof...(MA);
        // The same run-time axis in x and in the mask must have the same extents.
        detail::check_meets<detail::broadcast_plan<detail::axis_pack<X...>, detail::axis_pack<MA...>>::pairs>(
            "masked_fill(x, mask, value)", "x", x.shape, "mask", mask.shape);
        // The mask's strides in x's index space: 0 along x's leading axes it lacks and along `one`.
        const auto extent = x.shape.sizes();
        const auto mask_stride = [&] {
            const auto me = mask.shape.sizes();
            std::array<std::size_t, n> st{};
            std::size_t s = 1;
            for (std::size_t k = nm; k-- > 0;) {
                st[n - nm + k] = me[k] == 1 ? 0 : s;
                s *= me[k];
            }
            return st;
        }();
        const auto e = x.shape;
        tensor<Value, X...> out(detail::adopt_tag{}, e, std::move(x).storage());  // a temporary x is filled in place
        Value* y = out.data();
        const auto& mask_elements = mask.storage();  // row-major (a copy for a strided mask)
        const M* m = mask_elements.data();
        const std::size_t run = extent[n - 1], step = mask_stride[n - 1];
        std::array<std::size_t, n> index{};
        std::size_t offset = 0;
        for (std::size_t done = 0; done < out.numel(); done += run, y += run) {
            for (std::size_t j = 0; j < run; ++j)
                if (m[offset + j * step]) y[j] = value;
            for (std::size_t k = n - 1; k-- > 0;) {  // odometer over all but the last axis
                offset += mask_stride[k];
                if (++index[k] < extent[k]) break;
                offset -= mask_stride[k] * extent[k];
                index[k] = 0;
            }
        }
        return out;
    } else {
        return diag::failed_shape_check{};
    }
}

}  // namespace shaped

#endif
