#ifndef SHAPED_OPS_SPLIT_HPP
#define SHAPED_OPS_SPLIT_HPP

/// \file
/// `split`: one axis into equal chunks, as a Boost.Hana tuple of tensors.

#include <algorithm>
#include <boost/hana/tuple.hpp>
#include <cstddef>
#include <utility>

#include "../diagnostics.hpp"
#include "../shape.hpp"
#include "../tensor_fwd.hpp"

namespace shaped {

namespace detail {
template <class Chunk, class Whole>
constexpr bool chunk_of() {
    if constexpr (is_quotient<Chunk>)
        return view_regroups(hana::tuple_t<typename Chunk::divisor, Chunk>, hana::tuple_t<Whole>);
    else
        return false;
}
}  // namespace detail

/// Splits the axis at `Dim` into `Chunk::divisor::extent` chunks of `Chunk`, in order.
///
/// Shapes: `(..., W, ...)` to a `hana::tuple` of `W / Chunk` tensors `(..., Chunk, ...)`, each contiguous
/// (copied). `Chunk` must be declared as a quotient of the split axis, so that the parts are known to be
/// heads: `q.split<head_dim, -1>()` on `(batch, num_tokens, d_out)` with `head_dim = d_out / num_heads`
/// gives `num_heads` tensors `(batch, num_tokens, head_dim)`; `cat<-1>` of them is `d_out` again.
/// Errors: compile time, `Dim` out of range, or `Chunk` not declared as `quotient<_, W, _>` of the axis
/// at `Dim`. Nothing is thrown.
/// Source: `torch.Tensor.split(split_size, dim)` (PyTorch returns views; these are copies).
/// Example: `auto q_heads = q.split<head_dim, -1>();  auto q0 = hana::at_c<0>(q_heads);`
template <Axis Chunk, int Dim, class Value, class Layout, Axis... Axes>
auto split(const basic_tensor<Value, Layout, Axes...>& x) {
    constexpr std::size_t n = sizeof...(Axes);
    constexpr bool dim_ok = detail::dim_in_range(Dim, n);
    static_assert(
        diag::expect<dim_ok, diag::dims<Dim>, detail::described<diag::tensor_axes, Axes...>>,
        "shaped::split<Chunk, Dim>(x): dimension out of range; a tensor of rank n takes dimensions -n to n-1");
    if constexpr (dim_ok) {
        constexpr std::size_t d = detail::wrap_dim(Dim, n);
        using whole = detail::axis_at_t<d, Axes...>;
        constexpr bool chunk_ok = detail::chunk_of<Chunk, whole>();
        static_assert(
            diag::expect<chunk_ok, detail::described<diag::parts, Chunk>, detail::described<diag::tensor_axes, whole>>,
            "shaped::split<Chunk, Dim>(x): the chunk axis must be declared as a quotient of the axis it "
            "splits, e.g. struct head_dim : shaped::quotient<\"head_dim\", d_out, num_heads> {}");
        if constexpr (chunk_ok) {
            constexpr std::size_t parts = Chunk::divisor::extent;
            return [&]<std::size_t... I, std::size_t... P>(std::index_sequence<I...>, std::index_sequence<P...>) {
                using part_t = tensor<Value, std::conditional_t<I == d, Chunk, detail::axis_at_t<I, Axes...>>...>;
                const auto e = detail::take_extents<typename part_t::extents_type,
                                                    std::array<detail::axis_source, n>{detail::axis_source{0, I}...}>(x.shape);
                // Elements from the split axis inwards, for one index of the axes before it.
                std::size_t inner = 1;
                for (std::size_t i = d; i < n; ++i) inner *= x.shape.extent(i);
                const std::size_t outer = x.numel() / inner;
                const std::size_t block = inner / parts;
                const auto& elements = x.storage();  // row-major (a copy for a strided tensor)
                auto take = [&](std::size_t p) {
                    part_t out(e, uninitialized);
                    const Value* src = elements.data();
                    Value* dst = out.data();
                    for (std::size_t o = 0; o < outer; ++o)
                        std::copy_n(src + o * inner + p * block, block, dst + o * block);
                    return out;
                };
                return hana::make_tuple(take(P)...);
            }
            (std::make_index_sequence<n>{}, std::make_index_sequence<parts>{});
        } else {
            return diag::failed_shape_check{};
        }
    } else {
        return diag::failed_shape_check{};
    }
}

}  // namespace shaped

#endif
