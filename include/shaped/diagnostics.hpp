#ifndef SHAPED_DIAGNOSTICS_HPP
#define SHAPED_DIAGNOSTICS_HPP

/// \file
/// The one place that shapes compile-time and run-time shape errors.
///
/// Compile time: every rule is a `static_assert(diag::expect<Ok, Context...>, "shaped::<op>(...): <rule>; <hint>")`.
/// C++20 messages are literals, so the axes and extents that disagree travel in `Context...`, which both
/// g++ 12 and clang++ 14 print beside the message, e.g.
/// `shaped::diag::expect<false, shaped::diag::lhs_last<shaped::diag::sized<head_dim, 2>>, ...>`.
/// Run time (data from outside): `shaped::shape_error`, whose message names expected and actual shapes.

#include <cstddef>
#include <cstdlib>
#include <ostream>
#include <type_traits>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace shaped::diag {

/// An axis with its extent, as printed in diagnostics: `sized<head_dim, 2>`.
template <class Axis, std::size_t Extent>
struct sized {};

/// A run-time axis with its bound, as printed in diagnostics: `run_time<num_tokens, 1024>`, or
/// `run_time<batch>` when it has none.
template <class Axis, std::size_t... Bound>
struct run_time {};


/// \name Roles
/// Roles that label the axes of a failed check, so that the printed context reads as a sentence, e.g.
/// `lhs_last<sized<head_dim, 2>>, rhs_second_to_last<sized<num_tokens, 6>>`. Each is an empty type that only
/// appears in compiler messages.
/// @{

/// The axes of the tensor an op was called on.
template <class... T>
struct tensor_axes {};
/// The axes of an elementwise op's left operand.
template <class... T>
struct lhs_axes {};
/// The axes of an elementwise op's right operand.
template <class... T>
struct rhs_axes {};
/// The last axis of `matmul`'s `a`, which must be the same axis as `rhs_second_to_last`.
template <class... T>
struct lhs_last {};
/// The second-to-last axis of `matmul`'s `b`.
template <class... T>
struct rhs_second_to_last {};
/// The axes a `view` or `reshape` starts from.
template <class... T>
struct from_axes {};
/// The axes asked for: a `view`'s target, a `slice`'s prefix, `narrow`'s `To`.
template <class... T>
struct to_axes {};
/// The axes a rule compares with: an axis asked for by name (`select<A>`, `sum<A>`), a converting
/// constructor's own axes, a module's `context_length`.
template <class... T>
struct expected_axes {};
/// The axes that arrived where `expected_axes` were expected.
template <class... T>
struct actual_axes {};
/// The layer's in_features axis (`d_in`, `emb_dim`), as printed in an error.
template <class... T>
struct in_features {};
/// The last axis of a layer's input, which must be the same axis as `in_features`.
template <class... T>
struct input_last {};
/// The axes of the mask given to `masked_fill`.
template <class... T>
struct mask_axes {};
/// The element counts before and after a `view`, as `numbers<from, to>`.
template <class... T>
struct element_counts {};
/// A view's fix: view in `x`'s order, then transpose the pair of dimensions given, `transpose_after<dims<1, 2>>`.
template <class... T>
struct transpose_after {};
/// A view's fix: transpose the pair of dimensions given, then view, `transpose_first<dims<1, 2>>`.
template <class... T>
struct transpose_first {};
/// The `Dim` arguments of the call (negative ones count from the end, as in PyTorch).
template <int... Dims>
struct dims {};
/// Plain numbers: an extent and its bound, a count of parts, two element counts.
template <std::size_t... N>
struct numbers {};
/// A tensor's rank, the number of its axes.
template <std::size_t Rank>
struct rank {};
/// The axis being divided, e.g. `d_out` of `d_out / num_heads`.
template <class... T>
struct dividend {};
/// The axis it is divided by, e.g. `num_heads`.
template <class... T>
struct divisor {};
/// The parts given to `cat`.
template <class... T>
struct parts {};
/// The axes of `scaled_dot_product_attention`'s queries.
template <class... T>
struct query_axes {};
/// The axes of `scaled_dot_product_attention`'s keys.
template <class... T>
struct key_axes {};
/// The axes of `scaled_dot_product_attention`'s values.
template <class... T>
struct value_axes {};
/// The sliding window, in keys, that a call of `scaled_dot_product_attention` asks for (0: none).
template <std::size_t Keys>
struct attention_window {};
/// @}

/// What an op returns when one of its shape checks failed, so that the failed `static_assert` is the
/// only error at the call (not "variable has incomplete type void" after it), and so that the calls
/// chained after it (`q.view<...>().transpose<1, 2>()`, the book's style) add no errors of their own.
///
/// User code that consumes the result adds no error either: `x.shape[i]`, `x.storage()` (indexed, iterated),
/// `x.sum<A>()` and the other members, `y += x` and `x += y`, and converting it to a tensor type
/// (`tensor<float, batch, d_out> y = x;`, `y = x;`).
struct failed_shape_check {
    /// Stands in for `x.shape` (prints nothing; every extent is 0).
    struct no_shape {
        /// Stands in for `x.shape[i]`.
        std::size_t operator[](std::size_t) const { return 0; }
        /// Prints nothing.
        friend std::ostream& operator<<(std::ostream& os, no_shape) { return os; }
    } shape;  ///< Stands in for `x.shape`.
    /// Stands in for `x.storage()`: no elements.
    struct no_storage {
        /// Stands in for `x.storage()[i]`.
        float operator[](std::size_t) const { return 0; }
        /// Stands in for `x.storage().data()`.
        const float* data() const { return nullptr; }
        /// Stands in for `x.storage().size()`: 0.
        std::size_t size() const { return 0; }
        /// An empty range.
        const float* begin() const { return nullptr; }
        /// An empty range.
        const float* end() const { return nullptr; }
    };
    /// Stands in for `x.storage()`.
    no_storage storage() const { return {}; }
    /// Stands in for `x.buffer()`.
    no_storage buffer() const { return {}; }
    /// Stands in for a conversion to a tensor type, `tensor<float, A, B> y = x;` or `y = x;`: never
    /// called, since the program does not compile.
    template <class T>
        requires requires { typename T::extents_type; typename T::value_type; }
    [[noreturn]] operator T() const { std::abort(); }
    /// Stands in for `x.select<A>(i)`.
    template <class...> failed_shape_check select(std::ptrdiff_t) const { return {}; }
    /// Stands in for `x.materialized()`.
    failed_shape_check materialized() const { return {}; }
    /// Stands in for the reductions named by axis: `x.sum<A>()`, `mean`, `var`, `max`, `argmax`.
    template <class, class... K> failed_shape_check sum(K...) const { return {}; }
    /// Stands in for `x.sum<dim>()`.
    template <int, class... K> failed_shape_check sum(K...) const { return {}; }
    /// Stands in for `x.mean<A>()`.
    template <class, class... K> failed_shape_check mean(K...) const { return {}; }
    /// Stands in for `x.mean<dim>()`.
    template <int, class... K> failed_shape_check mean(K...) const { return {}; }
    /// Stands in for `x.var<A>()`.
    template <class, class... K> failed_shape_check var(K...) const { return {}; }
    /// Stands in for `x.var<dim>()`.
    template <int, class... K> failed_shape_check var(K...) const { return {}; }
    /// Stands in for `x.max<A>()`.
    template <class, class... K> failed_shape_check max(K...) const { return {}; }
    /// Stands in for `x.max<dim>()`.
    template <int, class... K> failed_shape_check max(K...) const { return {}; }
    /// Stands in for `x.argmax<A>()`.
    template <class, class... K> failed_shape_check argmax(K...) const { return {}; }
    /// Stands in for `x.argmax<dim>()`.
    template <int, class... K> failed_shape_check argmax(K...) const { return {}; }
    /// Stands in for `x += y`.
    template <class X> failed_shape_check& operator+=(const X&) { return *this; }
    /// Stands in for `x -= y`.
    template <class X> failed_shape_check& operator-=(const X&) { return *this; }
    /// Stands in for `x *= y`.
    template <class X> failed_shape_check& operator*=(const X&) { return *this; }
    /// Stands in for `x /= y`.
    template <class X> failed_shape_check& operator/=(const X&) { return *this; }
    /// Stands in for `x.view<...>()`.
    template <class...> failed_shape_check view() const { return {}; }
    /// Stands in for `x.reshape<...>()`.
    template <class...> failed_shape_check reshape() const { return {}; }
    /// Stands in for `x.rename<...>()`.
    template <class...> failed_shape_check rename() const { return {}; }
    /// Stands in for `x.transpose<dim0, dim1>()`.
    template <auto...> failed_shape_check transpose() const { return {}; }
    /// Stands in for `x.transpose<A, B>()`.
    template <class...> failed_shape_check transpose() const { return {}; }
    /// Stands in for `x.permute<...>()`.
    template <auto...> failed_shape_check permute() const { return {}; }
    /// Stands in for `x.T()`.
    failed_shape_check T() const { return {}; }
    /// Stands in for `x.contiguous()`.
    failed_shape_check contiguous() const { return {}; }
    /// Stands in for `x.split<Chunk, dim>()`.
    template <class, auto> failed_shape_check split() const { return {}; }
    /// Stands in for `x.softmax<dim>()`.
    template <auto> failed_shape_check softmax() const { return {}; }
    /// Stands in for `x.softmax<A>()`.
    template <class> failed_shape_check softmax() const { return {}; }
    /// Stands in for `x.masked_fill(mask, value)`.
    template <class M, class V> failed_shape_check masked_fill(const M&, const V&) const { return {}; }
    /// Stands in for `x.slice<...>(n...)`.
    template <class... P, class... N> failed_shape_check slice(N...) const { return {}; }
    /// Stands in for `x.numel()`: 0.
    std::size_t numel() const { return 0; }
    /// Stands in for `x.data()`: `nullptr`.
    const float* data() const { return nullptr; }
    /// Stands in for `x.unsqueeze<dim>()`.
    template <auto> failed_shape_check unsqueeze() const { return {}; }
    /// Stands in for `x.repeat<New, dim>()`.
    template <class, auto> failed_shape_check repeat() const { return {}; }
    /// Stands in for `x.repeat_interleave<New, dim>()`.
    template <class, auto> failed_shape_check repeat_interleave() const { return {}; }
    /// Stands in for `x.to<V>()`.
    template <class> failed_shape_check to() const { return {}; }
    /// Prints nothing.
    friend std::ostream& operator<<(std::ostream& os, failed_shape_check) { return os; }
    /// After a failed shape check, no further errors (see `diag::failed_shape_check`).
    template <class X> friend failed_shape_check operator+(failed_shape_check, const X&) { return {}; }
    /// After a failed shape check, no further errors (see `diag::failed_shape_check`).
    template <class X> friend failed_shape_check operator-(failed_shape_check, const X&) { return {}; }
    /// After a failed shape check, no further errors (see `diag::failed_shape_check`).
    template <class X> friend failed_shape_check operator*(failed_shape_check, const X&) { return {}; }
    /// After a failed shape check, no further errors (see `diag::failed_shape_check`).
    template <class X> friend failed_shape_check operator/(failed_shape_check, const X&) { return {}; }
};

/// The frame of a module's call: `forward(args...)` when the call's checks passed (`Ok`), else
/// `failed_shape_check` without calling it, so that the failed `static_assert` stays the only error.
/// `forward` takes the checked input as its parameter (a generic lambda), so that nothing in its body is
/// compiled for an input that failed; the axes it needs are deduced there.
///
/// Shapes: whatever `forward` gives. Errors: none of its own.
/// Example: `return diag::checked<ok>([&]<class B, class T, class E>(const basic_tensor<float, L, B, T, E>& x) { ... }, x);`
template <bool Ok, class F, class... Args>
constexpr auto checked(F&& forward, Args&&... args) {
    if constexpr (Ok)
        return std::forward<F>(forward)(std::forward<Args>(args)...);
    else
        return failed_shape_check{};
}

/// After a failed shape check, no further errors (see `diag::failed_shape_check`).
template <class X>
    requires(!std::is_same_v<X, failed_shape_check>)
failed_shape_check operator+(const X&, failed_shape_check) { return {}; }
/// After a failed shape check, no further errors (see `diag::failed_shape_check`).
template <class X>
    requires(!std::is_same_v<X, failed_shape_check>)
failed_shape_check operator-(const X&, failed_shape_check) { return {}; }
/// After a failed shape check, no further errors (see `diag::failed_shape_check`).
template <class X>
    requires(!std::is_same_v<X, failed_shape_check>)
failed_shape_check operator*(const X&, failed_shape_check) { return {}; }
/// After a failed shape check, no further errors (see `diag::failed_shape_check`).
template <class X>
    requires(!std::is_same_v<X, failed_shape_check>)
failed_shape_check operator/(const X&, failed_shape_check) { return {}; }

/// After a failed shape check, no further errors: `y += x` for a failed `x`.
template <class X>
    requires(!std::is_same_v<X, failed_shape_check>)
X& operator+=(X& y, failed_shape_check) { return y; }
/// After a failed shape check, no further errors: `y -= x` for a failed `x`.
template <class X>
    requires(!std::is_same_v<X, failed_shape_check>)
X& operator-=(X& y, failed_shape_check) { return y; }
/// After a failed shape check, no further errors: `y *= x` for a failed `x`.
template <class X>
    requires(!std::is_same_v<X, failed_shape_check>)
X& operator*=(X& y, failed_shape_check) { return y; }
/// After a failed shape check, no further errors: `y /= x` for a failed `x`.
template <class X>
    requires(!std::is_same_v<X, failed_shape_check>)
X& operator/=(X& y, failed_shape_check) { return y; }

/// The condition of every shaped `static_assert`: true when `Ok`; the `Context` types only exist to be
/// printed by the compiler when it is false.
template <bool Ok, class... Context>
inline constexpr bool expect = Ok;

}  // namespace shaped::diag

namespace shaped {

/// Thrown when data from outside the type system (a buffer, a file, a nested initializer list) does not
/// have the shape that the tensor's type states. `what()` names the operation, the expected and the actual
/// shape, e.g. `shaped::tensor::from_buffer: expected 12 elements for (batch=1, num_tokens=2, d_out=6), got 10`.
class shape_error : public std::invalid_argument {
public:
    /// The message `shaped::<op>: expected <expected>, got <actual>`; `expected()` and `actual()` keep the
    /// two shapes.
    shape_error(const std::string& op, const std::string& expected, const std::string& actual)
        : std::invalid_argument("shaped::" + op + ": expected " + expected + ", got " + actual),
          expected_(expected),
          actual_(actual) {}

    /// Two operands of `op` carry the same run-time axis with different extents. The message's first line
    /// names the op, the axis and both extents; the next two give each operand's shape:
    /// \code
    ///   shaped::matmul(a, b): num_tokens is 7 in a but 5 in b
    ///     a: (batch=2, num_tokens=7, head_dim=64)
    ///     b: (batch=2, num_tokens=5, d_out=768)
    /// \endcode
    static shape_error mismatch(std::string_view op, const std::string& axis, std::string_view a_role,
                                std::size_t a_extent, const std::string& a_shape, std::string_view b_role,
                                std::size_t b_extent, const std::string& b_shape) {
        std::string message = "shaped::" + std::string(op) + ": " + axis + " is " + std::to_string(a_extent) + " in " +
                              std::string(a_role) + " but " + std::to_string(b_extent) + " in " + std::string(b_role) +
                              "\n  " + std::string(a_role) + ": " + a_shape + "\n  " + std::string(b_role) + ": " +
                              b_shape;
        return shape_error(std::move(message), axis + "=" + std::to_string(a_extent),
                           axis + "=" + std::to_string(b_extent), 0);
    }
    /// The shape the type states, as text.
    const std::string& expected() const noexcept { return expected_; }
    /// The shape that arrived, as text.
    const std::string& actual() const noexcept { return actual_; }

private:
    shape_error(std::string message, std::string expected, std::string actual, int)
        : std::invalid_argument(message), expected_(std::move(expected)), actual_(std::move(actual)) {}

    std::string expected_;
    std::string actual_;
};

namespace detail {
inline std::string format_extents(const std::vector<std::size_t>& extents) {
    std::ostringstream s;
    s << '(';
    for (std::size_t i = 0; i < extents.size(); ++i) s << (i ? ", " : "") << extents[i];
    s << ')';
    return s.str();
}
}  // namespace detail

}  // namespace shaped

#endif
