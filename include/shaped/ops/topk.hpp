#ifndef SHAPED_OPS_TOPK_HPP
#define SHAPED_OPS_TOPK_HPP

/// \file
/// `topk`: the `k` largest elements along an axis and where they were, on an axis of their own.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

#include "../diagnostics.hpp"
#include "../shape.hpp"
#include "../tensor_fwd.hpp"
#include "index.hpp"

namespace shaped {

/// What `topk` gives, as PyTorch's `(values, indices)`: `auto [top_logits, top_pos] = shaped::topk<vocab>(x, 3);`.
template <class Values, class Indices>
struct topk_result {
    /// The `k` largest elements, largest first, along `top_k<A>`.
    Values values;
    /// Their positions along `A` (int64), along `top_k<A>`.
    Indices indices;
};

/// The `k` largest elements along the axis `A`, largest first, and their positions along `A`.
///
/// Shapes: `x` is `(..., A, ...)`; both results are `(..., top_k<A>, ...)`, `A` replaced by the run-time axis
/// `top_k<A>` of extent `k`, contiguous: the `j`-th position is the `j`-th largest, so neither result lines up
/// with `x` (compare with one of the values, or `gather` by the indices). Element type: values as `x`'s,
/// indices `std::int64_t`. NaN counts as larger than any number, as in PyTorch; equal values come lowest
/// position first (PyTorch leaves their order unspecified).
/// Errors: compile time, an axis `x` does not have exactly once. Thrown: `shape_error` when `k` is 0 or more
/// than `A`'s extent.
/// Source: `torch.topk(x, k, dim, largest=True, sorted=True)`; the book's top-k sampling (chapter 5).
/// Example: `auto [top_logits, top_pos] = shaped::topk<vocab>(next_token_logits, 3);`
template <Axis A, class V, class L, Axis... X>
auto topk(const basic_tensor<V, L, X...>& x, std::size_t k) {
    constexpr bool ok = detail::count_of_v<A, X...> == 1;
    static_assert(diag::expect<ok, detail::described<diag::expected_axes, A>, detail::described<diag::tensor_axes, X...>>,
                  "shaped::topk<A>(x, k): x must have the axis A exactly once");
    if constexpr (ok) {
        constexpr std::size_t d = detail::index_of<A, X...>();
        constexpr std::size_t n = sizeof...(X);
        using values_t = typename detail::narrowed<d, top_k<A>, V, std::make_index_sequence<n>, X...>::type;
        using indices_t = typename detail::narrowed<d, top_k<A>, std::int64_t, std::make_index_sequence<n>, X...>::type;
        const std::size_t len = x.shape.extent(d);
        if (k == 0 || k > len)
            throw shape_error("topk<" + axis_name<A>() + ">(x, k)",
                              "1 <= k <= " + std::to_string(len) + " (the extent of " + axis_name<A>() + ")",
                              "k = " + std::to_string(k));
        // The result's extents: x's, with A's replaced by k (what narrow makes of a run of k positions).
        auto extents_of = [&]<class T>(std::type_identity<T>) {
            std::array<std::size_t, T::extents_type::rank_dynamic> r{};
            const auto src = x.shape.dynamic();
            std::size_t a = 0, j = 0;
            for (std::size_t i = 0; i < n; ++i) {
                const std::size_t atoms = extents<X...>::atom_counts[i];
                if (i == d) {
                    r[a++] = k;
                    j += atoms;
                } else {
                    for (std::size_t t = 0; t < atoms; ++t) r[a++] = src[j++];
                }
            }
            return typename T::extents_type(detail::adopt_tag{}, r);
        };
        values_t values(extents_of(std::type_identity<values_t>{}), uninitialized);
        indices_t indices(extents_of(std::type_identity<indices_t>{}), uninitialized);
        std::size_t inner = 1;
        for (std::size_t i = d + 1; i < n; ++i) inner *= x.shape.extent(i);
        const std::size_t outer = x.numel() / (len * inner);
        const auto& elements = x.storage();  // row-major (a copy for a strided tensor)
        const V* src = elements.data();
        std::vector<std::int64_t> order(len);
        for (std::size_t o = 0; o < outer; ++o)
            for (std::size_t i = 0; i < inner; ++i) {
                const V* row = src + o * len * inner + i;
                auto greater = [&](std::int64_t a, std::int64_t b) {
                    const V va = row[static_cast<std::size_t>(a) * inner], vb = row[static_cast<std::size_t>(b) * inner];
                    if constexpr (std::is_floating_point_v<V>) {
                        const bool na = std::isnan(va), nb = std::isnan(vb);
                        if (na || nb) return na && (!nb || a < b);
                    }
                    return va > vb || (va == vb && a < b);
                };
                std::iota(order.begin(), order.end(), std::int64_t{0});
                std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(k), order.end(), greater);
                for (std::size_t j = 0; j < k; ++j) {
                    const std::size_t at = (o * k + j) * inner + i;
                    indices.data()[at] = order[j];
                    values.data()[at] = row[static_cast<std::size_t>(order[j]) * inner];
                }
            }
        return topk_result<values_t, indices_t>{std::move(values), std::move(indices)};
    } else {
        return diag::failed_shape_check{};
    }
}

}  // namespace shaped

#endif
