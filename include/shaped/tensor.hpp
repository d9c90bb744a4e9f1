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
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>
#include <xtensor/xadapt.hpp>
#include <xtensor/xtensor.hpp>

#include "axis.hpp"
#include "detail/buffer_cache.hpp"
#include "diagnostics.hpp"
#include "extents.hpp"
#include "ops/cat.hpp"
#include "ops/elementwise.hpp"
#include "ops/index.hpp"
#include "ops/mask.hpp"
#include "ops/math.hpp"
#include "ops/matmul.hpp"
#include "ops/reduce.hpp"
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
/// Shapes: `(Axes...)`, row-major; `x.shape` holds the extents (static ones in the type, run-time ones
/// stored) and prints as `torch.Size([2, 7, 768])`. `Layout` is `layout::contiguous` for tensors that
/// PyTorch would call contiguous, `layout::strided` for the results of `transpose` and `permute` (on which
/// `view` does not compile, as PyTorch refuses it at run time). Storage is an xtensor container on the heap,
/// its large buffers kept for reuse when freed (shaped/memory.hpp). A strided tensor keeps the buffer of the tensor it was transposed from, with a stride per axis,
/// as PyTorch does: `matmul` reads it in place through BLAS's leading dimensions, and every other op reads a
/// row-major copy (`storage()`), as PyTorch's kernels make one with `contiguous()`.
/// Element type: `float` and `double` for arithmetic; `bool` for masks.
/// Errors: compile time, conversions between different axes (a static axis and a run-time one are
/// different axes) or from strided to contiguous, and every op's shape rule (see each op). Thrown:
/// `shape_error` when a nested list, a buffer or an xtensor brought in from outside has another shape than
/// the type states, or a run-time extent outside `1..bound`; `std::out_of_range` from `at` and from
/// `shape[d]`. A tensor whose elements were moved out (`std::move(x)`) holds none: assign to it or let it
/// go; `at`, `storage()`, `buffer()` and printing throw `std::logic_error` on it, and any other use is a
/// use after move (which clang-tidy's bugprone-use-after-move reports).
/// Exception guarantees: copying (construction and assignment) is strong: a copy that throws
/// `std::bad_alloc` leaves the target's extents and elements as they were, so its shape always describes its
/// buffer; moving and swapping never throw; an op that throws leaves its operands unchanged.
/// Source: `torch.Tensor`.
/// Example:
/// \code
///   shaped::tensor<float, num_tokens, d_in> inputs{{0.43f, 0.15f, 0.89f}, {0.55f, 0.87f, 0.66f}};
///   auto q = shaped::torch::rand<batch, num_tokens, d_out>(2, prompt_length);  // run-time batch, num_tokens
/// \endcode
template <class Value, class Layout, Axis... Axes>
class basic_tensor {
public:
    /// The element type.
    using value_type = Value;
    /// `layout::contiguous` or `layout::strided`.
    using layout_type = Layout;
    /// The type of `shape`.
    using extents_type = shaped::extents<Axes...>;
    /// The number of axes (`x.dim()`).
    static constexpr std::size_t rank = sizeof...(Axes);
    /// The xtensor that holds the elements (`xt::xtensor<Value, rank>` but for its allocator, whose large
    /// buffers are kept for reuse: shaped/memory.hpp).
    using storage_type = detail::storage_t<Value, rank>;
    /// Whether every extent is known at compile time (then `shape` takes no memory).
    static constexpr bool is_static = extents_type::is_static;
    static_assert(diag::expect<!is_static || detail::numel_fits<Axes...>(),
                               detail::described<diag::tensor_axes, Axes...>>,
                  "shaped::tensor: the product of the extents overflows the index type; no tensor this large can "
                  "be stored");
    /// Whether PyTorch would call this tensor contiguous (whether `view` compiles).
    static constexpr bool is_contiguous = std::is_same_v<Layout, layout::contiguous>;
    /// The axes as a Boost.Hana tuple of types.
    static constexpr auto axes = hana::tuple_t<Axes...>;

    /// The extents, as PyTorch's `x.shape`: `x.shape[1]`, `auto [b, num_tokens, d_in] = x.shape;`, and
    /// printed, `torch.Size([2, 7, 768])`. Only run-time extents take memory. Read-only: a tensor's extents
    /// change only with its elements.
    [[no_unique_address]] extents_type shape;

    /// Zeros (`torch.zeros`), for a tensor whose extents are all static.
    basic_tensor() requires is_static : data_(allocate(xshape(shape), true)) {}
    /// Zeros of the given extents (`torch.zeros(2, n, 768)`).
    explicit basic_tensor(const extents_type& e) : shape(e), data_(allocate(xshape(e), true)) {}

    /// Elements left unset (`torch.empty`): for results that are written in full before being read.
    explicit basic_tensor(uninitialized_t) requires is_static : data_(allocate(xshape(shape), false)) {}
    /// Elements left unset, of the given extents (`torch.empty(2, n, 768)`).
    basic_tensor(const extents_type& e, uninitialized_t) : shape(e), data_(allocate(xshape(e), false)) {}

    /// From nested braces, outermost axis first: `{{0.43f, 0.15f, 0.89f}, {0.55f, 0.87f, 0.66f}}`. A run-time
    /// axis takes the length of its lists. Throws `shape_error` when any level has another length than its
    /// axis (or than its first list, for a run-time axis), or a run-time length is outside `1..bound`.
    basic_tensor(typename detail::nested_list<Value, 0, rank>::type values) requires(rank >= 1)
        : shape(list_extents(values)), data_(xshape(shape)) {
        std::size_t n = 0;
        fill_from<0>(values, n);
    }

    /// A strided tensor over `buffer` (the elements of the tensor it was transposed from, in that
    /// tensor's order), with the element stride of each of its axes: what `transpose` and `permute` make.
    /// Throws `shape_error` when the buffer is too short for the strides.
    basic_tensor(detail::strided_tag, const extents_type& e, storage_type buffer,
                 const std::array<std::size_t, rank>& strides) requires(!std::is_same_v<Layout, layout::contiguous>)
        : shape(e), data_(std::move(buffer)), strides_(strides) {
        detail::check_strided_buffer(shape.sizes(), strides_, data_.size());
    }

    /// A strided tensor that an op has made over a buffer it checked (a permutation of a tensor's own
    /// strides): not checked again.
    basic_tensor(detail::adopt_tag, detail::strided_tag, const extents_type& e, storage_type buffer,
                 const std::array<std::size_t, rank>& strides) noexcept
        requires(!std::is_same_v<Layout, layout::contiguous>)
        : shape(e), data_(std::move(buffer)), strides_(strides) {}

    /// Takes elements that an op has made in this shape (not checked).
    basic_tensor(detail::adopt_tag, const extents_type& e, storage_type values) noexcept
        : shape(e), data_(std::move(values)) {}

    /// Takes an xtensor whose run-time shape must be the type's (a run-time axis takes its extent, checked
    /// against the bound); throws `shape_error` otherwise.
    explicit basic_tensor(storage_type values) : shape(xtensor_extents(values)), data_(std::move(values)) {}

    /// Copies the elements of `buffer`, row-major; the run-time extents, one number per run-time axis in
    /// order, are checked against their bounds. Throws `shape_error` when an extent is outside its bound or
    /// the buffer has another length than the extents give.
    template <detail::extent_number... N>
        requires(sizeof...(N) == extents_type::rank_dynamic)
    static basic_tensor from_buffer(std::span<const Value> buffer, N... n) {
        const auto e = extents_type::checked("tensor::from_buffer", n...);
        if (buffer.size() != e.numel())
            throw shape_error("tensor::from_buffer", std::to_string(e.numel()) + " elements for " + e.text(),
                              std::to_string(buffer.size()) + " elements");
        basic_tensor t(e, uninitialized);
        std::copy(buffer.begin(), buffer.end(), t.data_.data());
        return t;
    }

    /// The extents of data from outside whose sizes are `sizes`, outermost first: a static axis must have its
    /// extent, a run-time axis takes its size, checked against its bound. Throws `shape_error` naming `op`, the
    /// type's shape and `sizes` otherwise. For loaders, which check a file's shape before allocating for it.
    static extents_type checked_extents(std::string_view op, const std::array<std::size_t, rank>& sizes) {
        return from_sizes(op, sizes);
    }

    /// Same axes from another layout: a strided tensor becomes contiguous only through `contiguous()`.
    /// Different axes never convert: assigning a `(batch, num_tokens, cat(d_out, d_out, d_out))` result
    /// to a `(batch, num_tokens, d_out)` tensor fails to compile and names both shapes; so does a static
    /// `six_tokens` where a run-time `num_tokens` is expected (`rename` converts, checking the extent).
    template <class OtherLayout, Axis... Other>
    basic_tensor(const basic_tensor<Value, OtherLayout, Other...>& other) : shape(adopt_shape(other)) {
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
            if constexpr (!is_contiguous) strides_ = detail::row_major_strides<rank>(shape.sizes());
        }
    }

    /// Copies the elements (PyTorch's `x.clone()`).
    basic_tensor(const basic_tensor&) = default;
    /// Takes the elements; the moved-from tensor holds none.
    basic_tensor(basic_tensor&&) noexcept = default;
    /// Copies the elements and extents, with the strong guarantee: the copy is made first, so if it throws
    /// (`std::bad_alloc`) the tensor keeps its own extents and elements (a member-wise copy would have taken
    /// the new extents over the old buffer).
    basic_tensor& operator=(const basic_tensor& other) {
        if (this != &other) {
            basic_tensor copy(other);
            *this = std::move(copy);
        }
        return *this;
    }
    /// Takes the elements and extents; the moved-from tensor holds none.
    basic_tensor& operator=(basic_tensor&&) noexcept = default;

    /// Number of elements (`x.numel()`).
    std::size_t numel() const noexcept { return shape.numel(); }

    /// The one element of a one-element tensor, as a number (PyTorch's `x.item()`): a rank-0 tensor (a loss,
    /// `tensor(10.7940)`), or one whose every axis has extent 1 (`(batch, reduced<vocab>)` at batch 1).
    /// Errors: compile time, a static axis of extent other than 1. Thrown: `shape_error` when a run-time
    /// axis makes more than one element, naming the shape. Source: `torch.Tensor.item()`.
    Value item() const {
        static_assert(diag::expect<((!StaticAxis<Axes> || Axes::bound == 1) && ...),
                                   detail::described<diag::tensor_axes, Axes...>>,
                      "shaped::tensor::item(): only a tensor of one element has an item; an axis of this tensor "
                      "has more than one (select<A>(i) the element you want first)");
        if (numel() != 1)
            throw shape_error("tensor::item()", "one element", std::to_string(numel()) + " elements in " + shape.text());
        check_not_moved_from("item()");
        return data_.data()[0];  // every stride multiplies a 0
    }

    /// Element access without bounds checks (xtensor's `operator()`).
    template <class... Index>
    requires(sizeof...(Index) == rank) Value& operator()(Index... i) { return data_.data()[offset(i...)]; }
    /// Element access without bounds checks, read-only.
    template <class... Index>
    requires(sizeof...(Index) == rank) const Value& operator()(Index... i) const { return data_.data()[offset(i...)]; }
    /// Element access with bounds checks; throws `std::out_of_range` naming the axis, its extent and the
    /// index (a negative index as given; `at` does not count from the end).
    template <std::integral... Index>
    requires(sizeof...(Index) == rank) const Value& at(Index... i) const {
        check_not_moved_from("at");
        std::size_t d = 0;
        (check_index(d++, i), ...);
        return (*this)(i...);
    }

    /// The elements as an xtensor, row-major in the order of `Axes...`. On a const contiguous tensor, its
    /// own container, read-only; on a non-const one, an xtensor adaptor over its elements: writable, but it
    /// cannot reallocate them (resizing to another size throws), so the elements always match the type. On a
    /// strided tensor, a const row-major copy made on each call (PyTorch's `contiguous()`).
    decltype(auto) storage() const& {
        if constexpr (is_contiguous)
            return static_cast<const storage_type&>(data_);
        else
            return static_cast<const storage_type>(materialized());
    }
    /// On a non-const contiguous tensor: a writable xtensor adaptor over its elements, which cannot resize them.
    auto storage() & requires(std::is_same_v<Layout, layout::contiguous>) { return adaptor(); }
    /// On a temporary: its elements, moved out (for a strided tensor, a row-major copy).
    storage_type storage() && {
        if constexpr (is_contiguous)
            return std::move(data_);
        else
            return materialized();
    }

    /// The buffer as it lies in memory: for a strided tensor, the elements of the tensor it was transposed
    /// from, in that tensor's order; read it through `stride()`. Writable through a non-const tensor, as for
    /// `storage()`, without a way to resize it.
    const storage_type& buffer() const& noexcept { return data_; }
    /// On a non-const tensor: a writable xtensor adaptor over the buffer, which cannot resize it.
    auto buffer() & { return adaptor(); }
    /// On a temporary: the buffer, moved out as it lies in memory.
    storage_type buffer() && noexcept { return std::move(data_); }
    /// The first element of the buffer (PyTorch's `data_ptr()`).
    Value* data() noexcept { return data_.data(); }
    /// The first element of the buffer, read-only.
    const Value* data() const noexcept { return data_.data(); }
    /// The element stride of each axis in `buffer()`: PyTorch's `x.stride()`.
    std::array<std::size_t, rank> stride() const noexcept {
        if constexpr (is_contiguous && is_static)
            return static_row_major_strides;  // a constant: nothing left for the optimiser to fold
        else if constexpr (is_contiguous)
            return detail::row_major_strides<rank>(shape.sizes());
        else
            return strides_;
    }

    /// The shape as text: `(batch=1, num_tokens=2, d_out=6)`.
    std::string shape_text() const { return shape.text(); }

    // PyTorch's tensor methods, forwarding to the free functions of ops/ (documented there). On a
    // temporary, view, reshape, rename, transpose, permute, T, contiguous, softmax and masked_fill reuse
    // its buffer.
    /// `shaped::view<To...>(x)` (`x.view(...)`): the same elements under axes `To...`.
    template <Axis... To>
    auto view() const& {
        return shaped::view<To...>(*this);
    }
    /// On a temporary: the same, reusing its buffer.
    template <Axis... To>
    auto view() && {
        return shaped::view<To...>(std::move(*this));
    }
    /// `shaped::reshape<To...>(x)` (`x.reshape(...)`): `view` for any layout, copying a strided tensor.
    template <Axis... To>
    auto reshape() const& {
        return shaped::reshape<To...>(*this);
    }
    /// On a temporary: the same, reusing its buffer when it is contiguous (a strided one is copied once).
    template <Axis... To>
    auto reshape() && {
        return shaped::reshape<To...>(std::move(*this));
    }
    /// `shaped::flatten<Start, End>(x)` (`x.flatten(start_dim, end_dim)`): those axes merged into one.
    template <int Start = 0, int End = -1>
    auto flatten() const& {
        return shaped::flatten<Start, End>(*this);
    }
    /// On a temporary: the same, reusing its buffer.
    template <int Start = 0, int End = -1>
    auto flatten() && {
        return shaped::flatten<Start, End>(std::move(*this));
    }
    /// `shaped::rename<To...>(x)`: the same elements, each axis under a new name.
    template <Axis... To>
    auto rename() const& {
        return shaped::rename<To...>(*this);
    }
    /// On a temporary: the same, reusing its buffer.
    template <Axis... To>
    auto rename() && {
        return shaped::rename<To...>(std::move(*this));
    }
    /// `shaped::transpose<Dim0, Dim1>(x)` (`x.transpose(dim0, dim1)`).
    template <int Dim0, int Dim1>
    auto transpose() const& {
        return shaped::transpose<Dim0, Dim1>(*this);
    }
    /// On a temporary: the same, reusing its buffer.
    template <int Dim0, int Dim1>
    auto transpose() && {
        return shaped::transpose<Dim0, Dim1>(std::move(*this));
    }
    /// `shaped::transpose<A0, A1>(x)`: swaps the axes named `A0` and `A1`.
    template <Axis A0, Axis A1>
    auto transpose() const& {
        return shaped::transpose<A0, A1>(*this);
    }
    /// On a temporary: the same, reusing its buffer.
    template <Axis A0, Axis A1>
    auto transpose() && {
        return shaped::transpose<A0, A1>(std::move(*this));
    }
    /// `shaped::permute<Dims...>(x)` (`x.permute(*dims)`).
    template <int... Dims>
    auto permute() const& {
        return shaped::permute<Dims...>(*this);
    }
    /// On a temporary: the same, reusing its buffer.
    template <int... Dims>
    auto permute() && {
        return shaped::permute<Dims...>(std::move(*this));
    }
    /// `shaped::reverse_axes(x)` (`x.T`).
    auto T() const& { return shaped::reverse_axes(*this); }
    /// On a temporary: the same, reusing its buffer.
    auto T() && { return shaped::reverse_axes(std::move(*this)); }
    /// `shaped::contiguous(x)` (`x.contiguous()`).
    auto contiguous() const& { return shaped::contiguous(*this); }
    /// On a temporary: the same, reusing its buffer when it is contiguous (a strided one is copied once).
    auto contiguous() && { return shaped::contiguous(std::move(*this)); }
    /// `shaped::split<Chunk, Dim>(x)` (`x.split(size, dim)`): the axis at `Dim` cut into `Chunk`s, as a `hana::tuple`.
    template <Axis Chunk, int Dim>
    auto split() const {
        return shaped::split<Chunk, Dim>(*this);
    }
    /// `shaped::softmax<Dim>(x)` (`torch.softmax(x, dim)`).
    template <int Dim>
    auto softmax() const& {
        return shaped::softmax<Dim>(*this);
    }
    /// On a temporary: the same, reusing its buffer when it is contiguous (a strided one is copied once).
    template <int Dim>
    auto softmax() && {
        return shaped::softmax<Dim>(std::move(*this));
    }
    /// `shaped::softmax<A>(x)`: softmax over the axis named `A`.
    template <Axis A>
    auto softmax() const {
        return shaped::softmax<A>(*this);
    }
    /// `shaped::masked_fill(x, mask, value)` (`x.masked_fill(mask, value)`).
    template <Tensor Mask>
    auto masked_fill(const Mask& mask, std::type_identity_t<Value> value) const& {
        return shaped::masked_fill(*this, mask, value);
    }
    /// On a temporary: the same, reusing its buffer when it is contiguous (a strided one is copied once).
    template <Tensor Mask>
    auto masked_fill(const Mask& mask, std::type_identity_t<Value> value) && {
        return shaped::masked_fill(std::move(*this), mask, value);
    }
    /// After a failed shape check, no further errors (see `diag::failed_shape_check`).
    diag::failed_shape_check masked_fill(diag::failed_shape_check, std::type_identity_t<Value>) const { return {}; }
    /// `shaped::unsqueeze<Dim>(x)` (`x.unsqueeze(dim)`): inserts `shaped::one` at `Dim`.
    template <int Dim>
    auto unsqueeze() const {
        return shaped::unsqueeze<Dim>(*this);
    }
    /// `shaped::repeat_interleave<New, Dim>(x)` (`x.repeat_interleave(n, dim)`): each element `New::extent` times.
    template <Axis New, int Dim>
    auto repeat_interleave() const {
        return shaped::repeat_interleave<New, Dim>(*this);
    }
    /// `shaped::repeat<New, Dim>(x)` (`x.repeat(...)`): the axis at `Dim` tiled `New::extent` times.
    template <Axis New, int Dim>
    auto repeat() const {
        return shaped::repeat<New, Dim>(*this);
    }
    /// `shaped::slice<Prefix...>(x, n...)` (`x[:n, :m]`).
    template <Axis... Prefix, detail::extent_number... N>
    auto slice(N... n) const {
        return shaped::slice<Prefix...>(*this, n...);
    }
    /// `shaped::to<To>(x)` (`x.to(dtype)`): the elements converted to `To`.
    template <class To>
    auto to() const {
        return shaped::to<To>(*this);
    }
    /// `shaped::select<A>(x, index)`: position `index` of the axis named `A`, which the result lacks.
    template <Axis A>
    auto select(long long index) const {
        return shaped::select<A>(*this, index);
    }
    /// `shaped::select<Dim>(x, index)` (`x.select(dim, index)`).
    template <int Dim>
    auto select(long long index) const {
        return shaped::select<Dim>(*this, index);
    }
    // Reductions (ops/reduce.hpp): by axis or by dimension, with or without `shaped::keepdim`. The macro
    // writes the member forms `x.sum<A>()`, `x.sum<Dim>(shaped::keepdim)`, ... and is #undef'd after use,
    // so it is kept out of the API documentation.
    /// \cond
#define SHAPED_REDUCTION_MEMBERS(name)                      \
    template <Axis A, class... Keep>                        \
    auto name(Keep... keep) const {                         \
        return shaped::name<A>(*this, keep...);             \
    }                                                       \
    template <int Dim, class... Keep>                       \
    auto name(Keep... keep) const {                         \
        return shaped::name<Dim>(*this, keep...);           \
    }
    SHAPED_REDUCTION_MEMBERS(sum)
    SHAPED_REDUCTION_MEMBERS(mean)
    SHAPED_REDUCTION_MEMBERS(var)
    SHAPED_REDUCTION_MEMBERS(max)
    SHAPED_REDUCTION_MEMBERS(argmax)
#undef SHAPED_REDUCTION_MEMBERS
    /// \endcond

    /// Prints as PyTorch prints the tensor: `tensor([[0.7713, 1.1682, ...]])`.
    friend std::ostream& operator<<(std::ostream& os, const basic_tensor& t) {
        static_assert(torch::detail::printable_element<Value>,
                      "shaped::tensor: printing supports float, double, std::int64_t and bool elements");
        static_assert(rank <= 8, "shaped::tensor: printing supports up to 8 axes");
        t.check_not_moved_from("operator<<");
        const std::array<std::size_t, rank> extents = t.shape.sizes();
        const auto& elements = t.storage();  // row-major
        return os << torch::repr<Value>(elements.data(), std::span<const std::size_t>(extents));
    }

private:
    // A new buffer (a large one reused, or new with the huge-page advice: detail/buffer_cache.hpp).
    static storage_type allocate(const typename storage_type::shape_type& s, bool zero) {
        storage_type d(s);
        if (zero) std::fill(d.begin(), d.end(), Value{});
        return d;
    }
    static typename storage_type::shape_type xshape(const extents_type& e) {
        if constexpr (is_static) {
            return {Axes::extent...};
        } else {
            if constexpr (!detail::extents_tables<Axes...>::numel_fits_at_bounds) e.check_numel("tensor");
            const auto s = e.sizes();
            typename storage_type::shape_type out{};
            std::copy(s.begin(), s.end(), out.begin());
            return out;
        }
    }
    static constexpr std::array<std::size_t, rank> static_row_major_strides = [] {
        if constexpr (is_static)
            return detail::row_major_strides<rank>({Axes::extent...});
        else
            return std::array<std::size_t, rank>{};
    }();

    auto adaptor() {
        check_not_moved_from("storage");
        return xt::adapt(data_.data(), data_.size(), xt::no_ownership(), data_.shape());
    }

    // A tensor whose elements were moved out (`std::move(x)` into an op or a variable) has none left: the
    // checked paths say so rather than read nothing as if it were something.
    void check_not_moved_from(const char* what) const {
        if (data_.size() == 0) [[unlikely]]
            throw std::logic_error(std::string("shaped::tensor::") + what +
                                   ": the tensor's elements were moved out (std::move); assign to it before using it");
    }

    template <class... Index>
    std::size_t offset(Index... i) const noexcept {
        return detail::dot_strides<rank>(stride(), {static_cast<std::size_t>(i)...});
    }

    template <class I>
    void check_index(std::size_t d, I i) const {
        if (std::cmp_less(i, 0) || std::cmp_greater_equal(i, shape.extent(d))) [[unlikely]] {
            const std::string name = detail::of_axis<Axes...>(d, [](auto t) { return axis_name<typename decltype(t)::type>(); });
            detail::index_out_of_range(std::to_string(i), name, d, shape.extent(d));
        }
    }

    // A row-major copy of a strided tensor's elements.
    storage_type materialized() const {
        storage_type out(xshape(shape));
        detail::gather_strided<Value, rank>(data_.data(), out.data(), shape.sizes(), strides_);
        return out;
    }

    // The type's own extents for a tensor of the other layout, same axes (else a static error, above).
    template <class OtherLayout, Axis... Other>
    static extents_type adopt_shape(const basic_tensor<Value, OtherLayout, Other...>& other) {
        if constexpr (detail::same_shape(detail::axis_pack<Axes...>{}, detail::axis_pack<Other...>{}) &&
                      sizeof...(Other) == rank)
            return extents_type(detail::adopt_tag{}, other.shape.dynamic());
        else
            return detail::make_extents<extents_type>();
    }

    // Extents from the sizes that data from outside has: a static axis must match, a run-time axis takes its
    // size (its single run-time atom is size / static_factor), checked against its bound. Axes with several
    // run-time atoms cannot be read off one number.
    static extents_type from_sizes(std::string_view op, const std::array<std::size_t, rank>& sizes) {
        static_assert((single_atom_v<Axes> && ...),
                      "shaped::tensor: a merged axis with several run-time factors cannot take its extents from data "
                      "(from nested braces or an xtensor); build it with view<...>() from its factors");
        typename extents_type::dynamic_type d{};
        std::size_t k = 0, i = 0;
        bool ok = true;
        (
            [&] {
                if constexpr (Axes::dynamic_atoms == 1) {
                    if (sizes[i] % Axes::static_factor != 0) ok = false;
                    d[k++] = sizes[i] / Axes::static_factor;
                } else if constexpr (StaticAxis<Axes>) {
                    if (sizes[i] != Axes::extent) ok = false;
                }
                ++i;
            }(),
            ...);
        if (!ok) throw shape_error(std::string(op), type_text(), detail::format_extents({sizes.begin(), sizes.end()}));
        return std::apply([&](auto... n) { return extents_type::checked(op, n...); }, d);
    }
    template <class A>
    static constexpr bool single_atom_v = A::dynamic_atoms <= 1;

    static extents_type xtensor_extents(const storage_type& values) {
        std::array<std::size_t, rank> sizes{};
        std::copy(values.shape().begin(), values.shape().end(), sizes.begin());
        return from_sizes("tensor(xt::xtensor)", sizes);
    }

    static extents_type list_extents(const typename detail::nested_list<Value, 0, rank>::type& values) {
        std::array<std::size_t, rank> sizes{};
        list_sizes<0>(values, sizes);
        return from_sizes("tensor({...})", sizes);
    }
    template <std::size_t Depth, class List>
    static void list_sizes(const List& list, std::array<std::size_t, rank>& sizes) {
        sizes[Depth] = list.size();
        if constexpr (Depth + 1 < rank)
            if (list.size() != 0) list_sizes<Depth + 1>(*list.begin(), sizes);
    }

    // The type's shape, with run-time axes by name and bound: `(batch, num_tokens<=1024, d_out=768)`.
    static std::string type_text() {
        std::string s = "(";
        std::size_t i = 0;
        (
            [&] {
                s += (i++ ? ", " : "") + axis_name<Axes>();
                if constexpr (StaticAxis<Axes>)
                    s += "=" + std::to_string(Axes::extent);
                else if constexpr (Axes::bound < max_extent)
                    s += "<=" + std::to_string(Axes::bound);
            }(),
            ...);
        return s + ")";
    }

    template <std::size_t Depth, class List>
    void fill_from(const List& list, std::size_t& n) {
        if (list.size() != shape.extent(Depth))
            throw shape_error("tensor({...})", shape.text(),
                              "a list of " + std::to_string(list.size()) + " at depth " + std::to_string(Depth) +
                                  " (axis " + std::to_string(Depth) + " has " + std::to_string(shape.extent(Depth)) + ")");
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
        initial_strides(shape);
    static constexpr auto initial_strides(const extents_type& e) {
        if constexpr (is_contiguous)
            return no_strides{};
        else
            return detail::row_major_strides<rank>(e.sizes());
    }
};

}  // namespace shaped

#endif
