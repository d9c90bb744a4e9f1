#ifndef SHAPED_OPS_TRANSPOSE_HPP
#define SHAPED_OPS_TRANSPOSE_HPP

/// \file
/// `transpose`, `permute`, `T` (reverse all axes) and `contiguous`.

#include <algorithm>
#include <array>
#include <cstddef>
#include <utility>
#include <xtensor/xmanipulation.hpp>
#include <xtensor/xtensor.hpp>

#include "../diagnostics.hpp"
#include "../shape.hpp"
#include "../tensor_fwd.hpp"

namespace shaped {

namespace detail {
// out = in with its axes reordered (out axis k is in axis perm[k]), both row-major. Walks the output in
// order, moving the input offset by strides, and copies runs along the last output axis in a tight loop
// (a general xtensor strided assignment is several times slower here).
template <class Value, std::size_t N>
void permute_copy(const Value* in, Value* out, const std::array<std::size_t, N>& extent,
                  const std::array<std::size_t, N>& perm) {
    if constexpr (N == 0) {
        *out = *in;
    } else {
        std::array<std::size_t, N> in_stride{}, out_extent{}, stride{};
        in_stride[N - 1] = 1;
        for (std::size_t i = N - 1; i > 0; --i) in_stride[i - 1] = in_stride[i] * extent[i];
        for (std::size_t k = 0; k < N; ++k) {
            out_extent[k] = extent[perm[k]];
            stride[k] = in_stride[perm[k]];
        }
        std::size_t total = 1;
        for (auto e : extent) total *= e;
        const std::size_t run = out_extent[N - 1], step = stride[N - 1];
        std::array<std::size_t, N> index{};
        std::size_t offset = 0;
        for (std::size_t done = 0; done < total; done += run) {
            const Value* src = in + offset;
            if (step == 1)
                std::copy_n(src, run, out);
            else
                for (std::size_t j = 0; j < run; ++j) out[j] = src[j * step];
            out += run;
            // Advance the output index over all but the last axis, carrying like an odometer.
            for (std::size_t k = N - 1; k-- > 0;) {
                offset += stride[k];
                if (++index[k] < out_extent[k]) break;
                offset -= stride[k] * out_extent[k];
                index[k] = 0;
            }
        }
    }
}

// Applies a permutation of the axes: result axis k is input axis perm[k].
template <class Value, std::size_t N, std::array<std::size_t, N> Perm, class... Axes, std::size_t... K>
auto permuted(const xt::xtensor<Value, N>& data, std::index_sequence<K...>) {
    using result = strided_tensor<Value, axis_at_t<Perm[K], Axes...>...>;
    // Materialised in the new order (one copy); the type still says "strided", so that view is refused
    // where PyTorch refuses it.
    result out(uninitialized);
    permute_copy<Value, N>(data.data(), out.storage().data(), {Axes::extent...}, Perm);
    return out;
}

template <std::size_t N, std::array<int, N> Dims>
constexpr bool is_permutation_of_dims() {
    std::array<bool, N> seen{};
    for (int d : Dims) {
        if (!dim_in_range(d, N))
            return false;
        auto w = wrap_dim(d, N);
        if (seen[w])
            return false;
        seen[w] = true;
    }
    return true;
}
}  // namespace detail

/// Swaps dimensions `Dim0` and `Dim1` (negative counts from the end, as in PyTorch).
///
/// Shapes: `(..., A_i, ..., A_j, ...)` to `(..., A_j, ..., A_i, ...)`; the result is strided (not
/// contiguous): `view` on it fails to compile until `contiguous()`.
/// Errors: compile time, a dimension outside `[-rank, rank - 1]` (PyTorch's IndexError "Dimension out of
/// range"). Nothing is thrown.
/// Source: `torch.Tensor.transpose(dim0, dim1)`; `keys.transpose(2, 3)` in the book's listing 3.5.
/// Example: `auto kt = k.transpose<2, 3>();   // (b, num_heads, head_dim, num_tokens)`
template <int Dim0, int Dim1, class Value, class Layout, Axis... Axes>
auto transpose(const basic_tensor<Value, Layout, Axes...>& x) {
    constexpr std::size_t n = sizeof...(Axes);
    constexpr bool ok = detail::dim_in_range(Dim0, n) && detail::dim_in_range(Dim1, n);
    static_assert(diag::expect<ok, diag::dims<Dim0, Dim1>, detail::described<diag::tensor_axes, Axes...>>,
                  "shaped::transpose<Dim0, Dim1>(x): dimension out of range; a tensor of rank n takes "
                  "dimensions -n to n-1");
    if constexpr (ok) {
        constexpr auto perm = [] {
            std::array<std::size_t, n> p{};
            for (std::size_t i = 0; i < n; ++i) p[i] = i;
            std::swap(p[detail::wrap_dim(Dim0, n)], p[detail::wrap_dim(Dim1, n)]);
            return p;
        }();
        return detail::permuted<Value, n, perm, Axes...>(x.storage(), std::make_index_sequence<n>{});
    } else {
        return diag::failed_shape_check{};
    }
}

/// Swaps the axes named `A0` and `A1`.
///
/// Shapes: as the positional form. Errors: compile time, an axis that `x` does not have, or has more
/// than once (then use the positional form). Nothing is thrown.
/// Source: `torch.Tensor.transpose` with names (named tensors).
/// Example: `auto q_heads = q.transpose<num_tokens, num_heads>();`
template <Axis A0, Axis A1, class Value, class Layout, Axis... Axes>
auto transpose(const basic_tensor<Value, Layout, Axes...>& x) {
    constexpr bool ok = detail::count_of_v<A0, Axes...> == 1 && detail::count_of_v<A1, Axes...> == 1;
    static_assert(
        diag::expect<ok, detail::described<diag::expected_axes, A0, A1>, detail::described<diag::tensor_axes, Axes...>>,
        "shaped::transpose<A0, A1>(x): each named axis must appear exactly once in x");
    if constexpr (ok)
        return transpose<static_cast<int>(detail::index_of<A0, Axes...>()),
                         static_cast<int>(detail::index_of<A1, Axes...>())>(x);
    else
        return diag::failed_shape_check{};
}

/// Reorders all dimensions: result dimension k is input dimension `Dims[k]`.
///
/// Shapes: `(A_0, ..., A_n-1)` to `(A_Dims[0], ...)`; strided. Errors: compile time, not a permutation
/// of `0..rank-1` (negative allowed). Nothing is thrown.
/// Source: `torch.Tensor.permute(*dims)`.
/// Example: `auto t = x.permute<0, 2, 1, 3>();`
template <int... Dims, class Value, class Layout, Axis... Axes>
auto permute(const basic_tensor<Value, Layout, Axes...>& x) {
    constexpr std::size_t n = sizeof...(Axes);
    constexpr bool ok = sizeof...(Dims) == n && detail::is_permutation_of_dims<n, std::array<int, n>{Dims...}>();
    static_assert(diag::expect<ok, diag::dims<Dims...>, detail::described<diag::tensor_axes, Axes...>>,
                  "shaped::permute<Dims...>(x): the dimensions must be a permutation of 0..rank-1");
    if constexpr (ok) {
        constexpr std::array<std::size_t, n> perm{detail::wrap_dim(Dims, n)...};
        return detail::permuted<Value, n, perm, Axes...>(x.storage(), std::make_index_sequence<n>{});
    } else {
        return diag::failed_shape_check{};
    }
}

/// Reverses all axes: PyTorch's `x.T` (deprecated there for rank other than 2).
///
/// Shapes: `(A_0, ..., A_n-1)` to `(A_n-1, ..., A_0)`; strided. Errors: none of its own; used as the
/// transpose of keys in 3-d or 4-d attention it fails in `matmul`, which names the axes. Nothing thrown.
/// Source: `torch.Tensor.T`.
template <class Value, class Layout, Axis... Axes>
auto reverse_axes(const basic_tensor<Value, Layout, Axes...>& x) {
    constexpr std::size_t n = sizeof...(Axes);
    constexpr auto perm = [] {
        std::array<std::size_t, n> p{};
        for (std::size_t i = 0; i < n; ++i) p[i] = n - 1 - i;
        return p;
    }();
    return detail::permuted<Value, n, perm, Axes...>(x.storage(), std::make_index_sequence<n>{});
}

/// The same tensor, contiguous: what makes `view` legal again after a transpose.
///
/// Shapes: unchanged. Errors: none. Nothing is thrown.
/// Source: `torch.Tensor.contiguous`; `context_vec.transpose(1, 2).contiguous().view(...)` (listing 3.5).
template <class Value, class Layout, Axis... Axes>
auto contiguous(const basic_tensor<Value, Layout, Axes...>& x) {
    return tensor<Value, Axes...>(x.storage());
}
template <class Value, class Layout, Axis... Axes>
auto contiguous(basic_tensor<Value, Layout, Axes...>&& x) {
    return tensor<Value, Axes...>(std::move(x).storage());
}

}  // namespace shaped

#endif
