#ifndef SHAPED_OPS_COMPARE_HPP
#define SHAPED_OPS_COMPARE_HPP

/// \file
/// Elementwise comparisons giving `bool` tensors (`logits < min_val`, `ids == eos_id`), and `where`, which
/// picks between two tensors or values by such a condition.

#include <cstddef>
#include <type_traits>
#include <utility>
#include <xtensor/xoperation.hpp>
#include <xtensor/xtensor.hpp>

#include "../diagnostics.hpp"
#include "../shape.hpp"
#include "../tensor_fwd.hpp"
#include "elementwise.hpp"

namespace shaped {

/// Elementwise comparisons `a < b`, `a <= b`, `a > b`, `a >= b`, `a == b`, `a != b`, each giving a
/// `bool` tensor (a mask, PyTorch's `torch.bool`), of two tensors or of a tensor and a number.
///
/// Shapes: two tensors broadcast as `operator+` does (aligned from the right, every pair the same axis or
/// `shaped::one` or a keepdim `reduced<A>` against `A`; a missing leading axis broadcasts); the result has
/// the broadcast axes, contiguous. A number compares with every element. Element type: both sides the same;
/// the result's is `bool`. NaN compares unequal to everything, as in PyTorch.
/// Errors: compile time, axes that do not broadcast. The book's `logits < min_val` with `logits` of
/// `(batch, vocab)` and `min_val = top_logits[:, -1]` of `(batch)` aligns `vocab` with `batch` (PyTorch runs it
/// only for a batch of 1): compare with `min_val.unsqueeze<-1>()`. Thrown: `shape_error` when the same run-time
/// axis has other extents on the two sides.
/// Source: `torch.lt`, `torch.le`, `torch.gt`, `torch.ge`, `torch.eq`, `torch.ne` (Python's `<`, `==`, ...).
/// Example: `auto drop = logits < min_val.unsqueeze<-1>();   // tensor<bool, batch, vocab>`
#define SHAPED_COMPARE_OP(op, fn)                                                                               \
    template <class Value, class ValueB, class LA, class LB, Axis... A, Axis... B>                              \
    auto operator op(const basic_tensor<Value, LA, A...>& a, const basic_tensor<ValueB, LB, B...>& b) {         \
        return detail::broadcast_apply<bool>("operator" #op "(a, b)", a, b,                                     \
                                             [](const auto& x, const auto& y) { return xt::fn(x, y); });        \
    }                                                                                                           \
    template <class Value, class L, Axis... A>                                                                  \
    auto operator op(const basic_tensor<Value, L, A...>& a, std::type_identity_t<Value> s) {                    \
        typename tensor<bool, A...>::storage_type out = xt::fn(a.storage(), s);                                 \
        return tensor<bool, A...>(detail::adopt_tag{}, a.shape, std::move(out));                                \
    }                                                                                                           \
    template <class Value, class L, Axis... A>                                                                  \
    auto operator op(std::type_identity_t<Value> s, const basic_tensor<Value, L, A...>& a) {                    \
        typename tensor<bool, A...>::storage_type out = xt::fn(s, a.storage());                                 \
        return tensor<bool, A...>(detail::adopt_tag{}, a.shape, std::move(out));                                \
    }
SHAPED_COMPARE_OP(<, less)
SHAPED_COMPARE_OP(<=, less_equal)
SHAPED_COMPARE_OP(>, greater)
SHAPED_COMPARE_OP(>=, greater_equal)
SHAPED_COMPARE_OP(==, equal)
SHAPED_COMPARE_OP(!=, not_equal)
#undef SHAPED_COMPARE_OP

namespace detail {
// The axes of a tensor type, as a pack.
template <class T>
struct pack_of;
template <class V, class L, class... A>
struct pack_of<basic_tensor<V, L, A...>> {
    using type = axis_pack<A...>;
};

// The tensor `where` gives: the condition's axes broadcast against the tensor's (or tensors'), checked as
// `operator+` checks them.
template <class C, class X>
struct where_axes;
template <class... C, class... X>
struct where_axes<axis_pack<C...>, axis_pack<X...>> {
    static constexpr bool ok = check_broadcast(axis_pack<C...>{}, axis_pack<X...>{});
    template <class Value>
    using type = typename broadcast_result<axis_pack<C...>, axis_pack<X...>>::template type<Value>;
};

template <class Result, class Cond, class Then, class Else>
Result where_apply(const typename Result::extents_type& e, const Cond& c, const Then& t, const Else& f) {
    typename Result::storage_type out = xt::where(c, t, f);
    return Result(adopt_tag{}, e, std::move(out));
}
}  // namespace detail

/// The elements of `x` where `condition` holds and `value` elsewhere, or the reverse, or of `x` and `y`:
/// `torch.where(condition, input, other)`.
///
/// Shapes: `condition` (a `bool` tensor) broadcasts against the tensors as `operator+` broadcasts two tensors
/// (aligned from the right, the same axes or `one`/`reduced`, a missing leading axis broadcasts); the result
/// has the broadcast axes, contiguous. Element type: that of the tensors (`value` converts to it); `y` the same
/// as `x`. Errors: compile time, axes that do not broadcast, a condition that is not `bool`. Thrown:
/// `shape_error` when one run-time axis has other extents in two operands.
/// Source: `torch.where(condition, input, other)`; the book's top-k filter
/// `torch.where(logits < min_val, torch.tensor(float("-inf")), logits)` (chapter 5).
/// Example: `auto new_logits = shaped::where(logits < min_val, -INFINITY, logits);`
template <class LC, Axis... C, class Value, class L, Axis... X>
auto where(const basic_tensor<bool, LC, C...>& condition, std::type_identity_t<Value> value,
           const basic_tensor<Value, L, X...>& x) {
    using axes = detail::where_axes<detail::axis_pack<C...>, detail::axis_pack<X...>>;
    if constexpr (axes::ok) {
        using result_t = typename axes::template type<Value>;
        const auto e = detail::broadcast_extents<typename result_t::extents_type>("where(condition, value, x)",
                                                                                  "condition", condition.shape, "x",
                                                                                  x.shape);
        return detail::where_apply<result_t>(e, condition.storage(), value, x.storage());
    } else {
        return diag::failed_shape_check{};
    }
}
/// The elements of `x` where `condition` holds, `value` elsewhere (see above).
template <class LC, Axis... C, class Value, class L, Axis... X>
auto where(const basic_tensor<bool, LC, C...>& condition, const basic_tensor<Value, L, X...>& x,
           std::type_identity_t<Value> value) {
    using axes = detail::where_axes<detail::axis_pack<C...>, detail::axis_pack<X...>>;
    if constexpr (axes::ok) {
        using result_t = typename axes::template type<Value>;
        const auto e = detail::broadcast_extents<typename result_t::extents_type>("where(condition, x, value)",
                                                                                  "condition", condition.shape, "x",
                                                                                  x.shape);
        return detail::where_apply<result_t>(e, condition.storage(), x.storage(), value);
    } else {
        return diag::failed_shape_check{};
    }
}
/// The elements of `x` where `condition` holds, of `y` elsewhere (see above); `x` and `y` broadcast too.
template <class LC, Axis... C, class Value, class L, Axis... X, class LY, Axis... Y>
auto where(const basic_tensor<bool, LC, C...>& condition, const basic_tensor<Value, L, X...>& x,
           const basic_tensor<Value, LY, Y...>& y) {
    using xy = detail::where_axes<detail::axis_pack<X...>, detail::axis_pack<Y...>>;
    if constexpr (xy::ok) {
        using xy_t = typename xy::template type<Value>;
        using axes = detail::where_axes<detail::axis_pack<C...>, typename detail::pack_of<xy_t>::type>;
        if constexpr (axes::ok) {
            using result_t = typename axes::template type<Value>;
            const auto exy = detail::broadcast_extents<typename xy_t::extents_type>("where(condition, x, y)", "x",
                                                                                    x.shape, "y", y.shape);
            const auto e = detail::broadcast_extents<typename result_t::extents_type>(
                "where(condition, x, y)", "condition", condition.shape, "x and y", exy);
            return detail::where_apply<result_t>(e, condition.storage(), x.storage(), y.storage());
        } else {
            return diag::failed_shape_check{};
        }
    } else {
        return diag::failed_shape_check{};
    }
}

/// After a failed shape check in any argument, no further errors (see `diag::failed_shape_check`).
template <class C, class X, class Y>
    requires(std::is_same_v<C, diag::failed_shape_check> || std::is_same_v<X, diag::failed_shape_check> ||
             std::is_same_v<Y, diag::failed_shape_check>)
diag::failed_shape_check where(const C&, const X&, const Y&) {
    return {};
}

}  // namespace shaped

#endif
