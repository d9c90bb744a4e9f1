#ifndef SHAPED_OPS_STACK_HPP
#define SHAPED_OPS_STACK_HPP

/// \file
/// New axes: `stack` (tensors along a new axis) and `unsqueeze` (a broadcastable axis of extent 1).

#include <algorithm>
#include <array>
#include <cstddef>
#include <string>
#include <utility>

#include "../diagnostics.hpp"
#include "../shape.hpp"
#include "../tensor_fwd.hpp"
#include "cat.hpp"

namespace shaped {

namespace detail {
template <class Value, std::size_t D, class New, class Ref, class Idx>
struct stack_result;
template <class Value, std::size_t D, class New, class Ref, std::size_t... I>
struct stack_result<Value, D, New, Ref, std::index_sequence<I...>> {
    // Axes before D, then New, then the rest: index I < D keeps axis I, I == D is New, I > D is axis I - 1.
    template <std::size_t J>
    static auto pick() {
        if constexpr (J == D)
            return hana::type_c<New>;
        else
            return hana::at_c<(J < D ? J : J - 1)>(tensor_parts<Ref>::axes);
    }
    using type = tensor<Value, typename decltype(pick<I>())::type...>;
};

// The extents of a part with a static axis inserted at D (stack's New, unsqueeze's one).
template <class Result, std::size_t D, class E>
Result stacked_extents(const E& part) {
    static constexpr auto sources = [] {
        std::array<axis_source, Result::rank> s{};
        for (std::size_t j = 0; j < Result::rank; ++j)
            if (j != D) s[j] = {0, j < D ? j : j - 1};
        return s;
    }();
    return take_extents<Result, sources>(part);
}
}  // namespace detail

/// Stacks `N` tensors of the same type along a new axis `New` (of extent `N`) inserted at `Dim`.
///
/// Shapes: `N` tensors `(A...)` give `(A_0, ..., New, ..., A_n-1)` with `New` at `Dim` (0 to rank; negative
/// counts from the end of the result, as in PyTorch). Element type: the parts'.
/// Errors: compile time, `New::extent != N`, or `Dim` out of range. Thrown (`shape_error`): the same
/// run-time axis with other extents in two parts.
/// Source: `torch.stack(tensors, dim)`; `batch = torch.stack((inputs, inputs), dim=0)` (the book, 3.5).
/// Example: `auto batch_x = shaped::stack<0, batch>(std::array{inputs, inputs});`
template <int Dim, Axis New, class Part, std::size_t N>
auto stack(const std::array<Part, N>& parts) {
    constexpr std::size_t rank = Part::rank + 1;
    constexpr bool dim_ok = detail::dim_in_range(Dim, rank);
    static_assert(diag::expect<dim_ok, diag::dims<Dim>, diag::rank<rank>>,
                  "shaped::stack<Dim, New>(tensors): dimension out of range for the stacked result");
    static_assert(diag::expect<New::extent == N, detail::described<diag::expected_axes, New>, diag::numbers<N>>,
                  "shaped::stack<Dim, New>(tensors): the new axis's extent must be the number of tensors");
    if constexpr (dim_ok && New::extent == N) {
        constexpr std::size_t d = detail::wrap_dim(Dim, rank);
        using value = typename detail::tensor_parts<Part>::value;
        using result_t = typename detail::stack_result<value, d, New, Part, std::make_index_sequence<rank>>::type;
        // The parts have one type; their run-time extents must be the same too.
        for (std::size_t i = 1; i < N; ++i)
            if (!(parts[i].shape == parts[0].shape)) [[unlikely]]
                detail::check_meets<detail::same_axes<Part::rank>>("stack<Dim, New>(tensors)", "tensors[0]",
                                                                   parts[0].shape, "tensors[" + std::to_string(i) + "]",
                                                                   parts[i].shape);
        const auto e = detail::stacked_extents<typename result_t::extents_type, d>(parts[0].shape);
        std::size_t inner = 1;
        for (std::size_t i = d; i < Part::rank; ++i) inner *= parts[0].shape.extent(i);
        result_t out(e, uninitialized);
        std::array<typename Part::storage_type, Part::is_contiguous ? 0 : N> copies;  // strided parts, row-major
        std::array<const value*, N> src{};
        std::array<std::size_t, N> sizes{};
        for (std::size_t i = 0; i < N; ++i) {
            if constexpr (Part::is_contiguous) {
                src[i] = parts[i].data();
            } else {
                copies[i] = parts[i].storage();
                src[i] = copies[i].data();
            }
            sizes[i] = inner;
        }
        detail::join_rows<value, N>(src, sizes, parts[0].numel() / inner, out.data());
        return out;
    } else {
        return diag::failed_shape_check{};
    }
}

/// Inserts the broadcastable axis `shaped::one` at `Dim` (0 to rank; negative counts from the end of
/// the result, as in PyTorch).
///
/// Shapes: `(A...)` to `(..., one, ...)`; contiguous (a copy). Errors: compile time, `Dim` out of range.
/// Nothing is thrown.
/// Source: `torch.Tensor.unsqueeze(dim)`; `mask[:, None, :, :]`.
/// Example: `auto per_batch = mask.unsqueeze<1>();   // (batch, one, num_tokens, key<num_tokens>)`
template <int Dim, class Value, class Layout, Axis... Axes>
auto unsqueeze(const basic_tensor<Value, Layout, Axes...>& x) {
    constexpr std::size_t rank = sizeof...(Axes) + 1;
    constexpr bool dim_ok = detail::dim_in_range(Dim, rank);
    static_assert(diag::expect<dim_ok, diag::dims<Dim>, detail::described<diag::tensor_axes, Axes...>>,
                  "shaped::unsqueeze<Dim>(x): dimension out of range; the result has rank+1 dimensions");
    if constexpr (dim_ok) {
        using result_t = typename detail::stack_result<Value, detail::wrap_dim(Dim, rank), one,
                                                       basic_tensor<Value, Layout, Axes...>,
                                                       std::make_index_sequence<rank>>::type;
        result_t out(detail::stacked_extents<typename result_t::extents_type, detail::wrap_dim(Dim, rank)>(x.shape),
                     uninitialized);
        const auto& elements = x.storage();  // row-major (a copy for a strided tensor)
        std::copy(elements.begin(), elements.end(), out.data());
        return out;
    } else {
        return diag::failed_shape_check{};
    }
}

}  // namespace shaped

#endif
