#ifndef SHAPED_OPS_MASK_HPP
#define SHAPED_OPS_MASK_HPP

/// \file
/// What causal attention needs for its mask: `ones`, `zeros`, `triu`, leading slices (`mask[:n, :n]`)
/// and `masked_fill`.

#include <cstddef>
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

/// A float tensor of ones. Shapes: `(Axes...)`. Errors: none. Source: `torch.ones(*size)`.
/// Example: `auto mask = shaped::triu<1>(shaped::ones<context_length, context_length>());`
template <Axis... Axes>
tensor<float, Axes...> ones() {
    typename tensor<float, Axes...>::storage_type s(
        typename tensor<float, Axes...>::storage_type::shape_type{Axes::extent...}, 1.0f);
    return tensor<float, Axes...>(std::move(s));
}

/// A float tensor of zeros. Shapes: `(Axes...)`. Errors: none. Source: `torch.zeros(*size)`.
template <Axis... Axes>
tensor<float, Axes...> zeros() {
    return tensor<float, Axes...>{};
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
        tensor<Value, Axes...> out(detail::adopt_tag{}, x.storage());
        constexpr std::size_t rows = detail::axis_at_t<n - 2, Axes...>::extent;
        constexpr std::size_t cols = detail::axis_at_t<n - 1, Axes...>::extent;
        Value* p = out.storage().data();
        for (std::size_t b = 0; b < out.numel / (rows * cols); ++b)
            for (std::size_t i = 0; i < rows; ++i)
                for (std::size_t j = 0; j < cols; ++j)
                    if (static_cast<long>(j) - static_cast<long>(i) < Diagonal)
                        p[(b * rows + i) * cols + j] = Value{};
        return out;
    } else {
        return diag::failed_shape_check{};
    }
}

/// The leading part of the first axes: axis `i` is cut to its first `Prefix_i::extent` entries and takes
/// the name `Prefix_i`; later axes are kept. `mask.slice<num_tokens, num_tokens>()` is
/// `mask[:num_tokens, :num_tokens]`.
///
/// Shapes: `(A_0, ..., A_k-1, Rest...)` to `(Prefix_0, ..., Prefix_k-1, Rest...)`, each
/// `Prefix_i::extent <= A_i::extent`; the result is contiguous (a copy).
/// Errors: compile time, more prefix axes than `x` has, or a prefix longer than its axis (a causal mask
/// for `context_length` 6 applied to 7 tokens). Nothing is thrown.
/// Source: Python slicing `x[:n, :m]`; `self.mask.bool()[:num_tokens, :num_tokens]` (listing 3.3).
template <Axis... Prefix, class Value, class Layout, Axis... Axes>
auto slice(const basic_tensor<Value, Layout, Axes...>& x) {
    constexpr std::size_t k = sizeof...(Prefix), n = sizeof...(Axes);
    static_assert(diag::expect<(k <= n), detail::described<diag::to_axes, Prefix...>,
                               detail::described<diag::tensor_axes, Axes...>>,
                  "shaped::slice<Prefix...>(x): more prefix axes than x has");
    if constexpr (k <= n) {
        constexpr bool fits = [] {
            constexpr std::array<std::size_t, n> have{Axes::extent...};
            constexpr std::array<std::size_t, k + 1> want{Prefix::extent..., 0};
            for (std::size_t i = 0; i < k; ++i)
                if (want[i] > have[i])
                    return false;
            return true;
        }();
        static_assert(diag::expect<fits, detail::described<diag::to_axes, Prefix...>,
                                   detail::described<diag::tensor_axes, Axes...>>,
                      "shaped::slice<Prefix...>(x): a slice cannot be longer than its axis (e.g. num_tokens must "
                      "not exceed context_length: make context_length at least the number of tokens)");
        if constexpr (fits) {
            using result_t = typename detail::slice_result<Value, detail::axis_pack<Prefix...>, k,
                                                           std::make_index_sequence<n - k>, Axes...>::type;
            xt::xstrided_slice_vector sv{xt::range(0, Prefix::extent)...};
            typename result_t::storage_type out = xt::strided_view(x.storage(), sv);
            return result_t(detail::adopt_tag{}, std::move(out));
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
/// higher rank, or, on attention scores (a tensor with a `key<...>` axis), a mask without the key axis.
/// Nothing is thrown.
/// Source: `torch.Tensor.masked_fill(mask, value)`; `attn_scores.masked_fill_(mask_bool, -torch.inf)`
/// (listing 3.3).
template <class Value, class LX, class M, class LM, Axis... X, Axis... MA>
auto masked_fill(basic_tensor<Value, LX, X...> x, const basic_tensor<M, LM, MA...>& mask,
                 std::type_identity_t<Value> value) {
    constexpr bool ok =
        sizeof...(MA) <= sizeof...(X) && detail::broadcast_lhs<X...>::template first_mismatch<MA...>() < 0;
    static_assert(
        diag::expect<ok, detail::described<diag::tensor_axes, X...>, detail::described<diag::mask_axes, MA...>>,
        "shaped::masked_fill(x, mask, value): mask's axes, aligned from the right, must be the same axes "
        "as x's or shaped::one; slice a causal mask to the tokens (mask.slice<num_tokens, key<num_tokens>>()), "
        "rename a padding mask's token axis to key<num_tokens>, unsqueeze a mask over axes it lacks, tile it "
        "in the order of x's merged axes");
    constexpr bool keys_ok = !(detail::is_key<X> || ...) || (detail::is_key<MA> || ...);
    static_assert(diag::expect<!ok || keys_ok, detail::described<diag::tensor_axes, X...>,
                               detail::described<diag::mask_axes, MA...>>,
                  "shaped::masked_fill(scores, mask, value): a mask on attention scores must lie along the key<...> "
                  "axis; a mask without it blanks whole query rows (softmax then gives NaN): rename the padding "
                  "mask's token axis to key<num_tokens> and unsqueeze it over the queries");
    if constexpr (ok && keys_ok) {
        // The mask's strides in x's index space: 0 along x's leading axes it lacks and along `one`.
        constexpr std::size_t n = sizeof...(X), nm = sizeof...(MA);
        constexpr std::array<std::size_t, n> extent{X::extent...};
        constexpr auto mask_stride = [] {
            constexpr std::array<std::size_t, nm + 1> me{MA::extent..., 1};
            std::array<std::size_t, n> st{};
            std::size_t s = 1;
            for (std::size_t k = nm; k-- > 0;) {
                st[n - nm + k] = me[k] == 1 ? 0 : s;
                s *= me[k];
            }
            return st;
        }();
        tensor<Value, X...> out(detail::adopt_tag{}, std::move(x).storage());  // a temporary x is filled in place
        Value* y = out.storage().data();
        const auto& mask_elements = mask.storage();  // row-major (a copy for a strided mask)
        const M* m = mask_elements.data();
        constexpr std::size_t run = extent[n - 1], step = mask_stride[n - 1];
        std::array<std::size_t, n> index{};
        std::size_t offset = 0;
        for (std::size_t done = 0; done < out.numel; done += run, y += run) {
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
