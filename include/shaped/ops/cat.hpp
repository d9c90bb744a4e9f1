#ifndef SHAPED_OPS_CAT_HPP
#define SHAPED_OPS_CAT_HPP

/// \file
/// `cat`: tensors joined along one axis; the joined axis says what was joined.

#include <algorithm>
#include <array>
#include <boost/hana/at.hpp>
#include <boost/hana/tuple.hpp>
#include <cstddef>
#include <string>
#include <tuple>
#include <utility>

#include "../diagnostics.hpp"
#include "../shape.hpp"
#include "../tensor_fwd.hpp"

namespace shaped {

namespace detail {

// A single position: `one`, or the `reduced<...>` a keepdim reduction leaves (`argmax(..., keepdim=True)`).
template <class A>
inline constexpr bool unit_part = std::is_same_v<A, one> || is_reduced<A>;

// The run-time axis that `cat` extends: the parts along it are that axis or single positions (a sequence and
// the token appended to it), and the result is that axis again, its extent the sum, checked against its bound.
template <class First, class... Rest>
struct extended_axis {
    using type = std::conditional_t<unit_part<First>, typename extended_axis<Rest...>::type, First>;
};
template <class Last>
struct extended_axis<Last> {
    using type = Last;
};

template <class First, class... Rest>
constexpr bool extends_run_time_axis() {
    using tokens = typename extended_axis<First, Rest...>::type;
    if constexpr (DynamicAxis<tokens>)
        return tokens::dynamic_atoms == 1 && tokens::static_factor == 1 &&
               ((std::is_same_v<First, tokens> || unit_part<First>) && ... &&
                (std::is_same_v<Rest, tokens> || unit_part<Rest>));
    else
        return false;
}

template <std::size_t Count, class First, class... Rest>
constexpr bool heads_of_quotient() {
    if constexpr ((std::is_same_v<First, Rest> && ...) && is_quotient<First>)
        return First::divisor::extent == Count;
    else
        return false;
}

// The axis `cat` makes of `Parts...`: the part's own axis when there is one part; the dividend when the
// parts are `divisor::extent` copies of one quotient axis (heads joined back into d_out); a run-time axis
// extended by parts of itself or `one`; otherwise `concat<Parts...>`.
template <class First, class... Rest>
auto joined_axis() {
    constexpr std::size_t count = 1 + sizeof...(Rest);
    if constexpr (heads_of_quotient<count, First, Rest...>()) {
        return hana::type_c<typename First::dividend>;
    } else if constexpr (count == 1) {
        return hana::type_c<First>;  // torch.cat([x]) is x
    } else if constexpr (extends_run_time_axis<First, Rest...>()) {
        return hana::type_c<typename extended_axis<First, Rest...>::type>;
    } else {
        return hana::type_c<concat<First, Rest...>>;
    }
}

[[noreturn, gnu::noinline, gnu::cold]] inline void cat_past_bound(const std::string& axis, const std::string& within,
                                                                   std::size_t bound, std::size_t extent,
                                                                   const std::string& parts) {
    throw shape_error("cat<Dim>(tensors)",
                      axis + " <= " + std::to_string(bound) + (within.empty() ? "" : " (" + axis + " is at most " + within + ")"),
                      axis + " = " + std::to_string(extent) + " (" + parts + ")");
}

template <class T>
struct tensor_parts;
template <class Value, class Layout, class... Axes>
struct tensor_parts<basic_tensor<Value, Layout, Axes...>> {
    using value = Value;
    static constexpr auto axes = hana::tuple_t<Axes...>;
};

template <std::size_t D, class Ref, class Part>
constexpr bool same_but_at() {
    if constexpr (Ref::rank != Part::rank) {
        return false;
    } else {
        return []<std::size_t... I>(std::index_sequence<I...>) {
            return ((I == D || same_axis_v<typename decltype(+hana::at_c<I>(tensor_parts<Ref>::axes))::type,
                                           typename decltype(+hana::at_c<I>(tensor_parts<Part>::axes))::type>)&&...);
        }
        (std::make_index_sequence<Ref::rank>{});
    }
}

// Copies each part's rows, in order, into the joined tensor: one pass over the output.
template <class Value, std::size_t Parts>
void join_rows(const std::array<const Value*, Parts>& src, const std::array<std::size_t, Parts>& inner,
               std::size_t outer, Value* dst) {
    for (std::size_t o = 0; o < outer; ++o)
        for (std::size_t p = 0; p < Parts; ++p) dst = std::copy_n(src[p] + o * inner[p], inner[p], dst);
}

// The axes other than D, each with itself: where the parts must agree.
template <std::size_t Rank, std::size_t D>
inline constexpr auto all_but = [] {
    axis_pairs<Rank - 1> p{};
    for (std::size_t i = 0, k = 0; i < Rank; ++i)
        if (i != D) p[k++] = {i, i};
    return p;
}();

template <int Dim, class... Parts>
auto cat_impl(const Parts&... parts) {
    using ref = std::tuple_element_t<0, std::tuple<Parts...>>;
    using value = typename tensor_parts<ref>::value;
    constexpr std::size_t n = ref::rank;
    constexpr bool dim_ok = dim_in_range(Dim, n);
    static_assert(diag::expect<dim_ok, diag::dims<Dim>, diag::rank<n>>,
                  "shaped::cat<Dim>(tensors): dimension out of range; a tensor of rank n takes dimensions -n to n-1");
    if constexpr (dim_ok) {
        constexpr std::size_t d = wrap_dim(Dim, n);
        constexpr bool same_type = (std::is_same_v<value, typename tensor_parts<Parts>::value> && ...);
        constexpr bool ok = same_type && (same_but_at<d, ref, Parts>() && ...);
        static_assert(diag::expect<ok, diag::dims<Dim>, diag::parts<Parts...>>,
                      "shaped::cat<Dim>(tensors): the tensors must have the same element type, the same rank and "
                      "the same axes everywhere but at Dim");
        if constexpr (ok) {
            return [&]<std::size_t... I>(std::index_sequence<I...>) {
                using joined = typename decltype(joined_axis<typename decltype(+hana::at_c<d>(
                                                     tensor_parts<Parts>::axes))::type...>())::type;
                using result_t =
                    tensor<value,
                           std::conditional_t<I == d, joined,
                                              typename decltype(+hana::at_c<I>(tensor_parts<ref>::axes))::type>...>;
                const auto& first = std::get<0>(std::tie(parts...));
                // Every other axis: the same run-time extents in every part as in the first.
                if constexpr (result_t::extents_type::rank_dynamic > 0) {
                    std::size_t p = 0;
                    (check_meets<all_but<n, d>>("cat<Dim>(tensors)", "tensors[0]", first.shape,
                                                "tensors[" + std::to_string(p++) + "]", parts.shape),
                     ...);
                }
                const std::size_t joined_extent = (std::size_t{0} + ... + parts.shape.extent(d));
                if constexpr (DynamicAxis<joined> && joined::bound < max_extent)
                    if (joined_extent > joined::bound) [[unlikely]] {
                        std::string sum;
                        ((sum += (sum.empty() ? "" : " + ") + std::to_string(parts.shape.extent(d))), ...);
                        cat_past_bound(axis_name<joined>(), dynamic_atom_bound_name<joined>(0), joined::bound,
                                       joined_extent, sum);
                    }
                // The joined axis's extent (when it is a run-time axis) comes as a second operand.
                const auto joined_shape = [&] {
                    if constexpr (DynamicAxis<joined>)
                        return extents<joined>(adopt_tag{}, {joined_extent});
                    else
                        return extents<joined>{};
                }();
                const auto e = take_extents<typename result_t::extents_type,
                                            std::array<axis_source, n>{axis_source{I == d ? 1 : 0, I == d ? 0 : I}...}>(
                    first.shape, joined_shape);
                std::size_t after = 1, outer = 1;
                for (std::size_t i = 0; i < n; ++i) {
                    if (i > d) after *= e[i];
                    if (i < d) outer *= e[i];
                }
                result_t out(e, uninitialized);
                join_rows<value, sizeof...(Parts)>({parts.storage().data()...}, {(parts.shape.extent(d) * after)...}, outer,
                                                   out.data());
                return out;
            }
            (std::make_index_sequence<n>{});
        } else {
            return diag::failed_shape_check{};
        }
    } else {
        return diag::failed_shape_check{};
    }
}

}  // namespace detail

/// Joins tensors along dimension `Dim` (negative counts from the end).
///
/// Shapes: parts `(..., P_i, ...)` with the same axes elsewhere give `(..., J, ...)`. `J` is the declared
/// axis when the parts are its heads (`num_heads` tensors of `head_dim = d_out / num_heads` give `d_out`);
/// the run-time axis `A` when every part is along `A` or a single position, `shaped::one` or the
/// `reduced<...>` of a keepdim reduction (a sequence and the token appended to it: `A`'s extent grows, up to
/// its bound); otherwise `J` is `concat<P_0, ..., P_n-1>`, an axis of its
/// own: three full-width `d_out` heads give `concat<d_out, d_out, d_out>` (18 wide), which no
/// `linear<d_out, d_out>` accepts.
/// Element type: all parts the same. Parts: a `hana::tuple` of tensors, or a `std::array` of tensors
/// (for a loop over heads).
/// Errors: compile time, `Dim` out of range, or parts that differ elsewhere than at `Dim`. Thrown
/// (`shape_error`): a run-time axis that would grow past its bound (the message names the bound), or the
/// same run-time axis with other extents in two parts.
/// Source: `torch.cat(tensors, dim)`; `torch.cat([head(x) for head in self.heads], dim=-1)` (listing 3.4).
/// Example: `auto context_vec = shaped::cat<-1>(heads);`
template <int Dim, class... Parts>
auto cat(const hana::tuple<Parts...>& parts) {
    static_assert(sizeof...(Parts) >= 1, "shaped::cat<Dim>(tensors): needs at least one tensor");
    // An index sequence rather than hana::unpack: a failed check then reports two fewer levels.
    return [&]<std::size_t... I>(std::index_sequence<I...>) {
        return detail::cat_impl<Dim>(hana::at_c<I>(parts)...);
    }
    (std::make_index_sequence<sizeof...(Parts)>{});
}

/// The parts as a `std::array`, for a loop over heads: `cat<-1>(outputs)`. After a failed shape check
/// in the parts, no further errors (see `diag::failed_shape_check`).
template <int Dim, class Part, std::size_t N>
auto cat(const std::array<Part, N>& parts) {
    static_assert(N >= 1, "shaped::cat<Dim>(tensors): needs at least one tensor");
    if constexpr (std::is_same_v<Part, diag::failed_shape_check>)
        return diag::failed_shape_check{};  // the parts' error was the one to report
    else
        return [&]<std::size_t... I>(std::index_sequence<I...>) {
            return detail::cat_impl<Dim>(parts[I]...);
        }(std::make_index_sequence<N>{});
}

}  // namespace shaped

#endif
