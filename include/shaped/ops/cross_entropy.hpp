#ifndef SHAPED_OPS_CROSS_ENTROPY_HPP
#define SHAPED_OPS_CROSS_ENTROPY_HPP

/// \file
/// `cross_entropy`: the mean negative log-probability of target ids under logits, the language-modelling
/// loss.

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "../diagnostics.hpp"
#include "../shape.hpp"
#include "../tensor_fwd.hpp"

namespace shaped {

namespace detail {
// Whether the targets' axes T... are the logits' X... without the last (the class axis).
template <class... X, class... T>
constexpr bool targets_line_up(axis_pack<X...>, axis_pack<T...>) {
    if constexpr (sizeof...(T) + 1 != sizeof...(X)) {
        return false;
    } else {
        return []<std::size_t... k>(std::index_sequence<k...>) {
            return (same_axis_v<axis_at_t<k, X...>, axis_at_t<k, T...>> && ...);
        }(std::make_index_sequence<sizeof...(T)>{});
    }
}

// log(sum(exp(row - mx))) over a contiguous row, adding as PyTorch's AVX2 kernel adds (8 lanes, each a
// running sum, the tail into the first lanes, then the lanes pairwise: 0+4, 1+5, ...; then 0+2, 1+3; then 0+1).
template <class Value>
Value log_sum_exp_shifted(const Value* row, std::size_t len, Value mx) {
    constexpr std::size_t lanes = 32 / sizeof(Value);
    if (len < lanes) {
        Value sum = std::exp(row[0] - mx);
        for (std::size_t l = 1; l < len; ++l) sum += std::exp(row[l] - mx);
        return std::log(sum);
    }
    std::array<Value, lanes> acc{};
    for (std::size_t l = 0; l < lanes; ++l) acc[l] = std::exp(row[l] - mx);
    std::size_t j = lanes;
    for (; j + lanes <= len; j += lanes)
        for (std::size_t l = 0; l < lanes; ++l) acc[l] += std::exp(row[j + l] - mx);
    for (std::size_t l = 0; j + l < len; ++l) acc[l] += std::exp(row[j + l] - mx);
    for (std::size_t w = lanes / 2; w >= 1; w /= 2)
        for (std::size_t l = 0; l < w; ++l) acc[l] += acc[l + w];
    return std::log(acc[0]);
}
}  // namespace detail

/// The mean over every target that is not `ignore_index` of `-log_softmax(logits)[target]`: the loss of a
/// language model whose logits are `(..., vocab_size)` and whose next tokens are the ids `targets`, `(...)`.
/// The class axis is the last one, whatever the rank (PyTorch takes it at dimension 1, which is why the book
/// flattens `(batch, num_tokens, vocab_size)` first; both forms compile here and give the same loss).
///
/// Shapes: `logits` `(..., C)`, `targets` the same axes without `C`; the result is a rank-0 tensor (print it,
/// `tensor(10.7940)`, or take `.item()`). Element type: `logits`' float or double (the result's), `targets`'
/// `std::int64_t`. Computed in PyTorch 1.13's order (log-softmax per row, then its cascaded sum of the
/// negated target entries in the element type, divided by the count of targets kept): the same as PyTorch's to
/// about one unit in the last place (its `exp` is SLEEF's, this one the C library's). No target kept gives NaN
/// (0/0), as in PyTorch.
/// Errors: compile time, targets whose axes are not the logits' without the last, in order (targets
/// `(num_tokens, batch)`, or of another token axis, do not line up), targets not int64. Thrown: `shape_error`
/// when a run-time axis has other extents in the two; `std::out_of_range` for a target outside `0..C-1` that
/// is not `ignore_index`, naming it (nothing is read out of bounds).
/// Source: `torch.nn.functional.cross_entropy(input, target, ignore_index=-100, reduction="mean")`; the book's
/// `calc_loss_batch` (chapter 5), `loss = cross_entropy(logits.flatten(0, 1), target_batch.flatten())`.
/// Example: `auto loss = shaped::cross_entropy(logits.flatten<0, 1>(), targets.flatten());   // tensor<float>`
template <class V, class L, Axis... X, class LT, Axis... T>
auto cross_entropy(const basic_tensor<V, L, X...>& logits, const basic_tensor<std::int64_t, LT, T...>& targets,
                   std::int64_t ignore_index = -100) {
    static_assert(std::is_floating_point_v<V>, "shaped::cross_entropy(logits, targets): logits must be float or double");
    constexpr bool ok = detail::targets_line_up(detail::axis_pack<X...>{}, detail::axis_pack<T...>{});
    static_assert(diag::expect<ok, detail::described<diag::lhs_axes, X...>, detail::described<diag::rhs_axes, T...>>,
                  "shaped::cross_entropy(logits, targets): the targets must have the logits' axes without the last "
                  "(the classes), in the same order: (..., vocab_size) logits take (...) targets");
    if constexpr (ok) {
        const auto ls = logits.shape.sizes();
        const auto ts = targets.shape.sizes();
        for (std::size_t k = 0; k < sizeof...(T); ++k)
            if (ls[k] != ts[k])
                throw shape_error("cross_entropy(logits, targets)",
                                  "targets of the logits' extents without the last (logits: " + logits.shape_text() + ")",
                                  "targets: " + targets.shape_text());
        constexpr std::size_t n = sizeof...(X);
        const std::size_t classes = ls[n - 1];
        const std::size_t rows = logits.numel() / classes;
        const auto& le = logits.storage();  // row-major (a copy for a strided tensor)
        const auto& te = targets.storage();
        const V* x = le.data();
        const std::int64_t* t = te.data();
        // PyTorch's nll_loss_out_frame: partial sums at 8 levels, each carried up when its block of
        // 2^level_power rows is complete.
        constexpr std::size_t levels = 8;
        const std::size_t ceil_log2 = rows <= 1 ? 0 : static_cast<std::size_t>(std::bit_width(rows - 1));
        const std::size_t level_power = std::max<std::size_t>(4, ceil_log2 / levels);
        const std::size_t level_mask = (std::size_t{1} << level_power) - 1;
        std::array<V, levels> partial{};
        std::size_t ignored = 0;
        for (std::size_t b = 0; b < rows; ++b) {
            const std::int64_t target = t[b];
            if (target == ignore_index) {
                ++ignored;
                continue;
            }
            if (target < 0 || static_cast<std::size_t>(target) >= classes)
                throw std::out_of_range("shaped::cross_entropy(logits, targets): target " + std::to_string(target) +
                                        " is outside 0 to " + std::to_string(classes - 1) + " (the extent of " +
                                        axis_name<detail::axis_at_t<n - 1, X...>>() + ") and is not ignore_index (" +
                                        std::to_string(ignore_index) + ")");
            const V* row = x + b * classes;
            V mx = -std::numeric_limits<V>::infinity();
            for (std::size_t j = 0; j < classes; ++j) mx = std::max(mx, row[j]);
            const V log_sum = detail::log_sum_exp_shifted(row, classes, mx);
            partial[0] -= row[static_cast<std::size_t>(target)] - mx - log_sum;
            for (std::size_t j = 0; j + 1 < levels; ++j) {
                if ((b & (level_mask << (j * level_power))) != 0) break;
                partial[j + 1] += partial[j];
                partial[j] = 0;
            }
        }
        V total = 0;
        for (const V p : partial) total += p;
        tensor<V> loss;
        loss.data()[0] = total / static_cast<V>(rows - ignored);
        return loss;
    } else {
        return diag::failed_shape_check{};
    }
}

/// After a failed shape check in either argument, no further errors (see `diag::failed_shape_check`).
template <class X, class T>
    requires(std::is_same_v<X, diag::failed_shape_check> || std::is_same_v<T, diag::failed_shape_check>)
diag::failed_shape_check cross_entropy(const X&, const T&, std::int64_t = -100) {
    return {};
}

}  // namespace shaped

#endif
