#ifndef SHAPED_NN_HEAD_WEIGHTS_HPP
#define SHAPED_NN_HEAD_WEIGHTS_HPP

/// \file
/// The same attention written two ways: `multi_head_attention` (one projection per role, split by
/// `view`) and `multi_head_attention_wrapper` with `head_dim`-wide heads plus an out_proj. Each head's
/// weights are a block of rows of the weight-split form's; these functions move weights between them.

#include <algorithm>
#include <cstddef>

#include "../torch/generator.hpp"
#include "linear.hpp"
#include "multi_head_attention.hpp"
#include "multi_head_attention_wrapper.hpp"

namespace shaped::nn {

/// A wrapper of `head_dim`-wide heads followed by an out_proj: the loop-over-heads form of
/// `multi_head_attention<DIn, DOut, ContextLength, NumHeads>`.
///
/// Shapes: `wrapper` maps `(batch, num_tokens, DIn)` to `(batch, num_tokens, DOut)` (the heads' `head_dim`
/// outputs join back into `DOut`); `out_proj` is `linear<DOut, DOut>`. Errors: none of its own.
/// Source: the book's `MultiHeadAttentionWrapper` (listing 3.4) with `d_out // num_heads` per head, and
/// the out_proj of its `MultiHeadAttention` (listing 3.5).
template <Axis DIn, Axis DOut, Axis ContextLength, Axis NumHeads>
struct heads_with_out_proj {
    /// Each head's width, `DOut / NumHeads`: `multi_head_attention`'s `head_dim`.
    using head_dim = typename multi_head_attention<DIn, DOut, ContextLength, NumHeads>::head_dim;
    /// The `NumHeads` heads, `head_dim` wide each, joined back into `DOut`.
    multi_head_attention_wrapper<DIn, head_dim, ContextLength, NumHeads> wrapper;
    /// The output projection after the heads, `linear<DOut, DOut>`.
    linear<DOut, DOut> out_proj;

    /// `module.eval()`: turns the heads' dropout off.
    void eval() noexcept { wrapper.eval(); }

    /// `out_proj(wrapper(x))`: `(batch, num_tokens, DIn)` to `(batch, num_tokens, DOut)`.
    template <class Layout, Axis... X>
    auto operator()(const basic_tensor<float, Layout, X...>& x) const {
        return out_proj(wrapper(x));
    }
};

namespace detail {
// Copies rows [first, first + Rows) of `from` (rows of `Cols` floats) into `to`, or back.
inline void copy_rows(const float* from, float* to, std::size_t first, std::size_t rows, std::size_t cols) {
    std::copy_n(from + first * cols, rows * cols, to);
}
inline void put_rows(const float* from, float* to, std::size_t first, std::size_t rows, std::size_t cols) {
    std::copy_n(from, rows * cols, to + first * cols);
}
}  // namespace detail

/// The loop-over-heads form of `mha`: head `h` gets rows `h * head_dim` up to `(h + 1) * head_dim` of
/// W_query, W_key and W_value (and of their biases); out_proj is copied. In evaluation mode both compute the same.
///
/// Shapes: see `heads_with_out_proj`. Errors: none. Nothing is thrown. The dropout probability is copied;
/// the result is in evaluation mode.
/// Source: the equivalence of the book's listings 3.4 and 3.5.
template <Axis DIn, Axis DOut, Axis ContextLength, Axis NumHeads>
heads_with_out_proj<DIn, DOut, ContextLength, NumHeads> split_heads(
    const multi_head_attention<DIn, DOut, ContextLength, NumHeads>& mha) {
    using mha_t = multi_head_attention<DIn, DOut, ContextLength, NumHeads>;
    constexpr std::size_t hd = mha_t::head_dim::extent;
    torch::generator scratch;  // parameters are overwritten below; the default stream is untouched
    heads_with_out_proj<DIn, DOut, ContextLength, NumHeads> out{
        multi_head_attention_wrapper<DIn, typename mha_t::head_dim, ContextLength, NumHeads>(
            mha.dropout.p(), mha.W_query.has_bias(), scratch),
        mha.out_proj};
    for (std::size_t h = 0; h < NumHeads::extent; ++h) {
        auto& head = out.wrapper.heads[h];
        const std::pair<const linear<DIn, DOut>*, linear<DIn, typename mha_t::head_dim>*> roles[] = {
            {&mha.W_query, &head.W_query}, {&mha.W_key, &head.W_key}, {&mha.W_value, &head.W_value}};
        for (auto [whole, part] : roles) {
            detail::copy_rows(whole->weight.data(), part->weight.data(), h * hd, hd, DIn::extent);
            if (whole->bias) detail::copy_rows(whole->bias->data(), part->bias->data(), h * hd, hd, 1);
        }
    }
    out.eval();
    return out;
}

/// The weight-split form of `heads`: the inverse of `split_heads`.
///
/// Shapes: see `heads_with_out_proj`. Errors: none. Nothing is thrown. The result is in evaluation mode,
/// with the dropout probability of the first head.
/// Source: the equivalence of the book's listings 3.4 and 3.5.
template <Axis DIn, Axis DOut, Axis ContextLength, Axis NumHeads>
multi_head_attention<DIn, DOut, ContextLength, NumHeads> join_heads(
    const heads_with_out_proj<DIn, DOut, ContextLength, NumHeads>& heads) {
    using mha_t = multi_head_attention<DIn, DOut, ContextLength, NumHeads>;
    constexpr std::size_t hd = mha_t::head_dim::extent;
    torch::generator scratch;
    const auto& first = heads.wrapper.heads[0];
    mha_t mha(first.dropout.p(), first.W_query.has_bias(), scratch);
    mha.out_proj = heads.out_proj;
    for (std::size_t h = 0; h < NumHeads::extent; ++h) {
        const auto& head = heads.wrapper.heads[h];
        const std::pair<const linear<DIn, typename mha_t::head_dim>*, linear<DIn, DOut>*> roles[] = {
            {&head.W_query, &mha.W_query}, {&head.W_key, &mha.W_key}, {&head.W_value, &mha.W_value}};
        for (auto [part, whole] : roles) {
            detail::put_rows(part->weight.data(), whole->weight.data(), h * hd, hd, DIn::extent);
            if (part->bias) detail::put_rows(part->bias->data(), whole->bias->data(), h * hd, hd, 1);
        }
    }
    mha.eval();
    return mha;
}

}  // namespace shaped::nn

#endif
