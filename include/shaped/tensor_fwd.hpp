#ifndef SHAPED_TENSOR_FWD_HPP
#define SHAPED_TENSOR_FWD_HPP

/// \file
/// Declarations the ops need before `tensor.hpp` defines the class.

#include <type_traits>

#include "axis.hpp"
#include "extents.hpp"
#include "detail/strided.hpp"

namespace shaped {

/// Memory layouts a tensor's type records.
namespace layout {
/// Row-major in the order of the axes: `view` is allowed (PyTorch's `is_contiguous()`).
struct contiguous {};
/// The result of `transpose`/`permute`: `view` is refused, as PyTorch refuses it at run time.
struct strided {};
}  // namespace layout

template <class T, class Layout, Axis... Axes>
class basic_tensor;

/// Tag for a tensor whose elements are left unset, for results that are written in full at once.
struct uninitialized_t {
    explicit uninitialized_t() = default;
};
/// `tensor<float, A, B> t(shaped::uninitialized);`: no zero fill; every element must be written before it
/// is read.
inline constexpr uninitialized_t uninitialized{};

/// A contiguous tensor with element type `T` and axes `Axes...`, outermost first.
template <class T, Axis... Axes>
using tensor = basic_tensor<T, layout::contiguous, Axes...>;

/// A transposed or permuted tensor: what PyTorch calls non-contiguous.
template <class T, Axis... Axes>
using strided_tensor = basic_tensor<T, layout::strided, Axes...>;

namespace detail {
template <class X>
struct is_tensor : std::false_type {};
template <class T, class L, class... A>
struct is_tensor<basic_tensor<T, L, A...>> : std::true_type {};
}  // namespace detail

/// Any shaped tensor, contiguous or strided.
template <class X>
concept Tensor = detail::is_tensor<std::remove_cvref_t<X>>::value;

}  // namespace shaped

#endif
