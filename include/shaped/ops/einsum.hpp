#ifndef SHAPED_OPS_EINSUM_HPP
#define SHAPED_OPS_EINSUM_HPP

/// \file
/// `einsum<"pattern">(a, b)`: `torch.einsum` over the axes' own names, checked when the program compiles.
/// `"batch num_heads num_tokens head_dim, batch num_heads keys head_dim -> batch num_heads num_tokens keys"`
/// (with `let<"keys", key<num_tokens>>`) is the attention scores' `queries @ keys.transpose(2, 3)`: a name on
/// both operands and the right is a batch axis, matched by name (a key axis is not a query axis); a name on
/// both operands only is summed over; a name of one operand on the right is a row or a column.

#include <array>
#include <cstddef>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "../axis.hpp"
#include "../detail/fixed_string.hpp"
#include "../detail/pattern.hpp"
#include "../detail/strided.hpp"
#include "../diagnostics.hpp"
#include "../extents.hpp"
#include "../tensor_fwd.hpp"
#include "matmul.hpp"
#include "rearrange.hpp"
#include "transpose.hpp"

namespace shaped {

namespace detail::einsum_detail {

namespace pt = detail::pattern;

enum class problem : unsigned char { none, grammar, group, ellipsis, rank_a, rank_b, not_on_left, alone };

inline constexpr std::size_t npos = static_cast<std::size_t>(-1);
inline constexpr std::size_t max_axes = pt::max_terms;

struct analysis {
    pt::parsed p{};
    problem what = problem::none;
    std::size_t where = 0;       // byte offset of the problem
    std::size_t name_begin = 0;  // the name the problem is about
    std::size_t name_size = 0;
    std::size_t rank_a = 0, rank_b = 0, rank_out = 0;
    std::size_t spelled = 0;                          // the names of the operand whose rank is wrong
    std::array<std::size_t, max_axes> b_of_a{};       // per axis of a: b's axis of the same name, or npos
    std::array<std::size_t, max_axes> a_of_b{};       // per axis of b: a's axis of the same name, or npos
    std::array<std::size_t, max_axes> out_of_a{};     // per axis of a: its position on the right, or npos
    std::array<std::size_t, max_axes> out_of_b{};
    std::array<std::size_t, max_axes> out_operand{};  // per axis of the result: 0 (from a) or 1 (from b) ...
    std::array<std::size_t, max_axes> out_axis{};     // ... and which axis of it
    // A batched matrix product: (batch..., m, k) @ (batch..., k, n), then the result's axes reordered.
    bool is_matmul = false;
    std::size_t batch = 0;
    std::array<std::size_t, max_axes> perm_a{}, perm_b{}, perm_out{};
    bool identity_a = true, identity_b = true, identity_out = true;
    // Any other contraction with a summed name and a row or column name: a gathered (batch..., rows...,
    // summed...) @ b gathered (batch..., summed..., columns...), the names of each role merged into one
    // matrix extent, then the result (batch..., rows..., columns...) put in the right side's order.
    bool is_gemm = false;
    std::size_t rows = 0, cols = 0, sums = 0;
    std::array<std::size_t, max_axes> gather_a{}, gather_b{};  // a's and b's axes in the gathered order
    std::array<std::size_t, max_axes> out_of_t{};              // per axis of the gathered result: its place
    bool identity_t = true;
};

constexpr analysis fail(analysis a, problem what, std::size_t where, pt::name_ref name = {}) {
    a.what = what;
    a.where = where;
    a.name_begin = name.begin;
    a.name_size = name.size;
    return a;
}

constexpr std::string_view name_at(std::string_view text, const pt::parsed& p, const pt::side& s, std::size_t t) {
    return pt::name_of(text, p.names[s.terms[t].first]);
}

constexpr std::size_t find(std::string_view text, const pt::parsed& p, const pt::side& s, std::string_view name) {
    for (std::size_t t = 0; t < s.size; ++t)
        if (pt::same(name_at(text, p, s, t), name)) return t;
    return npos;
}

// Everything the names decide: the grammar, the operands' ranks, the role of each name, and whether (and how)
// the contraction is a batched matrix product. Whether each name is the operand's axis there (a question of
// types) is checked by `einsum` after this.
constexpr analysis analyze(std::string_view text, std::size_t rank_a, std::size_t rank_b) {
    analysis a{};
    a.p = pt::parse(text, 2);
    a.rank_a = rank_a;
    a.rank_b = rank_b;
    if (a.p.err != pt::mistake::none) return fail(a, problem::grammar, a.p.where);
    const pt::side* sides[3] = {&a.p.lhs, &a.p.lhs2, &a.p.rhs};
    for (const pt::side* s : sides)
        for (std::size_t t = 0; t < s->size; ++t) {
            if (s->terms[t].kind == pt::term_kind::ellipsis) return fail(a, problem::ellipsis, pt::find(text, "..."));
            if (s->terms[t].kind == pt::term_kind::group) {
                const pt::name_ref first = a.p.names[s->terms[t].first];
                return fail(a, problem::group, first.begin - 1);
            }
        }
    const pt::side& sa = a.p.lhs;
    const pt::side& sb = a.p.lhs2;
    const pt::side& so = a.p.rhs;
    if (sa.size != rank_a) return a.spelled = sa.size, fail(a, problem::rank_a, 0);
    if (sb.size != rank_b) return a.spelled = sb.size, fail(a, problem::rank_b, 0);
    a.rank_out = so.size;
    for (std::size_t i = 0; i < rank_a; ++i) {
        a.b_of_a[i] = find(text, a.p, sb, name_at(text, a.p, sa, i));
        a.out_of_a[i] = find(text, a.p, so, name_at(text, a.p, sa, i));
    }
    for (std::size_t j = 0; j < rank_b; ++j) {
        a.a_of_b[j] = find(text, a.p, sa, name_at(text, a.p, sb, j));
        a.out_of_b[j] = find(text, a.p, so, name_at(text, a.p, sb, j));
    }
    for (std::size_t k = 0; k < so.size; ++k) {
        const std::string_view nm = name_at(text, a.p, so, k);
        if (const std::size_t i = find(text, a.p, sa, nm); i != npos) {
            a.out_operand[k] = 0;
            a.out_axis[k] = i;
        } else if (const std::size_t j = find(text, a.p, sb, nm); j != npos) {
            a.out_operand[k] = 1;
            a.out_axis[k] = j;
        } else {
            return fail(a, problem::not_on_left, a.p.names[so.terms[k].first].begin, a.p.names[so.terms[k].first]);
        }
    }
    for (std::size_t i = 0; i < rank_a; ++i)
        if (a.b_of_a[i] == npos && a.out_of_a[i] == npos)
            return fail(a, problem::alone, a.p.names[sa.terms[i].first].begin, a.p.names[sa.terms[i].first]);
    for (std::size_t j = 0; j < rank_b; ++j)
        if (a.a_of_b[j] == npos && a.out_of_b[j] == npos)
            return fail(a, problem::alone, a.p.names[sb.terms[j].first].begin, a.p.names[sb.terms[j].first]);

    // The roles: batch (both operands and the right), m (a only), n (b only), k (both, not the right).
    std::size_t m = npos, n = npos, k = npos, ms = 0, ns = 0, ks = 0;
    for (std::size_t i = 0; i < rank_a; ++i) {
        if (a.b_of_a[i] == npos) m = i, ++ms;
        else if (a.out_of_a[i] == npos) k = i, ++ks;
    }
    for (std::size_t j = 0; j < rank_b; ++j)
        if (a.a_of_b[j] == npos) n = j, ++ns;
    a.is_matmul = ms == 1 && ns == 1 && ks == 1;
    a.is_gemm = !a.is_matmul && ks >= 1 && ms + ns >= 1;
    if (a.is_gemm) {
        std::size_t ga = 0, gb = 0, t = 0;
        for (std::size_t o = 0; o < so.size; ++o)  // batch names in the result's order
            if (a.out_operand[o] == 0 && a.b_of_a[a.out_axis[o]] != npos) {
                a.gather_a[ga++] = a.out_axis[o];
                a.gather_b[gb++] = a.b_of_a[a.out_axis[o]];
                a.out_of_t[t++] = o;
            }
        for (std::size_t o = 0; o < so.size; ++o)  // rows, in the result's order
            if (a.out_operand[o] == 0 && a.b_of_a[a.out_axis[o]] == npos) {
                a.gather_a[ga++] = a.out_axis[o];
                a.out_of_t[t++] = o;
                ++a.rows;
            }
        for (std::size_t i = 0; i < rank_a; ++i)  // summed names, in a's order, on both
            if (a.b_of_a[i] != npos && a.out_of_a[i] == npos) {
                a.gather_a[ga++] = i;
                a.gather_b[gb++] = a.b_of_a[i];
                ++a.sums;
            }
        for (std::size_t o = 0; o < so.size; ++o)  // columns, in the result's order
            if (a.out_operand[o] == 1) {
                a.gather_b[gb++] = a.out_axis[o];
                a.out_of_t[t++] = o;
                ++a.cols;
            }
        for (std::size_t o = 0; o < so.size; ++o) a.identity_t = a.identity_t && a.out_of_t[o] == o;
        return a;
    }
    if (!a.is_matmul) return a;
    // Batch axes in the result's order, then a's row and contracted axis, b's contracted axis and column.
    std::size_t q = 0;
    for (std::size_t o = 0; o < so.size; ++o)
        if (a.out_operand[o] == 0 && a.b_of_a[a.out_axis[o]] != npos) {
            a.perm_a[q] = a.out_axis[o];
            a.perm_b[q] = a.b_of_a[a.out_axis[o]];
            a.perm_out[o] = q;
            ++q;
        }
    a.batch = q;
    a.perm_a[q] = m;
    a.perm_a[q + 1] = k;
    a.perm_b[q] = a.b_of_a[k];
    a.perm_b[q + 1] = n;
    a.perm_out[a.out_of_a[m]] = q;
    a.perm_out[a.out_of_b[n]] = q + 1;
    for (std::size_t i = 0; i < rank_a; ++i) a.identity_a = a.identity_a && a.perm_a[i] == i;
    for (std::size_t j = 0; j < rank_b; ++j) a.identity_b = a.identity_b && a.perm_b[j] == j;
    for (std::size_t o = 0; o < so.size; ++o) a.identity_out = a.identity_out && a.perm_out[o] == o;
    return a;
}

template <class X>
concept let_binding = requires {
    typename X::axis;
    X::name;
};

// Whether `name` is X's name: the axis's own, or one a `let` gives an axis of the same type.
template <class X, class... L>
constexpr bool names(std::string_view name) {
    constexpr std::string_view own = detail::rearrange_detail::binding<X>::name;
    return (!own.empty() && pt::same(own, name)) || ((pt::same(L::name, name) && same_axis_v<typename L::axis, X>) || ...);
}

template <class... T>
struct pack {};
template <std::size_t I, class... T>
using at_t = std::tuple_element_t<I, std::tuple<T...>>;

// The contraction of a (axes A...) and b (axes B...) by pattern P with the `let`s L..., as types and constants.
template <fixed_string P, class Lets, class As, class Bs>
struct plan;
template <fixed_string P, class... L, class... A, class... B>
struct plan<P, pack<L...>, pack<A...>, pack<B...>> {
    static constexpr analysis a = analyze(P.view(), sizeof...(A), sizeof...(B));
    static constexpr bool named = a.what == problem::none;

    // The first axis of an operand its side does not name (the rank if there is none).
    template <std::size_t... I>
    static constexpr std::size_t first_misnamed_a(std::index_sequence<I...>) {
        const std::array<bool, sizeof...(A) + 1> ok{names<A, L...>(name_at(P.view(), a.p, a.p.lhs, I))..., false};
        std::size_t i = 0;
        while (i < sizeof...(A) && ok[i]) ++i;
        return i;
    }
    template <std::size_t... J>
    static constexpr std::size_t first_misnamed_b(std::index_sequence<J...>) {
        const std::array<bool, sizeof...(B) + 1> ok{names<B, L...>(name_at(P.view(), a.p, a.p.lhs2, J))..., false};
        std::size_t j = 0;
        while (j < sizeof...(B) && ok[j]) ++j;
        return j;
    }
    static constexpr std::size_t misnamed_a = [] {
        if constexpr (named) return first_misnamed_a(std::index_sequence_for<A...>{});
        else return sizeof...(A);
    }();
    static constexpr std::size_t misnamed_b = [] {
        if constexpr (named && misnamed_a == sizeof...(A)) return first_misnamed_b(std::index_sequence_for<B...>{});
        else return sizeof...(B);
    }();
    static constexpr bool spelled = misnamed_a == sizeof...(A) && misnamed_b == sizeof...(B);

    // A name on both operands is one axis: the first axis of a whose namesake in b is another axis.
    template <std::size_t I>
    static constexpr bool same_as_in_b() {
        if constexpr (a.b_of_a[I] == npos)
            return true;
        else
            return same_axis_v<at_t<I, A...>, at_t<a.b_of_a[I], B...>>;
    }
    template <std::size_t... I>
    static constexpr std::size_t first_clash(std::index_sequence<I...>) {
        const std::array<bool, sizeof...(A) + 1> ok{same_as_in_b<I>()..., false};
        std::size_t i = 0;
        while (i < sizeof...(A) && ok[i]) ++i;
        return i;
    }
    static constexpr std::size_t clash = [] {
        if constexpr (named && spelled) return first_clash(std::index_sequence_for<A...>{});
        else return sizeof...(A);
    }();
    static constexpr bool ok = named && spelled && clash == sizeof...(A);

    template <std::size_t K>
    static auto out_at() {
        if constexpr (a.out_operand[K] == 0)
            return std::type_identity<at_t<a.out_axis[K], A...>>{};
        else
            return std::type_identity<at_t<a.out_axis[K], B...>>{};
    }
    template <std::size_t K>
    using out_t = typename decltype(out_at<K>())::type;
    template <class Value, std::size_t... K>
    static auto result_type(std::index_sequence<K...>) -> tensor<Value, out_t<K>...>;
    static constexpr auto sources = [] {
        std::array<axis_source, max_axes> s{};
        for (std::size_t k = 0; k < a.rank_out; ++k) s[k] = {static_cast<int>(a.out_operand[k]), a.out_axis[k]};
        return s;
    }();
    static constexpr auto meets = [] {  // the axes of a and b that a name joins, checked equal at run time
        std::size_t c = 0;
        for (std::size_t i = 0; i < sizeof...(A); ++i) c += a.b_of_a[i] != npos ? 1 : 0;
        return c;
    }();
    static constexpr auto meet_pairs = [] {
        axis_pairs<meets> p{};
        std::size_t c = 0;
        for (std::size_t i = 0; i < sizeof...(A); ++i)
            if (a.b_of_a[i] != npos) p[c++] = {i, a.b_of_a[i]};
        return p;
    }();

    template <std::array<std::size_t, max_axes> Perm, bool Identity, class T, std::size_t... I>
    static decltype(auto) arranged(T&& x, std::index_sequence<I...>) {
        if constexpr (Identity)
            return std::forward<T>(x);
        else
            return shaped::permute<static_cast<int>(Perm[I])...>(std::forward<T>(x));
    }

    // A batched matrix product: a and b permuted (strides, no copy of a temporary), matmul, the result's
    // axes permuted to the right side's order.
    template <class TA, class TB>
    static auto run_matmul(TA&& x, TB&& y) {
        // The extents a name joins, checked on the operands as the caller passed them (matmul would report
        // them permuted).
        check_meets<meet_pairs>("einsum<Pattern>(a, b)", "a", x.shape, "b", y.shape);
        auto r = matmul(arranged<a.perm_a, a.identity_a>(std::forward<TA>(x), std::index_sequence_for<A...>{}),
                        arranged<a.perm_b, a.identity_b>(std::forward<TB>(y), std::index_sequence_for<B...>{}));
        if constexpr (a.identity_out)
            return r;
        else
            return arranged<a.perm_out, false>(std::move(r), std::make_index_sequence<a.rank_out>{});
    }

    // A batched matrix product whose result's last axis is b's column but whose other axes are in another
    // order than matmul's (the context vectors' "-> batch num_tokens num_heads head_dim"): each batch's
    // product goes straight to its place in the result, laid out in the right side's order, through BLAS's
    // leading dimension, where matmul then a permutation would leave a strided result for the next
    // `contiguous()` to gather. The same BLAS calls on the same operands as matmul's, so the same bits.
    static constexpr bool placed = a.is_matmul && !a.identity_out && a.perm_out[a.rank_out - 1] == a.batch + 1;

    template <class TA, class TB>
    static auto run_matmul_placed(TA&& x, TB&& y) {
        check_meets<meet_pairs>("einsum<Pattern>(a, b)", "a", x.shape, "b", y.shape);
        using value = typename std::remove_cvref_t<TA>::value_type;
        using result_t = decltype(result_type<value>(std::make_index_sequence<a.rank_out>{}));
        result_t out(take_extents<typename result_t::extents_type, sources>(x.shape, y.shape), uninitialized);
        // The operands as they are, or permuted views of them: nothing copied.
        auto&& ax = arranged<a.perm_a, a.identity_a>(std::forward<TA>(x), std::index_sequence_for<A...>{});
        auto&& by = arranged<a.perm_b, a.identity_b>(std::forward<TB>(y), std::index_sequence_for<B...>{});
        constexpr std::size_t na = sizeof...(A), nb = sizeof...(B), no = a.rank_out, nbatch = a.batch;
        const blas_operand<value, na> oa(ax);
        const blas_operand<value, nb> ob(by);
        const std::size_t m = oa.extent[na - 2], k = oa.extent[na - 1], n = ob.extent[nb - 1];
        std::array<std::size_t, no> stride_o{};
        for (std::size_t o = no, st = 1; o-- > 0; st *= out.shape.extent(o)) stride_o[o] = st;
        // The result's position of each matmul axis: batch q, then the row.
        std::array<std::size_t, nbatch + 1> place{};
        for (std::size_t o = 0; o < no; ++o)
            if (a.perm_out[o] <= nbatch) place[a.perm_out[o]] = o;
        const std::size_t ldc = stride_o[place[nbatch]];
        if (m > blas_max || n > blas_max || k > blas_max || ldc > blas_max) blas_extent_too_large(out.shape.text());
        const std::size_t batches = m * n == 0 ? 0 : out.numel() / (m * n);
        value* pc = out.data();
        for (std::size_t i = 0; i < batches; ++i) {
            std::size_t offset = 0;
            for (std::size_t q = nbatch, j = i; q-- > 0;) {  // i is row-major over the batch axes
                offset += (j % oa.extent[q]) * stride_o[place[q]];
                j /= oa.extent[q];
            }
            gemm(oa.matrix(i), oa.layout, oa.stride[na - 2], ob.matrix(i), ob.layout, pc + offset, m, n, k, ldc);
        }
        return out;
    }

    // Several summed names, or several rows or columns: each operand gathered contiguous in the order
    // (batch..., rows..., summed...) and (batch..., summed..., columns...), one BLAS product per batch with
    // each role's names merged into one extent, the result put in the right side's order.
    template <class Value, class LA, class LB>
    static auto run_gemm(const basic_tensor<Value, LA, A...>& x, const basic_tensor<Value, LB, B...>& y) {
        check_meets<meet_pairs>("einsum<Pattern>(a, b)", "a", x.shape, "b", y.shape);
        using result_t = decltype(result_type<Value>(std::make_index_sequence<a.rank_out>{}));
        result_t out(take_extents<typename result_t::extents_type, sources>(x.shape, y.shape), uninitialized);
        constexpr std::size_t na = sizeof...(A), nb = sizeof...(B), no = a.rank_out;
        constexpr std::size_t nbatch = na - a.rows - a.sums;
        auto gathered = [](const auto& t, const auto& order, std::vector<Value>& buffer) -> const Value* {
            constexpr std::size_t n = std::remove_cvref_t<decltype(t.shape)>::rank;
            const auto st = t.stride();
            std::array<std::size_t, n> extent{}, stride{};
            bool in_order = std::remove_cvref_t<decltype(t)>::is_contiguous;
            for (std::size_t i = 0; i < n; ++i) {
                extent[i] = t.shape.extent(order[i]);
                stride[i] = st[order[i]];
                in_order = in_order && order[i] == i;
            }
            if (in_order) return t.data();
            buffer.resize(t.numel());
            gather_strided<Value, n>(t.data(), buffer.data(), extent, stride);
            return buffer.data();
        };
        std::vector<Value> buffer_a, buffer_b, buffer_t;
        const Value* pa = gathered(x, a.gather_a, buffer_a);
        const Value* pb = gathered(y, a.gather_b, buffer_b);
        std::size_t batches = 1, m = 1, k = 1, n = 1;
        for (std::size_t i = 0; i < na; ++i)
            (i < nbatch ? batches : i < nbatch + a.rows ? m : k) *= x.shape.extent(a.gather_a[i]);
        for (std::size_t j = nbatch + a.sums; j < nb; ++j) n *= y.shape.extent(a.gather_b[j]);
        if (m > blas_max || n > blas_max || k > blas_max) blas_extent_too_large(out.shape.text());
        Value* pt = out.data();
        if constexpr (!a.identity_t) {
            buffer_t.resize(out.numel());
            pt = buffer_t.data();
        }
        for (std::size_t i = 0; i < batches; ++i) gemm(pa + i * m * k, pb + i * k * n, pt + i * m * n, m, n, k);
        if constexpr (!a.identity_t) {  // the gathered result's axes are the result's, in another order
            std::array<std::size_t, no> extent_t{}, stride_t{}, stride{};
            for (std::size_t q = 0; q < no; ++q) extent_t[q] = out.shape.extent(a.out_of_t[q]);
            stride_t = row_major_strides<no>(extent_t);
            for (std::size_t q = 0; q < no; ++q) stride[a.out_of_t[q]] = stride_t[q];
            gather_strided<Value, no>(pt, out.data(), out.shape.sizes(), stride);
        }
        return out;
    }

    // Any other contraction: one pass over every combination of the names' indices, in the order a's
    // names then b's new ones, the products added into the result (zeros to start).
    template <class Value, class LA, class LB>
    static auto run_loop(const basic_tensor<Value, LA, A...>& x, const basic_tensor<Value, LB, B...>& y) {
        check_meets<meet_pairs>("einsum<Pattern>(a, b)", "a", x.shape, "b", y.shape);
        using result_t = decltype(result_type<Value>(std::make_index_sequence<a.rank_out>{}));
        using result_extents = typename result_t::extents_type;
        result_t out(take_extents<result_extents, sources>(x.shape, y.shape));
        const auto& cx = [&]() -> decltype(auto) {
            if constexpr (std::remove_cvref_t<decltype(x)>::is_contiguous) return (x); else return x.contiguous();
        }();
        const auto& cy = [&]() -> decltype(auto) {
            if constexpr (std::remove_cvref_t<decltype(y)>::is_contiguous) return (y); else return y.contiguous();
        }();
        constexpr std::size_t na = sizeof...(A), nb = sizeof...(B), no = a.rank_out;
        constexpr std::size_t names_count = [] {
            std::size_t c = na;
            for (std::size_t j = 0; j < nb; ++j) c += a.a_of_b[j] == npos ? 1 : 0;
            return c;
        }();
        std::array<std::size_t, na> stride_x{};
        std::array<std::size_t, nb> stride_y{};
        std::array<std::size_t, no> stride_o{};
        for (std::size_t i = na, s = 1; i-- > 0; s *= cx.shape.extent(i)) stride_x[i] = s;
        for (std::size_t j = nb, s = 1; j-- > 0; s *= cy.shape.extent(j)) stride_y[j] = s;
        for (std::size_t o = no, s = 1; o-- > 0; s *= out.shape.extent(o)) stride_o[o] = s;
        std::array<std::size_t, names_count> extent{}, sx{}, sy{}, so{};
        std::size_t u = 0;
        for (std::size_t i = 0; i < na; ++i, ++u) {
            extent[u] = cx.shape.extent(i);
            sx[u] = stride_x[i];
            sy[u] = a.b_of_a[i] != npos ? stride_y[a.b_of_a[i]] : 0;
            so[u] = a.out_of_a[i] != npos ? stride_o[a.out_of_a[i]] : 0;
        }
        for (std::size_t j = 0; j < nb; ++j)
            if (a.a_of_b[j] == npos) {
                extent[u] = cy.shape.extent(j);
                sx[u] = 0;
                sy[u] = stride_y[j];
                so[u] = a.out_of_b[j] != npos ? stride_o[a.out_of_b[j]] : 0;
                ++u;
            }
        std::size_t total = 1;
        for (std::size_t e : extent) total *= e;
        const Value* px = cx.data();
        const Value* py = cy.data();
        Value* po = out.data();
        std::array<std::size_t, names_count> index{};
        std::size_t ox = 0, oy = 0, oo = 0;
        for (std::size_t step = 0; step < total; ++step) {
            po[oo] += px[ox] * py[oy];
            for (std::size_t v = names_count; v-- > 0;) {  // the next combination, the last name fastest
                ++index[v];
                ox += sx[v];
                oy += sy[v];
                oo += so[v];
                if (index[v] < extent[v]) break;
                ox -= sx[v] * extent[v];
                oy -= sy[v] * extent[v];
                oo -= so[v] * extent[v];
                index[v] = 0;
            }
        }
        return out;
    }
};

template <class T>
struct parts;
template <class Value, class Layout, class... Axes>
struct parts<basic_tensor<Value, Layout, Axes...>> {
    using value = Value;
    using axes = pack<Axes...>;
};

// Axis I of T... as a diagnostic list of one (an empty list for an operand without axes).
template <template <class...> class Tag, std::size_t I, class... T>
auto described_at() {
    if constexpr (sizeof...(T) == 0)
        return std::type_identity<Tag<>>{};
    else
        return std::type_identity<detail::described<Tag, at_t<I, T...>>>{};
}

template <fixed_string P, class Plan, class... A, class... B, class TA, class TB>
auto checked_einsum(pack<A...>, pack<B...>, TA&& x, TB&& y) {
    constexpr analysis a = Plan::a;
    namespace rd = detail::rearrange_detail;
    using name_t = rd::name_t<P, a.name_begin, a.name_size>;
    static_assert(diag::expect<a.what != problem::grammar, diag::bad_pattern<a.p.err>, diag::at_byte<a.where>>,
                  "shaped::einsum<Pattern>(a, b): the pattern is not 'a's axes, b's axes -> the result's axes', "
                  "names separated by spaces");
    static_assert(diag::expect<a.what != problem::group && a.what != problem::ellipsis, diag::at_byte<a.where>>,
                  "shaped::einsum<Pattern>(a, b): einsum names every axis, without (a b) groups or ...; split "
                  "or merge axes with rearrange first");
    static_assert(diag::expect<a.what != problem::rank_a, diag::rank<sizeof...(A)>, diag::numbers<a.spelled>,
                               detail::described<diag::lhs_axes, A...>>,
                  "shaped::einsum<Pattern>(a, b): the pattern spells another number of axes for a than a has "
                  "(the numbers: a's rank, the names spelled)");
    static_assert(diag::expect<a.what != problem::rank_b, diag::rank<sizeof...(B)>, diag::numbers<a.spelled>,
                               detail::described<diag::rhs_axes, B...>>,
                  "shaped::einsum<Pattern>(a, b): the pattern spells another number of axes for b than b has "
                  "(the numbers: b's rank, the names spelled)");
    static_assert(diag::expect<a.what != problem::not_on_left, name_t, diag::at_byte<a.where>>,
                  "shaped::einsum<Pattern>(a, b): a name on the right is on neither operand");
    static_assert(diag::expect<a.what != problem::alone, name_t, diag::at_byte<a.where>>,
                  "shaped::einsum<Pattern>(a, b): a name of one operand only is missing on the right; einsum "
                  "sums over the names the operands share (sum over it first with shaped::sum)");
    constexpr pt::name_ref bad_a =
        Plan::misnamed_a < sizeof...(A) ? a.p.names[a.p.lhs.terms[Plan::misnamed_a].first] : pt::name_ref{};
    static_assert(diag::expect<Plan::misnamed_a == sizeof...(A), rd::name_t<P, bad_a.begin, bad_a.size>,
                               diag::at_byte<bad_a.begin>, detail::described<diag::lhs_axes, A...>>,
                  "shaped::einsum<Pattern>(a, b): a's side must name a's axes in order, and this name is not "
                  "the axis there (the axes listed); an axis's own name, or one given by shaped::let<Name, Axis>");
    constexpr pt::name_ref bad_b =
        Plan::misnamed_b < sizeof...(B) ? a.p.names[a.p.lhs2.terms[Plan::misnamed_b].first] : pt::name_ref{};
    static_assert(diag::expect<Plan::misnamed_b == sizeof...(B), rd::name_t<P, bad_b.begin, bad_b.size>,
                               diag::at_byte<bad_b.begin>, detail::described<diag::rhs_axes, B...>>,
                  "shaped::einsum<Pattern>(a, b): b's side must name b's axes in order, and this name is not "
                  "the axis there (the axes listed); an axis's own name, or one given by shaped::let<Name, Axis>");
    constexpr std::size_t clash = Plan::clash;
    constexpr pt::name_ref bad_c = clash < sizeof...(A) ? a.p.names[a.p.lhs.terms[clash].first] : pt::name_ref{};
    constexpr std::size_t clash_a = clash < sizeof...(A) ? clash : 0;
    constexpr std::size_t clash_b = clash < sizeof...(A) && a.b_of_a[clash_a] != npos ? a.b_of_a[clash_a] : 0;
    using clash_name = rd::name_t<P, bad_c.begin, bad_c.size>;
    using axis_in_a = typename decltype(described_at<diag::lhs_axes, clash_a, A...>())::type;
    using axis_in_b = typename decltype(described_at<diag::rhs_axes, clash_b, B...>())::type;
    static_assert(diag::expect<clash == sizeof...(A), clash_name, axis_in_a, axis_in_b>,
                  "shaped::einsum<Pattern>(a, b): a name of both operands stands for one axis in a and another in "
                  "b (the two listed); one name is one axis: give the other its own with shaped::let<Name, Axis>, "
                  "as a key axis is not a query axis");
    if constexpr (Plan::ok) {
        if constexpr (Plan::placed)
            return Plan::run_matmul_placed(std::forward<TA>(x), std::forward<TB>(y));
        else if constexpr (a.is_matmul)
            return Plan::run_matmul(std::forward<TA>(x), std::forward<TB>(y));
        else if constexpr (a.is_gemm)
            return Plan::run_gemm(x, y);
        else
            return Plan::run_loop(x, y);
    } else {
        return diag::failed_shape_check{};
    }
}

}  // namespace detail::einsum_detail

/// Contracts `a` and `b` as `Pattern` says, `torch.einsum` over the axes' names: `"a's axes, b's axes ->
/// result's axes"`, each side a name per axis, in order. A name on both operands and on the right is a batch
/// axis; on both operands only, it is summed over; on one operand and the right, it is a row or a column of
/// the result. Names are the axes' own (`batch`, `num_heads`, ...) or those `let<"keys", key<num_tokens>>`
/// in `Extra...` gives an axis of that type (axes such as `key<A>` have no name of their own).
///
/// Shapes: the result's axes are the operands' axes the right side names, in its order; e.g.
/// `(batch, num_heads, num_tokens, head_dim), (batch, num_heads, key<num_tokens>, head_dim) -> (batch,
/// num_heads, num_tokens, key<num_tokens>)`. Element type: float or double, the same for both.
/// Lowering: a batched matrix product (one row name, one column name, one summed name, any batch names) is
/// `matmul` of the operands permuted in place (oneDNN's sgemm for float): the same steps and type as
/// `matmul(q, k.transpose<2, 3>())` by hand when the right side keeps matmul's order; when it moves the
/// batch axes or the row but ends on the column (`-> batch num_tokens num_heads head_dim`), each product is
/// written straight to its place in a contiguous result, which is `matmul(w, v).transpose<1, 2>().contiguous()`
/// bit for bit, without the gather; otherwise matmul's result permuted (strided). A contraction over several
/// summed names, or with several row or column names, is one BLAS product per batch of the operands gathered
/// contiguous with each role's names merged (`"batch num_tokens d_out, keys num_tokens d_out -> batch keys"`
/// sums over `num_tokens · d_out` at once), its result contiguous in the right side's order. One with
/// nothing summed (an outer product) or with neither rows nor columns (a dot product per position) is one
/// loop over the names' indices, without BLAS.
/// Errors: compile time: a malformed pattern (`diag::bad_pattern`, two operands separated by `,`), a group or
/// `...` (einsum names every axis), an operand spelled with another number of axes than it has, a name that is
/// not the operand's axis at that position (the expected axes listed), one name for two different axes of a
/// and b (a query axis is not a key axis: name them apart), a name on the right that no operand has, a
/// name of one operand only that is not on the right; the element types differ, or are not float or double;
/// an argument after the pattern that is not a `let`. Run time: `shaped::shape_error` when a name joins
/// run-time axes of different extents, naming the axis and both operands as passed.
/// Source: `torch.einsum("bhqd,bhkd->bhqk", q, k)`; `queries @ keys.transpose(2, 3)` and `attn_weights @
/// values` in the book's `MultiHeadAttention` (listing 3.5).
template <detail::fixed_string Pattern, class... Extra, Tensor TA, Tensor TB>
auto einsum(TA&& a, TB&& b) {
    namespace ed = detail::einsum_detail;
    using pa = ed::parts<std::remove_cvref_t<TA>>;
    using pb = ed::parts<std::remove_cvref_t<TB>>;
    using value = typename pa::value;
    constexpr bool same_type = std::is_same_v<value, typename pb::value>;
    constexpr bool float_type = std::is_same_v<value, float> || std::is_same_v<value, double>;
    constexpr bool lets = (ed::let_binding<Extra> && ...);
    static_assert(same_type, "shaped::einsum<Pattern>(a, b): a and b must have the same element type; convert "
                             "one with .to<float>() or .to<double>()");
    static_assert(!same_type || float_type, "shaped::einsum<Pattern>(a, b): elements must be float or double");
    static_assert(lets, "shaped::einsum<Pattern>(a, b): after the pattern come names, shaped::let<Name, Axis> "
                        "(an axis with a name of its own needs none)");
    if constexpr (same_type && float_type && lets) {
        using plan = ed::plan<Pattern, ed::pack<Extra...>, typename pa::axes, typename pb::axes>;
        return ed::checked_einsum<Pattern, plan>(typename pa::axes{}, typename pb::axes{}, std::forward<TA>(a),
                                                 std::forward<TB>(b));
    } else {
        return diag::failed_shape_check{};
    }
}

/// A number after the pattern, as einops takes `h=12`: refused with a message that says what to pass instead.
///
/// Shapes: none. Errors: always a compile error. Source: `torch.einsum`, which takes no sizes.
template <detail::fixed_string Pattern, auto Number, auto... More, Tensor TA, Tensor TB>
auto einsum(TA&&, TB&&) {
    static_assert(diag::expect<false, diag::passed_values<Number, More...>>,
                  "shaped::einsum<Pattern>(a, b): after the pattern come names, shaped::let<Name, Axis>, not "
                  "numbers: the operands' types carry every extent");
    return diag::failed_shape_check{};
}

}  // namespace shaped

#endif
