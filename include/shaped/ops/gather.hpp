#ifndef SHAPED_OPS_GATHER_HPP
#define SHAPED_OPS_GATHER_HPP

/// \file
/// `gather`: one element along an axis for each position of an int64 index tensor, e.g. the probability
/// of each target token.

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

#include "../diagnostics.hpp"
#include "../shape.hpp"
#include "../tensor_fwd.hpp"

namespace shaped {

namespace detail {
// Whether `index`'s axes I... are x's axes X... with the one at D removed (the squeezed form) or replaced
// by another axis (torch.gather's form).
template <std::size_t D, class... X, class... I>
constexpr bool gather_axes_ok(axis_pack<X...>, axis_pack<I...>) {
    constexpr std::size_t n = sizeof...(X), m = sizeof...(I);
    if constexpr (m + 1 == n) {
        return []<std::size_t... k>(std::index_sequence<k...>) {
            return (same_axis_v<axis_at_t<(k < D ? k : k + 1), X...>, axis_at_t<k, I...>> && ...);
        }(std::make_index_sequence<m>{});
    } else if constexpr (m == n) {
        return []<std::size_t... k>(std::index_sequence<k...>) {
            return ((k == D || same_axis_v<axis_at_t<k, X...>, axis_at_t<k, I...>>) && ...);
        }(std::make_index_sequence<m>{});
    } else {
        return false;
    }
}

[[noreturn, gnu::noinline, gnu::cold]] inline void gather_out_of_range(const std::string& axis, std::size_t extent,
                                                                        std::int64_t index) {
    throw std::out_of_range("shaped::gather<A>(x, index): index " + std::to_string(index) +
                            " is out of range for axis " + axis + ", whose extent is " + std::to_string(extent) +
                            " (valid: 0 to " + std::to_string(extent - 1) + ")");
}
}  // namespace detail

/// For each position of `index`, the element of `x` at that position whose coordinate along the axis `A`
/// is the index's value: `out[..., j, ...] = x[..., index[..., j, ...], ...]`. With the axis `A` left out
/// of `index`, one element per position (the probability of each target token,
/// `gather<vocab_size>(probas, targets)` for `(batch, num_tokens, vocab_size)` and `(batch, num_tokens)`).
///
/// Shapes: `x` is `(..., A, ...)`; `index` has `x`'s axes with `A` removed, or with `A` replaced by another
/// axis (`top_k<A>`, `one`, ...), as `torch.gather` takes it; the result has `index`'s axes (the gathered
/// axis is the index tensor's), contiguous. Element type: `x`'s any; `index`'s `std::int64_t`.
/// Errors: compile time, an `A` that `x` does not have exactly once, an `index` whose other axes are not
/// `x`'s (the token axis of the targets is not the logits' token axis, say). Thrown: `shape_error` when an
/// axis both carry at run time has other extents; `std::out_of_range` for an index below 0 or at least `A`'s
/// extent, naming the axis, its extent and the index (nothing is read out of bounds).
/// Source: `torch.gather(x, dim, index)`; `probas[text_idx, [0, 1, 2], targets[text_idx]]` (the book's
/// chapter 5), which is `gather<vocab_size>(probas.select<batch>(text_idx), targets.select<batch>(text_idx))`.
/// Example: `auto target_probas = shaped::gather<vocab_size>(probas, targets);   // (batch, num_tokens)`
template <Axis A, class V, class L, Axis... X, class LI, Axis... I>
auto gather(const basic_tensor<V, L, X...>& x, const basic_tensor<std::int64_t, LI, I...>& index) {
    constexpr bool has_a = detail::count_of_v<A, X...> == 1;
    static_assert(diag::expect<has_a, detail::described<diag::expected_axes, A>, detail::described<diag::tensor_axes, X...>>,
                  "shaped::gather<A>(x, index): x must have the axis A exactly once");
    if constexpr (has_a) {
        constexpr std::size_t d = detail::index_of<A, X...>();
        constexpr bool ok = detail::gather_axes_ok<d>(detail::axis_pack<X...>{}, detail::axis_pack<I...>{});
        static_assert(diag::expect<ok, detail::described<diag::lhs_axes, X...>, detail::described<diag::rhs_axes, I...>>,
                      "shaped::gather<A>(x, index): index must have x's axes, in x's order, with A left out or "
                      "replaced by the axis to gather along (torch.gather's index has x's other dimensions)");
        if constexpr (ok) {
            constexpr std::size_t n = sizeof...(X);
            constexpr bool squeezed = sizeof...(I) + 1 == n;
            const auto xs = x.shape.sizes();
            const auto is = index.shape.sizes();
            for (std::size_t k = 0; k < sizeof...(I); ++k) {
                const std::size_t xk = squeezed && k >= d ? k + 1 : k;
                if ((squeezed || k != d) && xs[xk] != is[k])
                    throw shape_error("gather<" + axis_name<A>() + ">(x, index)",
                                      "index with x's extents but " + axis_name<A>() + "'s (x: " + x.shape_text() + ")",
                                      "index: " + index.shape_text());
            }
            const std::size_t len = xs[d];
            std::size_t inner = 1;
            for (std::size_t k = d + 1; k < n; ++k) inner *= xs[k];
            const std::size_t outer = x.numel() / (len * inner);
            const std::size_t m = squeezed ? 1 : is[d];  // index positions per (outer, inner)
            tensor<V, I...> out(index.shape, uninitialized);
            const auto& xe = x.storage();
            const auto& ie = index.storage();
            const V* src = xe.data();
            const std::int64_t* idx = ie.data();
            V* dst = out.data();
            for (std::size_t o = 0; o < outer; ++o)
                for (std::size_t j = 0; j < m; ++j)
                    for (std::size_t i = 0; i < inner; ++i) {
                        const std::size_t at = (o * m + j) * inner + i;
                        const std::int64_t v = idx[at];
                        if (v < 0 || static_cast<std::size_t>(v) >= len) [[unlikely]]
                            detail::gather_out_of_range(axis_name<A>(), len, v);
                        dst[at] = src[(o * len + static_cast<std::size_t>(v)) * inner + i];
                    }
            return out;
        } else {
            return diag::failed_shape_check{};
        }
    } else {
        return diag::failed_shape_check{};
    }
}

/// After a failed shape check in either argument, no further errors (see `diag::failed_shape_check`).
template <class A, class X, class I>
    requires(std::is_same_v<X, diag::failed_shape_check> || std::is_same_v<I, diag::failed_shape_check>)
diag::failed_shape_check gather(const X&, const I&) {
    return {};
}

}  // namespace shaped

#endif
