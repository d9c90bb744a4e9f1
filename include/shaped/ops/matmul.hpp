#ifndef SHAPED_OPS_MATMUL_HPP
#define SHAPED_OPS_MATMUL_HPP

/// \file
/// `matmul`: PyTorch's `@` on tensors of rank 2 or more, batched over the leading axes, on oneDNN's sgemm
/// (float) or OpenBLAS (double): detail/gemm.hpp.

#include <algorithm>
#include <array>
#include <cstddef>
#include <limits>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>
#include <xtensor/xtensor.hpp>

#include "../detail/buffer_cache.hpp"
#include "../detail/gemm.hpp"
#include "../diagnostics.hpp"
#include "../shape.hpp"
#include "../tensor_fwd.hpp"

namespace shaped {

namespace detail {

// One matmul operand as BLAS reads it: its buffer (a row-major copy when its last two strides suit no
// BLAS layout), the strides, and the layout of each batch's matrix.
template <class Value, std::size_t N>
struct blas_operand {
    typename detail::storage_t<Value, N>::storage_type copy;  // holds the elements only when they had to be gathered
    const Value* data = nullptr;
    std::array<std::size_t, N> stride{};
    blas_matrix layout;

    std::array<std::size_t, N> extent{};

    template <class Tensor>
    explicit blas_operand(const Tensor& t) : extent(t.shape.sizes()) {
        stride = t.stride();
        data = t.data();
        layout = blas_layout(extent[N - 2], extent[N - 1], stride[N - 2], stride[N - 1]);
        if (!layout.ok) {
            copy.resize(t.numel());
            gather_strided<Value, N>(t.data(), copy.data(), extent, stride);
            data = copy.data();
            stride = row_major_strides<N>(extent);
            layout = blas_layout(extent[N - 2], extent[N - 1], stride[N - 2], stride[N - 1]);
        }
    }
    // Where the matrix of batch j (row-major over this operand's batch axes) starts: for static extents
    // the divisions are by constants; `batch_cursor` walks run-time ones without dividing.
    const Value* matrix(std::size_t j) const {
        std::size_t offset = 0;
        for (std::size_t q = N - 2; q-- > 0;) {
            offset += (j % extent[q]) * stride[q];
            j /= extent[q];
        }
        return data + offset;
    }
};

// Walks the matrices of an operand's batch, row-major over its batch axes, by adding strides; past the
// last it wraps around to the first, so that a shorter batch list broadcasts over the result's leading axes.
template <class Value, std::size_t N>
class batch_cursor {
public:
    explicit batch_cursor(const blas_operand<Value, N>& op) noexcept : op_(op) {}
    const Value* matrix() const noexcept { return op_.data + offset_; }
    void next() noexcept {
        for (std::size_t q = N - 2; q-- > 0;) {
            offset_ += op_.stride[q];
            if (++index_[q] < op_.extent[q]) return;
            offset_ -= op_.stride[q] * op_.extent[q];
            index_[q] = 0;
        }
    }

private:
    const blas_operand<Value, N>& op_;
    std::array<std::size_t, N - 2> index_{};
    std::size_t offset_ = 0;
};

// The batch axes of the result: the longer of the two batch lists (the shorter broadcasts).
template <class L, class R>
struct longer_batch;
template <class... L, class... R>
struct longer_batch<axis_pack<L...>, axis_pack<R...>> {
    using type = std::conditional_t<(sizeof...(L) >= sizeof...(R)), axis_pack<L...>, axis_pack<R...>>;
};

template <std::size_t Offset, class... Axes, std::size_t... I>
auto sublist(std::index_sequence<I...>) -> axis_pack<axis_at_t<Offset + I, Axes...>...>;

template <class Value, class Batch, class Row, class Col>
struct matmul_result;
template <class Value, class... Batch, class Row, class Col>
struct matmul_result<Value, axis_pack<Batch...>, Row, Col> {
    using type = tensor<Value, Batch..., Row, Col>;
};

// The extents of `a @ b`: the batch axes from the longer side, the rows from a, the columns from b, after
// checking the contracted run-time axis and each pair of run-time batch axes.
template <class Result, class EA, class EB>
Result matmul_extents(std::string_view op, const EA& a, const EB& b) {
    static constexpr std::size_t na = EA::rank, nb = EB::rank, nbatch = Result::rank - 2;
    static constexpr std::size_t shared = (na < nb ? na : nb) - 2;
    static constexpr std::array<axis_source, Result::rank> sources = [] {
        std::array<axis_source, Result::rank> s{};
        for (std::size_t j = 0; j < nbatch; ++j)
            s[j] = j >= nbatch - (na - 2) ? axis_source{0, j - (nbatch - (na - 2))} : axis_source{1, j - (nbatch - (nb - 2))};
        s[nbatch] = {0, na - 2};
        s[nbatch + 1] = {1, nb - 1};
        return s;
    }();
    static constexpr axis_pairs<shared + 1> pairs = [] {
        axis_pairs<shared + 1> p{};
        p[0] = {na - 1, nb - 2};
        for (std::size_t k = 0; k < shared; ++k) p[k + 1] = {na - 2 - shared + k, nb - 2 - shared + k};
        return p;
    }();
    check_meets<pairs>(op, "a", a, "b", b);
    return take_extents<Result, sources>(a, b);
}

// BLAS takes `int` extents (xtensor-blas's default build): an extent beyond that cannot be multiplied.
// Static extents are checked at compile time; run-time ones, whose bound may exceed it, here.
[[noreturn, gnu::noinline, gnu::cold]] inline void blas_extent_too_large(const std::string& shape) {
    throw shape_error("matmul(a, b)", "extents of at most " + std::to_string(blas_max) + " for BLAS", shape);
}

template <class Batch>
struct batch_checker;
template <class... L>
struct batch_checker<axis_pack<L...>> : broadcast_lhs<L...> {};

template <class... X>
constexpr bool has_one(axis_pack<X...>) {
    return (std::is_same_v<X, one> || ...);
}

template <class... R>
constexpr int batch_mismatch(axis_pack<R...>, auto lhs_checker) {
    return decltype(lhs_checker)::template first_mismatch<R...>();
}

}  // namespace detail

/// Matrix product over the last two axes, batched over the leading ones: PyTorch's `a @ b`.
///
/// Shapes: `(B..., M, K) @ (C..., K, N)` gives `(batch..., M, N)`, where `K` must be the same axis on
/// both sides, by name as well as extent (`head_dim` is not `num_tokens` even when both are 2), and the
/// batch axes, aligned from the right, must be the same axes; a missing leading batch axis broadcasts.
/// Element type: `float` (oneDNN's `sgemm`) or `double` (OpenBLAS's `dgemm`); threads: `shaped::num_threads()`,
/// and the same bits at any count.
/// Errors (compile time, in this order): a rank below 2; `a`'s last axis is not `b`'s second-to-last
/// (the classic `q @ k` for `q @ k.transpose(-2, -1)`, a transpose of the wrong pair, or `.T` on a
/// 3-d or 4-d tensor); the batch axes differ. Nothing is thrown.
/// Source: `torch.matmul`; `queries @ keys.transpose(2, 3)` and `attn_weights @ values` (listing 3.5).
/// Example: `auto attn_scores = shaped::matmul(q, k.transpose<2, 3>());`
template <class Value, class ValueB, class LayoutA, class LayoutB, Axis... A, Axis... B>
auto matmul(const basic_tensor<Value, LayoutA, A...>& a, const basic_tensor<ValueB, LayoutB, B...>& b) {
    static_assert(std::is_same_v<Value, ValueB>,
                  "shaped::matmul(a, b): a and b must have the same element type; convert one with .to<float>() "
                  "or .to<double>()");
    static_assert(std::is_same_v<Value, float> || std::is_same_v<Value, double>,
                  "shaped::matmul(a, b): elements must be float or double");
    constexpr std::size_t na = sizeof...(A), nb = sizeof...(B);
    constexpr bool rank_ok = na >= 2 && nb >= 2;
    static_assert(
        diag::expect<rank_ok, detail::described<diag::lhs_axes, A...>, detail::described<diag::rhs_axes, B...>>,
        "shaped::matmul(a, b): both tensors need at least two axes (1-d products are not supported)");
    if constexpr (rank_ok) {
        using a_last = detail::axis_at_t<na - 1, A...>;
        using b_inner = detail::axis_at_t<nb - 2, B...>;
        constexpr bool inner_ok = same_axis_v<a_last, b_inner>;
        // The hint follows what disagrees: b still has a's last axis last (a forgotten transpose), b has it
        // elsewhere (the wrong pair transposed), a key axis against its query axis, or no such axis at all.
        // b ends on a's last axis: not transposed at all, or transposed (strided) over another pair.
        constexpr bool ends_on_it = !inner_ok && same_axis_v<a_last, detail::axis_at_t<nb - 1, B...>>;
        constexpr bool forgot_transpose = ends_on_it && std::is_same_v<LayoutB, layout::contiguous>;
        constexpr bool other_pair = ends_on_it && !forgot_transpose;
        constexpr bool wrong_pair = !inner_ok && !ends_on_it && detail::count_same_v<a_last, B...> > 0;
        constexpr bool key_query = [] {
            if constexpr (inner_ok || ends_on_it || wrong_pair)
                return false;
            else
                return detail::mismatch_of<a_last, b_inner>() == detail::mismatch::key_and_query;
        }();
        constexpr bool rope_mismatch = [] {
            if constexpr (inner_ok || ends_on_it || wrong_pair || key_query)
                return false;
            else if constexpr (!detail::is_rotated<a_last> && !detail::is_rotated<b_inner>)
                return false;
            else
                return same_axis_v<detail::unrotated_t<a_last>, detail::unrotated_t<b_inner>>;
        }();
        constexpr bool unrelated = !inner_ok && !ends_on_it && !wrong_pair && !key_query && !rope_mismatch;
        using l = detail::described<diag::lhs_last, a_last>;
        using r = detail::described<diag::rhs_second_to_last, b_inner>;
        using la = detail::described<diag::lhs_axes, A...>;
        using ra = detail::described<diag::rhs_axes, B...>;
        static_assert(diag::expect<!forgot_transpose, l, r, la, ra>,
                      "shaped::matmul(a, b): a's last axis and b's second-to-last axis must be the same axis; b ends on "
                      "a's last axis, so b.transpose<-2, -1>() was forgotten (PyTorch's q @ k.transpose(-2, -1))");
        static_assert(diag::expect<!other_pair, l, r, la, ra>,
                      "shaped::matmul(a, b): a's last axis and b's second-to-last axis must be the same axis; b ends on "
                      "a's last axis, left there by a transpose of another pair (such as the heads' transpose<1, 2>): "
                      "swap b's last two, b.transpose<-2, -1>() (PyTorch's k.transpose(-2, -1))");
        static_assert(diag::expect<!wrong_pair, l, r, la, ra>,
                      "shaped::matmul(a, b): a's last axis and b's second-to-last axis must be the same axis; b has "
                      "a's last axis at another dimension (not last): swap that one with b's second-to-last; if b "
                      "is k.T, .T reversed every axis of a 3-d or 4-d tensor, so write k.transpose<-2, -1>()");
        static_assert(diag::expect<!key_query, l, r, la, ra>,
                      "shaped::matmul(a, b): a's last axis and b's second-to-last axis must be the same axis; one is "
                      "key<A> and the other A, the queries' token axis where the keys' belongs: give b the key axis "
                      "(e.g. values.rename<batch, num_heads, key<num_tokens>, head_dim>() for attn_weights @ values)");
        static_assert(diag::expect<!rope_mismatch, l, r, la, ra>,
                      "shaped::matmul(a, b): a's last axis and b's second-to-last axis must be the same axis; one is "
                      "rotated<head_dim> and the other is not, or the two are rotated with different pair layouts: "
                      "apply the same nn::rope to the queries and to the keys before their product");
        static_assert(diag::expect<!unrelated, l, r, la, ra>,
                      "shaped::matmul(a, b): a's last axis and b's second-to-last axis must be the same axis; b has no "
                      "such axis: matmul sums over a's last axis against b's second-to-last, so check which axis "
                      "the product sums over and which tensor is a and which is b");
        if constexpr (inner_ok) {
            using a_batch = decltype(detail::sublist<0, A...>(std::make_index_sequence<na - 2>{}));
            using b_batch = decltype(detail::sublist<0, B...>(std::make_index_sequence<nb - 2>{}));
            // Batch axes are matched one for one (a size-1 `one` axis does not broadcast here yet).
            constexpr int mismatch = detail::has_one(a_batch{}) || detail::has_one(b_batch{})
                                         ? 0
                                         : detail::batch_mismatch(b_batch{}, detail::batch_checker<a_batch>{});
            // The hint follows what disagrees: heads of the same factors in another order (keys tiled with
            // `repeat` for query heads grouped by key/value head), keys with fewer heads than the grouped
            // queries (not expanded), or anything else.
            constexpr detail::mismatch why = [] {
                if constexpr (mismatch < 0)
                    return detail::mismatch::different;
                else
                    return detail::broadcast_mismatch(a_batch{}, b_batch{});
            }();
            constexpr bool reordered = mismatch >= 0 && why == detail::mismatch::factors_reordered;
            constexpr bool grouped = mismatch >= 0 && why == detail::mismatch::grouped;
            using axes = detail::described<diag::lhs_axes, A...>;
            using axes_b = detail::described<diag::rhs_axes, B...>;
            static_assert(diag::expect<!reordered, axes, axes_b>,
                          "shaped::matmul(a, b): the batch axes (all but the last two) must be the same axes; one "
                          "side's heads are the other's factors in another order: keys expanded with repeat (tiled, "
                          "merged<group_size, num_kv_heads>) where the query heads are grouped by key/value head "
                          "(num_heads = product<num_kv_heads, group_size>): expand them with "
                          "repeat_interleave<group_size, 1>, as the book's keys.repeat_interleave(group_size, dim=1)");
            static_assert(diag::expect<!grouped, axes, axes_b>,
                          "shaped::matmul(a, b): the batch axes (all but the last two) must be the same axes; one "
                          "side has the key/value heads, the other the query heads grouped over them: expand the keys "
                          "and values first, repeat_interleave<group_size, 1>(keys), or pass the grouped keys to "
                          "scaled_dot_product_attention, which reads each key/value head for its whole group");
            static_assert(diag::expect<(mismatch < 0 || reordered || grouped), axes, axes_b>,
                          "shaped::matmul(a, b): the batch axes (all but the last two), aligned from the right, "
                          "must be the same axes; transpose one side so that they line up");
            if constexpr (mismatch < 0 && std::is_same_v<Value, ValueB>) {
                using row = detail::axis_at_t<na - 2, A...>;
                using col = detail::axis_at_t<nb - 1, B...>;
                using batch = typename detail::longer_batch<a_batch, b_batch>::type;
                using result_t = typename detail::matmul_result<Value, batch, row, col>::type;
                static_assert(row::bound <= detail::blas_max || !StaticAxis<row>,
                              "shaped::matmul(a, b): an extent of the product exceeds what one BLAS call takes");
                static_assert((col::bound <= detail::blas_max && a_last::bound <= detail::blas_max) ||
                                  !StaticAxis<col> || !StaticAxis<a_last>,
                              "shaped::matmul(a, b): an extent of the product exceeds what one BLAS call takes");
                const auto e = detail::matmul_extents<typename result_t::extents_type>("matmul(a, b)", a.shape, b.shape);
                const std::size_t m = a.shape.extent(na - 2), n = b.shape.extent(nb - 1), k = a.shape.extent(na - 1);
                if constexpr (col::bound > detail::blas_max || a_last::bound > detail::blas_max)
                    if (n > detail::blas_max || k > detail::blas_max) detail::blas_extent_too_large(a.shape.text());
                result_t out(e, uninitialized);
                const std::size_t batches = out.numel() / (m * n);
                const std::size_t a_batches = a.numel() / (m * k);
                const std::size_t b_batches = b.numel() / (k * n);
                // Strided operands (transposes) are read in place through BLAS's leading dimensions.
                const detail::blas_operand<Value, na> oa(a);
                const detail::blas_operand<ValueB, nb> ob(b);
                Value* pc = out.data();
                // The shorter batch list is a suffix of the result's, so its index is i modulo its size.
                if constexpr (result_t::is_static) {
                    for (std::size_t i = 0; i < batches; ++i)
                        detail::gemm(oa.matrix(i % a_batches), oa.layout, oa.stride[na - 2], ob.matrix(i % b_batches),
                                     ob.layout, pc + i * m * n, m, n, k);
                } else {
                    detail::batch_cursor<Value, na> ca(oa);
                    detail::batch_cursor<ValueB, nb> cb(ob);
                    for (std::size_t i = 0; i < batches; ++i, ca.next(), cb.next())
                        detail::gemm(ca.matrix(), oa.layout, oa.stride[na - 2], cb.matrix(), ob.layout, pc + i * m * n,
                                     m, n, k);
                }
                return out;
            } else {
                return diag::failed_shape_check{};
            }
        } else {
            return diag::failed_shape_check{};
        }
    } else {
        return diag::failed_shape_check{};
    }
}

namespace detail {

// Columns lo .. hi - 1: the part of a block of rows of a product that is computed (matmul_spans).
struct column_span {
    std::size_t lo = 0, hi = 0;
};

// Where element (r, c) of a matrix laid out as `l` is.
constexpr std::size_t element_offset(const blas_matrix& l, std::size_t r, std::size_t c) noexcept {
    return l.trans ? c * l.ld + r : r * l.ld + c;
}

// `q @ k.transpose(2, 3)` for the causal attention modules, block by block of `block` query rows: of block i,
// only the columns (keys) spans[i] are computed, the rest left unwritten, since the causal step masks those
// keys and overwrites their scores. The same BLAS call per block as `matmul` makes per matrix, on the
// block's rows and columns; the types have been checked by the caller.
template <class Value, class LA, class LB, Axis B, Axis H, Axis T, Axis D, Axis K>
tensor<Value, B, H, T, K> matmul_spans(const basic_tensor<Value, LA, B, H, T, D>& a,
                                       const basic_tensor<Value, LB, B, H, D, K>& b, std::size_t block,
                                       const std::vector<column_span>& spans) {
    static_assert(T::bound <= blas_max && K::bound <= blas_max && D::bound <= blas_max,
                  "shaped::matmul(a, b): an extent of the product exceeds what one BLAS call takes");
    using result_t = tensor<Value, B, H, T, K>;
    check_meets<axis_pairs<3>{{{3, 2}, {0, 0}, {1, 1}}}>("matmul(a, b)", "a", a.shape, "b", b.shape);
    const auto e = take_extents<typename result_t::extents_type,
                                std::array<axis_source, 4>{axis_source{0, 0}, axis_source{0, 1}, axis_source{0, 2},
                                                           axis_source{1, 3}}>(a.shape, b.shape);
    result_t out(e, uninitialized);
    const blas_operand<Value, 4> oa(a);
    const blas_operand<Value, 4> ob(b);
    const std::size_t m = a.shape.extent(2), n = b.shape.extent(3), k = a.shape.extent(3);
    const std::size_t batches = a.shape.extent(0) * a.shape.extent(1);
    for (std::size_t i = 0; i < batches; ++i) {
        const Value *pa = oa.matrix(i), *pb = ob.matrix(i);
        Value* pc = out.data() + i * m * n;
        for (std::size_t r0 = 0, blk = 0; r0 < m; r0 += block, ++blk) {
            const column_span s = spans[blk];
            gemm(pa + element_offset(oa.layout, r0, 0), oa.layout, oa.stride[2], pb + element_offset(ob.layout, 0, s.lo),
                 ob.layout, pc + r0 * n + s.lo, std::min(block, m - r0), s.hi - s.lo, k, n);
        }
    }
    return out;
}

// `(attn_weights @ values).transpose(1, 2).contiguous()` in one step: each (batch, head) product goes
// straight to its place in the (batch, num_tokens, num_heads, head_dim) result, through BLAS's leading
// dimension, where `matmul` would write (batch, num_heads, ...) and `contiguous()` would gather it
// again. The same BLAS calls on the same operands, so the numbers are bit for bit those of the three
// steps. For the attention modules, whose types have already been checked.
template <class Value, class LW, class LV, Axis B, Axis H, Axis T, Axis K, Axis D>
tensor<Value, B, T, H, D> matmul_merge_heads(const basic_tensor<Value, LW, B, H, T, K>& w,
                                             const basic_tensor<Value, LV, B, H, K, D>& v) {
    static_assert(StaticAxis<H> && StaticAxis<D> && H::extent * D::extent <= blas_max && T::bound <= blas_max &&
                      K::bound <= blas_max,
                  "shaped::matmul(a, b): an extent of the product exceeds what one BLAS call takes");
    using result_t = tensor<Value, B, T, H, D>;
    check_meets<axis_pairs<2>{{{3, 2}, {0, 0}}}>("matmul(a, b)", "a", w.shape, "b", v.shape);
    const auto e = take_extents<typename result_t::extents_type,
                                std::array<axis_source, 4>{axis_source{0, 0}, axis_source{0, 2}, axis_source{},
                                                           axis_source{}}>(w.shape);
    result_t out(e, uninitialized);
    const blas_operand<Value, 4> ow(w);
    const blas_operand<Value, 4> ov(v);
    const std::size_t batches = w.shape.extent(0), t = w.shape.extent(2), k = w.shape.extent(3);
    constexpr std::size_t heads = H::extent, ldc = H::extent * D::extent;
    Value* pc = out.data();
    if constexpr (result_t::is_static) {
        for (std::size_t i = 0; i < batches * heads; ++i)  // i = batch · heads + head
            gemm(ow.matrix(i), ow.layout, ow.stride[2], ov.matrix(i), ov.layout,
                 pc + (i / heads) * t * ldc + (i % heads) * D::extent, t, D::extent, k, ldc);
    } else {
        batch_cursor<Value, 4> cw(ow), cv(ov);
        for (std::size_t b = 0; b < batches; ++b)
            for (std::size_t h = 0; h < heads; ++h, cw.next(), cv.next())
                gemm(cw.matrix(), ow.layout, ow.stride[2], cv.matrix(), ov.layout, pc + b * t * ldc + h * D::extent, t,
                     D::extent, k, ldc);
    }
    return out;
}

}  // namespace detail

/// After a failed shape check, no further errors (see `diag::failed_shape_check`).
template <class X>
diag::failed_shape_check matmul(diag::failed_shape_check, const X&) {
    return {};
}
/// After a failed shape check, no further errors (see `diag::failed_shape_check`).
template <Tensor X>
diag::failed_shape_check matmul(const X&, diag::failed_shape_check) {
    return {};
}

}  // namespace shaped

#endif
