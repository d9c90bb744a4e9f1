#ifndef SHAPED_EXTENTS_HPP
#define SHAPED_EXTENTS_HPP

/// \file
/// `extents<Axes...>`: the extents of a tensor whose axes are `Axes...`. Static extents live in the type;
/// only the run-time ones are stored (as in `std::extents`), one number per run-time atom (a run-time axis,
/// or each run-time factor of a merged axis, so that `view` can split it back). It is what `x.shape` is,
/// and prints as PyTorch prints `x.shape`: `torch.Size([2, 7, 768])`.
///
/// Run-time extents enter here, checked once (`1 <= n <= bound`); ops build their results' extents from
/// their operands' without checking bounds again; where two operands carry the same run-time axis, one
/// integer compare, and a `shape_error` that names the op, the axis and both extents.

#include <array>
#include <boost/hana/at.hpp>
#include <boost/hana/for_each.hpp>
#include <boost/hana/tuple.hpp>
#include <concepts>
#include <cstddef>
#include <ostream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>

#include "axis.hpp"
#include "diagnostics.hpp"

namespace shaped {

/// What `extents::static_extent` gives for an axis whose extent is known only at run time.
inline constexpr std::size_t dynamic_extent = static_cast<std::size_t>(-1);

namespace detail {

/// A number that may give an extent: any integer type but bool and the character types.
template <class N>
concept extent_number = std::integral<N> && !std::is_same_v<N, bool> && !std::is_same_v<N, char> &&
                        !std::is_same_v<N, char8_t> && !std::is_same_v<N, char16_t> && !std::is_same_v<N, char32_t> &&
                        !std::is_same_v<N, wchar_t>;

struct no_run_time_extents {
    friend constexpr bool operator==(no_run_time_extents, no_run_time_extents) noexcept { return true; }
};

/// Tag for the constructors that take what an op has made in a type's shape: no check, no throw.
struct adopt_tag {
    explicit adopt_tag() = default;
};

// Compile-time tables of an axis list: where each axis's run-time atoms start, the product of its static
// factors (its extent, for a static axis), and each run-time atom's bound.
template <class... Axes>
struct extents_tables {
    static constexpr std::size_t rank = sizeof...(Axes);
    static constexpr std::size_t rank_dynamic = (std::size_t{0} + ... + Axes::dynamic_atoms);
    static constexpr std::array<std::size_t, rank> atoms{Axes::dynamic_atoms...};
    static constexpr std::array<std::size_t, rank> factor{Axes::static_factor...};
    static constexpr std::array<std::size_t, rank + 1> first = [] {
        std::array<std::size_t, rank + 1> f{};
        for (std::size_t i = 0; i < rank; ++i) f[i + 1] = f[i] + atoms[i];
        return f;
    }();
    static constexpr std::array<std::size_t, rank_dynamic> bounds = product_bounds<Axes...>();
    // The axis each run-time atom belongs to, and the product of every static factor.
    static constexpr std::array<std::size_t, rank_dynamic> owner = [] {
        std::array<std::size_t, rank_dynamic> o{};
        for (std::size_t i = 0, k = 0; i < rank; ++i)
            for (std::size_t t = 0; t < atoms[i]; ++t) o[k++] = i;
        return o;
    }();
    static constexpr std::size_t static_numel = (std::size_t{1} * ... * Axes::static_factor);
    // Whether every tensor of these axes, at its bounds, has an element count that fits a signed index.
    static constexpr bool numel_fits_at_bounds = [] {
        std::size_t n = 1;
        for (std::size_t e : {std::size_t{1}, static_cast<std::size_t>(Axes::bound)...}) {
            if (e != 0 && n > max_extent / e) return false;
            n *= e;
        }
        return true;
    }();
};

// The axis that run-time atom `k` of an axis list belongs to, and its index within that axis.
template <class... Axes>
constexpr std::pair<std::size_t, std::size_t> atom_owner(std::size_t k) {
    using t = extents_tables<Axes...>;
    std::size_t i = 0;
    while (k >= t::first[i + 1]) ++i;
    return {i, k - t::first[i]};
}

// Run-time name lookups for messages (cold paths only): `name(hana::type_c<A>)` of axis number `axis`.
template <class... Axes, class Name>
std::string of_axis(std::size_t axis, Name name) {
    std::string r;
    std::size_t i = 0;
    ((i++ == axis ? (void)(r = name(hana::type_c<Axes>)) : void()), ...);
    return r;
}
template <class... Axes>
std::string atom_name_in(std::size_t axis, std::size_t k) {
    return of_axis<Axes...>(axis, [k](auto t) { return dynamic_atom_name<typename decltype(t)::type>(k); });
}
template <class... Axes>
std::string atom_bound_name_in(std::size_t axis, std::size_t k) {
    return of_axis<Axes...>(axis, [k](auto t) { return dynamic_atom_bound_name<typename decltype(t)::type>(k); });
}

[[noreturn, gnu::noinline, gnu::cold]] inline void bad_extent(std::string_view op, const std::string& atom,
                                                               const std::string& within, std::size_t bound,
                                                               const std::string& got) {
    std::string expected = "1 <= " + atom + " <= " + std::to_string(bound);
    if (!within.empty()) expected += " (" + atom + " is at most " + within + ")";
    throw shape_error(std::string(op), expected, atom + " = " + got);
}

[[noreturn, gnu::noinline, gnu::cold]] inline void dimension_out_of_range(std::ptrdiff_t d, std::size_t rank) {
    throw std::out_of_range("shaped::extents: dimension " + std::to_string(d) + " is out of range for " +
                            std::to_string(rank) + " axes (PyTorch: IndexError: tuple index out of range)");
}

[[noreturn, gnu::noinline, gnu::cold]] inline void too_many_elements(std::string_view op, const std::string& shape) {
    throw shape_error(std::string(op), "at most " + std::to_string(max_extent) + " elements", shape);
}

}  // namespace detail

/// The extents of a tensor with axes `Axes...`: what `x.shape` is.
///
/// Shapes: rank `sizeof...(Axes)`; `e[i]` is axis `i`'s extent, static or run-time. Stores one
/// `std::size_t` per run-time atom and nothing for static axes (an all-static `extents` is empty).
/// Element type: `std::size_t` extents.
/// Errors: compile time, a count of numbers other than the number of run-time atoms. Thrown
/// (`shape_error`, by the constructor from numbers): a number outside `1..bound` of its axis (the message
/// names the axis, the bound and the axis it is declared within), or an element count that overflows.
/// Source: `torch.Size`; `std::extents` (C++23) for storing only what is known at run time.
/// Example:
/// \code
///   shaped::extents<batch, num_tokens, d_in> e(2, prompt_length);   // checks 1 <= prompt_length <= 1024
///   auto x = shaped::torch::rand(e);                                  // (batch=2, num_tokens=..., d_in=768)
///   auto [b, t, d] = x.shape;                                         // b, num_tokens, d_in = x.shape
///   std::cout << x.shape;                                             // torch.Size([2, 7, 768])
/// \endcode
template <Axis... Axes>
class extents {
    using tables = detail::extents_tables<Axes...>;

public:
    /// Number of axes.
    static constexpr std::size_t rank = tables::rank;
    /// Number of stored run-time extents (one per run-time atom).
    static constexpr std::size_t rank_dynamic = tables::rank_dynamic;
    /// Whether every extent is known at compile time.
    static constexpr bool is_static = rank_dynamic == 0;
    /// The stored run-time extents, in the order of their axes.
    using dynamic_type = std::array<std::size_t, rank_dynamic>;
    /// How many run-time extents each axis carries, and where its first one is stored.
    static constexpr std::array<std::size_t, rank> atom_counts = tables::atoms;
    /// Where each axis's first run-time extent is stored in `dynamic()`; the last entry is `rank_dynamic`.
    static constexpr std::array<std::size_t, rank + 1> atom_offsets = tables::first;

    /// All-static extents: nothing to give.
    constexpr extents() noexcept requires is_static {}

    /// One number per run-time atom, in order; each is checked against its axis's bound.
    template <detail::extent_number... N>
        requires(sizeof...(N) == rank_dynamic && rank_dynamic > 0)
    explicit extents(N... n) : extents(checked("extents", n...)) {}

    /// Extents an op has derived from its operands' (not checked).
    constexpr extents(detail::adopt_tag, [[maybe_unused]] const dynamic_type& dynamic) noexcept {
        if constexpr (!is_static) dyn_ = dynamic;
    }

    /// Copies the run-time extents.
    extents(const extents&) = default;
    /// Copies the run-time extents, as the copy does (they are a few numbers).
    extents(extents&&) noexcept = default;

    /// The checked entry point: `op` names the caller in the message.
    template <detail::extent_number... N>
        requires(sizeof...(N) == rank_dynamic)
    static extents checked(std::string_view op, N... n) {
        if constexpr (is_static) {
            return extents{};
        } else {
            std::size_t k = 0;
            (check_atom(op, k++, n), ...);
            extents e(detail::adopt_tag{}, dynamic_type{static_cast<std::size_t>(n)...});
            e.check_numel(op);
            return e;
        }
    }

    /// Extent of axis `i`, `0 <= i < rank` (not checked).
    constexpr std::size_t extent(std::size_t i) const noexcept {
        if constexpr (is_static) {
            return tables::factor[i];
        } else {
            std::size_t e = tables::factor[i];
            for (std::size_t k = tables::first[i]; k < tables::first[i + 1]; ++k) e *= dyn_[k];
            return e;
        }
    }
    /// Extent of dimension `d`, negative counting from the end as in PyTorch (`x.shape[-1]`). Throws
    /// `std::out_of_range` outside `[-rank, rank - 1]` (Python's "tuple index out of range").
    constexpr std::size_t operator[](std::ptrdiff_t d) const {
        const std::ptrdiff_t r = static_cast<std::ptrdiff_t>(rank);
        if (d < -r || d >= r) detail::dimension_out_of_range(d, rank);
        return extent(static_cast<std::size_t>(d < 0 ? d + r : d));
    }
    /// Extent of axis `I` (structured bindings: `auto [b, t, d] = x.shape;`).
    template <std::size_t I>
    constexpr std::size_t get() const noexcept {
        return extent(I);
    }
    /// Axis `i`'s extent when it is static, `dynamic_extent` when it is known only at run time (as
    /// `std::extents::static_extent`).
    static constexpr std::size_t static_extent(std::size_t i) noexcept {
        return tables::atoms[i] == 0 ? tables::factor[i] : dynamic_extent;
    }
    /// The number of axes, as `len(x.shape)`.
    static constexpr std::size_t size() noexcept { return rank; }
    /// Every axis's extent, outermost first.
    constexpr std::array<std::size_t, rank> sizes() const noexcept {
        std::array<std::size_t, rank> s = tables::factor;
        if constexpr (!is_static)
            for (std::size_t k = 0; k < rank_dynamic; ++k) s[tables::owner[k]] *= dyn_[k];
        return s;
    }
    /// The number of elements, as `x.numel()`.
    constexpr std::size_t numel() const noexcept {
        std::size_t n = tables::static_numel;
        if constexpr (!is_static)
            for (std::size_t k = 0; k < rank_dynamic; ++k) n *= dyn_[k];
        return n;
    }
    /// The stored run-time extents.
    constexpr dynamic_type dynamic() const noexcept {
        if constexpr (is_static)
            return {};
        else
            return dyn_;
    }
    /// The stored run-time extents, as a pointer (null when there are none).
    constexpr const std::size_t* dynamic_data() const noexcept {
        if constexpr (is_static)
            return nullptr;
        else
            return dyn_.data();
    }
    /// The name of run-time atom `k` (the axis's, or a merged axis's factor's), for messages.
    static std::string atom_name(std::size_t k) {
        const auto [axis, atom] = detail::atom_owner<Axes...>(k);
        return detail::atom_name_in<Axes...>(axis, atom);
    }
    /// The run-time extents of axis `I` (its atoms'): what an op hands on when the axis passes through.
    template <std::size_t I>
    constexpr std::array<std::size_t, tables::atoms[I]> atoms_of() const noexcept {
        std::array<std::size_t, tables::atoms[I]> a{};
        if constexpr (!is_static)
            for (std::size_t k = 0; k < a.size(); ++k) a[k] = dyn_[tables::first[I] + k];
        return a;
    }

    /// The shape as text for messages: `(batch=2, num_tokens=7, d_out=768)`.
    std::string text() const {
        std::string s = "(";
        std::size_t i = 0;
        ((s += (i ? ", " : "") + axis_name<Axes>() + "=" + axis_text<Axes>(i), ++i), ...);
        return s + ")";
    }

    /// Equal when every extent is: only the run-time ones are compared, the static ones being the type's.
    friend constexpr bool operator==(const extents& a, const extents& b) noexcept { return a.dyn_ == b.dyn_; }

    /// Prints as PyTorch prints `x.shape`: `torch.Size([2, 7, 768])`.
    friend std::ostream& operator<<(std::ostream& os, const extents& e) {
        os << "torch.Size([";
        for (std::size_t i = 0; i < rank; ++i) os << (i ? ", " : "") << e.extent(i);
        return os << "])";
    }

private:
    // Axis i's extent as text; an axis with several run-time factors also shows each: `12 (2*6)`.
    template <class A>
    std::string axis_text(std::size_t i) const {
        std::string t = std::to_string(extent(i));
        if constexpr (A::dynamic_atoms > 1) {
            std::string factors;
            std::size_t k = tables::first[i];
            hana::for_each(A::factors, [&](auto f) {
                using F = typename decltype(f)::type;
                std::size_t e = F::static_factor;
                for (std::size_t j = 0; j < F::dynamic_atoms; ++j) e *= dyn_[k++];
                factors += (factors.empty() ? "" : "*") + std::to_string(e);
            });
            t += " (" + factors + ")";
        }
        return t;
    }

    // Only a tensor reassigns its extents (with its elements): `x.shape = ...` does not compile.
    template <class, class, Axis...>
    friend class basic_tensor;
    extents& operator=(const extents&) = default;
    extents& operator=(extents&&) noexcept = default;

    template <class N>
    static void check_atom(std::string_view op, std::size_t k, N n) {
        const std::size_t bound = tables::bounds[k];
        if (std::cmp_less(n, 1) || std::cmp_greater(n, bound)) [[unlikely]] {
            const auto [axis, atom] = detail::atom_owner<Axes...>(k);
            detail::bad_extent(op, detail::atom_name_in<Axes...>(axis, atom),
                               detail::atom_bound_name_in<Axes...>(axis, atom), bound, std::to_string(n));
        }
    }
    void check_numel(std::string_view op) const {
        if constexpr (!tables::numel_fits_at_bounds) {
            std::size_t n = tables::static_numel;  // at most max_extent: static extents are checked so
            for (std::size_t k = 0; k < rank_dynamic; ++k)
                if (__builtin_mul_overflow(n, dyn_[k], &n) || n > max_extent) [[unlikely]]
                    detail::too_many_elements(op, text());
        }
    }

    [[no_unique_address]] std::conditional_t<is_static, detail::no_run_time_extents, dynamic_type> dyn_{};
};

namespace detail {

template <class E>
struct extents_parts;
template <class... Axes>
struct extents_parts<extents<Axes...>> {
    template <std::size_t I>
    using axis = typename decltype(+hana::at_c<I>(hana::tuple_t<Axes...>))::type;
};

/// Where a result axis takes its run-time extents from: axis `axis` of operand `operand` (0, 1, ...), or
/// nowhere (`operand == -1`), for a static axis the op makes.
struct axis_source {
    int operand = -1;
    std::size_t axis = 0;
};

/// The extents of an op's result, axis by axis from its operands' (`Sources[j]` for result axis `j`). The
/// types decide which stored extent goes where, once, at compile time; at run time it is one copy per
/// run-time extent, and nothing at all for an all-static result.
template <class Result, auto Sources, class... E>
Result take_extents([[maybe_unused]] const E&... operands) noexcept {
    if constexpr (Result::is_static) {
        return Result(adopt_tag{}, {});
    } else {
        static constexpr auto map = [] {
            constexpr std::array<const std::size_t*, sizeof...(E)> first{E::atom_offsets.data()...};
            std::array<std::pair<std::size_t, std::size_t>, Result::rank_dynamic> m{};
            std::size_t k = 0;
            for (std::size_t j = 0; j < Result::rank; ++j)
                for (std::size_t t = 0; t < Result::atom_counts[j]; ++t)
                    m[k++] = {static_cast<std::size_t>(Sources[j].operand),
                              first[static_cast<std::size_t>(Sources[j].operand)][Sources[j].axis] + t};
            return m;
        }();
        const std::array<const std::size_t*, sizeof...(E)> dyn{operands.dynamic_data()...};
        typename Result::dynamic_type d{};
        for (std::size_t k = 0; k < d.size(); ++k) d[k] = dyn[map[k].first][map[k].second];
        return Result(adopt_tag{}, d);
    }
}

/// Extents of an op's result, axis by axis from the run-time extents each result axis takes (`atoms_of<I>()`
/// of the operand axis it comes from, or a number the op computed; an empty array for a static axis). For
/// the ops whose results are not a plain selection of their operands' axes (`cat`, `rename`, `slice`).
template <class Result, class... Blocks>
constexpr Result make_extents([[maybe_unused]] const Blocks&... blocks) noexcept {
    typename Result::dynamic_type d{};
    if constexpr (!Result::is_static) {
        std::size_t k = 0;
        (
            [&] {
                for (std::size_t v : blocks) d[k++] = v;
            }(),
            ...);
    }
    return Result(adopt_tag{}, d);
}

/// No run-time extents: the block of a static axis.
inline constexpr std::array<std::size_t, 0> no_atoms{};

template <class EA, class EB>
[[noreturn, gnu::noinline, gnu::cold]] void extents_differ(std::string_view op, std::string_view a_role, const EA& a,
                                                           std::size_t atom_a, std::string_view b_role, const EB& b,
                                                           std::size_t atom_b) {
    throw shape_error::mismatch(op, EA::atom_name(atom_a), a_role, a.dynamic_data()[atom_a], a.text(), b_role,
                                b.dynamic_data()[atom_b], b.text());
}

/// A list of pairs of axes, one of each operand, that meet in an op.
template <std::size_t N>
using axis_pairs = std::array<std::pair<std::size_t, std::size_t>, N>;

/// Where axes `Pairs[i].first` of `a` and `Pairs[i].second` of `b` meet, the same run-time axis must have
/// the same extents: one integer compare per run-time extent; nothing at all for static axes.
template <auto Pairs, class EA, class EB>
void check_meets(std::string_view op, std::string_view a_role, const EA& a, std::string_view b_role, const EB& b) {
    static constexpr std::size_t count = [] {
        std::size_t c = 0;
        for (auto p : Pairs) c += EA::atom_counts[p.first];
        return c;
    }();
    if constexpr (count > 0) {
        static constexpr auto atoms = [] {
            axis_pairs<count> m{};
            std::size_t k = 0;
            for (auto p : Pairs)
                for (std::size_t t = 0; t < EA::atom_counts[p.first]; ++t)
                    m[k++] = {EA::atom_offsets[p.first] + t, EB::atom_offsets[p.second] + t};
            return m;
        }();
        const std::size_t* x = a.dynamic_data();
        const std::size_t* y = b.dynamic_data();
        for (auto p : atoms)
            if (x[p.first] != y[p.second]) [[unlikely]]
                extents_differ(op, a_role, a, p.first, b_role, b, p.second);
    }
}

/// Every axis with itself, for two tensors of the same axes.
template <std::size_t Rank>
inline constexpr auto same_axes = [] {
    axis_pairs<Rank> p{};
    for (std::size_t i = 0; i < Rank; ++i) p[i] = {i, i};
    return p;
}();

}  // namespace detail

}  // namespace shaped

// The structured-binding protocol (`auto [b, t, d] = x.shape;`, with `extents::get<I>`): every element is a
// `std::size_t`. Specializations of std templates, kept out of the API documentation.
//! \cond
template <class... Axes>
struct std::tuple_size<shaped::extents<Axes...>> : std::integral_constant<std::size_t, sizeof...(Axes)> {};
template <std::size_t I, class... Axes>
struct std::tuple_element<I, shaped::extents<Axes...>> {
    using type = std::size_t;
};
//! \endcond

#endif
