#ifndef SHAPED_SHAPE_HPP
#define SHAPED_SHAPE_HPP

/// \file
/// Shape algebra, in one place: extents and element counts of axis lists, dimension indices,
/// the view rule, broadcasting, and the printed forms of shapes for diagnostics.
/// Computations are constexpr functions over arrays; Boost.Hana handles the lists of axis types.

#include <array>
#include <boost/hana/all_of.hpp>
#include <boost/hana/at.hpp>
#include <boost/hana/bool.hpp>
#include <boost/hana/count.hpp>
#include <boost/hana/equal.hpp>
#include <boost/hana/length.hpp>
#include <boost/hana/remove_if.hpp>
#include <boost/hana/take_front.hpp>
#include <boost/hana/tuple.hpp>
#include <boost/hana/type.hpp>
#include <boost/hana/unpack.hpp>
#include <boost/hana/value.hpp>
#include <cstddef>
#include <limits>
#include <string_view>
#include <tuple>
#include <utility>
#include <string>
#include <vector>

#include "axis.hpp"
#include "diagnostics.hpp"
#include "extents.hpp"
#include "tensor_fwd.hpp"

namespace shaped::detail {

/// Whether the product of the extents (at their bounds) fits a signed index, as xtensor and BLAS need.
template <class... Axes>
constexpr bool numel_fits() {
    return extents_tables<Axes...>::numel_fits_at_bounds;
}

/// Number of elements of a tensor with these (static) axes.
template <class... Axes>
inline constexpr std::size_t numel_v = (std::size_t{1} * ... * Axes::extent);

/// The product of the static factors of these axes: the element count when every axis is static, and
/// what two shapes with the same run-time atoms must agree on.
template <class... Axes>
inline constexpr std::size_t static_numel_v = (std::size_t{1} * ... * Axes::static_factor);

/// The `I`-th axis of `Axes...`.
template <std::size_t I, class... Axes>
using axis_at_t = typename decltype(+hana::at_c<I>(hana::tuple_t<Axes...>))::type;

/// A list of axis types, for partial specialisations.
template <class... Axes>
struct axis_pack {};

/// Whether two axis lists have the same rank and the same axis at every position.
template <class... A, class... B>
constexpr bool same_shape(axis_pack<A...>, axis_pack<B...>) {
    if constexpr (sizeof...(A) == sizeof...(B))
        return (same_axis_v<A, B> && ...);
    else
        return false;
}

/// `Role<sized<A, extent>...>`: the axes with their extents, for a diagnostic's context.
template <template <class...> class Role, class... Axes>
using described = Role<typename describe<Axes>::type...>;

/// PyTorch's dimension rule: `-rank <= d < rank`.
constexpr bool dim_in_range(int d, std::size_t rank) {
    return d >= -static_cast<int>(rank) && d < static_cast<int>(rank);
}

/// A PyTorch dimension index made non-negative; only meaningful when `dim_in_range`.
constexpr std::size_t wrap_dim(int d, std::size_t rank) {
    return d < 0 ? static_cast<std::size_t>(d + static_cast<int>(rank)) : static_cast<std::size_t>(d);
}

/// Where axis `A` stands among `Axes...` (the first place), or `sizeof...(Axes)` when absent.
template <class A, class... Axes>
constexpr std::size_t index_of() {
    constexpr std::array<bool, sizeof...(Axes) + 1> hit{std::is_same_v<A, Axes>..., true};
    std::size_t i = 0;
    while (!hit[i]) ++i;
    return i;
}

/// How many of `Axes...` are `A`: an axis named by type must appear exactly once.
template <class A, class... Axes>
inline constexpr std::size_t count_of_v = (std::size_t{0} + ... + (std::is_same_v<A, Axes> ? 1 : 0));

/// The view rule: `view` only splits and merges adjacent axes in order, so source and target must have
/// the same atoms in the same order (`[num_heads, head_dim]` counts as `d_out` when `head_dim` was
/// declared as `d_out / num_heads`).
/// Axes of extent 1 hold no elements to reorder, so `view` may add or drop them (PyTorch's
/// `x.view(1, t, d)` of a `(t, d)` tensor); they are not dropped when deciding whether two axes are the
/// same axis.
template <class FromTuple, class ToTuple>
constexpr bool view_regroups(FromTuple from, ToTuple to) {
    auto unit = [](auto t) {
        using A = typename decltype(t)::type;
        return hana::bool_c<A::dynamic_atoms == 0 && A::bound == 1>;
    };
    return decltype(hana::remove_if(normal_form(from), unit) == hana::remove_if(normal_form(to), unit))::value;
}

/// How an axis takes part in broadcasting: 0 for `shaped::one` (against anything), 1 for `reduced<A>` (against
/// `A` only), 2 for every other axis (against itself only). Of two aligned axes the result keeps the higher.
template <class A>
inline constexpr int broadcast_rank_v = std::is_same_v<A, one> ? 0 : is_reduced<A> ? 1 : 2;

template <class A, class B>
constexpr bool reduced_against() {
    if constexpr (is_reduced<A>)
        return same_axis_v<typename A::of, B>;
    else
        return false;
}

/// Two aligned axes broadcast when they are the same axis, one of them is `shaped::one`, or one is the
/// `reduced<...>` of the other.
template <class A, class B>
inline constexpr bool broadcastable_v = same_axis_v<A, B> || std::is_same_v<A, one> || std::is_same_v<B, one> ||
                                        reduced_against<A, B>() || reduced_against<B, A>();

/// The axes of a broadcast result: the longer list's leading axes, then, position by position, the axis
/// that is not `one`.
template <class L, class R>
struct broadcast_result;
template <class... L, class... R>
struct broadcast_result<axis_pack<L...>, axis_pack<R...>> {
    static constexpr std::size_t nl = sizeof...(L), nr = sizeof...(R), n = nl > nr ? nl : nr;
    template <std::size_t I>
    static auto pick() {
        constexpr bool has_l = I >= n - nl, has_r = I >= n - nr;
        if constexpr (has_l && has_r) {
            using a = axis_at_t<I - (n - nl), L...>;
            using b = axis_at_t<I - (n - nr), R...>;
            return hana::type_c<std::conditional_t<(broadcast_rank_v<a> < broadcast_rank_v<b>), b, a>>;
        } else if constexpr (has_l) {
            return hana::type_c<axis_at_t<I - (n - nl), L...>>;
        } else {
            return hana::type_c<axis_at_t<I - (n - nr), R...>>;
        }
    }
    template <class Value, std::size_t... I>
    static auto tensor_type(std::index_sequence<I...>) -> tensor<Value, typename decltype(pick<I>())::type...>;
    template <class Value>
    using type = decltype(tensor_type<Value>(std::make_index_sequence<n>{}));
};

/// Broadcasting by position from the right, as PyTorch does, but every pair of aligned axes must be the
/// same axis: a missing leading axis broadcasts, a different axis of the same extent does not.
/// Returns the index of the first (right-aligned) pair that disagrees, or -1.
template <class... L>
struct broadcast_lhs {
    template <class... R>
    static constexpr int first_mismatch() {
        constexpr std::size_t nl = sizeof...(L), nr = sizeof...(R);
        constexpr std::size_t n = nl < nr ? nl : nr;
        if constexpr (n == 0) {
            return -1;
        } else {
            return [&]<std::size_t... I>(std::index_sequence<I...>) {
                constexpr std::array<bool, n> ok{
                    broadcastable_v<axis_at_t<nl - n + I, L...>, axis_at_t<nr - n + I, R...>>...};
                for (std::size_t i = 0; i < n; ++i)
                    if (!ok[i])
                        return static_cast<int>(i);
                return -1;
            }
            (std::make_index_sequence<n>{});
        }
    }
};

/// What disagrees between two axes that a rule wanted to be the same axis: an op's diagnostic chooses its
/// hint by it.
enum class mismatch {
    /// One is `key<A>` (or `cached<A>`) and the other `A`: the query axis stands where the key axis belongs.
    key_and_query,
    /// Products of the same factors in another order, `merged<batch, num_heads>` against
    /// `merged<num_heads, batch>`: `repeat` where `repeat_interleave` was meant, or the reverse.
    factors_reordered,
    /// One is the other times a group: query heads `product<"num_heads", num_kv_heads, group_size>` against
    /// the keys' `num_kv_heads`, not yet expanded to the queries' heads (`repeat_interleave`).
    grouped,
    /// Anything else: other axes, other extents.
    different,
};

/// How `A` and `B`, which are not the same axis, differ.
template <class A, class B>
constexpr bool key_of_query() {
    if constexpr (is_key<A>)
        return same_axis_v<typename A::query, B>;
    else
        return false;
}

/// Whether `Q` is `K` times a group: `Q`'s atoms begin with all of `K`'s and go on (`num_heads` declared as
/// `product<"num_heads", num_kv_heads, group_size>` groups `num_kv_heads`; so does `merged<num_kv_heads,
/// group_size>`, what `repeat_interleave<group_size, 1>` makes of the keys' heads). The query heads of
/// grouped-query attention: query head `h` goes with key/value head `h / group_size`.
template <class Q, class K>
constexpr bool groups_of() {
    if constexpr (!has_factors<Q> || std::is_same_v<Q, K>) {
        return false;
    } else {
        constexpr auto fq = normal_form(hana::tuple_t<Q>);
        constexpr auto fk = normal_form(hana::tuple_t<K>);
        constexpr std::size_t nq = decltype(hana::length(fq))::value, nk = decltype(hana::length(fk))::value;
        if constexpr (nq <= nk)
            return false;
        else
            return decltype(hana::take_front(fq, hana::size_c<nk>) == fk)::value;
    }
}

template <class A, class B>
constexpr mismatch mismatch_of() {
    if constexpr (key_of_query<A, B>() || key_of_query<B, A>()) {
        return mismatch::key_and_query;
    } else if constexpr (groups_of<A, B>() || groups_of<B, A>()) {
        return mismatch::grouped;
    } else if constexpr (has_factors<A> && has_factors<B>) {
        constexpr auto fa = atoms(hana::type_c<A>);
        constexpr auto fb = atoms(hana::type_c<B>);
        constexpr bool same_factors = hana::value(hana::length(fa) == hana::length(fb)) &&
                                      hana::value(hana::all_of(fa, [=](auto t) {
                                          return hana::count(fa, t) == hana::count(fb, t);
                                      }));
        return same_factors ? mismatch::factors_reordered : mismatch::different;
    } else {
        return mismatch::different;
    }
}

/// How many of `Axes...` are the same axis as `A`.
template <class A, class... Axes>
inline constexpr std::size_t count_same_v = (std::size_t{0} + ... + (same_axis_v<A, Axes> ? 1 : 0));

/// Whether two axis lists hold the same axes in another order: the right axes, transposed.
template <class... A, class... B>
constexpr bool permutation_of(axis_pack<A...>, axis_pack<B...>) {
    if constexpr (sizeof...(A) == sizeof...(B))
        return ((count_same_v<A, B...> == count_same_v<A, A...>) && ...);
    else
        return false;
}

/// How the first aligned pair of two lists that does not broadcast differs (`different` when every pair
/// broadcasts).
template <class... L, class... R>
constexpr mismatch broadcast_mismatch(axis_pack<L...>, axis_pack<R...>) {
    constexpr int i = broadcast_lhs<L...>::template first_mismatch<R...>();
    constexpr std::size_t nl = sizeof...(L), nr = sizeof...(R), n = nl < nr ? nl : nr;
    if constexpr (i < 0)
        return mismatch::different;
    else
        return mismatch_of<axis_at_t<nl - n + i, L...>, axis_at_t<nr - n + i, R...>>();
}

/// Why two lists do not broadcast, for the hint: a merged axis of the same factors in another order, the same
/// axes in another order, or anything else (`none` when they broadcast). The elementwise ops and
/// `masked_fill` choose their message by it.
enum class broadcast_miss { none, factors_reordered, permuted, other };

template <class... L, class... R>
constexpr broadcast_miss broadcast_miss_of(axis_pack<L...> l, axis_pack<R...> r) {
    if (broadcast_lhs<L...>::template first_mismatch<R...>() < 0) return broadcast_miss::none;
    if (broadcast_mismatch(l, r) == mismatch::factors_reordered) return broadcast_miss::factors_reordered;
    if (permutation_of(l, r)) return broadcast_miss::permuted;
    return broadcast_miss::other;
}

// Which operand each axis of a broadcast result comes from (the one that is not `one`), and which aligned
// pairs of axes must agree at run time (those where neither is `one`).
template <class L, class R>
struct broadcast_plan;
template <class... L, class... R>
struct broadcast_plan<axis_pack<L...>, axis_pack<R...>> {
    static constexpr std::size_t nl = sizeof...(L), nr = sizeof...(R), n = nl > nr ? nl : nr, m = nl < nr ? nl : nr;
    static constexpr std::array<int, nl + 1> l_rank{broadcast_rank_v<L>..., 2};
    static constexpr std::array<int, nr + 1> r_rank{broadcast_rank_v<R>..., 2};
    // Size-1 axes (`one`, `reduced<...>`): their extent is 1 and needs no compare.
    static constexpr std::array<bool, nl + 1> l_one{(broadcast_rank_v<L> < 2)..., false};
    static constexpr std::array<bool, nr + 1> r_one{(broadcast_rank_v<R> < 2)..., false};
    static constexpr std::array<axis_source, n> sources = [] {
        std::array<axis_source, n> s{};
        for (std::size_t j = 0; j < n; ++j) {
            const bool has_l = j >= n - nl, has_r = j >= n - nr;
            const std::size_t il = j - (n - nl), ir = j - (n - nr);
            s[j] = has_l && !(has_r && l_rank[il] < r_rank[ir]) ? axis_source{0, il} : axis_source{1, ir};
        }
        return s;
    }();
    static constexpr std::size_t pair_count = [] {
        std::size_t c = 0;
        for (std::size_t k = 0; k < m; ++k) c += !l_one[nl - m + k] && !r_one[nr - m + k];
        return c;
    }();
    static constexpr axis_pairs<pair_count> pairs = [] {
        axis_pairs<pair_count> p{};
        std::size_t c = 0;
        for (std::size_t k = 0; k < m; ++k)
            if (!l_one[nl - m + k] && !r_one[nr - m + k]) p[c++] = {nl - m + k, nr - m + k};
        return p;
    }();
};

/// The extents of a broadcast result (`Result`'s axes are `broadcast_result`'s), after checking that the
/// run-time axes the operands share, aligned from the right, have the same extents.
template <class Result, class... L, class... R>
Result broadcast_extents(std::string_view op, std::string_view a_role, const extents<L...>& a,
                         std::string_view b_role, const extents<R...>& b) {
    using plan = broadcast_plan<axis_pack<L...>, axis_pack<R...>>;
    check_meets<plan::pairs>(op, a_role, a, b_role, b);
    return take_extents<Result, plan::sources>(a, b);
}

/// A shape as text for run-time messages: `(batch=1, num_tokens=2, d_out=6)` (static axes only; a tensor's
/// own is `x.shape.text()`).
template <class... Axes>
std::string shape_text() {
    return extents<Axes...>{}.text();
}

}  // namespace shaped::detail

#endif
