#ifndef SHAPED_OPS_REDUCE_PATTERN_HPP
#define SHAPED_OPS_REDUCE_PATTERN_HPP

/// \file
/// `reduce<"pattern", "op">(x)`: einops' reduce over the axes' own names, checked when the program compiles.
/// `"batch num_tokens emb_dim -> batch num_tokens ()"` with `"mean"` is the book's
/// `x.mean(dim=-1, keepdim=True)`: the names the right side leaves out are reduced over, a `()` keeps one as
/// `reduced<...>` of extent 1, and the rest is `rearrange`.

#include <cstddef>
#include <string_view>
#include <type_traits>
#include <utility>

#include "../axis.hpp"
#include "../detail/fixed_string.hpp"
#include "../diagnostics.hpp"
#include "../tensor_fwd.hpp"
#include "rearrange.hpp"
#include "reduce.hpp"

namespace shaped {

namespace diag {
/// The reduction a `reduce` pattern was given, spelled out in a diagnostic.
template <char... C>
struct reduction_name {};
}  // namespace diag

namespace detail::reduce_pattern_detail {

namespace rd = detail::rearrange_detail;

enum class op : unsigned char { unknown, sum, mean, max };

constexpr op op_of(std::string_view name) {
    if (pattern::same(name, "sum")) return op::sum;
    if (pattern::same(name, "mean")) return op::mean;
    if (pattern::same(name, "max")) return op::max;
    return op::unknown;
}

constexpr reduction kind_of(op o) {
    return o == op::sum ? reduction::sum : o == op::mean ? reduction::mean : reduction::max;
}

template <fixed_string S, std::size_t... I>
diag::reduction_name<S.data[I]...> spell_op(std::index_sequence<I...>);

// Reduces x over the reduced atoms, ..., 0 of the analysis (the last first, so that without keepdim
// the dimensions of the ones before it do not move).
template <reduction Kind, const rd::analysis& A, std::size_t R, class X>
auto reduce_atoms(const X& x) {
    if constexpr (R == 0)
        return x;
    else
        return reduce_atoms<Kind, A, R - 1>(
            detail::reduce<Kind, A.keep, static_cast<int>(A.reduced_at[R - 1])>(x));
}

template <fixed_string Pattern, op Op, class... Extra, class Value, class Layout, Axis... Axes>
auto reduce_checked(basic_tensor<Value, Layout, Axes...> x) {
    namespace rd = detail::rearrange_detail;
    namespace rp = detail::reduce_pattern_detail;
    constexpr rp::op op = Op;
    using plan = rd::plan<Pattern, rd::pack<Extra...>, rd::pack<Axes...>, true>;
    static constexpr const rd::analysis& a = plan::a;
    using name_t = rd::name_t<Pattern, a.name_begin, a.name_size>;
    static_assert(diag::expect<a.what != rd::problem::grammar, diag::bad_pattern<a.p.err>, diag::at_byte<a.where>>,
                  "shaped::reduce<Pattern, Op>(x): the pattern is not 'left -> right', each side names "
                  "separated by spaces, (a b) for a group, ... once for the axes left alone and, on the "
                  "right, () for a reduced axis kept");
    static_assert(diag::expect<a.what != rd::problem::unknown_name, name_t, diag::at_byte<a.where>,
                               detail::described<diag::tensor_axes, Axes...>>,
                  "shaped::reduce<Pattern, Op>(x): a name on the left is no axis of x; pass the factors of a "
                  "split after the op, as in reduce<Pattern, Op, num_heads, head_dim>(x), or name an axis "
                  "with shaped::let<Name, Axis>");
    static_assert(diag::expect<a.what != rd::problem::ambiguous_name, name_t, diag::at_byte<a.where>,
                               detail::described<diag::tensor_axes, Axes...>>,
                  "shaped::reduce<Pattern, Op>(x): two axes answer to a name on the left; give one of them "
                  "another name with shaped::let<Name, Axis>");
    static_assert(diag::expect<a.what != rd::problem::ellipsis_one_side, diag::at_byte<a.where>>,
                  "shaped::reduce<Pattern, Op>(x): ... stands for the same axes on both sides; write it on "
                  "both or on neither");
    static_assert(diag::expect<a.what != rd::problem::rank, diag::rank<sizeof...(Axes)>,
                               diag::numbers<a.spelled>, detail::described<diag::tensor_axes, Axes...>>,
                  "shaped::reduce<Pattern, Op>(x): the left side spells another number of axes than x has "
                  "(the numbers: x's rank, the axes spelled); name each, or write ... for the rest");
    constexpr bool spelled_ok = [] {
        if constexpr (a.what == rd::problem::none && sizeof...(Axes) > 0)
            return plan::spells(std::make_index_sequence<sizeof...(Axes)>{});
        else
            return true;
    }();
    using spelled_axes = typename rd::spelled_of<plan, a.what == rd::problem::none>::type;
    static_assert(diag::expect<spelled_ok, detail::described<diag::expected_axes, Axes...>, spelled_axes>,
                  "shaped::reduce<Pattern, Op>(x): the left side must spell x's axes in order, axis for axis "
                  "((a b) spells an axis that is the product of a and b, outermost first); the right side "
                  "says which remain, and in what order");
    static_assert(diag::expect<a.what != rd::problem::not_on_left, name_t, diag::at_byte<a.where>>,
                  "shaped::reduce<Pattern, Op>(x): a name on the right is not on the left; reduce removes "
                  "axes, it adds none");
    static_assert(diag::expect<a.what != rd::problem::units, diag::numbers<a.unit_count, a.reduced_count>,
                               diag::at_byte<a.where>>,
                  "shaped::reduce<Pattern, Op>(x): a () on the right keeps a reduced axis, so there is one "
                  "per reduced axis or none (the numbers: the ()s, the reduced axes)");
    static_assert(diag::expect<a.what != rd::problem::unused_extra,
                               typename rd::unused_of<plan, a.what == rd::problem::unused_extra>::type>,
                  "shaped::reduce<Pattern, Op, ...>(x): an axis passed after the op is no name's; pass the "
                  "factors the pattern's splits name, or write the name the axis was meant for");
    if constexpr (a.what == rd::problem::none && spelled_ok)
        return plan::run(std::move(x), [](auto s) {
            return rp::reduce_atoms<rp::kind_of(op), plan::a, a.reduced_count>(s);
        });
    else
        return diag::failed_shape_check{};
}

}  // namespace detail::reduce_pattern_detail

/// Reduces `x` over the names `Pattern`'s right side leaves out, with `Op` (`"sum"`, `"mean"` or `"max"`),
/// einops' `reduce` over the axes' names. The left side spells `x`'s axes as in `rearrange` (splits, `...`,
/// names from `let<"h", num_heads>` and split factors passed in `Extra...`); each name of the left that is
/// missing on the right is reduced over; the right side orders and merges what remains. A `()` on the right
/// keeps a reduced axis in the result as `reduced<A>` of extent 1 (PyTorch's `keepdim=True`): one `()` per
/// reduced axis, the first `()` for the first of them in `x`'s order.
///
/// Shapes: `x`'s axes split as the left side says, the reduced ones removed (or `reduced<A>` at the `()`),
/// the rest ordered and merged as the right side says; the same type as `sum<A>` (`mean`, `max`) with or
/// without `keepdim`, axis by axis, then `rearrange`. `"batch num_tokens emb_dim -> batch num_tokens ()"` with
/// `"mean"` is `x.mean<emb_dim>(keepdim)`, `(batch, num_tokens, reduced<emb_dim>)`.
/// Element type: float or double for `"sum"` and `"mean"`, float, double or an integer type for `"max"`; the numbers are those of
/// `sum<A>`, `mean<A>`, `max<A>` applied axis by axis, the last reduced axis first (PyTorch's, bit for bit,
/// for one reduced axis; over several, PyTorch's multi-axis sum adds in another order).
/// Errors: compile time: an `Op` other than the three (its spelling listed), `()` on the right that is not
/// one per reduced axis, a sum or mean of integers, a max of another element type (bfloat16), anything after
/// the op that is no axis or `let` (a number, as einops' `h=12`, has its own message), an axis passed that no
/// name stands for; then every pattern error of `rearrange`, named as reduce's. Nothing is thrown for static axes; a run-time axis is split as `view` splits it.
/// Source: einops' `reduce(x, "b t d -> b t 1", "mean")`; `torch.sum`/`mean`/`amax` over several `dim`s with
/// `keepdim`; the book's `LayerNorm` (listing 4.2) takes `x.mean(dim=-1, keepdim=True)`.
/// Example: `auto pooled = reduce<"batch num_tokens emb_dim -> batch emb_dim", "mean">(x);`
template <detail::fixed_string Pattern, detail::fixed_string Op, class... Extra, class Value, class Layout,
          Axis... Axes>
auto reduce(basic_tensor<Value, Layout, Axes...> x) {
    namespace rd = detail::rearrange_detail;
    namespace rp = detail::reduce_pattern_detail;
    constexpr rp::op op = rp::op_of(Op.view());
    using op_name = decltype(rp::spell_op<Op>(std::make_index_sequence<Op.view().size()>{}));
    static_assert(diag::expect<op != rp::op::unknown, op_name>,
                  "shaped::reduce<Pattern, Op>(x): Op is 'sum', 'mean' or 'max', as einops spells them");
    constexpr bool element_ok = op == rp::op::max ? std::is_arithmetic_v<Value> : std::is_floating_point_v<Value>;
    static_assert(op == rp::op::unknown || op == rp::op::max || element_ok,
                  "shaped::reduce<Pattern, Op>(x): a sum or mean takes float or double elements; convert "
                  "integers with .to<float>() first, or take 'max'");
    static_assert(op != rp::op::max || element_ok,
                  "shaped::reduce<Pattern, Op>(x): 'max' takes float, double or integer elements; convert "
                  "others (bfloat16) with .to<float>() first");
    static_assert((rd::extra_ok<Extra> && ...),
                  "shaped::reduce<Pattern, Op>(x): after the op come axis types (the factors of a split) or "
                  "shaped::let<Name, Axis>");
    if constexpr ((rd::extra_ok<Extra> && ...) && op != rp::op::unknown && element_ok)
        return rp::reduce_checked<Pattern, op, Extra...>(std::move(x));
    else
        return diag::failed_shape_check{};
}

/// A number after the op, as einops takes `h=12`: refused with a message that says what to pass instead.
///
/// Shapes: none. Errors: always a compile error. Source: einops' `reduce(x, pattern, "sum", h=12)`.
template <detail::fixed_string Pattern, detail::fixed_string Op, auto Number, auto... More, class Value,
          class Layout, Axis... Axes>
auto reduce(basic_tensor<Value, Layout, Axes...>) {
    static_assert(diag::expect<false, diag::passed_values<Number, More...>>,
                  "shaped::reduce<Pattern, Op, ...>(x): after the op come axis types, not numbers: the factors "
                  "of a split as the axes themselves (reduce<Pattern, Op, num_heads, head_dim>, their extents in "
                  "their types), or shaped::let<Name, Axis> for a short name");
    return diag::failed_shape_check{};
}

}  // namespace shaped

#endif
