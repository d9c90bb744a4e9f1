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


/// Roles that label the axes of a failed check, so that the printed context reads as a sentence.
template <class... T>
struct tensor_axes {};
template <class... T>
struct lhs_axes {};
template <class... T>
struct rhs_axes {};
template <class... T>
struct lhs_last {};
template <class... T>
struct rhs_second_to_last {};
template <class... T>
struct from_axes {};
template <class... T>
struct to_axes {};
template <class... T>
struct expected_axes {};
template <class... T>
struct actual_axes {};
template <class... T>
struct in_features {};
template <class... T>
struct input_last {};
template <class... T>
struct mask_axes {};
template <class... T>
struct element_counts {};
template <int... Dims>
struct dims {};
template <std::size_t... N>
struct numbers {};
template <std::size_t Rank>
struct rank {};
template <class... T>
struct dividend {};
template <class... T>
struct divisor {};
template <class... T>
struct parts {};
template <class... T>
struct query_axes {};
template <class... T>
struct key_axes {};
template <class... T>
struct value_axes {};

/// What an op returns when one of its shape checks failed, so that the failed `static_assert` is the
/// only error at the call (not "variable has incomplete type void" after it), and so that the calls
/// chained after it (`q.view<...>().transpose<1, 2>()`, the book's style) add no errors of their own.
struct failed_shape_check {
    /// Stands in for `x.shape` (prints nothing).
    struct no_shape {
        friend std::ostream& operator<<(std::ostream& os, no_shape) { return os; }
    } shape;
    template <class...> failed_shape_check view() const { return {}; }
    template <class...> failed_shape_check reshape() const { return {}; }
    template <class...> failed_shape_check rename() const { return {}; }
    template <auto...> failed_shape_check transpose() const { return {}; }
    template <class...> failed_shape_check transpose() const { return {}; }
    template <auto...> failed_shape_check permute() const { return {}; }
    failed_shape_check T() const { return {}; }
    failed_shape_check contiguous() const { return {}; }
    template <class, auto> failed_shape_check split() const { return {}; }
    template <auto> failed_shape_check softmax() const { return {}; }
    template <class> failed_shape_check softmax() const { return {}; }
    template <class M, class V> failed_shape_check masked_fill(const M&, const V&) const { return {}; }
    template <class... P, class... N> failed_shape_check slice(N...) const { return {}; }
    std::size_t numel() const { return 0; }
    const float* data() const { return nullptr; }
    template <auto> failed_shape_check unsqueeze() const { return {}; }
    template <class, auto> failed_shape_check repeat() const { return {}; }
    template <class, auto> failed_shape_check repeat_interleave() const { return {}; }
    template <class> failed_shape_check to() const { return {}; }
    friend std::ostream& operator<<(std::ostream& os, failed_shape_check) { return os; }
    template <class X> friend failed_shape_check operator+(failed_shape_check, const X&) { return {}; }
    template <class X> friend failed_shape_check operator-(failed_shape_check, const X&) { return {}; }
    template <class X> friend failed_shape_check operator*(failed_shape_check, const X&) { return {}; }
    template <class X> friend failed_shape_check operator/(failed_shape_check, const X&) { return {}; }
};

template <class X>
    requires(!std::is_same_v<X, failed_shape_check>)
failed_shape_check operator+(const X&, failed_shape_check) { return {}; }
template <class X>
    requires(!std::is_same_v<X, failed_shape_check>)
failed_shape_check operator-(const X&, failed_shape_check) { return {}; }
template <class X>
    requires(!std::is_same_v<X, failed_shape_check>)
failed_shape_check operator*(const X&, failed_shape_check) { return {}; }
template <class X>
    requires(!std::is_same_v<X, failed_shape_check>)
failed_shape_check operator/(const X&, failed_shape_check) { return {}; }

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
