#ifndef SHAPED_OPS_ELEMENTWISE_HPP
#define SHAPED_OPS_ELEMENTWISE_HPP

/// \file
/// Elementwise arithmetic with statically checked broadcasting, scalars, element-type conversion, and
/// comparisons of whole tensors (`allclose`, `max_abs_diff`).

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <string_view>
#include <utility>
#include <type_traits>
#include <xtensor/xmath.hpp>
#include <xtensor/xtensor.hpp>

#include "../diagnostics.hpp"
#include "../shape.hpp"
#include "../tensor_fwd.hpp"

namespace shaped {

namespace detail {

// Two tensors of the same axes: every run-time axis must have the same extents in both.
template <class EA, class EB>
void check_all_meet(std::string_view op, const EA& a, const EB& b) {
    check_meets<same_axes<EA::rank>>(op, "a", a, "b", b);
}

template <class... A, class... B>
constexpr bool check_broadcast(axis_pack<A...>, axis_pack<B...>) {
    constexpr bool ok = broadcast_lhs<A...>::template first_mismatch<B...>() < 0;
    constexpr broadcast_miss miss = broadcast_miss_of(axis_pack<A...>{}, axis_pack<B...>{});
    constexpr bool reordered = miss == broadcast_miss::factors_reordered;
    constexpr bool permuted = miss == broadcast_miss::permuted;
    using la = described<diag::lhs_axes, A...>;
    using rb = described<diag::rhs_axes, B...>;
    static_assert(diag::expect<!reordered, la, rb>,
                  "shaped: elementwise op on shapes that do not broadcast; a merged axis has the same factors in "
                  "another order on each side (merged<a, b> against merged<b, a>): tile with repeat_interleave where "
                  "repeat was used, or the reverse");
    static_assert(diag::expect<!permuted, la, rb>,
                  "shaped: elementwise op on shapes that do not broadcast; both sides have the same axes in another "
                  "order: transpose one side to the other's order");
    static_assert(diag::expect<ok || reordered || permuted, la, rb>,
                  "shaped: elementwise op on shapes that do not broadcast: aligned from the right, every pair of "
                  "axes must be the same axis or shaped::one, or a keepdim reduced<A> against A (a missing leading "
                  "axis broadcasts); unsqueeze, transpose or view one side, or reduce over the axis you meant");
    return ok;
}

// `Out` is the result's element type (`bool` for comparisons), `void` for the operands' own.
template <class Out = void, class Value, class ValueB, class LA, class LB, class... A, class... B, class F>
auto broadcast_apply(std::string_view op, const basic_tensor<Value, LA, A...>& a, const basic_tensor<ValueB, LB, B...>& b,
                     F f) {
    static_assert(std::is_same_v<Value, ValueB>,
                  "shaped: elementwise op on tensors of different element types; convert one with .to<float>() "
                  "or .to<double>()");
    constexpr bool ok = std::is_same_v<Value, ValueB> && check_broadcast(axis_pack<A...>{}, axis_pack<B...>{});
    if constexpr (ok) {
        using out_t = std::conditional_t<std::is_void_v<Out>, Value, Out>;
        using result_t = typename broadcast_result<axis_pack<A...>, axis_pack<B...>>::template type<out_t>;
        // Run-time extents are compared first: xtensor would broadcast a run-time extent of 1 silently.
        const auto e = broadcast_extents<typename result_t::extents_type>(op, "a", a.shape, "b", b.shape);
        typename result_t::storage_type out = f(a.storage(), b.storage());
        return result_t(detail::adopt_tag{}, e, std::move(out));
    } else {
        return diag::failed_shape_check{};
    }
}

}  // namespace detail

/// Elementwise `a + b`, `a - b`, `a * b`, `a / b` with PyTorch's broadcasting, checked at compile time.
///
/// Shapes: aligned from the right; every pair of axes must be the same axis; a missing leading axis
/// broadcasts. The result has the longer operand's axes and is contiguous. Element type: both the same.
/// Errors: compile time, a pair of aligned axes that are not the same axis, even with equal extents
/// (PyTorch would broadcast or fail at run time). Thrown: `shape_error` when the same run-time axis has
/// other extents in `a` and `b` (e.g. `num_tokens` bound to 7 and to 5).
/// Source: `torch.add`, `torch.sub`, `torch.mul`, `torch.div`.
/// Example: `auto y = x + bias;   // (num_tokens, d_out) + (d_out)`
template <class Value, class ValueB, class LA, class LB, Axis... A, Axis... B>
auto operator+(const basic_tensor<Value, LA, A...>& a, const basic_tensor<ValueB, LB, B...>& b) {
    return detail::broadcast_apply("operator+(a, b)", a, b, [](const auto& x, const auto& y) {
        return x + y;
    });
}
/// Elementwise `a - b`: shapes, errors and broadcasting as `operator+`.
template <class Value, class ValueB, class LA, class LB, Axis... A, Axis... B>
auto operator-(const basic_tensor<Value, LA, A...>& a, const basic_tensor<ValueB, LB, B...>& b) {
    return detail::broadcast_apply("operator-(a, b)", a, b, [](const auto& x, const auto& y) {
        return x - y;
    });
}
/// Elementwise `a * b`: shapes, errors and broadcasting as `operator+`.
template <class Value, class ValueB, class LA, class LB, Axis... A, Axis... B>
auto operator*(const basic_tensor<Value, LA, A...>& a, const basic_tensor<ValueB, LB, B...>& b) {
    return detail::broadcast_apply("operator*(a, b)", a, b, [](const auto& x, const auto& y) {
        return x * y;
    });
}
/// Elementwise `a / b`: shapes, errors and broadcasting as `operator+`.
template <class Value, class ValueB, class LA, class LB, Axis... A, Axis... B>
auto operator/(const basic_tensor<Value, LA, A...>& a, const basic_tensor<ValueB, LB, B...>& b) {
    return detail::broadcast_apply("operator/(a, b)", a, b, [](const auto& x, const auto& y) {
        return x / y;
    });
}

/// Tensor and scalar, either side: `scores / std::sqrt(head_dim::extent)`. Shapes: unchanged
/// (contiguous result). Errors: none. Source: PyTorch's scalar broadcasting.
// The tensor is taken by value: a temporary (the scores of an attention step) is updated in place.
#define SHAPED_SCALAR_OP(op)                                                                 \
    template <class Value, class L, Axis... A>                                               \
    auto operator op(basic_tensor<Value, L, A...> a, std::type_identity_t<Value> s) {        \
        const auto e = a.shape;                                                              \
        typename tensor<Value, A...>::storage_type out = std::move(a).storage();             \
        out op## = s;                                                                        \
        return tensor<Value, A...>(detail::adopt_tag{}, e, std::move(out));                  \
    }                                                                                        \
    template <class Value, class L, Axis... A>                                               \
    auto operator op(std::type_identity_t<Value> s, const basic_tensor<Value, L, A...>& a) { \
        typename tensor<Value, A...>::storage_type out = s op a.storage();                   \
        return tensor<Value, A...>(detail::adopt_tag{}, a.shape, std::move(out));            \
    }
SHAPED_SCALAR_OP(+)
SHAPED_SCALAR_OP(-)
SHAPED_SCALAR_OP(*)
SHAPED_SCALAR_OP(/)
#undef SHAPED_SCALAR_OP

/// Elementwise negation. Shapes: unchanged. Errors: none. Source: `torch.neg`.
template <class Value, class L, Axis... A>
auto operator-(const basic_tensor<Value, L, A...>& a) {
    typename tensor<Value, A...>::storage_type out = -a.storage();
    return tensor<Value, A...>(detail::adopt_tag{}, a.shape, std::move(out));
}

/// The same tensor with elements converted to `To` (`x.to(torch.float64)`, `mask.bool()`).
/// Shapes: unchanged, same layout and strides (PyTorch keeps a transposed tensor's strides). Errors:
/// none. Source: `torch.Tensor.to(dtype)`.
template <class To, class Value, class L, Axis... A>
auto to(const basic_tensor<Value, L, A...>& x) {
    using result_t = basic_tensor<To, L, A...>;
    typename result_t::storage_type out = xt::cast<To>(x.buffer());
    const typename result_t::extents_type e(detail::adopt_tag{}, x.shape.dynamic());
    if constexpr (std::is_same_v<L, layout::contiguous>)
        return result_t(detail::adopt_tag{}, e, std::move(out));
    else
        return result_t(detail::strided_tag{}, e, std::move(out), x.stride());
}

/// The largest `|a - b|` over all elements: how the examples compare two forms of a computation.
///
/// Shapes: `a` and `b` must have the same axes (a comparison between a `(batch, num_tokens,
/// cat(d_out, d_out, d_out))` and a `(batch, num_tokens, d_out)` result fails to compile) and, for run-time
/// axes, the same extents (else `shape_error`).
/// Element type: any arithmetic; the result is `double`, NaN when any `a - b` is NaN (a NaN on one side,
/// or infinities of the same sign on both), as PyTorch's `max` propagates NaN. Errors: compile time,
/// different axes. Source: `(a - b).abs().max()` in PyTorch.
template <class Value, class ValueB, class LA, class LB, Axis... A, Axis... B>
double max_abs_diff(const basic_tensor<Value, LA, A...>& a, const basic_tensor<ValueB, LB, B...>& b) {
    constexpr bool ok = detail::same_shape(detail::axis_pack<A...>{}, detail::axis_pack<B...>{});
    static_assert(diag::expect<ok, detail::described<diag::lhs_axes, A...>, detail::described<diag::rhs_axes, B...>>,
                  "shaped::max_abs_diff(a, b): a and b must have the same axes to be compared");
    double m = 0;
    if constexpr (ok) {
        detail::check_all_meet("max_abs_diff(a, b)", a.shape, b.shape);
        const auto& ea = a.storage();  // row-major (a copy for a strided tensor, kept alive here)
        const auto& eb = b.storage();
        const Value* pa = ea.data();
        const ValueB* pb = eb.data();
        for (std::size_t i = 0; i < a.numel(); ++i) {
            const double d = std::abs(static_cast<double>(pa[i]) - static_cast<double>(pb[i]));
            if (std::isnan(d)) return d;
            m = std::max(m, d);
        }
    }
    return m;
}

/// Whether `|a - b| <= atol + rtol * |b|` everywhere (NaN never close), as `torch.allclose`.
///
/// Shapes: `a` and `b` must have the same axes. Errors: compile time, different axes.
/// Source: `torch.allclose(a, b, rtol=1e-05, atol=1e-08)`.
template <class Value, class ValueB, class LA, class LB, Axis... A, Axis... B>
bool allclose(const basic_tensor<Value, LA, A...>& a, const basic_tensor<ValueB, LB, B...>& b, double rtol = 1e-5,
              double atol = 1e-8) {
    constexpr bool ok = detail::same_shape(detail::axis_pack<A...>{}, detail::axis_pack<B...>{});
    static_assert(diag::expect<ok, detail::described<diag::lhs_axes, A...>, detail::described<diag::rhs_axes, B...>>,
                  "shaped::allclose(a, b): a and b must have the same axes to be compared");
    if constexpr (ok) {
        detail::check_all_meet("allclose(a, b)", a.shape, b.shape);
        const auto& ea = a.storage();  // row-major (a copy for a strided tensor, kept alive here)
        const auto& eb = b.storage();
        const Value* pa = ea.data();
        const ValueB* pb = eb.data();
        for (std::size_t i = 0; i < a.numel(); ++i) {
            double x = pa[i], y = pb[i];
            if (!(std::abs(x - y) <= atol + rtol * std::abs(y)))
                return false;
        }
    }
    return true;
}

/// After a failed shape check, no further errors (see `diag::failed_shape_check`).
template <class X>
double max_abs_diff(const X&, diag::failed_shape_check) {
    return 0;
}
/// After a failed shape check, no further errors (see `diag::failed_shape_check`).
template <Tensor X>
double max_abs_diff(diag::failed_shape_check, const X&) {
    return 0;
}

}  // namespace shaped

#endif
