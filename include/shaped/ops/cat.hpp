#ifndef SHAPED_OPS_CAT_HPP
#define SHAPED_OPS_CAT_HPP

/// \file
/// `cat`: tensors joined along one axis; the joined axis says what was joined.

#include <algorithm>
#include <array>
#include <boost/hana/at.hpp>
#include <boost/hana/tuple.hpp>
#include <cstddef>
#include <utility>

#include "../diagnostics.hpp"
#include "../shape.hpp"
#include "../tensor_fwd.hpp"

namespace shaped {

namespace detail {

// The axis `cat` makes of `Parts...`: the part's own axis when there is one part; the dividend when the
// parts are `divisor::extent` copies of one quotient axis (heads joined back into d_out); otherwise
// `concat<Parts...>`.
template <class First, class... Rest>
auto joined_axis() {
    constexpr std::size_t count = 1 + sizeof...(Rest);
    if constexpr ((std::is_same_v<First, Rest> && ...) && is_quotient<First>) {
        if constexpr (First::divisor::extent == count)
            return hana::type_c<typename First::dividend>;
        else if constexpr (count == 1)
            return hana::type_c<First>;
        else
            return hana::type_c<concat<First, Rest...>>;
    } else if constexpr (count == 1) {
        return hana::type_c<First>;  // torch.cat([x]) is x
    } else {
        return hana::type_c<concat<First, Rest...>>;
    }
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
                constexpr std::size_t after = (std::size_t{1} * ... * (I > d ? result_t::shape[I] : 1));
                constexpr std::size_t outer = (std::size_t{1} * ... * (I < d ? result_t::shape[I] : 1));
                result_t out(uninitialized);
                join_rows<value, sizeof...(Parts)>({parts.storage().data()...}, {(Parts::shape[d] * after)...}, outer,
                                                   out.storage().data());
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
/// otherwise `J` is `concat<P_0, ..., P_n-1>`, an axis of its own: three full-width `d_out` heads give
/// `concat<d_out, d_out, d_out>` (18 wide), which no `linear<d_out, d_out>` accepts.
/// Element type: all parts the same. Parts: a `hana::tuple` of tensors, or a `std::array` of tensors
/// (for a loop over heads).
/// Errors: compile time, `Dim` out of range, or parts that differ elsewhere than at `Dim`. Nothing is thrown.
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

template <int Dim, class Part, std::size_t N>
auto cat(const std::array<Part, N>& parts) {
    static_assert(N >= 1, "shaped::cat<Dim>(tensors): needs at least one tensor");
    return [&]<std::size_t... I>(std::index_sequence<I...>) {
        return detail::cat_impl<Dim>(parts[I]...);
    }
    (std::make_index_sequence<N>{});
}

}  // namespace shaped

#endif
