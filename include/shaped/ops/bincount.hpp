#ifndef SHAPED_OPS_BINCOUNT_HPP
#define SHAPED_OPS_BINCOUNT_HPP

/// \file
/// `bincount`: how often each value occurs among int64 ids, counted along the axis the ids index.

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "../diagnostics.hpp"
#include "../shape.hpp"
#include "../tensor_fwd.hpp"

namespace shaped {

/// For each position `i` of the static axis `A`, how many elements of `x` equal `i`: `A` is the axis the
/// ids index (a vocabulary), so the counts line up with it.
///
/// Shapes: `x` is a rank-1 tensor of ids along any axis (the draws); the result is `(A)`, contiguous.
/// Element type: `x`'s `std::int64_t`, the counts' `std::int64_t`.
/// Errors: compile time, `x` of another rank or element type, a run-time `A`. Thrown: `std::out_of_range`
/// for an id below 0 or at least `A`'s extent (PyTorch would grow the result past `minlength`; here its
/// extent is the type's), naming the id and the axis.
/// Source: `torch.bincount(x, minlength=len(A))`; the book's `print_sampled_tokens` (chapter 5).
/// Example: `auto sampled_ids = shaped::bincount<vocab>(samples);   // tensor<std::int64_t, vocab>`
template <Axis A, class L, Axis X>
auto bincount(const basic_tensor<std::int64_t, L, X>& x) {
    static_assert(diag::expect<StaticAxis<A>, detail::described<diag::expected_axes, A>>,
                  "shaped::bincount<A>(x): the counts' axis A must be a static axis (its extent is minlength)");
    if constexpr (StaticAxis<A>) {
        tensor<std::int64_t, A> counts;
        const auto& ids = x.storage();
        for (const std::int64_t id : ids) {
            if (id < 0 || static_cast<std::size_t>(id) >= A::extent)
                throw std::out_of_range("shaped::bincount<" + axis_name<A>() + ">(x): id " + std::to_string(id) +
                                        " is outside 0 to " + std::to_string(A::extent - 1) + " (the extent of " +
                                        axis_name<A>() + ")");
            ++counts.data()[static_cast<std::size_t>(id)];
        }
        return counts;
    } else {
        return diag::failed_shape_check{};
    }
}

}  // namespace shaped

#endif
