#ifndef SHAPED_OPS_REARRANGE_HPP
#define SHAPED_OPS_REARRANGE_HPP

/// \file
/// `rearrange<"pattern">(x)`: einops' rearrange over the axes' own names, checked when the program compiles.
/// `"batch num_tokens (num_heads head_dim) -> batch num_heads num_tokens head_dim"` splits `d_out` into its
/// factors and moves the heads outward: the same `view` and `permute` (and `contiguous`, before a merge) that
/// the book's `MultiHeadAttention` writes by hand, with the same result type and no other copy.

#include <array>
#include <cstddef>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>

#include "../axis.hpp"
#include "../detail/fixed_string.hpp"
#include "../detail/pattern.hpp"
#include "../diagnostics.hpp"
#include "../shape.hpp"
#include "../tensor_fwd.hpp"
#include "transpose.hpp"
#include "view.hpp"

namespace shaped {

/// A short name for an axis in a pattern, or a name for an axis kind that has none (`key<num_tokens>`):
/// `rearrange<"b t (h d) -> b h t d", let<"b", batch>, let<"t", num_tokens>, let<"h", num_heads>,
/// let<"d", head_dim>>(x)`. A name bound by `let` is looked up before the axes' own names.
///
/// Shapes: none of its own. Errors: none of its own. Source: einops' `h=12` keyword arguments.
template <detail::fixed_string Name, Axis A>
struct let {
    /// The axis the name stands for.
    using axis = A;
    /// The name, as the pattern spells it.
    static constexpr std::string_view name = Name.view();
};

namespace diag {
/// A name of a pattern, spelled out in a diagnostic: `pattern_name<'n', 'u', 'm', '_', 'h', 'e', 'a', 'd'>`.
template <char... C>
struct pattern_name {};
/// Where in the pattern (a byte offset from 0) the diagnostic's problem is.
template <std::size_t Byte>
struct at_byte {};
/// What is wrong with a pattern's grammar.
template <detail::pattern::mistake E>
struct bad_pattern {};
/// The axes a pattern's left side spells, position by position.
template <class... T>
struct pattern_axes {};
/// Values passed where a pattern takes axis types.
template <auto... V>
struct passed_values {};
/// An axis passed after a pattern that no name of the pattern stands for.
template <class... T>
struct unused_axes {};
}  // namespace diag

namespace detail::rearrange_detail {

namespace pt = detail::pattern;

template <class X>
struct binding {
    using axis = X;
    static constexpr std::string_view name = [] {
        if constexpr (requires { X::name; })
            return std::string_view(X::name);
        else
            return std::string_view{};
    }();
};
template <fixed_string N, class A>
struct binding<let<N, A>> {
    using axis = A;
    static constexpr std::string_view name = let<N, A>::name;
};

enum class problem : unsigned char {
    none, grammar, unknown_name, ambiguous_name, rank, left_order, not_on_left, dropped, ellipsis_one_side,
    units,        // reduce: "()" on the right, but not one per reduced axis
    unused_extra  // an axis passed after the pattern that no name stands for
};

template <class X>
inline constexpr bool is_let = false;
template <fixed_string N, class A>
inline constexpr bool is_let<let<N, A>> = true;
// What may follow a pattern: an axis (a factor of a split, or an axis named by its own name) or a let.
template <class X>
inline constexpr bool extra_ok = Axis<X> || is_let<X>;

inline constexpr std::size_t max_atoms = 96;
inline constexpr std::size_t npos = static_cast<std::size_t>(-1);

// One axis after the left side's splits: a kept axis of x (`input`), or a factor named by a group (`cand`).
struct atom {
    bool split = false;
    std::size_t input = 0;
    std::size_t cand = 0;
    std::size_t name = npos;  // the pattern name it was spelled with; npos under "..."
};

struct analysis {
    pt::parsed p{};
    problem what = problem::none;
    std::size_t where = 0;       // byte offset of the problem
    std::size_t name_begin = 0;  // the name the problem is about
    std::size_t name_size = 0;
    std::size_t unused = 0;  // unused_extra: which extra
    std::array<std::size_t, pt::max_names> cand{};  // per pattern name of the left side: its candidate
    std::size_t rank = 0;
    std::size_t spelled = 0;                          // left terms other than "..."
    std::array<std::size_t, max_atoms> term_of_input{};  // per axis of x: the left term spelling it
    std::array<atom, max_atoms> atoms{};
    std::size_t atom_count = 0;
    bool has_split = false;
    std::array<std::size_t, max_atoms> perm{};  // output atom k is atom perm[k]
    // reduce: the atoms the right side leaves out are reduced over, in place ("()" on the right keeps them as
    // reduced<...> of extent 1: `keep`), before the permutation; `perm_after` numbers the atoms as they are
    // after the reductions (the same as `perm` for rearrange and with `keep`).
    std::array<bool, max_atoms> reduced{};
    std::array<std::size_t, max_atoms> reduced_at{};  // the reduced atoms, in x's order
    std::size_t reduced_count = 0;
    std::size_t unit_count = 0;
    bool keep = false;
    std::size_t post_count = 0;
    std::array<std::size_t, max_atoms> perm_after{};
    bool identity = true;  // perm_after is 0, 1, 2, ...
    std::array<std::size_t, max_atoms> out_first{};  // output axis j: atoms out_first[j] .. + out_count[j]
    std::array<std::size_t, max_atoms> out_count{};
    std::array<bool, max_atoms> out_unit{};          // output axis j is a "()": a reduced axis kept
    std::size_t out_axes = 0;
    bool has_merge = false;
};

constexpr analysis fail(analysis a, problem what, std::size_t where, pt::name_ref name = {}) {
    a.what = what;
    a.where = where;
    a.name_begin = name.begin;
    a.name_size = name.size;
    return a;
}

// Everything the names decide: the grammar, which axis each left name stands for, the atoms after the
// splits, and where each goes on the right (with `reducing`, the atoms it leaves out are reduced over).
// Whether the left side spells x's axes (a question of types) is checked by `rearrange` after this.
template <std::size_t NC>
constexpr analysis analyze(std::string_view text, const std::array<std::string_view, NC>& names,
                           std::size_t extras, std::size_t rank, bool reducing = false) {
    analysis a{};
    a.p = pt::parse(text, 1, reducing);
    a.rank = rank;
    if (a.p.err != pt::mistake::none) return fail(a, problem::grammar, a.p.where);
    if (rank > max_atoms - pt::max_names) return fail(a, problem::rank, 0);
    const pt::side& lhs = a.p.lhs;
    const pt::side& rhs = a.p.rhs;
    // Each left name: a `let` or extra axis of that name first, else an axis of x.
    for (std::size_t t = 0; t < lhs.size; ++t)
        for (std::size_t n = lhs.terms[t].first; n < lhs.terms[t].first + lhs.terms[t].count; ++n) {
            const std::string_view nm = pt::name_of(text, a.p.names[n]);
            std::size_t found = npos, count = 0;
            for (std::size_t c = 0; c < extras; ++c)
                if (pt::same(names[c], nm)) found = found == npos ? c : found, ++count;
            if (count == 0)
                for (std::size_t c = extras; c < NC; ++c)
                    if (pt::same(names[c], nm)) found = found == npos ? c : found, ++count;
            if (count == 0) return fail(a, problem::unknown_name, a.p.names[n].begin, a.p.names[n]);
            if (count > 1) return fail(a, problem::ambiguous_name, a.p.names[n].begin, a.p.names[n]);
            a.cand[n] = found;
        }
    const bool lhs_ellipsis = lhs.ellipsis < lhs.size;
    const bool rhs_ellipsis = rhs.ellipsis < rhs.size;
    a.spelled = lhs.size - (lhs_ellipsis ? 1 : 0);
    if (lhs_ellipsis != rhs_ellipsis)
        return fail(a, problem::ellipsis_one_side, pt::find(text, "..."));
    if (a.spelled > rank || (!lhs_ellipsis && a.spelled != rank)) return fail(a, problem::rank, 0);
    const std::size_t covered = rank - a.spelled;  // axes under "..."
    // The atoms, axis of x by axis of x.
    for (std::size_t i = 0; i < rank; ++i) {
        const std::size_t t = !lhs_ellipsis || i < lhs.ellipsis ? i
                              : i < lhs.ellipsis + covered  ? lhs.ellipsis
                                                            : i - covered + 1;
        a.term_of_input[i] = t;
        const pt::term& term = lhs.terms[t];
        if (term.kind == pt::term_kind::group && term.count > 1) {
            a.has_split = true;
            for (std::size_t n = term.first; n < term.first + term.count; ++n)
                a.atoms[a.atom_count++] = atom{true, i, a.cand[n], n};
        } else {
            a.atoms[a.atom_count++] =
                atom{false, i, 0, term.kind == pt::term_kind::ellipsis ? npos : term.first};
        }
    }
    // The right side, in atoms; every atom once.
    std::array<bool, max_atoms> used{};
    std::size_t k = 0;
    auto place = [&](std::size_t atom_index) {
        used[atom_index] = true;
        a.perm[k] = atom_index;
        ++k;
    };
    for (std::size_t t = 0; t < rhs.size; ++t) {
        const pt::term& term = rhs.terms[t];
        if (term.kind == pt::term_kind::unit) {  // filled with a reduced atom below
            a.out_unit[a.out_axes] = true;
            a.out_first[a.out_axes] = k;
            a.out_count[a.out_axes++] = 1;
            a.perm[k++] = npos;
            ++a.unit_count;
            continue;
        }
        if (term.kind == pt::term_kind::ellipsis) {
            for (std::size_t i = 0; i < a.atom_count; ++i)
                if (a.atoms[i].name == npos) {
                    a.out_first[a.out_axes] = k;
                    a.out_count[a.out_axes++] = 1;
                    place(i);
                }
            continue;
        }
        a.out_first[a.out_axes] = k;
        for (std::size_t n = term.first; n < term.first + term.count; ++n) {
            const std::string_view nm = pt::name_of(text, a.p.names[n]);
            std::size_t found = npos;
            for (std::size_t i = 0; i < a.atom_count; ++i)
                if (a.atoms[i].name != npos && pt::same(pt::name_of(text, a.p.names[a.atoms[i].name]), nm)) found = i;
            if (found == npos) return fail(a, problem::not_on_left, a.p.names[n].begin, a.p.names[n]);
            place(found);
        }
        a.out_count[a.out_axes++] = term.count;
        a.has_merge = a.has_merge || term.count > 1;
    }
    for (std::size_t i = 0; i < a.atom_count; ++i)
        if (!used[i]) {
            if (!reducing) {
                const pt::name_ref r = a.p.names[a.atoms[i].name];
                return fail(a, problem::dropped, r.begin, r);
            }
            a.reduced[i] = true;
            a.reduced_at[a.reduced_count++] = i;
        }
    // Every axis passed after the pattern is a name's (a factor no name uses is a mistake, as in einops).
    for (std::size_t c = 0; c < extras; ++c) {
        bool used_extra = false;
        for (std::size_t t = 0; t < lhs.size; ++t)
            for (std::size_t n = lhs.terms[t].first; n < lhs.terms[t].first + lhs.terms[t].count; ++n)
                used_extra = used_extra || a.cand[n] == c;
        if (!used_extra) {
            a.unused = c;
            return fail(a, problem::unused_extra, 0);
        }
    }
    a.keep = a.unit_count > 0;
    if (a.keep && a.unit_count != a.reduced_count) return fail(a, problem::units, pt::find(text, "()"));
    // The k-th "()" keeps the k-th reduced atom; without "()", the atoms after a reduced one move down.
    for (std::size_t j = 0, u = 0; j < k; ++j)
        if (a.perm[j] == npos) a.perm[j] = a.reduced_at[u++];
    a.post_count = a.keep ? a.atom_count : a.atom_count - a.reduced_count;
    for (std::size_t j = 0; j < k; ++j) {
        std::size_t before = 0;
        for (std::size_t i = 0; i < a.perm[j]; ++i) before += a.reduced[i] && !a.keep ? 1 : 0;
        a.perm_after[j] = a.perm[j] - before;
        a.identity = a.identity && a.perm_after[j] == j;
    }
    return a;
}

template <fixed_string P, std::size_t Begin, std::size_t... I>
diag::pattern_name<P.data[Begin + I]...> spell(std::index_sequence<I...>);
// The name at [Begin, Begin + Size) of the pattern, as a diagnostic type.
template <fixed_string P, std::size_t Begin, std::size_t Size>
using name_t = decltype(spell<P, Begin>(std::make_index_sequence<Size>{}));

template <class... T>
struct pack {};
template <std::size_t I, class... T>
using at_t = std::tuple_element_t<I, std::tuple<T...>>;

// The rearrangement of x by pattern P with the extra bindings B..., all as types and constants (`Reducing`:
// reduce's, where the atoms the right side leaves out are reduced over).
template <fixed_string P, class Extras, class Input, bool Reducing = false>
struct plan;
template <fixed_string P, class... B, class... Axes, bool Reducing>
struct plan<P, pack<B...>, pack<Axes...>, Reducing> {
    static constexpr std::size_t extras = sizeof...(B);
    static constexpr std::array<std::string_view, sizeof...(B) + sizeof...(Axes)> names{binding<B>::name...,
                                                                                        binding<Axes>::name...};
    static constexpr analysis a = analyze(P.view(), names, extras, sizeof...(Axes), Reducing);

    template <std::size_t C>
    using cand_t = at_t<C, typename binding<B>::axis..., Axes...>;

    // What the left side spells at axis i of x: the name's axis, a group's product, or x's own axis under "...".
    template <std::size_t T, std::size_t... K>
    static auto group_of(std::index_sequence<K...>)
        -> merged<cand_t<a.cand[a.p.lhs.terms[T].first + K]>...>;
    template <std::size_t I>
    static auto spelled_at() {
        constexpr pt::term term = a.p.lhs.terms[a.term_of_input[I]];
        if constexpr (term.kind == pt::term_kind::ellipsis)
            return std::type_identity<at_t<I, Axes...>>{};
        else if constexpr (term.kind == pt::term_kind::group && term.count > 1)
            return std::type_identity<decltype(group_of<a.term_of_input[I]>(std::make_index_sequence<term.count>{}))>{};
        else
            return std::type_identity<cand_t<a.cand[term.first]>>{};
    }
    template <std::size_t I>
    using spelled_t = typename decltype(spelled_at<I>())::type;

    template <std::size_t... I>
    static constexpr bool spells(std::index_sequence<I...>) {
        return (same_axis_v<spelled_t<I>, Axes> && ...);
    }
    template <std::size_t... I>
    static auto spelled_axes(std::index_sequence<I...>) -> detail::described<diag::pattern_axes, spelled_t<I>...>;

    // Atom k: a factor of a split, or x's axis kept as its own type.
    template <std::size_t K>
    static auto atom_at() {
        constexpr atom at = a.atoms[K];
        if constexpr (at.split)
            return std::type_identity<cand_t<at.cand>>{};
        else
            return std::type_identity<at_t<at.input, Axes...>>{};
    }
    template <std::size_t K>
    using atom_t = typename decltype(atom_at<K>())::type;

    template <std::size_t J, std::size_t... K>
    static auto merged_of(std::index_sequence<K...>) -> merged<atom_t<a.perm[a.out_first[J] + K]>...>;
    template <std::size_t J>
    static auto out_at() {
        if constexpr (a.out_unit[J])
            return std::type_identity<reduced<atom_t<a.perm[a.out_first[J]]>>>{};
        else if constexpr (a.out_count[J] == 1)
            return std::type_identity<atom_t<a.perm[a.out_first[J]]>>{};
        else
            return std::type_identity<decltype(merged_of<J>(std::make_index_sequence<a.out_count[J]>{}))>{};
    }
    template <std::size_t J>
    using out_t = typename decltype(out_at<J>())::type;

    // A strided x (a transpose) is split by `reshape`, which copies it first, as einops' reshape does.
    template <class Value, class Layout, std::size_t... K>
    static auto split(basic_tensor<Value, Layout, Axes...> x, std::index_sequence<K...>) {
        if constexpr (basic_tensor<Value, Layout, Axes...>::is_contiguous)
            return shaped::view<atom_t<K>...>(std::move(x));
        else
            return shaped::reshape<atom_t<K>...>(std::move(x));
    }
    template <class X, std::size_t... K>
    static auto permute(X x, std::index_sequence<K...>) {
        return shaped::permute<static_cast<int>(a.perm_after[K])...>(std::move(x));
    }
    template <class X, std::size_t... J>
    static auto merge(X x, std::index_sequence<J...>) {
        if constexpr (X::is_contiguous)
            return shaped::view<out_t<J>...>(std::move(x));
        else
            return shaped::view<out_t<J>...>(shaped::contiguous(std::move(x)));
    }

    // Split, then `between` (reduce's reductions; nothing for rearrange), permute, merge.
    template <class Value, class Layout, class Between>
    static auto run(basic_tensor<Value, Layout, Axes...> x, Between between) {
        auto s = between([&] {
            if constexpr (a.has_split)
                return split(std::move(x), std::make_index_sequence<a.atom_count>{});
            else
                return std::move(x);
        }());
        auto p = [&] {
            if constexpr (a.identity)
                return std::move(s);
            else
                return permute(std::move(s), std::make_index_sequence<a.post_count>{});
        }();
        if constexpr (a.has_merge)
            return merge(std::move(p), std::make_index_sequence<a.out_axes>{});
        else
            return p;
    }
};

// The axis passed after the pattern that no name stands for, as a diagnostic list.
template <class Plan, bool Unused>
struct unused_of {
    using type = diag::unused_axes<>;
};
template <class Plan>
struct unused_of<Plan, true> {
    using type = detail::described<diag::unused_axes, typename Plan::template cand_t<Plan::a.unused>>;
};

template <class Plan, bool Named>
struct spelled_of {
    using type = diag::pattern_axes<>;
};
template <class Plan>
struct spelled_of<Plan, true> {
    using type = decltype(Plan::spelled_axes(std::make_index_sequence<Plan::a.rank>{}));
};

}  // namespace detail::rearrange_detail

namespace detail::rearrange_detail {

template <fixed_string Pattern, class... Extra, class Value, class Layout, Axis... Axes>
auto rearrange_checked(basic_tensor<Value, Layout, Axes...> x) {
    namespace rd = detail::rearrange_detail;
    using plan = rd::plan<Pattern, rd::pack<Extra...>, rd::pack<Axes...>>;
    constexpr rd::analysis a = plan::a;
    using name_t = rd::name_t<Pattern, a.name_begin, a.name_size>;
    static_assert(diag::expect<a.what != rd::problem::grammar, diag::bad_pattern<a.p.err>, diag::at_byte<a.where>>,
                  "shaped::rearrange<Pattern>(x): the pattern is not 'left -> right', each side names "
                  "separated by spaces, (a b) for a group and ... once for the axes left alone");
    static_assert(diag::expect<a.what != rd::problem::unknown_name, name_t, diag::at_byte<a.where>,
                               detail::described<diag::tensor_axes, Axes...>>,
                  "shaped::rearrange<Pattern>(x): a name on the left is no axis of x; pass the factors of a "
                  "split after the pattern, as in rearrange<Pattern, num_heads, head_dim>(x), or name an axis "
                  "with shaped::let<Name, Axis>");
    static_assert(diag::expect<a.what != rd::problem::ambiguous_name, name_t, diag::at_byte<a.where>,
                               detail::described<diag::tensor_axes, Axes...>>,
                  "shaped::rearrange<Pattern>(x): two axes answer to a name on the left; give one of them "
                  "another name with shaped::let<Name, Axis>");
    static_assert(diag::expect<a.what != rd::problem::ellipsis_one_side, diag::at_byte<a.where>>,
                  "shaped::rearrange<Pattern>(x): ... stands for the same axes on both sides; write it on "
                  "both or on neither");
    static_assert(diag::expect<a.what != rd::problem::rank, diag::rank<sizeof...(Axes)>,
                               diag::numbers<a.spelled>, detail::described<diag::tensor_axes, Axes...>>,
                  "shaped::rearrange<Pattern>(x): the left side spells another number of axes than x has "
                  "(the numbers: x's rank, the axes spelled); name each, or write ... for the rest");
    constexpr bool spelled_ok = [] {
        if constexpr (a.what == rd::problem::none && sizeof...(Axes) > 0)
            return plan::spells(std::make_index_sequence<sizeof...(Axes)>{});
        else
            return true;
    }();
    using spelled_axes = typename rd::spelled_of<plan, a.what == rd::problem::none>::type;
    static_assert(diag::expect<spelled_ok, detail::described<diag::expected_axes, Axes...>, spelled_axes>,
                  "shaped::rearrange<Pattern>(x): the left side must spell x's axes in order, axis for axis "
                  "((a b) spells an axis that is the product of a and b, outermost first); to reorder them, "
                  "write the new order on the right");
    static_assert(diag::expect<a.what != rd::problem::not_on_left, name_t, diag::at_byte<a.where>>,
                  "shaped::rearrange<Pattern>(x): a name on the right is not on the left; rearrange only "
                  "moves, splits and merges axes (reduce removes them)");
    static_assert(diag::expect<a.what != rd::problem::dropped, name_t, diag::at_byte<a.where>>,
                  "shaped::rearrange<Pattern>(x): a name on the left is missing on the right; rearrange keeps "
                  "every axis (reduce removes them)");
    static_assert(diag::expect<a.what != rd::problem::unused_extra,
                               typename rd::unused_of<plan, a.what == rd::problem::unused_extra>::type>,
                  "shaped::rearrange<Pattern, ...>(x): an axis passed after the pattern is no name's; pass the "
                  "factors the pattern's splits name, or write the name the axis was meant for");
    if constexpr (a.what == rd::problem::none && spelled_ok)
        return plan::run(std::move(x), [](auto s) { return s; });
    else
        return diag::failed_shape_check{};
}

}  // namespace detail::rearrange_detail

/// Rearranges `x`'s axes as `Pattern` says, einops' `rearrange` over the axes' names: the left side spells
/// `x`'s axes in order (a name per axis, `(a b)` for an axis that is the product of `a` and `b`, `...` for
/// axes left alone), the right side the result's (a group merges its names, outermost first). Names are the
/// axes' own (`batch`, `num_heads`, ...) or those given by `let<"h", num_heads>` in `Extra...`; the factors of
/// a split that `x` does not carry are passed there as types: `rearrange<"batch num_tokens (num_heads
/// head_dim) -> batch num_heads num_tokens head_dim", num_heads, head_dim>(queries)`.
///
/// Shapes: `x`'s axes split, reordered and merged as the pattern says: the result type is what `view` (for
/// the splits), `permute` and `contiguous().view` (for the merges) give when written by hand; a merge gives
/// `merged<a, b>`, the same axis as a declared product (`d_out`). Strided where only the order changed;
/// a copy only where a merge follows a reordering, as by hand, or where a strided `x` is split (`reshape`).
/// Errors: compile time, each with the pattern's offending name or byte: a malformed pattern
/// (`diag::bad_pattern`), a name that is no axis of `x` and was not passed, a name two axes answer to, a
/// left side with more or fewer axes than `x`, a left side that does not spell `x`'s axes in order (the
/// expected and spelled axes listed), a name on the right that is not on the left, a name of the left
/// missing on the right, `...` on one side only; the splits and merges are then `view`'s (run-time factors
/// included). Nothing is thrown for static axes; a run-time axis is split as `view` splits it.
/// Source: einops' `rearrange(x, "b t (h d) -> b h t d", h=12)`; the book's `MultiHeadAttention.forward`
/// (listing 3.5) does the same with `view`, `transpose` and `contiguous`.
template <detail::fixed_string Pattern, class... Extra, class Value, class Layout, Axis... Axes>
auto rearrange(basic_tensor<Value, Layout, Axes...> x) {
    namespace rd = detail::rearrange_detail;
    static_assert((rd::extra_ok<Extra> && ...),
                  "shaped::rearrange<Pattern, ...>(x): after the pattern come axis types (the factors of a "
                  "split) or shaped::let<Name, Axis>");
    if constexpr ((rd::extra_ok<Extra> && ...))
        return rd::rearrange_checked<Pattern, Extra...>(std::move(x));
    else
        return diag::failed_shape_check{};
}

/// A number after the pattern, as einops takes `h=12`: refused with a message that says what to pass
/// instead (an axis type, whose extent the type carries, or a `let`).
///
/// Shapes: none. Errors: always a compile error. Source: einops' `rearrange(x, pattern, h=12)`.
template <detail::fixed_string Pattern, auto Number, auto... More, class Value, class Layout, Axis... Axes>
auto rearrange(basic_tensor<Value, Layout, Axes...>) {
    static_assert(diag::expect<false, diag::passed_values<Number, More...>>,
                  "shaped::rearrange<Pattern, ...>(x): after the pattern come axis types, not numbers: the "
                  "factors of a split as the axes themselves (rearrange<Pattern, num_heads, head_dim>, their "
                  "extents in their types), or shaped::let<Name, Axis> for a short name");
    return diag::failed_shape_check{};
}

}  // namespace shaped

#endif
