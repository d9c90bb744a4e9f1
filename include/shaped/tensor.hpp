#ifndef SHAPED_TENSOR_HPP
#define SHAPED_TENSOR_HPP

/// \file
/// `basic_tensor<Value, Layout, Axes...>`, with the aliases `tensor<Value, Axes...>` (contiguous) and
/// `strided_tensor<Value, Axes...>` (transposed or permuted): a tensor whose axes, names and extents, are
/// its type, on xtensor storage.

#include <algorithm>
#include <array>
#include <cstddef>
#include <initializer_list>
#include <ostream>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>
#include <xtensor/xtensor.hpp>

#include "axis.hpp"
#include "diagnostics.hpp"
#include "ops/cat.hpp"
#include "ops/elementwise.hpp"
#include "ops/mask.hpp"
#include "ops/matmul.hpp"
#include "ops/repeat.hpp"
#include "ops/softmax.hpp"
#include "ops/split.hpp"
#include "ops/stack.hpp"
#include "ops/transpose.hpp"
#include "ops/view.hpp"
#include "shape.hpp"
#include "tensor_fwd.hpp"
#include "torch/print.hpp"

namespace shaped {

/// The extents of a tensor type, printed as PyTorch prints `x.shape`: `torch.Size([1, 2, 6])`.
template <std::size_t Rank>
struct size : std::array<std::size_t, Rank> {
    friend std::ostream& operator<<(std::ostream& os, const size& s) {
        os << "torch.Size([";
        for (std::size_t i = 0; i < Rank; ++i) os << (i ? ", " : "") << s[i];
        return os << "])";
    }
};

namespace detail {
template <class Value, std::size_t Depth, std::size_t Rank>
struct nested_list {
    using type = std::initializer_list<typename nested_list<Value, Depth + 1, Rank>::type>;
};
// Leaves are read as double for floating-point tensors, so that `{0.43, 0.15}` compiles as it reads in
// PyTorch (`torch.tensor([0.43, 0.15])`), rounding to float32 on store.
template <class Value, std::size_t Rank>
struct nested_list<Value, Rank, Rank> {
    using type = std::conditional_t<std::is_floating_point_v<Value>, double, Value>;
};
}  // namespace detail

/// A tensor of `Value` elements whose axes `Axes...` (outermost first) are part of its type.
///
/// Shapes: `(Axes::extent...)`, row-major. `Layout` is `layout::contiguous` for tensors that PyTorch
/// would call contiguous, `layout::strided` for the results of `transpose` and `permute` (on which
/// `view` does not compile, as PyTorch refuses it at run time). Storage is an `xt::xtensor<Value, rank>`
/// on the heap. A strided tensor keeps the buffer of the tensor it was transposed from, with a stride
/// per axis, as PyTorch does: `matmul` reads it in place through BLAS's leading dimensions, and every
/// other op reads a row-major copy (`storage()`), as PyTorch's kernels make one with `contiguous()`.
/// Element type: `float` and `double` for arithmetic; `bool` for masks.
/// Errors: compile time, conversions between different axes or from strided to contiguous, and every
/// op's shape rule (see each op). Thrown: `shape_error` when a nested list, a buffer or an xtensor
/// brought in from outside has another shape than the type states; `std::out_of_range` from `at`.
/// Source: `torch.Tensor`.
/// Example:
/// \code
///   shaped::tensor<float, num_tokens, d_in> inputs{{0.43f, 0.15f, 0.89f}, {0.55f, 0.87f, 0.66f}};
///   auto q = shaped::torch::rand<batch, num_tokens, d_out>();   // torch.rand(batch, num_tokens, d_out)
/// \endcode
template <class Value, class Layout, Axis... Axes>
class basic_tensor {
public:
    using value_type = Value;
    using layout_type = Layout;
    static constexpr std::size_t rank = sizeof...(Axes);
    using storage_type = xt::xtensor<Value, rank>;
    static_assert(diag::expect<detail::numel_fits<Axes...>(), detail::described<diag::tensor_axes, Axes...>>,
                  "shaped::tensor: the product of the extents overflows the index type; no tensor this large can "
                  "be stored");

    /// Number of elements.
    static constexpr std::size_t numel = detail::numel_v<Axes...>;
    /// Extents, outermost first; prints as `torch.Size([...])`.
    static constexpr shaped::size<rank> shape{{Axes::extent...}};
    /// Whether PyTorch would call this tensor contiguous (whether `view` compiles).
    static constexpr bool is_contiguous = std::is_same_v<Layout, layout::contiguous>;
    /// The axes as a Boost.Hana tuple of types.
    static constexpr auto axes = hana::tuple_t<Axes...>;
    /// Element strides of a row-major tensor of this shape (what `stride()` gives for a contiguous one).
    static constexpr std::array<std::size_t, rank> row_major_strides = detail::row_major_strides<rank>({Axes::extent...});

    /// Zeros (`torch.zeros`).
    basic_tensor() : data_(typename storage_type::shape_type{Axes::extent...}, Value{}) {}

    /// Elements left unset (`torch.empty`): for results that are written in full before being read.
    explicit basic_tensor(uninitialized_t) : data_(typename storage_type::shape_type{Axes::extent...}) {}

    /// From nested braces, outermost axis first: `{{0.43f, 0.15f, 0.89f}, {0.55f, 0.87f, 0.66f}}`.
    /// Throws `shape_error` when any level has another length than its axis.
    basic_tensor(typename detail::nested_list<Value, 0, rank>::type values) requires(rank >= 1)
        : data_(typename storage_type::shape_type{Axes::extent...}) {
        std::size_t n = 0;
        fill_from<0>(values, n);
    }

    /// A strided tensor over `buffer` (the elements of the tensor it was transposed from, in that
    /// tensor's order), with the element stride of each of its axes: what `transpose` and `permute` make.
    /// Throws `shape_error` when the buffer is too short for the strides.
    basic_tensor(detail::strided_tag, storage_type buffer, const std::array<std::size_t, rank>& strides)
        requires(!std::is_same_v<Layout, layout::contiguous>)
        : data_(std::move(buffer)), strides_(strides) {
        detail::check_strided_buffer(shape, strides_, data_.size());
    }

    /// Takes elements that an op has made in this type's shape (not checked).
    basic_tensor(detail::adopt_tag, storage_type values) noexcept : data_(std::move(values)) {}

    /// Takes an xtensor whose run-time shape must equal the type's; throws `shape_error` otherwise.
    explicit basic_tensor(storage_type values) : data_(std::move(values)) {
        if (!std::equal(data_.shape().begin(), data_.shape().end(), shape.begin()))
            throw shape_error("tensor(xt::xtensor)", shape_text(),
                              detail::format_extents({data_.shape().begin(), data_.shape().end()}));
    }

    /// Copies `numel` elements, row-major; throws `shape_error` when the buffer has another length.
    static basic_tensor from_buffer(std::span<const Value> buffer) {
        if (buffer.size() != numel)
            throw shape_error("tensor::from_buffer", std::to_string(numel) + " elements for " + shape_text(),
                              std::to_string(buffer.size()) + " elements");
        basic_tensor t;
        std::copy(buffer.begin(), buffer.end(), t.data_.begin());
        return t;
    }

    /// Same axes from another layout: a strided tensor becomes contiguous only through `contiguous()`.
    /// Different axes never convert: assigning a `(batch, num_tokens, cat(d_out, d_out, d_out))` result
    /// to a `(batch, num_tokens, d_out)` tensor fails to compile and names both shapes.
    template <class OtherLayout, Axis... Other>
    basic_tensor(const basic_tensor<Value, OtherLayout, Other...>& other) {
        constexpr bool axes_ok = detail::same_shape(detail::axis_pack<Axes...>{}, detail::axis_pack<Other...>{});
        static_assert(diag::expect<axes_ok, detail::described<diag::expected_axes, Axes...>,
                                   detail::described<diag::actual_axes, Other...>>,
                      "shaped::tensor: cannot convert a tensor to one with other axes; the shapes must be "
                      "the same axis for axis (rename<...>() renames, view<...>() regroups)");
        if constexpr (axes_ok) {
            constexpr bool layout_ok = !is_contiguous || std::is_same_v<OtherLayout, layout::contiguous>;
            static_assert(diag::expect<layout_ok, detail::described<diag::tensor_axes, Other...>>,
                          "shaped::tensor: a transposed (strided) tensor becomes contiguous only through "
                          ".contiguous(), as in PyTorch");
            data_ = other.storage();
            if constexpr (!is_contiguous) strides_ = row_major_strides;
        }
    }

    basic_tensor(const basic_tensor&) = default;
    basic_tensor(basic_tensor&&) noexcept = default;
    basic_tensor& operator=(const basic_tensor&) = default;
    basic_tensor& operator=(basic_tensor&&) noexcept = default;

    /// Element access without bounds checks (xtensor's `operator()`).
    template <class... Index>
    requires(sizeof...(Index) == rank) Value& operator()(Index... i) { return data_.data()[offset(i...)]; }
    template <class... Index>
    requires(sizeof...(Index) == rank) const Value& operator()(Index... i) const { return data_.data()[offset(i...)]; }
    /// Element access with bounds checks; throws `std::out_of_range`.
    template <class... Index>
    requires(sizeof...(Index) == rank) const Value& at(Index... i) const {
        detail::check_index<rank>(shape, {static_cast<std::size_t>(i)...});
        return (*this)(i...);
    }

    /// The elements as an xtensor, row-major in the order of `Axes...`. For a contiguous tensor, the
    /// tensor's own (a reference, writable through a non-const tensor); for a strided one, a const
    /// row-major copy made on each call (PyTorch's `contiguous()`): writing through it does not compile.
    decltype(auto) storage() const& {
        if constexpr (is_contiguous)
            return (data_);
        else
            return static_cast<const storage_type>(materialized());
    }
    storage_type& storage() & requires(std::is_same_v<Layout, layout::contiguous>) { return data_; }
    storage_type storage() && {
        if constexpr (is_contiguous)
            return std::move(data_);
        else
            return materialized();
    }

    /// The buffer as it lies in memory: for a strided tensor, the elements of the tensor it was transposed
    /// from, in that tensor's order; read it through `stride()`.
    const storage_type& buffer() const& noexcept { return data_; }
    storage_type& buffer() & noexcept { return data_; }
    storage_type buffer() && noexcept { return std::move(data_); }
    /// The element stride of each axis in `buffer()`: PyTorch's `x.stride()`.
    std::array<std::size_t, rank> stride() const noexcept {
        if constexpr (is_contiguous)
            return row_major_strides;
        else
            return strides_;
    }

    /// The shape as text: `(batch=1, num_tokens=2, d_out=6)`.
    static std::string shape_text() { return detail::shape_text<Axes...>(); }

    // PyTorch's tensor methods, forwarding to the free functions of ops/ (documented there). On a
    // temporary, view, reshape, rename, transpose, permute, T, contiguous, softmax and masked_fill reuse
    // its buffer.
    template <Axis... To>
    auto view() const& {
        return shaped::view<To...>(*this);
    }
    template <Axis... To>
    auto view() && {
        return shaped::view<To...>(std::move(*this));
    }
    template <Axis... To>
    auto reshape() const& {
        return shaped::reshape<To...>(*this);
    }
    template <Axis... To>
    auto reshape() && {
        return shaped::reshape<To...>(std::move(*this));
    }
    template <Axis... To>
    auto rename() const& {
        return shaped::rename<To...>(*this);
    }
    template <Axis... To>
    auto rename() && {
        return shaped::rename<To...>(std::move(*this));
    }
    template <int Dim0, int Dim1>
    auto transpose() const& {
        return shaped::transpose<Dim0, Dim1>(*this);
    }
    template <int Dim0, int Dim1>
    auto transpose() && {
        return shaped::transpose<Dim0, Dim1>(std::move(*this));
    }
    template <Axis A0, Axis A1>
    auto transpose() const& {
        return shaped::transpose<A0, A1>(*this);
    }
    template <Axis A0, Axis A1>
    auto transpose() && {
        return shaped::transpose<A0, A1>(std::move(*this));
    }
    template <int... Dims>
    auto permute() const& {
        return shaped::permute<Dims...>(*this);
    }
    template <int... Dims>
    auto permute() && {
        return shaped::permute<Dims...>(std::move(*this));
    }
    auto T() const& { return shaped::reverse_axes(*this); }
    auto T() && { return shaped::reverse_axes(std::move(*this)); }
    auto contiguous() const& { return shaped::contiguous(*this); }
    auto contiguous() && { return shaped::contiguous(std::move(*this)); }
    template <Axis Chunk, int Dim>
    auto split() const {
        return shaped::split<Chunk, Dim>(*this);
    }
    template <int Dim>
    auto softmax() const& {
        return shaped::softmax<Dim>(*this);
    }
    template <int Dim>
    auto softmax() && {
        return shaped::softmax<Dim>(std::move(*this));
    }
    template <Axis A>
    auto softmax() const {
        return shaped::softmax<A>(*this);
    }
    template <Tensor Mask>
    auto masked_fill(const Mask& mask, std::type_identity_t<Value> value) const& {
        return shaped::masked_fill(*this, mask, value);
    }
    template <Tensor Mask>
    auto masked_fill(const Mask& mask, std::type_identity_t<Value> value) && {
        return shaped::masked_fill(std::move(*this), mask, value);
    }
    template <int Dim>
    auto unsqueeze() const {
        return shaped::unsqueeze<Dim>(*this);
    }
    template <Axis New, int Dim>
    auto repeat_interleave() const {
        return shaped::repeat_interleave<New, Dim>(*this);
    }
    template <Axis New, int Dim>
    auto repeat() const {
        return shaped::repeat<New, Dim>(*this);
    }
    template <Axis... Prefix>
    auto slice() const {
        return shaped::slice<Prefix...>(*this);
    }
    template <class To>
    auto to() const {
        return shaped::to<To>(*this);
    }

    /// Prints as PyTorch prints the tensor: `tensor([[0.7713, 1.1682, ...]])`.
    friend std::ostream& operator<<(std::ostream& os, const basic_tensor& t) {
        static_assert(std::is_same_v<Value, float> || std::is_same_v<Value, double> || std::is_same_v<Value, bool>,
                      "shaped::tensor: printing supports float, double and bool elements");
        static_assert(rank <= 8, "shaped::tensor: printing supports up to 8 axes");
        std::array<std::size_t, rank> extents{Axes::extent...};
        const auto& elements = t.storage();  // row-major
        return os << torch::repr<Value>(elements.data(), std::span<const std::size_t>(extents));
    }

private:
    template <class... Index>
    std::size_t offset(Index... i) const noexcept {
        return detail::dot_strides<rank>(stride(), {static_cast<std::size_t>(i)...});
    }

    // A row-major copy of a strided tensor's elements.
    storage_type materialized() const {
        storage_type out(typename storage_type::shape_type{Axes::extent...});
        detail::gather_strided<Value, rank>(data_.data(), out.data(), shape, strides_);
        return out;
    }

    template <std::size_t Depth, class List>
    void fill_from(const List& list, std::size_t& n) {
        constexpr std::array<std::size_t, rank> extents{Axes::extent...};
        if (list.size() != extents[Depth])
            throw shape_error("tensor({...})", shape_text(),
                              "a list of " + std::to_string(list.size()) + " at depth " + std::to_string(Depth) +
                                  " (axis " + std::to_string(Depth) + " has " + std::to_string(extents[Depth]) + ")");
        for (const auto& item : list) {
            if constexpr (Depth + 1 == rank)
                data_.data()[n++] = static_cast<Value>(item);
            else
                fill_from<Depth + 1>(item, n);
        }
    }

    storage_type data_;
    // Strided tensors only: the element stride of each axis in data_.
    struct no_strides {};
    [[no_unique_address]] std::conditional_t<is_contiguous, no_strides, std::array<std::size_t, rank>> strides_ =
        stride_init();
    static constexpr auto stride_init() {
        if constexpr (is_contiguous)
            return no_strides{};
        else
            return row_major_strides;
    }
};

}  // namespace shaped

#endif
