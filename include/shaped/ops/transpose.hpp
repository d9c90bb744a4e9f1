#ifndef SHAPED_OPS_TRANSPOSE_HPP
#define SHAPED_OPS_TRANSPOSE_HPP

/// \file
/// `transpose`, `permute`, `T` (reverse all axes) and `contiguous`.

#include <algorithm>
#include <array>
#include <cstddef>
#include <type_traits>
#include <utility>
#include <xtensor/xtensor.hpp>

#include "../diagnostics.hpp"
#include "../shape.hpp"
#include "../tensor_fwd.hpp"

namespace shaped {

namespace detail {
// Applies a permutation of the axes without moving an element: result axis k is input axis perm[k],
// with that axis's stride, over the input's buffer (moved from a temporary, copied from a variable).
template <class Value, std::size_t N, std::array<std::size_t, N> Perm, class Layout, class... Axes, std::size_t... K>
auto permuted(basic_tensor<Value, Layout, Axes...> x, std::index_sequence<K...>) {
    using result = strided_tensor<Value, axis_at_t<Perm[K], Axes...>...>;
    const std::array<std::size_t, N> from = x.stride();
    const auto e = take_extents<typename result::extents_type, std::array<axis_source, N>{axis_source{0, Perm[K]}...}>(
        x.shape);
    return result(adopt_tag{}, strided_tag{}, e, std::move(x).buffer(), std::array<std::size_t, N>{from[Perm[K]]...});
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
/// contiguous): `view` on it fails to compile until `contiguous()`. No element moves: the result keeps
/// `x`'s buffer (taken from a temporary, copied from a variable) with the two strides swapped, and
/// `matmul` reads it in place.
/// Errors: compile time, a dimension outside `[-rank, rank - 1]` (PyTorch's IndexError "Dimension out of
/// range"). Nothing is thrown.
/// Source: `torch.Tensor.transpose(dim0, dim1)`; `keys.transpose(2, 3)` in the book's listing 3.5.
/// Example: `auto kt = k.transpose<2, 3>();   // (b, num_heads, head_dim, num_tokens)`
template <int Dim0, int Dim1, class Value, class Layout, Axis... Axes>
auto transpose(basic_tensor<Value, Layout, Axes...> x) {
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
        return detail::permuted<Value, n, perm>(std::move(x), std::make_index_sequence<n>{});
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
auto transpose(basic_tensor<Value, Layout, Axes...> x) {
    constexpr bool ok = detail::count_of_v<A0, Axes...> == 1 && detail::count_of_v<A1, Axes...> == 1;
    static_assert(
        diag::expect<ok, detail::described<diag::expected_axes, A0, A1>, detail::described<diag::tensor_axes, Axes...>>,
        "shaped::transpose<A0, A1>(x): each named axis must appear exactly once in x");
    if constexpr (ok)
        return transpose<static_cast<int>(detail::index_of<A0, Axes...>()),
                         static_cast<int>(detail::index_of<A1, Axes...>())>(std::move(x));
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
auto permute(basic_tensor<Value, Layout, Axes...> x) {
    constexpr std::size_t n = sizeof...(Axes);
    constexpr bool ok = sizeof...(Dims) == n && detail::is_permutation_of_dims<n, std::array<int, n>{Dims...}>();
    static_assert(diag::expect<ok, diag::dims<Dims...>, detail::described<diag::tensor_axes, Axes...>>,
                  "shaped::permute<Dims...>(x): the dimensions must be a permutation of 0..rank-1");
    if constexpr (ok) {
        constexpr std::array<std::size_t, n> perm{detail::wrap_dim(Dims, n)...};
        return detail::permuted<Value, n, perm>(std::move(x), std::make_index_sequence<n>{});
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
auto reverse_axes(basic_tensor<Value, Layout, Axes...> x) {
    constexpr std::size_t n = sizeof...(Axes);
    constexpr auto perm = [] {
        std::array<std::size_t, n> p{};
        for (std::size_t i = 0; i < n; ++i) p[i] = n - 1 - i;
        return p;
    }();
    return detail::permuted<Value, n, perm>(std::move(x), std::make_index_sequence<n>{});
}

/// The same tensor, contiguous: what makes `view` legal again after a transpose.
///
/// Shapes: unchanged. Errors: none. Nothing is thrown.
/// Source: `torch.Tensor.contiguous`; `context_vec.transpose(1, 2).contiguous().view(...)` (listing 3.5).
template <class Value, class Layout, Axis... Axes>
auto contiguous(const basic_tensor<Value, Layout, Axes...>& x) {
    if constexpr (std::is_same_v<Layout, layout::contiguous>) {
        return tensor<Value, Axes...>(detail::adopt_tag{}, x.shape, x.storage());
    } else {  // one gather from the buffer
        tensor<Value, Axes...> out(x.shape, uninitialized);
        detail::gather_strided<Value, sizeof...(Axes)>(x.data(), out.data(), x.shape.sizes(), x.stride());
        return out;
    }
}
/// On a temporary: its elements, moved when it is contiguous, copied row-major once when it is strided.
template <class Value, class Layout, Axis... Axes>
auto contiguous(basic_tensor<Value, Layout, Axes...>&& x) {
    const auto e = x.shape;
    return tensor<Value, Axes...>(detail::adopt_tag{}, e, std::move(x).storage());
}

}  // namespace shaped

#endif
