#ifndef SHAPED_NN_MULTI_HEAD_LATENT_ATTENTION_HPP
#define SHAPED_NN_MULTI_HEAD_LATENT_ATTENTION_HPP

/// \file
/// `nn::multi_head_latent_attention`: keys and values through a latent of their own width, the cache holding
/// the latent (DeepSeek's attention, as the book's ch04/05_mla writes it).

#include <cstddef>

#include "../ops/scaled_dot_product_attention.hpp"
#include "../tensor.hpp"
#include "../torch/generator.hpp"
#include "kv_cache.hpp"
#include "linear.hpp"
#include "parameters.hpp"
#include "self_attention.hpp"

namespace shaped::nn {

/// Multi-head causal self-attention whose keys and values are projected up from a latent vector per token:
/// the KV cache holds that latent, `LatentDim` floats per token, instead of every head's keys and values.
///
/// Shapes: the call maps `(batch, num_tokens, DIn)` to `(batch, num_tokens, DOut)`; `batch` and `num_tokens`
/// may be run-time axes, `num_tokens` declared within `ContextLength`. Inside: `W_query` is `DIn → DOut`,
/// `W_DKV` `DIn → LatentDim`, `W_UK` and `W_UV` `LatentDim → DOut`, `out_proj` `DOut → DOut` (with bias);
/// heads `(batch, NumHeads, num_tokens, head_dim)`, `head_dim = DOut / NumHeads`. The latent is an axis of its
/// own: `W_UK` given the input, or the cache given keys, fails to compile. Element type: float.
/// Errors: compile time, a run-time `DIn`, `DOut`, `ContextLength`, `NumHeads` or `LatentDim`; `DOut` not
/// divisible by `NumHeads`; an input that is not `(batch, num_tokens, DIn)` within `ContextLength`. Thrown:
/// `shape_error` from the latent cache (more than `ContextLength` tokens, another batch).
/// Source: the book's `MultiHeadLatentAttention` (rasbt/LLMs-from-scratch ch04/05_mla, `gpt_with_kv_mla.py`):
/// W_query, W_DKV, W_UK, W_UV (biased under `qkv_bias`), out_proj; forward: queries and the new latents,
/// the latents appended to the cache, keys and values projected up from every cached latent, causal softmax
/// attention over `sqrt(head_dim)`, out_proj. The attention runs on `scaled_dot_product_attention`'s fused
/// kernel (the book's numbers to float rounding, ≤ 1e-5 in the tests); no dropout (evaluation). The layers
/// are drawn in the book's order.
/// Example: `shaped::nn::multi_head_latent_attention<d_in, d_out, context_length, num_heads, latent_dim> mla;`
template <Axis DIn, Axis DOut, Axis ContextLength, Axis NumHeads, Axis LatentDim>
class multi_head_latent_attention {
    static_assert(StaticAxis<DIn> && StaticAxis<DOut> && StaticAxis<ContextLength> && StaticAxis<NumHeads> &&
                      StaticAxis<LatentDim>,
                  "shaped::nn::multi_head_latent_attention: d_in, d_out, context_length, num_heads and latent_dim "
                  "must be static axes; only batch and num_tokens may be known at run time");
    static_assert(diag::expect<DOut::extent % NumHeads::extent == 0, diag::dividend<diag::sized<DOut, DOut::extent>>,
                               diag::divisor<diag::sized<NumHeads, NumHeads::extent>>>,
                  "shaped::nn::multi_head_latent_attention: d_out must be divisible by num_heads");

public:
    /// `self.head_dim = d_out // num_heads`.
    struct head_dim : quotient<"head_dim", DOut, shaped::detail::reported_divisor_t<DOut, NumHeads>> {};

    /// Per-head queries, `linear<DIn, DOut>`.
    linear<DIn, DOut> W_query;
    /// Down to the latent, `linear<DIn, LatentDim>`: what the cache keeps.
    linear<DIn, LatentDim> W_DKV;
    /// Latent to per-head keys, `linear<LatentDim, DOut>`.
    linear<LatentDim, DOut> W_UK;
    /// Latent to per-head values, `linear<LatentDim, DOut>`.
    linear<LatentDim, DOut> W_UV;
    /// `linear<DOut, DOut>`, with bias.
    linear<DOut, DOut> out_proj;
    /// The latents of the tokens seen with `use_cache` (the book's `cache_c_kv`).
    latent_cache<LatentDim, ContextLength> cache;

    /// Draws W_query, W_DKV, W_UK, W_UV (biased under `qkv_bias`) and out_proj from `gen`, in that order.
    explicit multi_head_latent_attention(bool qkv_bias = false, torch::generator& gen = torch::default_generator())
        : W_query(gen, qkv_bias), W_DKV(gen, qkv_bias), W_UK(gen, qkv_bias), W_UV(gen, qkv_bias), out_proj(gen) {}
    /// Allocates the projections without drawing them, for weights that will be loaded.
    explicit multi_head_latent_attention(skip_init_t, bool qkv_bias = false)
        : W_query(skip_init, qkv_bias),
          W_DKV(skip_init, qkv_bias),
          W_UK(skip_init, qkv_bias),
          W_UV(skip_init, qkv_bias),
          out_proj(skip_init) {}

    /// The forward pass, the book's `forward(x)`: `(batch, num_tokens, DIn)` to `(batch, num_tokens, DOut)`.
    template <class L, Axis... X>
    auto operator()(const basic_tensor<float, L, X...>& x) const {
        constexpr bool ok = DOut::extent % NumHeads::extent == 0 && detail::input_ok<3, DIn, ContextLength, X...>();
        return diag::checked<ok>(
            [&]<class b, class num_tokens, class E>(const basic_tensor<float, L, b, num_tokens, E>& x) {
                auto latent = W_DKV(x).template rename<b, key<num_tokens>, LatentDim>();  // (b, key<num_tokens>, latent_dim)
                return attend<b, num_tokens>(x, latent);
            },
            x);
    }

    /// The forward pass with the latent cache (`forward(x, use_cache=True)`): the new tokens' latents join the
    /// cache, and every head's keys and values are projected up from all cached latents.
    /// Shapes and errors: as the other call. Thrown besides: `shape_error` from the cache.
    template <class L, Axis... X>
    auto operator()(const basic_tensor<float, L, X...>& x, use_cache_t) {
        constexpr bool ok = DOut::extent % NumHeads::extent == 0 && detail::input_ok<3, DIn, ContextLength, X...>();
        return diag::checked<ok>(
            [&]<class b, class num_tokens, class E>(const basic_tensor<float, L, b, num_tokens, E>& x) {
                auto latent = cache.append(W_DKV(x));  // (b, cached<num_tokens>, latent_dim)
                return attend<b, num_tokens>(x, latent);
            },
            x);
    }

    /// Empties the latent cache (the book's `reset_cache()`).
    void reset_cache() noexcept { cache.reset(); }

    /// The parameter list, from which nn::for_each_parameter, io::load_state_dict and parameter_count follow,
    /// under the book's `state_dict()` names: `W_query`, `W_DKV`, `W_UK`, `W_UV` (with biases under
    /// `qkv_bias`), `out_proj.weight`, `out_proj.bias`.
    static constexpr auto parameters() {
        return parameter_list(submodule("W_query", &multi_head_latent_attention::W_query),
                              submodule("W_DKV", &multi_head_latent_attention::W_DKV),
                              submodule("W_UK", &multi_head_latent_attention::W_UK),
                              submodule("W_UV", &multi_head_latent_attention::W_UV),
                              submodule("out_proj", &multi_head_latent_attention::out_proj));
    }

private:
    // Queries from x, keys and values up from the latents (along their key axis K), causal attention, out_proj.
    template <class B, class T, class LX, class LL, Axis K>
    auto attend(const basic_tensor<float, LX, B, T, DIn>& x, const basic_tensor<float, LL, B, K, LatentDim>& latent) const {
        auto queries = W_query(x).template view<B, T, NumHeads, head_dim>().template transpose<1, 2>();
        auto keys = W_UK(latent).template view<B, K, NumHeads, head_dim>().template transpose<1, 2>();
        auto values = W_UV(latent).template view<B, K, NumHeads, head_dim>().template transpose<1, 2>();
        auto context = scaled_dot_product_attention(queries, keys, values, is_causal);  // (b, num_heads, T, head_dim)
        return out_proj(std::move(context).template transpose<1, 2>().contiguous().template view<B, T, DOut>());
    }
};

}  // namespace shaped::nn

#endif
