#ifndef SHAPED_AXIS_HPP
#define SHAPED_AXIS_HPP

/// \file
/// Axes: a name and an extent, fixed at compile time, that make up a tensor's type.
///
/// Declare each axis as a named struct, so that compilers print `d_out` rather than an instantiation:
/// \code
///   struct batch      : shaped::axis<"batch", 1> {};
///   struct num_tokens : shaped::axis<"num_tokens", 2> {};
///   struct d_out      : shaped::axis<"d_out", 6> {};
///   struct num_heads  : shaped::axis<"num_heads", 3> {};
///   struct head_dim   : shaped::quotient<"head_dim", d_out, num_heads> {};  // d_out / num_heads = 2
/// \endcode
/// Two axes are *the same axis* when they are the same type, or when both are the same ordered product
/// of the same factors: `merged<num_heads, head_dim>` is `d_out` above, because `head_dim` was declared as
/// `d_out / num_heads` (heads outermost, as `view(b, t, num_heads, head_dim)` splits in PyTorch).
/// `merged<head_dim, num_heads>` is not `d_out`: the order of the factors is part of the axis.

#include <boost/hana/append.hpp>
#include <boost/hana/back.hpp>
#include <boost/hana/concat.hpp>
#include <boost/hana/drop_back.hpp>
#include <boost/hana/equal.hpp>
#include <boost/hana/flatten.hpp>
#include <boost/hana/fold_left.hpp>
#include <boost/hana/for_each.hpp>
#include <boost/hana/length.hpp>
#include <boost/hana/transform.hpp>
#include <boost/hana/tuple.hpp>
#include <boost/hana/type.hpp>
#include <concepts>
#include <cstddef>
#include <string>
#include <string_view>
#include <type_traits>

#include "detail/fixed_string.hpp"
#include "diagnostics.hpp"

namespace shaped {

namespace hana = boost::hana;

/// Base of every axis kind; `Axis` checks for it.
struct axis_tag {};

/// An atomic axis with a name and a compile-time extent.
///
/// Shapes: extent `Extent` (≥ 1).
/// Errors: compile time, `Extent == 0` ("an axis has at least one element").
/// Source: the sizes of the book's listings (`batch`, `num_tokens`, `d_in`, `d_out`, `num_heads`, ...).
/// Example: `struct d_out : shaped::axis<"d_out", 6> {};`
template <detail::fixed_string Name, std::size_t Extent>
struct axis : axis_tag {
    static_assert(Extent > 0, "shaped::axis: an axis has at least one element");
    static constexpr std::string_view name = Name.view();
    static constexpr std::size_t extent = Extent;
};

/// What any axis kind satisfies: a tag and a compile-time extent.
template <class A>
concept Axis = std::derived_from<A, axis_tag> && requires {
    { A::extent } -> std::convertible_to<std::size_t>;
};

/// An axis declared as `Dividend / Divisor`, e.g. `head_dim = d_out / num_heads`.
///
/// Shapes: extent `Dividend::extent / Divisor::extent`. Splitting `Dividend` into `(Divisor, quotient)` with
/// `view` or `split`, and merging them back with `view` or `cat`, gives back `Dividend`.
/// Errors: compile time, where the axis is declared, when `Dividend::extent % Divisor::extent != 0`
/// ("d_out must be divisible by num_heads", the book's `assert d_out % num_heads == 0`).
/// Source: `self.head_dim = d_out // num_heads` in the book's `MultiHeadAttention` (listing 3.5).
/// Example: `struct head_dim : shaped::quotient<"head_dim", d_out, num_heads> {};`
template <detail::fixed_string Name, Axis Dividend, Axis Divisor>
struct quotient : axis_tag {
    static_assert(
        diag::expect<Dividend::extent % Divisor::extent == 0, diag::dividend<diag::sized<Dividend, Dividend::extent>>,
                     diag::divisor<diag::sized<Divisor, Divisor::extent>>>,
        "shaped::quotient: the dividend axis must be divisible by the divisor axis (d_out must be "
        "divisible by num_heads); choose num_heads among the divisors of d_out");
    static constexpr std::string_view name = Name.view();
    static constexpr std::size_t extent = Dividend::extent / Divisor::extent;
    using dividend = Dividend;
    using divisor = Divisor;
};

/// The ordered product of `Factors...`, outermost first: what `view` makes of adjacent axes it merges.
///
/// Shapes: extent is the product of the factors' extents.
/// Errors: none of its own.
/// Source: the merged dimension of `x.view(b, t, num_heads * head_dim)`; einops' `(h d)`.
/// Example: `x.view<batch, num_tokens, shaped::merged<num_heads, head_dim>>()`.
template <Axis... Factors>
struct merged : axis_tag {
    static_assert(sizeof...(Factors) >= 1, "shaped::merged: needs at least one factor");
    static constexpr std::size_t extent = (std::size_t{1} * ... * Factors::extent);
    static constexpr auto factors = hana::tuple_t<Factors...>;
};

/// A named ordered product: `struct d_out : shaped::product<"d_out", num_heads, head_dim> {};` declares
/// `d_out` as the same axis as `merged<num_heads, head_dim>`.
///
/// Shapes: extent is the product of the factors' extents. Errors: none of its own.
/// Source: `d_out = num_heads * head_dim`, the book's `MultiHeadAttentionWrapper` sizes.
template <detail::fixed_string Name, Axis... Factors>
struct product : axis_tag {
    static_assert(sizeof...(Factors) >= 1, "shaped::product: needs at least one factor");
    static constexpr std::string_view name = Name.view();
    static constexpr std::size_t extent = (std::size_t{1} * ... * Factors::extent);
    static constexpr auto factors = hana::tuple_t<Factors...>;
};

/// The axis `cat` makes when it joins parts that do not merge back into a declared axis, e.g. three
/// full-width `d_out` heads: `concat<d_out, d_out, d_out>` (extent 18), which is not `d_out` and is no
/// other axis either; a `linear<d_out, d_out>` rejects it.
///
/// Shapes: extent is the sum of the parts' extents. Errors: none of its own.
/// Source: `torch.cat(tensors, dim)`.
template <Axis... Parts>
struct concat : axis_tag {
    static_assert(sizeof...(Parts) >= 1, "shaped::concat: needs at least one part");
    static constexpr std::size_t extent = (std::size_t{0} + ... + Parts::extent);
    static constexpr auto parts = hana::tuple_t<Parts...>;
};

/// The axis of extent 1 that `unsqueeze` inserts: it broadcasts against any axis, as PyTorch's size-1
/// dimensions do. Every other axis broadcasts only against itself.
///
/// Shapes: extent 1. Errors: none of its own.
/// Source: `torch.Tensor.unsqueeze(dim)`, `x[:, None, :]`.
/// Example: `auto m = mask.unsqueeze<1>();   // (batch, one, num_tokens, key<num_tokens>)`
struct one : axis_tag {
    static constexpr std::string_view name = "one";
    static constexpr std::size_t extent = 1;
};

/// The key-token axis that goes with the query-token axis `A`: same extent, another axis. Attention
/// scores are `(..., num_tokens, key<num_tokens>)`, so a softmax over the queries, a mask over the
/// wrong token axis or a product with the queries where the values were meant fails to compile.
///
/// Shapes: extent `A::extent`. Errors: none of its own.
/// Source: the query and key positions of `queries @ keys.transpose(1, 2)` (the book's listing 3.3).
/// Example: `auto k = keys.rename<batch, shaped::key<num_tokens>, d_out>();`
template <Axis A>
struct key : axis_tag {
    static constexpr std::size_t extent = A::extent;
    using query = A;
};

namespace detail {

template <class A>
concept is_key = requires { typename A::query; };

template <class A>
concept has_factors = requires {
    A::factors;
};

template <class A>
concept is_quotient = requires {
    typename A::dividend;
    typename A::divisor;
};

/// The atoms of an axis: itself, or for a product its factors' atoms in order.
template <class A>
constexpr auto atoms(hana::basic_type<A>) {
    if constexpr (has_factors<A>)
        return hana::flatten(hana::transform(A::factors, [](auto f) {
            return atoms(f);
        }));
    else
        return hana::make_tuple(hana::type_c<A>);
}

// Appends one atom to a normal form, folding `(divisor, quotient)` back into the dividend; the
// dividend's atoms are appended the same way, so nested quotients fold all the way
// (`[num_heads, two, half]` with `half = head_dim / two` becomes `[d_out]`).
struct push_atom_fn {
    template <class Acc, class X>
    constexpr auto operator()(Acc acc, X x) const {
        using A = typename X::type;
        if constexpr (is_quotient<A> && decltype(hana::length(acc))::value > 0) {
            if constexpr (decltype(hana::back(acc) == hana::type_c<typename A::divisor>)::value)
                return hana::fold_left(atoms(hana::type_c<typename A::dividend>), hana::drop_back(acc), *this);
            else
                return hana::append(acc, x);
        } else {
            return hana::append(acc, x);
        }
    }
};

/// Atoms of a list of axes, with every `(divisor, divisor-quotient)` pair folded back into its
/// dividend: `[num_heads, head_dim]` becomes `[d_out]` when `head_dim = d_out / num_heads`.
template <class AxesTuple>
constexpr auto normal_form(AxesTuple axes) {
    auto flat = hana::flatten(hana::transform(axes, [](auto a) {
        return atoms(a);
    }));
    return hana::fold_left(flat, hana::make_tuple(), push_atom_fn{});
}

}  // namespace detail

/// True when `A` and `B` are the same axis: the same type, or the same ordered product of atoms.
template <class A, class B>
inline constexpr bool same_axis_v =
    std::is_same_v<A, B> ||
    decltype(detail::normal_form(hana::tuple_t<A>) == detail::normal_form(hana::tuple_t<B>))::value;

/// The name of an axis for run-time messages and printing: `d_out`, `(num_heads*head_dim)`,
/// `cat(d_out, d_out, d_out)`.
template <Axis A>
std::string axis_name() {
    if constexpr (requires { A::name; }) {
        return std::string(A::name);
    } else if constexpr (detail::is_key<A>) {
        return "key<" + axis_name<typename A::query>() + ">";
    } else if constexpr (detail::has_factors<A>) {
        std::string s = "(";
        hana::for_each(A::factors, [&](auto f) {
            if (s.size() > 1)
                s += '*';
            s += axis_name<typename decltype(f)::type>();
        });
        return s + ")";
    } else {
        static_assert(
            requires { A::parts; }, "shaped::axis_name: unknown kind of axis");
        std::string s = "cat(";
        hana::for_each(A::parts, [&](auto p) {
            if (s.size() > 4)
                s += ", ";
            s += axis_name<typename decltype(p)::type>();
        });
        return s + ")";
    }
}

}  // namespace shaped

#endif
