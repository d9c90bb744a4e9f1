#ifndef SHAPED_NN_MULTI_HEAD_ATTENTION_SDPA_HPP
#define SHAPED_NN_MULTI_HEAD_ATTENTION_SDPA_HPP

/// \file
/// `nn::multi_head_attention_sdpa`: multi-head attention on `scaled_dot_product_attention` (the bonus
/// notebook's `MHAPyTorchScaledDotProduct`).

#include <string>

#include "../ops/scaled_dot_product_attention.hpp"
#include "../tensor.hpp"
#include "../torch/generator.hpp"
#include "kv_cache.hpp"
#include "linear.hpp"
#include "multi_head_attention_combined_qkv.hpp"
#include "parameters.hpp"
#include "self_attention.hpp"

namespace shaped::nn {

/// Multi-head causal self-attention with one `d_in → 3·d_out` projection and the fused causal kernel: no
/// (num_tokens × num_tokens) scores in memory.
///
/// Shapes: as `multi_head_attention_combined_qkv` (`qkv.weight` `(qkv_dim, DIn)`, `qkv_dim` the ordered
/// product `(qkv_part, NumHeads, head_dim)`); the call maps `(batch, num_tokens, DIn)` to `(batch,
/// num_tokens, DOut)`, `batch` and `num_tokens` static or run-time, `num_tokens` declared within
/// `ContextLength`. Element type: float.
/// Errors: as `multi_head_attention`. Thrown: `std::invalid_argument` from the call in training mode with a
/// dropout above 0 (the fused kernel has no dropout: call `eval()`, or train with `multi_head_attention`),
/// and for a dropout outside [0, 1] at construction; `shape_error` from the cache as in
/// `multi_head_attention`.
/// Source: `MHAPyTorchScaledDotProduct` of the book's bonus notebook
/// (ch03/02_bonus_efficient-multihead-attention): `qkv`, `proj` and the dropout probability, created in that
/// order; forward `qkv(x).view(b, num_tokens, 3, num_heads, head_dim).permute(2, 0, 3, 1, 4)`,
/// `scaled_dot_product_attention(queries, keys, values, dropout_p=..., is_causal=True)`, `transpose(1, 2)
/// .contiguous().view(b, num_tokens, d_out)`, `proj`. The notebook's module has no mask buffer, and neither
/// has this one. With `use_cache`, the book's KV cache (as `multi_head_attention`).
/// Example: `shaped::nn::multi_head_attention_sdpa<d_in, d_out, context_length, num_heads> mha(0.0); mha.eval();`
template <Axis DIn, Axis DOut, Axis ContextLength, Axis NumHeads>
class multi_head_attention_sdpa {
    static_assert(StaticAxis<DIn> && StaticAxis<DOut> && StaticAxis<ContextLength> && StaticAxis<NumHeads>,
                  "shaped::nn::multi_head_attention_sdpa: d_in, d_out, context_length and num_heads must be static "
                  "axes; only batch and num_tokens may be known at run time");
    static_assert(diag::expect<DOut::extent % NumHeads::extent == 0, diag::dividend<diag::sized<DOut, DOut::extent>>,
                               diag::divisor<diag::sized<NumHeads, NumHeads::extent>>>,
                  "shaped::nn::multi_head_attention_sdpa: d_out must be divisible by num_heads");

public:
    /// `self.head_dim = d_out // num_heads`.
    struct head_dim : quotient<"head_dim", DOut, shaped::detail::reported_divisor_t<DOut, NumHeads>> {};
    /// `3 * d_out`, as the ordered product `(qkv_part, num_heads, head_dim)`.
    struct qkv_dim : product<"qkv_dim", qkv_part, NumHeads, head_dim> {};

    /// The combined projection, `linear<DIn, qkv_dim>` (biased under `qkv_bias`): queries, keys, values.
    linear<DIn, qkv_dim> qkv;
    /// Joins the heads' outputs: `linear<DOut, DOut>`, with bias (the book's `out_proj`).
    linear<DOut, DOut> proj;
    /// The dropout probability (the notebook's `self.dropout`), applied by the kernel in training mode: only 0 is.
    double dropout;
    /// The keys and values of the tokens seen with `use_cache` (the book's `cache_k`, `cache_v`).
    kv_cache<NumHeads, head_dim, ContextLength> cache;

    /// Draws qkv, then proj, from `gen`, qkv with a bias under `qkv_bias`. Throws `std::invalid_argument`
    /// for `dropout_p` outside [0, 1].
    explicit multi_head_attention_sdpa(double dropout_p, bool qkv_bias = false,
                                       torch::generator& gen = torch::default_generator())
        : qkv(gen, qkv_bias), proj(gen), dropout(checked_p(dropout_p)) {}
    /// Allocates the projections without drawing them, for weights that will be loaded.
    multi_head_attention_sdpa(skip_init_t, double dropout_p, bool qkv_bias = false)
        : qkv(skip_init, qkv_bias), proj(skip_init), dropout(checked_p(dropout_p)) {}

    /// `module.train(mode)`.
    void train(bool mode = true) noexcept { training_ = mode; }
    /// `module.eval()`: what the call needs when `dropout` is above 0.
    void eval() noexcept { training_ = false; }
    /// Whether the module is in training mode (`module.training`).
    bool training() const noexcept { return training_; }

    /// The forward pass, the notebook's `forward(x)`: `(batch, num_tokens, DIn)` to `(batch, num_tokens, DOut)`.
    /// Throws `std::invalid_argument` in training mode when `dropout` is above 0 (the fused kernel has no dropout).
    template <class Layout, Axis... X>
    auto operator()(const basic_tensor<float, Layout, X...>& x, torch::generator& = torch::default_generator()) const {
        constexpr bool ok = DOut::extent % NumHeads::extent == 0 && detail::input_ok<3, DIn, ContextLength, X...>();
        return diag::checked<ok>(
            [&]<class b, class num_tokens, class E>(const basic_tensor<float, Layout, b, num_tokens, E>& x) {
                check_dropout();
                // (b, num_tokens, 3 * d_out) -> (b, num_tokens, 3, num_heads, head_dim) -> (3, b, num_heads, num_tokens, head_dim)
                auto qkv_heads = qkv(x).template view<b, num_tokens, qkv_part, NumHeads, head_dim>().template permute<2, 0, 3, 1, 4>();
                // scaled_dot_product_attention(queries, keys, values, is_causal=True).transpose(1, 2).contiguous()
                auto context_vec = shaped::detail::sdpa_combined_causal(qkv_heads);  // (b, num_tokens, num_heads, head_dim)
                return proj(std::move(context_vec).template view<b, num_tokens, DOut>());
            },
            x);
    }

    /// The forward pass with the KV cache: the new tokens' keys and values join the cache, and their queries
    /// meet every cached key, each up to its own position.
    /// Shapes: as the other call. Thrown: as the other call, and `shape_error` from the cache.
    template <class Layout, Axis... X>
    auto operator()(const basic_tensor<float, Layout, X...>& x, use_cache_t, torch::generator& = torch::default_generator()) {
        constexpr bool ok = DOut::extent % NumHeads::extent == 0 && detail::input_ok<3, DIn, ContextLength, X...>();
        return diag::checked<ok>(
            [&]<class b, class num_tokens, class E>(const basic_tensor<float, Layout, b, num_tokens, E>& x) {
                check_dropout();
                auto parts = qkv(x).template view<b, num_tokens, qkv_part, NumHeads, head_dim>();
                auto [keys, values] = cache.append(parts.template select<qkv_part>(1), parts.template select<qkv_part>(2));
                auto queries = parts.template select<qkv_part>(0).template transpose<1, 2>();
                auto context_vec = scaled_dot_product_attention(queries, keys, values, is_causal);
                return proj(std::move(context_vec).template transpose<1, 2>().contiguous().template view<b, num_tokens, DOut>());
            },
            x);
    }

    /// Empties the KV cache (the book's `reset_cache()`).
    void reset_cache() noexcept { cache.reset(); }

    /// The parameter list, from which nn::for_each_parameter, io::load_state_dict and parameter_count follow,
    /// under PyTorch's `state_dict()` names: `qkv.weight` (`qkv.bias` under `qkv_bias`),
    /// `proj.weight`, `proj.bias`.
    static constexpr auto parameters() {
        return parameter_list(submodule("qkv", &multi_head_attention_sdpa::qkv),
                              submodule("proj", &multi_head_attention_sdpa::proj));
    }

private:
    bool training_ = true;

    static double checked_p(double p) {
        nn::dropout check(p);  // throws std::invalid_argument outside [0, 1], as nn.Dropout does
        return p;
    }
    void check_dropout() const {
        if (training_ && dropout > 0.0) shaped::detail::sdpa_dropout(dropout);
    }
};

}  // namespace shaped::nn

#endif
