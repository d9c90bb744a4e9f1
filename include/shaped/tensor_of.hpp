#ifndef SHAPED_TENSOR_OF_HPP
#define SHAPED_TENSOR_OF_HPP

/// \file
/// Concepts for the signatures of modules that users write: `shaped::TensorOf<...>` (a tensor with these
/// axes) and `shaped::LastAxis<A>` (a tensor whose last axis is `A`).
///
/// \code
/// template <class Config>
/// struct my_block {
///     auto operator()(const shaped::TensorOf<shaped::any_axis, shaped::within<typename Config::context_length>,
///                                            typename Config::emb_dim> auto& x) const { ... }
/// };
/// \endcode
///
/// A wrong argument stops at the call with shaped's message, which names the expected and the actual axes
/// (the axes travel in `diag::expected_axes<...>` and `diag::actual_axes<...>`), not with a deduction
/// failure or an error deep inside the module. The check reports and then holds, so the compiler does not
/// add that no call matched: the call goes on with the argument's own type, and an op in the module's body
/// that checks the same axis reports it once more, with its own message. So these concepts report rather
/// than quietly fail: put them on a module's call, not on overloads that are meant to be chosen between
/// (for that, test `shaped::tensor_of_v<T, ...>` or `shaped::last_axis_v<T, A>`, which are plain `bool`s).
/// Neither reports for the result of a failed shape check (`diag::failed_shape_check`), whose own error came
/// first.

#include <cstddef>
#include <type_traits>
#include <utility>

#include "axis.hpp"
#include "diagnostics.hpp"
#include "shape.hpp"
#include "tensor_fwd.hpp"

namespace shaped {

/// In `TensorOf<...>`: any axis at this position (a batch, say, whatever the caller named it).
struct any_axis {};

/// In `TensorOf<...>`: an axis declared within `B` (`dynamic_axis<"num_tokens", at_most<B>>`,
/// `axis<"num_tokens", 6, at_most<B>>`, `B` itself, or a key axis of one), so that its extent, static or run
/// time, is at most `B`'s: the tokens of a module with a `context_length`.
///
/// Errors: compile time, a `B` that is not an axis.
template <class B>
struct within {
    static_assert(Axis<B>, "shaped::within<B>: B must be an axis (e.g. context_length)");
};

}  // namespace shaped

namespace shaped::diag {
/// `TensorOf`'s `any_axis`, as printed in an error.
struct any {};
/// `TensorOf`'s `within<B>`, as printed in an error: `within_of<sized<context_length, 1024>>`.
template <class B>
struct within_of {};
}  // namespace shaped::diag

namespace shaped::detail {

template <class E>
struct describe_expected {
    using type = typename describe<E>::type;
};
template <>
struct describe_expected<any_axis> {
    using type = diag::any;
};
template <class B>
struct describe_expected<within<B>> {
    using type = diag::within_of<typename describe<B>::type>;
};

// Whether the axis A stands where E is expected.
template <class E, class A>
struct matches : std::bool_constant<same_axis_v<A, E>> {};
template <class A>
struct matches<any_axis, A> : std::true_type {};
template <class B, class A>
struct matches<within<B>, A> : std::bool_constant<prefix_of<A, B>()> {};

template <class T, class... E>
struct tensor_of_traits {
    static constexpr bool is_tensor = false;
    static constexpr bool ok = false;
};
template <class V, class L, class... X, class... E>
struct tensor_of_traits<basic_tensor<V, L, X...>, E...> {
    static constexpr bool is_tensor = true;
    static constexpr bool ok = [] {
        if constexpr (sizeof...(X) == sizeof...(E))
            return (matches<E, X>::value && ...);
        else
            return false;
    }();
};

template <class T, class A>
struct last_axis_traits {
    static constexpr bool is_tensor = false;
    static constexpr bool ok = false;
};
template <class V, class L, class... X, class A>
struct last_axis_traits<basic_tensor<V, L, X...>, A> {
    static constexpr bool is_tensor = true;
    static constexpr bool ok = [] {
        if constexpr (sizeof...(X) >= 1)
            return same_axis_v<axis_at_t<sizeof...(X) - 1, X...>, A>;
        else
            return false;
    }();
};

// What the concepts print: the axes expected and the axes the argument has.
template <class T, class... E>
struct described_tensor_of;
template <class V, class L, class... X, class... E>
struct described_tensor_of<basic_tensor<V, L, X...>, E...> {
    using expected = diag::expected_axes<typename describe_expected<E>::type...>;
    using actual = described<diag::actual_axes, X...>;
};
template <class T, class A>
struct described_last_axis;
template <class V, class L, class... X, class A>
struct described_last_axis<basic_tensor<V, L, X...>, A> {
    using expected = described<diag::expected_axes, A>;
    using actual = described<diag::actual_axes, X...>;
};

// Called by the concepts, for tensors: the static_assert is the error a wrong argument gets. The body of a
// constexpr function is instantiated outside the constraint's substitution, so after the error the
// constraint holds and the call goes on: both compilers stop at this one error, rather than adding that no
// call matched.
template <class T, class... E>
constexpr bool reports_tensor_of() {
    using d = described_tensor_of<T, E...>;
    static_assert(diag::expect<tensor_of_traits<T, E...>::ok, typename d::expected, typename d::actual>,
                  "shaped::TensorOf<...>: the argument does not have the axes the module takes (expected_axes: "
                  "any = any axis, within_of<B> = an axis declared at_most<B>; actual_axes: what it got)");
    return true;
}
template <class T, class A>
constexpr bool reports_last_axis() {
    using d = described_last_axis<T, A>;
    static_assert(diag::expect<last_axis_traits<T, A>::ok, typename d::expected, typename d::actual>,
                  "shaped::LastAxis<A>: the argument's last axis must be A (expected_axes), the axis the module "
                  "takes in; check what was projected or concatenated into it (actual_axes: what it got)");
    return true;
}

}  // namespace shaped::detail

namespace shaped {

/// Whether `T` is a tensor with exactly these axes: `E...` are axes, `any_axis` or `within<B>`, outermost
/// first. A plain `bool`, for `if constexpr` and for choosing between overloads.
template <class T, class... E>
inline constexpr bool tensor_of_v = detail::tensor_of_traits<std::remove_cvref_t<T>, E...>::ok;

/// Whether `T` is a tensor whose last axis is `A`. A plain `bool`.
template <class T, class A>
inline constexpr bool last_axis_v = detail::last_axis_traits<std::remove_cvref_t<T>, A>::ok;

/// A tensor with these axes, outermost first, for a module's signature:
/// `const TensorOf<any_axis, within<context_length>, emb_dim> auto& x`.
///
/// Shapes: rank `sizeof...(E)`; at each position the axis `E` (the same axis, by `same_axis_v`), any axis
/// (`any_axis`), or an axis declared within `B` (`within<B>`). Any element type and layout.
/// Errors: compile time, at the call: an argument of another rank or with other axes fails with
/// "shaped::TensorOf<...>: the argument does not have the axes the module takes", beside
/// `diag::expected_axes<...>` and `diag::actual_axes<...>`. A non-tensor argument does not satisfy it. The
/// result of a failed shape check satisfies it without a second error.
/// Source: what the book's modules assume of `x` in `forward(self, x)`, written down.
template <class T, class... E>
concept TensorOf = std::is_same_v<std::remove_cvref_t<T>, diag::failed_shape_check> ||
                   (Tensor<T> && detail::reports_tensor_of<std::remove_cvref_t<T>, E...>());

/// A tensor whose last axis is `A`, for a module's signature: `const LastAxis<emb_dim> auto& x`.
///
/// Shapes: any rank ≥ 1, any element type and layout; the last axis `A` (by `same_axis_v`).
/// Errors: compile time, at the call: another last axis fails with "shaped::LastAxis<A>: the argument's last
/// axis must be A", beside `diag::expected_axes<...>` and `diag::actual_axes<...>`. A non-tensor argument
/// does not satisfy it. The result of a failed shape check satisfies it without a second error.
/// Source: `nn.Linear`'s rule, `x.shape[-1] == in_features`, for a module of one's own.
template <class T, class A>
concept LastAxis = std::is_same_v<std::remove_cvref_t<T>, diag::failed_shape_check> ||
                   (Tensor<T> && detail::reports_last_axis<std::remove_cvref_t<T>, A>());

}  // namespace shaped

#endif
