#ifndef SHAPED_NN_MULTI_HEAD_ATTENTION_HPP
#define SHAPED_NN_MULTI_HEAD_ATTENTION_HPP

/// \file
/// `nn::multi_head_attention`: the weight-split form of the book's listing 3.5.

#include <limits>
#include <string>

#include "../tensor.hpp"
#include "../torch/generator.hpp"
#include "dropout.hpp"
#include "kv_cache.hpp"
#include "linear.hpp"
#include "parameters.hpp"
#include "self_attention.hpp"

namespace shaped::nn {

/// Multi-head causal self-attention with one projection per role, split into heads by `view`.
///
/// Shapes: the call maps `(batch, num_tokens, DIn)` to `(batch, num_tokens, DOut)`; `batch` and
/// `num_tokens` may be static or run-time axes (one compiled module serves every length), and `num_tokens`
/// must be declared within `ContextLength` (`at_most<ContextLength>`). Inside: `head_dim = DOut / NumHeads` (the nested axis `head_dim`), queries, keys and
/// values are `(batch, NumHeads, num_tokens, head_dim)` (keys and values on `key<num_tokens>`), scores and
/// weights `(batch, NumHeads, num_tokens, key<num_tokens>)`. Element type: float.
/// Errors: compile time, a run-time `DIn`, `DOut`, `ContextLength` or `NumHeads`; `DOut` not divisible by
/// `NumHeads` (the book's `assert d_out % num_heads == 0`); an input that is not 3-d, whose last axis is not
/// `DIn`, whose token axis may be longer than `ContextLength` or is not declared within it, or that is
/// sequence-first.
/// Thrown: `std::invalid_argument` for a dropout outside [0, 1].
/// Source: the book's `MultiHeadAttention` (listing 3.5): W_query, W_key, W_value (`qkv_bias`), out_proj
/// (`DOut → DOut`, with bias), dropout, causal mask; forward `view(b, num_tokens, num_heads, head_dim)`,
/// `transpose(1, 2)`, `queries @ keys.transpose(2, 3)`, mask, softmax of the scores over
/// `sqrt(head_dim)`, dropout, `(attn_weights @ values).transpose(1, 2).contiguous().view(b, num_tokens,
/// d_out)`, out_proj. Like an `nn.Module`, a new module is in training mode: call `eval()`. The call draws its
/// dropout from `gen`, the default generator unless given (one per thread for reproducible draws).
/// The steps are fused where the numbers allow it, bit for bit: masked_fill, the division and softmax
/// make one pass over each row of scores, which then become the weights in place; each head's
/// `attn_weights @ values` is written straight where `.transpose(1, 2).contiguous()` would put it.
/// Example: `torch::manual_seed(123); shaped::nn::multi_head_attention<d_in, d_out, context_length,
/// num_heads> mha(0.0);`
template <Axis DIn, Axis DOut, Axis ContextLength, Axis NumHeads>
class multi_head_attention {
    static_assert(StaticAxis<DIn> && StaticAxis<DOut> && StaticAxis<ContextLength> && StaticAxis<NumHeads>,
                  "shaped::nn::multi_head_attention: d_in, d_out, context_length and num_heads must be static axes "
                  "(the weights' and the mask's shapes are fixed when the module is built); only batch and num_tokens "
                  "may be known at run time");
    static_assert(diag::expect<DOut::extent % NumHeads::extent == 0, diag::dividend<diag::sized<DOut, DOut::extent>>,
                               diag::divisor<diag::sized<NumHeads, NumHeads::extent>>>,
                  "shaped::nn::multi_head_attention: d_out must be divisible by num_heads");

public:
    /// `self.head_dim = d_out // num_heads`.
    struct head_dim : quotient<"head_dim", DOut, shaped::detail::reported_divisor_t<DOut, NumHeads>> {};

    /// The queries' projection, `linear<DIn, DOut>` (biased under `qkv_bias`), split into heads by `view`.
    linear<DIn, DOut> W_query, W_key, W_value;
    /// \var W_key
    /// The keys' projection, as `W_query`.

    /// \var W_value
    /// The values' projection, as `W_query`.

    /// Joins the heads' outputs: `linear<DOut, DOut>`, with bias.
    linear<DOut, DOut> out_proj;
    /// Dropout on the attention weights.
    nn::dropout dropout;
    /// The causal mask buffer: 1 above the diagonal, where a query would see a later key (`triu(ones, diagonal=1)`).
    tensor<float, ContextLength, ContextLength> mask;
    /// The keys and values of the tokens seen with `use_cache` (the book's `cache_k`, `cache_v`).
    kv_cache<NumHeads, head_dim, ContextLength> cache;

    /// Draws W_query, W_key, W_value and out_proj from `gen`, in that order, the first three with biases
    /// under `qkv_bias`; `dropout_p` is the attention weights' dropout. Throws `std::invalid_argument` for
    /// `dropout_p` outside [0, 1].
    explicit multi_head_attention(double dropout_p, bool qkv_bias = false,
                                  torch::generator& gen = torch::default_generator())
        : W_query(gen, qkv_bias),
          W_key(gen, qkv_bias),
          W_value(gen, qkv_bias),
          out_proj(gen),
          dropout(dropout_p),
          mask(triu<1>(ones<ContextLength, ContextLength>())) {}
    /// Allocates the projections without drawing them, for weights that will be loaded.
    multi_head_attention(skip_init_t, double dropout_p, bool qkv_bias = false)
        : W_query(skip_init, qkv_bias),
          W_key(skip_init, qkv_bias),
          W_value(skip_init, qkv_bias),
          out_proj(skip_init),
          dropout(dropout_p),
          mask(triu<1>(ones<ContextLength, ContextLength>())) {}

    /// `module.train(mode)`: sets the dropout's mode.
    void train(bool mode = true) noexcept { dropout.train(mode); }
    /// `module.eval()`: turns the dropout off.
    void eval() noexcept { dropout.eval(); }

    /// The forward pass, the book's `forward(x)`: `(batch, num_tokens, DIn)` to `(batch, num_tokens, DOut)`,
    /// the dropout drawn from `gen` in training mode.
    template <class Layout, Axis... X>
    auto operator()(const basic_tensor<float, Layout, X...>& x, torch::generator& gen = torch::default_generator()) const {
        constexpr bool ok = DOut::extent % NumHeads::extent == 0 && detail::input_ok<3, DIn, ContextLength, X...>();
        return diag::checked<ok>(
            [&]<class b, class num_tokens, class E>(const basic_tensor<float, Layout, b, num_tokens, E>& x) {
                using num_keys = key<num_tokens>;
                auto keys = W_key(x).template view<b, num_tokens, NumHeads, head_dim>();
                auto queries = W_query(x).template view<b, num_tokens, NumHeads, head_dim>();
                auto values = W_value(x).template view<b, num_tokens, NumHeads, head_dim>();

                // Where the book reassigns a name, the old value is moved: its buffer passes on, and the
                // transposes are strides over it that matmul reads in place.
                auto k = std::move(keys).template transpose<1, 2>().template rename<b, NumHeads, num_keys, head_dim>();
                auto q = std::move(queries).template transpose<1, 2>();
                auto v = std::move(values).template transpose<1, 2>().template rename<b, NumHeads, num_keys, head_dim>();

                // matmul(q, k.transpose<2, 3>()), (b, num_heads, num_tokens, key<...>), on the keys each block of
                // queries sees: the causal step masks the others and does not read their scores.
                const auto spans = detail::key_spans(mask, x.shape.extent(1), x.shape.extent(1));
                const auto blocks = detail::causal_blocks(spans);
                auto attn_scores = shaped::detail::matmul_spans(q, std::move(k).template transpose<2, 3>(),
                                                                detail::causal_block, blocks);
                auto attn_weights = detail::causal_weights<num_tokens>(std::move(attn_scores), mask, dropout, head_dim::extent,
                                                                      gen, 0, spans.data());

                // (attn_weights @ values).transpose(1, 2).contiguous(), each head's product written in place.
                auto context_vec = shaped::detail::matmul_merge_heads(attn_weights, v);
                return out_proj(std::move(context_vec).template view<b, num_tokens, DOut>());
            },
            x);
    }

    /// The forward pass with the KV cache (the book's `forward(x, use_cache=True)`): the new tokens' keys and
    /// values join the cache, and their queries meet every cached key, the mask's rows offset by the tokens
    /// cached before (new token i is at position `cache.size() + i`).
    /// Shapes: as the other call; inside, scores `(b, num_heads, num_tokens, cached<num_tokens>)`.
    /// Errors: as the other call. Thrown: `shape_error` from the cache (more than context_length tokens in
    /// all, or another batch than the cache holds).
    template <class Layout, Axis... X>
    auto operator()(const basic_tensor<float, Layout, X...>& x, use_cache_t,
                    torch::generator& gen = torch::default_generator()) {
        constexpr bool ok = DOut::extent % NumHeads::extent == 0 && detail::input_ok<3, DIn, ContextLength, X...>();
        return diag::checked<ok>(
            [&]<class b, class num_tokens, class E>(const basic_tensor<float, Layout, b, num_tokens, E>& x) {
                auto keys_new = W_key(x).template view<b, num_tokens, NumHeads, head_dim>();
                auto values_new = W_value(x).template view<b, num_tokens, NumHeads, head_dim>();
                auto queries = W_query(x).template view<b, num_tokens, NumHeads, head_dim>();
                const std::size_t offset = cache.size();
                auto [keys, values] = cache.append(keys_new, values_new);  // (b, num_heads, cached<num_tokens>, head_dim)
                auto q = std::move(queries).template transpose<1, 2>();
                const auto spans = detail::key_spans(mask, x.shape.extent(1), keys.shape.extent(2), offset);
                const auto blocks = detail::causal_blocks(spans);
                auto attn_scores = shaped::detail::matmul_spans(q, std::move(keys).template transpose<2, 3>(),
                                                                detail::causal_block, blocks);
                auto attn_weights =
                    detail::causal_weights<num_tokens>(std::move(attn_scores), mask, dropout, head_dim::extent, gen, offset,
                                                       spans.data());
                auto context_vec = shaped::detail::matmul_merge_heads(attn_weights, values);
                return out_proj(std::move(context_vec).template view<b, num_tokens, DOut>());
            },
            x);
    }

    /// Empties the KV cache (the book's `reset_cache()`).
    void reset_cache() noexcept { cache.reset(); }

    /// The parameter list, from which nn::for_each_parameter, io::load_state_dict and parameter_count follow,
    /// under PyTorch's `state_dict()` names: the buffer `mask`, then `W_query`, `W_key`, `W_value` (with their `bias` under `qkv_bias`), `out_proj.weight`, `out_proj.bias`.
    static constexpr auto parameters() {
        return parameter_list(buffer("mask", &multi_head_attention::mask),
                              submodule("W_query", &multi_head_attention::W_query),
                              submodule("W_key", &multi_head_attention::W_key),
                              submodule("W_value", &multi_head_attention::W_value),
                              submodule("out_proj", &multi_head_attention::out_proj));
    }
};

}  // namespace shaped::nn

#endif
