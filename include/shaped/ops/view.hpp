#ifndef SHAPED_OPS_VIEW_HPP
#define SHAPED_OPS_VIEW_HPP

/// \file
/// `view`, `reshape` and `rename`: the same elements under other axes.

#include <algorithm>
#include <boost/hana/at.hpp>
#include <boost/hana/concat.hpp>
#include <boost/hana/contains.hpp>
#include <boost/hana/flatten.hpp>
#include <boost/hana/length.hpp>
#include <boost/hana/prepend.hpp>
#include <boost/hana/remove_if.hpp>
#include <boost/hana/transform.hpp>
#include <boost/hana/unpack.hpp>
#include <array>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <xtensor/xstrides.hpp>
#include <xtensor/xtensor.hpp>

#include "../detail/buffer_cache.hpp"
#include "../diagnostics.hpp"
#include "../shape.hpp"
#include "../tensor_fwd.hpp"

namespace shaped {

namespace detail {
// The same elements in the same (row-major) order under another shape: the buffer changes hands, no
// element is copied (xtensor's strides are recomputed, 0 along extent-1 axes as xtensor keeps them).
// `view` keeps every run-time atom in its place (the view rule compares atoms in order), so the run-time
// extents carry over as they are.
template <class Value, Axis... To, std::size_t N, std::size_t D>
auto relabel(detail::storage_t<Value, N>&& storage, const std::array<std::size_t, D>& dynamic) {
    using result = tensor<Value, To...>;
    const typename result::extents_type e(detail::adopt_tag{}, dynamic);
    typename result::storage_type::inner_shape_type shape{};
    const auto sizes = e.sizes();
    std::copy(sizes.begin(), sizes.end(), shape.begin());
    typename result::storage_type::inner_strides_type strides{};
    xt::compute_strides(shape, xt::layout_type::row_major, strides);
    return result(detail::adopt_tag{}, e,
                  typename result::storage_type(std::move(storage.storage()), std::move(shape), std::move(strides)));
}

// rename's rule for one axis: the same static extent; a static extent into a run-time axis whose bound
// holds it; a run-time axis into a static one (checked when it runs); a run-time axis into another with the
// same atoms and no smaller bounds, or into a plain run-time axis whose bound holds the whole extent.
template <class From, class To>
constexpr bool renames_to() {
    if constexpr (StaticAxis<From> && StaticAxis<To>) {
        return From::extent == To::extent;
    } else if constexpr (StaticAxis<From>) {
        return To::dynamic_atoms == 1 && From::extent % To::static_factor == 0 &&
               From::extent / To::static_factor <= To::dynamic_bounds[0];
    } else if constexpr (StaticAxis<To>) {
        return true;
    } else {
        constexpr bool same_atoms = [] {
            if constexpr (From::dynamic_atoms == To::dynamic_atoms) {
                if (From::static_factor != To::static_factor) return false;
                for (std::size_t k = 0; k < From::dynamic_atoms; ++k)
                    if (To::dynamic_bounds[k] < From::dynamic_bounds[k]) return false;
                return true;
            } else {
                return false;
            }
        }();
        return same_atoms || (To::dynamic_atoms == 1 && To::static_factor == 1 && To::bound >= From::bound);
    }
}

// The run-time extents axis I of `x` hands to the axis `To` it is renamed to.
template <class To, std::size_t I, class E>
auto renamed_atoms(const E& e) {
    using From = typename extents_parts<E>::template axis<I>;
    if constexpr (StaticAxis<To>) {
        if constexpr (!StaticAxis<From>)
            if (e[I] != To::extent) [[unlikely]]
                throw shape_error("rename<...>(x)", axis_name<To>() + "=" + std::to_string(To::extent) + " at dimension " +
                                                        std::to_string(I),
                                  axis_name<From>() + "=" + std::to_string(e[I]) + " in " + e.text());
        return no_atoms;
    } else if constexpr (StaticAxis<From>) {
        return std::array<std::size_t, 1>{From::extent / To::static_factor};
    } else if constexpr (From::dynamic_atoms == To::dynamic_atoms && From::static_factor == To::static_factor) {
        return e.template atoms_of<I>();
    } else {
        return std::array<std::size_t, 1>{e[I]};
    }
}
}  // namespace detail

namespace detail {

// What a view that does not regroup got wrong, for its hint.
enum class regroup_miss {
    split_reordered,         // a merged axis split back in another order than it was merged (swap two targets)
    transpose_after,         // a split that lands the axes in another order: view, then transpose (swap two targets)
    transpose_first,         // a merge of axes that are apart or out of order: transpose, then view (swap two sources)
    transposes_after,        // as transpose_after, but more than one swap apart: view, then transpose pair by pair
    transposes_first,        // as transpose_first, but more than one swap apart: transpose pair by pair, then view
    merged_back_out_first,   // a merged axis of x regrouped with others: view it back out into its factors first
    split_transpose_merge,   // a merged target axis whose factors lie apart in x: split x, transpose, then merge
    other_axes,              // the target's axes are not x's split or merged (a rename, say)
};

// The most transposes a hint lists; a view further apart than that gets one of the hints without pairs.
inline constexpr std::size_t max_hint_pairs = 15;

// Why a view does not regroup, as `{kind, number of pairs, i0, j0, i1, j1, ...}`: the pairs of dimensions to
// transpose, one after the other.
using regroup_why = std::array<int, 2 + 2 * max_hint_pairs>;

constexpr regroup_why make_why(regroup_miss kind, int i = -1, int j = -1) {
    regroup_why w{};
    w[0] = static_cast<int>(kind);
    if (i >= 0) {
        w[1] = 1;
        w[2] = i;
        w[3] = j;
    }
    return w;
}

// The transposes, left to right, that put the items of `cur` (a permutation of 0..n-1) in the order `want`
// (pair (k, j) swaps positions k and j of the tensor as it is at that step); {kind, count, pairs...}, or a
// kind of -1 when more pairs than a hint lists would be needed.
template <std::size_t N>
constexpr regroup_why transposes_to(regroup_miss kind, std::array<int, N> cur, const std::array<int, N>& want,
                                    std::size_t n) {
    regroup_why w{};
    w[0] = static_cast<int>(kind);
    for (std::size_t k = 0; k < n; ++k) {
        if (cur[k] == want[k]) continue;
        std::size_t j = k + 1;
        while (cur[j] != want[k]) ++j;
        if (w[1] == static_cast<int>(max_hint_pairs)) return regroup_why{-1};
        w[2 + 2 * w[1]] = static_cast<int>(k);
        w[3 + 2 * w[1]] = static_cast<int>(j);
        ++w[1];
        const int t = cur[k];
        cur[k] = cur[j];
        cur[j] = t;
    }
    return w;
}

// Axes... with the I-th and the J-th swapped, as a hana tuple of types.
template <std::size_t I, std::size_t J, class... Axes>
constexpr auto swapped() {
    return []<std::size_t... K>(std::index_sequence<K...>) {
        return hana::tuple_t<axis_at_t<(K == I ? J : K == J ? I : K), Axes...>...>;
    }(std::make_index_sequence<sizeof...(Axes)>{});
}

// The first pair (i, j), i < j, as i * n + j, whose swap among To... makes the view regroup; -1 if none.
template <class... To, class... From>
constexpr int swap_fixing_to(axis_pack<From...>) {
    constexpr std::size_t n = sizeof...(To);
    return []<std::size_t... P>(std::index_sequence<P...>) {
        constexpr std::array<bool, n * n + 1> fixes{
            (P / n < P % n && view_regroups(hana::tuple_t<From...>, swapped<P / n, P % n, To...>()))..., false};
        for (std::size_t p = 0; p < n * n; ++p)
            if (fixes[p]) return static_cast<int>(p);
        return -1;
    }(std::make_index_sequence<n * n>{});
}

template <class... From, class... To>
constexpr int swap_fixing_from(axis_pack<To...>) {
    constexpr std::size_t n = sizeof...(From);
    return []<std::size_t... P>(std::index_sequence<P...>) {
        constexpr std::array<bool, n * n + 1> fixes{
            (P / n < P % n && view_regroups(swapped<P / n, P % n, From...>(), hana::tuple_t<To...>))..., false};
        for (std::size_t p = 0; p < n * n; ++p)
            if (fixes[p]) return static_cast<int>(p);
        return -1;
    }(std::make_index_sequence<n * n>{});
}

// Whether the targets I and J are both factors of one merged axis of x.
template <class A, class B, class... From>
constexpr bool factors_of_one_axis() {
    return ((has_factors<From> && hana::value(hana::contains(atoms(hana::type_c<From>), hana::type_c<A>)) &&
             hana::value(hana::contains(atoms(hana::type_c<From>), hana::type_c<B>))) ||
            ...);
}

// The quotient axes an atom stands for or is built from: `head_dim` for `head_dim = d_out / num_heads`, and
// those of its dividend and divisor (a quotient of a quotient), so that either side can be cut as finely.
struct quotients_fn {
    template <class X>
    constexpr auto operator()(hana::basic_type<X>) const {
        if constexpr (is_quotient<X>)
            return hana::prepend(
                hana::concat(hana::flatten(hana::transform(atoms(hana::type_c<typename X::dividend>), *this)),
                             hana::flatten(hana::transform(atoms(hana::type_c<typename X::divisor>), *this))),
                hana::type_c<X>);
        else
            return hana::make_tuple();
    }
};

// The first of Qs... whose dividend is X, or void.
template <class X, class... Qs>
struct quotient_of_dividend {
    using type = void;
};
template <class X, class Q, class... Qs>
struct quotient_of_dividend<X, Q, Qs...> {
    using type = std::conditional_t<std::is_same_v<typename Q::dividend, X>, Q,
                                    typename quotient_of_dividend<X, Qs...>::type>;
};

// An axis cut into its finest atoms: a product into its factors, a dividend of one of Qs... into (divisor,
// quotient) (`d_out` into `num_heads, head_dim`). Two shapes that view into each other, once transposed, have
// the same finest atoms in another order, but for extent-1 atoms, which view adds and drops freely.
template <class... Qs>
struct finest_atoms {
    template <class X>
    static constexpr auto atom(hana::basic_type<X>) {
        using Q = typename quotient_of_dividend<X, Qs...>::type;
        if constexpr (!std::is_void_v<Q>)
            return hana::concat(of(hana::type_c<typename Q::divisor>), atom(hana::type_c<Q>));
        else
            return hana::make_tuple(hana::type_c<X>);
    }
    template <class A>
    static constexpr auto of(hana::basic_type<A> a) {
        return hana::flatten(hana::transform(atoms(a), [](auto t) { return atom(t); }));
    }
    // The finest atoms of A, less the extent-1 atoms that the other side, with finest atoms `Other`, does not
    // have (an extent-1 axis both sides have keeps its place, so the pairs count it).
    template <class A, class Other>
    static constexpr auto of_against(hana::basic_type<A> a, Other other) {
        return hana::remove_if(of(a), [=](auto t) {
            using X = typename decltype(t)::type;
            return hana::bool_c<X::dynamic_atoms == 0 && X::bound == 1 &&
                                !decltype(hana::contains(other, t))::value>;
        });
    }
};

struct finest_atoms_fn {
    template <class... Q>
    constexpr auto operator()(hana::basic_type<Q>...) const {
        return hana::type_c<finest_atoms<Q...>>;
    }
};

// Items 0..n-1 ordered by key, ties in their own order; an item with key -1 (no atoms of its own) keeps the key
// of the item before it.
template <std::size_t N>
constexpr std::array<int, N> order_by(std::array<int, N> key, std::size_t n) {
    for (std::size_t k = 1; k < n; ++k)
        if (key[k] < 0) key[k] = key[k - 1];
    std::array<int, N> order{};
    for (std::size_t k = 0; k < n; ++k) order[k] = static_cast<int>(k);
    for (std::size_t a = 1; a < n; ++a)
        for (std::size_t b = a; b > 0 && key[order[b - 1]] > key[order[b]]; --b) {
            const int t = order[b];
            order[b] = order[b - 1];
            order[b - 1] = t;
        }
    return order;
}

// Where each axis's atoms start among its side's atoms, given how many each has.
template <std::size_t N>
constexpr std::array<int, N> starts(const std::array<int, N>& count) {
    std::array<int, N> s{};
    for (std::size_t k = 1; k < N; ++k) s[k] = s[k - 1] + count[k - 1];
    return s;
}

// Whether the atoms of each of one side's n axes (from `start`, `count` of them) stay together, in order, on
// the other side; `to_of[a]` is the to atom that from atom a becomes.
template <std::size_t NA, std::size_t N>
constexpr bool kept_whole(const std::array<int, NA>& to_of, std::size_t na, const std::array<int, N>& start,
                          const std::array<int, N>& count, std::size_t n, bool from_side) {
    std::array<int, NA> from_of{};
    for (std::size_t a = 0; a < na; ++a) from_of[static_cast<std::size_t>(to_of[a])] = static_cast<int>(a);
    for (std::size_t k = 0; k < n; ++k)
        for (int c = 1; c < count[k]; ++c) {
            const std::size_t i = static_cast<std::size_t>(start[k] + c);
            const int here = from_side ? to_of[i] : from_of[i], before = from_side ? to_of[i - 1] : from_of[i - 1];
            if (here != before + 1) return false;
        }
    return true;
}

// A view that no single swap fixes: with both sides cut into their finest atoms, the same atoms in another
// order need transposes too. Which side to transpose, and the pairs, as a regroup_why (kind -1: not a
// reordering of the same atoms).
template <class F, class T>
struct regroup_plan;
template <class... From, class... To>
struct regroup_plan<axis_pack<From...>, axis_pack<To...>> {
    static constexpr std::size_t nf = sizeof...(From), nt = sizeof...(To);
    using quotients = decltype(hana::flatten(
        hana::make_tuple(hana::flatten(hana::transform(atoms(hana::type_c<From>), quotients_fn{}))...,
                         hana::flatten(hana::transform(atoms(hana::type_c<To>), quotients_fn{}))...)));
    using cut = typename decltype(hana::unpack(quotients{}, finest_atoms_fn{}))::type;
    using from_all = decltype(hana::flatten(hana::make_tuple(cut::of(hana::type_c<From>)...)));
    using to_all = decltype(hana::flatten(hana::make_tuple(cut::of(hana::type_c<To>)...)));
    using from_atoms = decltype(hana::flatten(hana::make_tuple(cut::of_against(hana::type_c<From>, to_all{})...)));
    using to_atoms = decltype(hana::flatten(hana::make_tuple(cut::of_against(hana::type_c<To>, from_all{})...)));
    static constexpr std::size_t na = decltype(hana::length(from_atoms{}))::value;
    static constexpr std::size_t nb = decltype(hana::length(to_atoms{}))::value;
    // Where each axis's atoms start among its side's atoms, and how many it has.
    static constexpr std::array<int, nf + 1> from_count{
        static_cast<int>(decltype(hana::length(cut::of_against(hana::type_c<From>, to_all{})))::value)..., 0};
    static constexpr std::array<int, nt + 1> to_count{
        static_cast<int>(decltype(hana::length(cut::of_against(hana::type_c<To>, from_all{})))::value)..., 0};
    static constexpr std::array<int, nf + 1> from_start = starts(from_count);
    static constexpr std::array<int, nt + 1> to_start = starts(to_count);
    // same[a * nb + b]: from atom a is to atom b.
    static constexpr std::array<bool, na * nb + 1> same = []<std::size_t... P>(std::index_sequence<P...>) {
        return std::array<bool, na * nb + 1>{
            std::is_same_v<typename decltype(+hana::at_c<P / nb>(from_atoms{}))::type,
                           typename decltype(+hana::at_c<P % nb>(to_atoms{}))::type>...,
            false};
    }(std::make_index_sequence<na * nb>{});
    // to_of[a]: the to atom that from atom a becomes (repeated atoms matched in order); -1 when the atoms differ.
    static constexpr std::array<int, na + 1> to_of = [] {
        std::array<int, na + 1> m{};
        std::array<bool, nb + 1> used{};
        if (na != nb) return std::array<int, na + 1>{-1};
        for (std::size_t a = 0; a < na; ++a) {
            std::size_t b = 0;
            while (b < nb && (used[b] || !same[a * nb + b])) ++b;
            if (b == nb) return std::array<int, na + 1>{-1};
            used[b] = true;
            m[a] = static_cast<int>(b);
        }
        return m;
    }();
    static constexpr bool reordered = na > 0 && to_of[0] >= 0;
    // Transpose after: view x to To's axes in the order their atoms have in x, then put them in To's order.
    static constexpr std::array<int, nt + 1> after_order = [] {
        std::array<int, nt + 1> key{};
        std::array<int, na + 1> from_of{};
        if constexpr (reordered)
            for (std::size_t a = 0; a < na; ++a) from_of[static_cast<std::size_t>(to_of[a])] = static_cast<int>(a);
        for (std::size_t t = 0; t < nt; ++t)
            key[t] = to_count[t] > 0 ? from_of[static_cast<std::size_t>(to_start[t])] : -1;
        return order_by(key, nt);
    }();
    // Transpose first: put x's axes in the order their atoms have in To, then view.
    static constexpr std::array<int, nf + 1> first_order = [] {
        std::array<int, nf + 1> key{};
        for (std::size_t f = 0; f < nf; ++f)
            key[f] = from_count[f] > 0 && reordered ? to_of[static_cast<std::size_t>(from_start[f])] : -1;
        return order_by(key, nf);
    }();
    // Whether each side's axes keep their atoms together, in order, on the other side, and whether x views as
    // the axes so ordered (checked by the view rule itself).
    static constexpr bool to_kept_whole = reordered && kept_whole(to_of, na, to_start, to_count, nt, false);
    static constexpr bool from_kept_whole = reordered && kept_whole(to_of, na, from_start, from_count, nf, true);
    static constexpr bool after_ok = to_kept_whole && []<std::size_t... K>(std::index_sequence<K...>) {
        return view_regroups(hana::tuple_t<From...>, hana::tuple_t<axis_at_t<after_order[K], To...>...>);
    }(std::make_index_sequence<nt>{});
    static constexpr bool first_ok = from_kept_whole && []<std::size_t... K>(std::index_sequence<K...>) {
        return view_regroups(hana::tuple_t<axis_at_t<first_order[K], From...>...>, hana::tuple_t<To...>);
    }(std::make_index_sequence<nf>{});
    static constexpr regroup_why why = [] {
        if constexpr (!reordered) {
            return regroup_why{-1};
        } else {
            if constexpr (after_ok) {
                std::array<int, nt + 1> identity{};
                for (std::size_t t = 0; t < nt; ++t) identity[t] = static_cast<int>(t);
                regroup_why w = transposes_to(regroup_miss::transposes_after, after_order, identity, nt);
                if (w[1] == 1) w[0] = static_cast<int>(regroup_miss::transpose_after);
                return w;
            } else if constexpr (first_ok) {
                std::array<int, nf + 1> identity{};
                for (std::size_t f = 0; f < nf; ++f) identity[f] = static_cast<int>(f);
                regroup_why w = transposes_to(regroup_miss::transposes_first, identity, first_order, nf);
                if (w[1] == 1) w[0] = static_cast<int>(regroup_miss::transpose_first);
                return w;
            } else {
                // Split x into its finest atoms in its own order, transpose them into To's order, then merge.
                std::array<int, na + 1> identity{}, want{};
                for (std::size_t a = 0; a < na; ++a) {
                    identity[a] = static_cast<int>(a);
                    want[static_cast<std::size_t>(to_of[a])] = static_cast<int>(a);
                }
                return transposes_to(regroup_miss::split_transpose_merge, identity, want, na);
            }
        }
    }();
};

/// Why `(From...)` does not view as `(To...)` though the element counts agree, and the pairs of dimensions to
/// transpose, one after the other: `{kind, number of pairs, i0, j0, i1, j1, ...}`.
template <class... From, class... To>
constexpr regroup_why regroup_fix_of(axis_pack<From...>, axis_pack<To...>) {
    constexpr int nt = static_cast<int>(sizeof...(To)), nf = static_cast<int>(sizeof...(From));
    constexpr int t = swap_fixing_to<To...>(axis_pack<From...>{});
    if constexpr (t >= 0) {
        constexpr bool one_axis = factors_of_one_axis<axis_at_t<t / nt, To...>, axis_at_t<t % nt, To...>, From...>();
        return make_why(one_axis ? regroup_miss::split_reordered : regroup_miss::transpose_after, t / nt, t % nt);
    } else {
        constexpr int f = swap_fixing_from<From...>(axis_pack<To...>{});
        if constexpr (f >= 0) {
            return make_why(regroup_miss::transpose_first, f / nf, f % nf);
        } else {
            // More than one swap apart, or a split and a merge around the transposes.
            constexpr regroup_why plan = regroup_plan<axis_pack<From...>, axis_pack<To...>>::why;
            constexpr bool merged_regrouped = ((has_factors<From> && count_same_v<From, To...> == 0) || ...);
            if constexpr (plan[0] >= 0 && plan[1] >= 1 &&
                          (plan[0] != static_cast<int>(regroup_miss::split_transpose_merge) || !merged_regrouped))
                return plan;
            else
                return make_why(merged_regrouped ? regroup_miss::merged_back_out_first : regroup_miss::other_axes);
        }
    }
}

/// Why `(From...)` does not view as `(To...)`, and the first pair of dimensions to transpose: `{kind, i, j}`
/// (`regroup_fix_of` has every pair).
template <class... From, class... To>
constexpr std::array<int, 3> regroup_miss_of(axis_pack<From...> f, axis_pack<To...> t) {
    const regroup_why w = regroup_fix_of(f, t);
    return {w[0], w[1] > 0 ? w[2] : 0, w[1] > 0 ? w[3] : 0};
}

// What view and reshape check, computed once for both.
template <bool Reshape, class Layout, class F, class T>
struct view_check;
template <bool Reshape, class Layout, class... From, class... To>
struct view_check<Reshape, Layout, axis_pack<From...>, axis_pack<To...>> {
    // With run-time axes, the static parts must agree, and the regroup rule compares the rest.
    static constexpr bool count_ok = static_numel_v<From...> == static_numel_v<To...> ||
                                     extents<From...>::rank_dynamic != extents<To...>::rank_dynamic;
    static constexpr bool contiguous_ok = Reshape || std::is_same_v<Layout, layout::contiguous>;
    static constexpr bool regroup_ok =
        !count_ok || !contiguous_ok || view_regroups(hana::tuple_t<From...>, hana::tuple_t<To...>);
    static constexpr bool ok = count_ok && contiguous_ok && regroup_ok;
    static constexpr regroup_why why = [] {
        if constexpr (regroup_ok)
            return regroup_why{-1};
        else
            return regroup_fix_of(axis_pack<From...>{}, axis_pack<To...>{});
    }();
    // Whether the regroup rule failed for this reason.
    static constexpr bool missed(regroup_miss m) { return why[0] == static_cast<int>(m); }
    template <template <class...> class Role, std::size_t... P>
    static auto pairs(std::index_sequence<P...>) -> Role<diag::dims<why[2 + 2 * P], why[3 + 2 * P]>...>;
    using from_t = described<diag::from_axes, From...>;
    using to_t = described<diag::to_axes, To...>;
    using counts_t = diag::element_counts<diag::numbers<static_numel_v<From...>, static_numel_v<To...>>>;
    using after_t = decltype(pairs<diag::transpose_after>(std::make_index_sequence<why[1]>{}));
    using first_t = decltype(pairs<diag::transpose_first>(std::make_index_sequence<why[1]>{}));
};

// The same elements under To..., once the checks passed (a strided x is copied first: reshape).
template <class Value, Axis... To, class Layout, Axis... From>
auto view_unchecked(basic_tensor<Value, Layout, From...> x) {
    if constexpr (std::is_same_v<Layout, layout::contiguous>) {
        return relabel<Value, To...>(std::move(x).storage(), x.shape.dynamic());
    } else {
        const auto e = x.shape;
        tensor<Value, From...> copy(adopt_tag{}, e, std::move(x).storage());
        return relabel<Value, To...>(std::move(copy).storage(), copy.shape.dynamic());
    }
}

// The hints that view and reshape share; each message starts with the op's own name.
#define SHAPED_DETAIL_COUNT_HINT                                                                              \
    "<To...>(x): the element count must not change; the new axes' extents must multiply to the old ones' "   \
    "product"
#define SHAPED_DETAIL_SPLIT_REORDERED_HINT                                                                    \
    "<To...>(x): view only splits and merges adjacent axes, in order; a merged axis is split back in another " \
    "order than it was merged: split it in its own order (merged<a, b> into a, b), then transpose the pair in " \
    "transpose_after<dims<i, j>> if the other order was meant"
#define SHAPED_DETAIL_TRANSPOSE_AFTER_HINT                                                                    \
    "<To...>(x): view only splits and merges adjacent axes, in order; split in x's order, then transpose the " \
    "pair in transpose_after<dims<i, j>> (e.g. view to (b, num_tokens, num_heads, head_dim), then "           \
    "transpose<1, 2>())"
#define SHAPED_DETAIL_TRANSPOSE_FIRST_HINT                                                                    \
    "<To...>(x): view only splits and merges adjacent axes, in order; the axes to merge are apart or out of "  \
    "order: transpose the pair in transpose_first<dims<i, j>>, then merge (e.g. "                             \
    "context_vec.transpose<1, 2>().reshape<b, num_tokens, d_out>())"
#define SHAPED_DETAIL_TRANSPOSES_AFTER_HINT                                                                   \
    "<To...>(x): view only splits and merges adjacent axes, in order; the axes come out in an order more than one " \
    "swap away from x's: split in x's order, then transpose each pair in transpose_after<dims<i, j>, ...> in "  \
    "turn (e.g. view to (b, num_tokens, num_heads, head_dim), then transpose<0, 2>().transpose<1, 2>() for "     \
    "(num_heads, b, num_tokens, head_dim))"
#define SHAPED_DETAIL_TRANSPOSES_FIRST_HINT                                                                   \
    "<To...>(x): view only splits and merges adjacent axes, in order; the axes to merge are apart or out of "  \
    "order, more than one swap away: transpose each pair in transpose_first<dims<i, j>, ...> in turn, then "   \
    "merge (e.g. context_vec.transpose<0, 2>().transpose<1, 2>().reshape<num_tokens, b, d_out>())"
#define SHAPED_DETAIL_SPLIT_TRANSPOSE_MERGE_HINT                                                              \
    "<To...>(x): view only splits and merges adjacent axes, in order; a merged axis of the target takes its "  \
    "factors from different places of x: split x into those factors in x's order, transpose each pair in "    \
    "transpose_after<dims<i, j>, ...> in turn, then merge (e.g. q.view<b, num_tokens, num_heads, "             \
    "head_dim>().transpose<1, 2>().reshape<merged<b, num_heads>, num_tokens, head_dim>())"
#define SHAPED_DETAIL_MERGED_BACK_OUT_HINT                                                                    \
    "<To...>(x): view only splits and merges adjacent axes, in order; x has a merged axis whose factors go to " \
    "different places: view it back out into its factors first, transpose, then merge"
#define SHAPED_DETAIL_OTHER_AXES_HINT                                                                         \
    "<To...>(x): view only splits and merges adjacent axes, in order, so the axes must be x's factors; these " \
    "are other axes: to give an axis another name, use rename<...>()"

}  // namespace detail

/// The same elements under axes `To...`, which split and merge adjacent axes of `x` in order.
///
/// Shapes: `(From...)` to `(To...)` with the same element count and the same axes, factor for factor:
/// `(batch, num_tokens, d_out)` views as `(batch, num_tokens, num_heads, head_dim)` when `head_dim` is
/// `quotient<"head_dim", d_out, num_heads>`, and back. An axis kept one-to-one keeps its name.
/// Errors (compile time, in this order): the element count changes; `x` is strided (transposed),
/// PyTorch's run-time "view size is not compatible with input tensor's size and stride", whose fix is
/// `contiguous()` or `reshape`; the target regroups axes in another order (e.g. straight from
/// `(b, num_tokens, d_out)` to `(b, num_heads, num_tokens, head_dim)`, which needs a transpose: the error
/// lists the pairs to transpose, one after the other, and whether before the view, after it, or between a
/// split and a merge) or renames an axis (use `rename`). Nothing is thrown.
/// Source: `torch.Tensor.view`; the book's `MultiHeadAttention.forward` (listing 3.5).
/// Example: `auto q4 = q.view<batch, num_tokens, num_heads, head_dim>();`
template <Axis... To, class Value, class Layout, Axis... From>
auto view(basic_tensor<Value, Layout, From...> x) {
    using c = detail::view_check<false, Layout, detail::axis_pack<From...>, detail::axis_pack<To...>>;
    using m = detail::regroup_miss;
    static_assert(diag::expect<c::count_ok, typename c::from_t, typename c::to_t, typename c::counts_t>,
                  "shaped::view" SHAPED_DETAIL_COUNT_HINT);
    static_assert(diag::expect<!c::count_ok || c::contiguous_ok, detail::described<diag::tensor_axes, From...>>,
                  "shaped::view<To...>(x): view size is not compatible with input tensor's size and stride: x was "
                  "transposed, so it is not contiguous; call x.contiguous().view<...>() or x.reshape<...>()");
    static_assert(diag::expect<!c::missed(m::split_reordered), typename c::from_t, typename c::to_t, typename c::after_t>,
                  "shaped::view" SHAPED_DETAIL_SPLIT_REORDERED_HINT);
    static_assert(diag::expect<!c::missed(m::transpose_after), typename c::from_t, typename c::to_t, typename c::after_t>,
                  "shaped::view" SHAPED_DETAIL_TRANSPOSE_AFTER_HINT);
    static_assert(diag::expect<!c::missed(m::transposes_after), typename c::from_t, typename c::to_t, typename c::after_t>,
                  "shaped::view" SHAPED_DETAIL_TRANSPOSES_AFTER_HINT);
    static_assert(diag::expect<!c::missed(m::transpose_first), typename c::from_t, typename c::to_t, typename c::first_t>,
                  "shaped::view" SHAPED_DETAIL_TRANSPOSE_FIRST_HINT);
    static_assert(diag::expect<!c::missed(m::transposes_first), typename c::from_t, typename c::to_t, typename c::first_t>,
                  "shaped::view" SHAPED_DETAIL_TRANSPOSES_FIRST_HINT);
    static_assert(diag::expect<!c::missed(m::merged_back_out_first), typename c::from_t, typename c::to_t>,
                  "shaped::view" SHAPED_DETAIL_MERGED_BACK_OUT_HINT);
    static_assert(diag::expect<!c::missed(m::split_transpose_merge), typename c::from_t, typename c::to_t, typename c::after_t>,
                  "shaped::view" SHAPED_DETAIL_SPLIT_TRANSPOSE_MERGE_HINT);
    static_assert(diag::expect<!c::missed(m::other_axes), typename c::from_t, typename c::to_t>,
                  "shaped::view" SHAPED_DETAIL_OTHER_AXES_HINT);
    if constexpr (c::ok)
        return detail::view_unchecked<Value, To...>(std::move(x));
    else
        return diag::failed_shape_check{};
}

/// `view` for a tensor of any layout: PyTorch's `reshape`, which copies when the input is not contiguous.
///
/// Shapes and errors: those of `view`, except that a strided `x` is allowed. Nothing is thrown.
/// Source: `torch.Tensor.reshape`.
/// Example: `auto c = context_vec.transpose<1, 2>().reshape<batch, num_tokens, d_out>();`
template <Axis... To, class Value, class Layout, Axis... From>
auto reshape(basic_tensor<Value, Layout, From...> x) {
    using c = detail::view_check<true, Layout, detail::axis_pack<From...>, detail::axis_pack<To...>>;
    using m = detail::regroup_miss;
    static_assert(diag::expect<c::count_ok, typename c::from_t, typename c::to_t, typename c::counts_t>,
                  "shaped::reshape" SHAPED_DETAIL_COUNT_HINT);
    static_assert(diag::expect<!c::missed(m::split_reordered), typename c::from_t, typename c::to_t, typename c::after_t>,
                  "shaped::reshape" SHAPED_DETAIL_SPLIT_REORDERED_HINT);
    static_assert(diag::expect<!c::missed(m::transpose_after), typename c::from_t, typename c::to_t, typename c::after_t>,
                  "shaped::reshape" SHAPED_DETAIL_TRANSPOSE_AFTER_HINT);
    static_assert(diag::expect<!c::missed(m::transposes_after), typename c::from_t, typename c::to_t, typename c::after_t>,
                  "shaped::reshape" SHAPED_DETAIL_TRANSPOSES_AFTER_HINT);
    static_assert(diag::expect<!c::missed(m::transpose_first), typename c::from_t, typename c::to_t, typename c::first_t>,
                  "shaped::reshape" SHAPED_DETAIL_TRANSPOSE_FIRST_HINT);
    static_assert(diag::expect<!c::missed(m::transposes_first), typename c::from_t, typename c::to_t, typename c::first_t>,
                  "shaped::reshape" SHAPED_DETAIL_TRANSPOSES_FIRST_HINT);
    static_assert(diag::expect<!c::missed(m::merged_back_out_first), typename c::from_t, typename c::to_t>,
                  "shaped::reshape" SHAPED_DETAIL_MERGED_BACK_OUT_HINT);
    static_assert(diag::expect<!c::missed(m::split_transpose_merge), typename c::from_t, typename c::to_t, typename c::after_t>,
                  "shaped::reshape" SHAPED_DETAIL_SPLIT_TRANSPOSE_MERGE_HINT);
    static_assert(diag::expect<!c::missed(m::other_axes), typename c::from_t, typename c::to_t>,
                  "shaped::reshape" SHAPED_DETAIL_OTHER_AXES_HINT);
    if constexpr (c::ok)
        return detail::view_unchecked<Value, To...>(std::move(x));
    else
        return diag::failed_shape_check{};
}

#undef SHAPED_DETAIL_COUNT_HINT
#undef SHAPED_DETAIL_SPLIT_REORDERED_HINT
#undef SHAPED_DETAIL_TRANSPOSE_AFTER_HINT
#undef SHAPED_DETAIL_TRANSPOSE_FIRST_HINT
#undef SHAPED_DETAIL_TRANSPOSES_AFTER_HINT
#undef SHAPED_DETAIL_TRANSPOSES_FIRST_HINT
#undef SHAPED_DETAIL_SPLIT_TRANSPOSE_MERGE_HINT
#undef SHAPED_DETAIL_MERGED_BACK_OUT_HINT
#undef SHAPED_DETAIL_OTHER_AXES_HINT

namespace detail {
// The axes of `flatten<S, E>` of X...: those before S, merged<X_S, ..., X_E>, those after E.
template <std::size_t S, std::size_t E, class... X>
struct flattened {
    template <std::size_t... K>
    static auto merged_of(std::index_sequence<K...>) -> merged<axis_at_t<S + K, X...>...>;
    using merged_axis = decltype(merged_of(std::make_index_sequence<E - S + 1>{}));
    template <std::size_t... B, std::size_t... A>
    static auto axes(std::index_sequence<B...>, std::index_sequence<A...>)
        -> axis_pack<axis_at_t<B, X...>..., merged_axis, axis_at_t<E + 1 + A, X...>...>;
    using type = decltype(axes(std::make_index_sequence<S>{}, std::make_index_sequence<sizeof...(X) - E - 1>{}));
};
template <class... To, class Value, class Layout, class... X>
auto reshape_to(axis_pack<To...>, basic_tensor<Value, Layout, X...> x) {
    return reshape<To...>(std::move(x));
}
}  // namespace detail

/// The axes at dimensions `Start` to `End` (negative counting from the end) merged into one,
/// `merged<...>` of them, outermost first: `logits.flatten<0, 1>()` of `(batch, num_tokens, vocab_size)` is
/// `(merged<batch, num_tokens>, vocab_size)`, and `targets.flatten()` of `(batch, num_tokens)` is
/// `(merged<batch, num_tokens>)`, the same axis, so the two still line up for `cross_entropy`.
///
/// Shapes: `(..., A_start, ..., A_end, ...)` to `(..., merged<A_start, ..., A_end>, ...)`; a copy only when `x`
/// is strided (as `reshape`). `Start == End` leaves `x` as it is. Element type: any.
/// Errors: compile time, a dimension out of range or `Start` after `End`. Nothing is thrown.
/// Source: `torch.flatten(x, start_dim=0, end_dim=-1)`; `logits.flatten(0, 1)` (the book's `calc_loss_batch`).
/// Example: `auto logits_flat = logits.flatten<0, 1>();   // (merged<batch, num_tokens>, vocab_size)`
template <int Start = 0, int End = -1, class Value, class Layout, Axis... X>
auto flatten(basic_tensor<Value, Layout, X...> x) {
    constexpr std::size_t n = sizeof...(X);
    constexpr bool in_range = detail::dim_in_range(Start, n) && detail::dim_in_range(End, n);
    static_assert(diag::expect<in_range, diag::dims<Start, End>, detail::described<diag::tensor_axes, X...>>,
                  "shaped::flatten<Start, End>(x): dimension out of range; a tensor of rank n takes dimensions -n "
                  "to n-1");
    if constexpr (in_range) {
        constexpr std::size_t s = detail::wrap_dim(Start, n), e = detail::wrap_dim(End, n);
        static_assert(diag::expect<s <= e, diag::dims<Start, End>, detail::described<diag::tensor_axes, X...>>,
                      "shaped::flatten<Start, End>(x): Start must not come after End");
        if constexpr (s == e) {
            return x;
        } else if constexpr (s < e) {
            using to = typename detail::flattened<s, e, X...>::type;
            return detail::reshape_to(to{}, std::move(x));
        } else {
            return diag::failed_shape_check{};
        }
    } else {
        return diag::failed_shape_check{};
    }
}

/// The same elements with each axis renamed, one for one: the explicit rename that `view` never does.
///
/// Shapes: `(From...)` to `(To...)`, the same rank and, axis for axis, the same extent. It is also the
/// conversion between static and run-time axes: a static axis becomes a run-time one whose bound holds its
/// extent, and a run-time axis becomes a static one when its extent, checked as the call runs, is the
/// static one's.
/// Errors: compile time, another rank or an extent that differs (a static extent above a run-time axis's
/// bound, a run-time axis into one with a smaller bound), or a target axis that `x` has at another position
/// (a transpose written as a rename). Thrown: `shape_error`, a run-time extent renamed to a static axis of
/// another extent.
/// Source: `torch.Tensor.rename` (named tensors).
/// Example: `auto keys_k = keys.rename<batch, key<num_tokens>, d_out>();`
///          `auto fixed = x.rename<batch, six_tokens, d_in>();   // throws unless x.shape[1] == 6`
template <Axis... To, class Value, class Layout, Axis... From>
auto rename(basic_tensor<Value, Layout, From...> x) {
    constexpr bool ok = sizeof...(To) == sizeof...(From) && [] {
        if constexpr (sizeof...(To) == sizeof...(From))
            return (detail::renames_to<From, To>() && ...);
        else
            return false;
    }();
    static_assert(
        diag::expect<ok, detail::described<diag::from_axes, From...>, detail::described<diag::to_axes, To...>>,
        "shaped::rename<To...>(x): rename keeps the rank and every extent; give one new axis of the "
        "same extent for each axis (a run-time axis takes a static extent up to its bound)");
    constexpr bool moves = [] {
        if constexpr (sizeof...(To) == sizeof...(From)) {
            constexpr std::size_t n = sizeof...(From);
            return []<std::size_t... I>(std::index_sequence<I...>) {
                // Does target axis I name a source axis that stands at another place?
                return ((detail::index_of<detail::axis_at_t<I, To...>, From...>() != I &&
                         detail::index_of<detail::axis_at_t<I, To...>, From...>() != n) ||
                        ...);
            }(std::make_index_sequence<n>{});
        } else {
            return false;
        }
    }();
    static_assert(diag::expect<!ok || !moves, detail::described<diag::from_axes, From...>,
                               detail::described<diag::to_axes, To...>>,
                  "shaped::rename<To...>(x): rename gives new names in place; it does not move axes, and a target "
                  "axis that x has at another place means a transpose was meant (transpose<i, j>() first)");
    if constexpr (ok && !moves) {
        using result_t = basic_tensor<Value, Layout, To...>;
        const auto e = [&]<std::size_t... I>(std::index_sequence<I...>) {
            if constexpr (result_t::is_static && extents<From...>::is_static) {
                return typename result_t::extents_type{};
            } else {
                const std::tuple blocks{detail::renamed_atoms<To, I>(x.shape)...};  // left to right
                return std::apply(
                    [](const auto&... b) { return detail::make_extents<typename result_t::extents_type>(b...); }, blocks);
            }
        }(std::make_index_sequence<sizeof...(To)>{});
        if constexpr (std::is_same_v<Layout, layout::contiguous>) {
            return result_t(detail::adopt_tag{}, e, std::move(x).storage());
        } else {  // strided: the same buffer and strides under the new names
            const auto strides = x.stride();
            return result_t(detail::adopt_tag{}, detail::strided_tag{}, e, std::move(x).buffer(), strides);
        }
    } else {
        return diag::failed_shape_check{};
    }
}

}  // namespace shaped

#endif
