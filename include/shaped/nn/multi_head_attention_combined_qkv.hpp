#ifndef SHAPED_NN_MULTI_HEAD_ATTENTION_COMBINED_QKV_HPP
#define SHAPED_NN_MULTI_HEAD_ATTENTION_COMBINED_QKV_HPP

/// \file
/// `nn::multi_head_attention_combined_qkv`: the book's multi-head attention with one projection for the
/// queries, keys and values (the bonus notebook's `MultiHeadAttentionCombinedQKV`).

#include <string>

#include "../tensor.hpp"
#include "../torch/generator.hpp"
#include "dropout.hpp"
#include "linear.hpp"
#include "parameters.hpp"
#include "self_attention.hpp"

namespace shaped::nn {

/// The part of the combined projection a slice holds: query, key or value (the `3` of
/// `view(b, num_tokens, 3, num_heads, head_dim)`).
struct qkv_part : axis<"qkv_part", 3> {};

/// Multi-head causal self-attention with one `d_in → 3·d_out` projection, split into queries, keys and
/// values and into heads by one `view` and one `permute`; then the book's steps.
///
/// Shapes: the call maps `(batch, num_tokens, DIn)` to `(batch, num_tokens, DOut)`, `batch` and `num_tokens`
/// static or run-time, `num_tokens` declared within `ContextLength`. `qkv.weight` is `(qkv_dim, DIn)` where
/// `qkv_dim` is the ordered product `(qkv_part=3, NumHeads, head_dim)`: `qkv(x).view<batch, num_tokens,
/// qkv_part, NumHeads, head_dim>()` compiles, and splitting it in another order (`num_heads` outermost, as
/// `view(b, num_tokens, num_heads, 3, head_dim)` would in PyTorch, silently) does not. Inside, as the book's
/// `multi_head_attention`. Element type: float.
/// Errors: as `multi_head_attention`. Thrown: `std::invalid_argument` for a dropout outside [0, 1].
/// Source: `MultiHeadAttentionCombinedQKV` of the book's bonus notebook
/// (ch03/02_bonus_efficient-multihead-attention): `qkv = Linear(d_in, 3 * d_out, bias=qkv_bias)`, `proj =
/// Linear(d_out, d_out)`, dropout, the causal `mask` buffer, created in that order; forward `qkv(x).view(b,
/// num_tokens, 3, num_heads, head_dim).permute(2, 0, 3, 1, 4)`, `queries, keys, values = qkv`, then the
/// steps of listing 3.5 and `proj`. With `qkv.weight` rows `[W_query; W_key; W_value]` it computes what the
/// book's module computes.
/// Example: `shaped::nn::multi_head_attention_combined_qkv<d_in, d_out, context_length, num_heads> mha(0.0);`
template <Axis DIn, Axis DOut, Axis ContextLength, Axis NumHeads>
class multi_head_attention_combined_qkv {
    static_assert(StaticAxis<DIn> && StaticAxis<DOut> && StaticAxis<ContextLength> && StaticAxis<NumHeads>,
                  "shaped::nn::multi_head_attention_combined_qkv: d_in, d_out, context_length and num_heads must be "
                  "static axes; only batch and num_tokens may be known at run time");
    static_assert(diag::expect<DOut::extent % NumHeads::extent == 0, diag::dividend<diag::sized<DOut, DOut::extent>>,
                               diag::divisor<diag::sized<NumHeads, NumHeads::extent>>>,
                  "shaped::nn::multi_head_attention_combined_qkv: d_out must be divisible by num_heads");

public:
    /// `self.head_dim = d_out // num_heads`.
    struct head_dim : quotient<"head_dim", DOut, shaped::detail::reported_divisor_t<DOut, NumHeads>> {};
    /// `3 * d_out`, as the ordered product `(qkv_part, num_heads, head_dim)`.
    struct qkv_dim : product<"qkv_dim", qkv_part, NumHeads, head_dim> {};

    /// The combined projection, `linear<DIn, qkv_dim>` (biased under `qkv_bias`): queries, keys, values.
    linear<DIn, qkv_dim> qkv;
    /// Joins the heads' outputs: `linear<DOut, DOut>`, with bias (the book's `out_proj`).
    linear<DOut, DOut> proj;
    /// Dropout on the attention weights.
    nn::dropout dropout;
    /// The causal mask buffer: 1 above the diagonal, where a query would see a later key (`triu(ones, diagonal=1)`).
    tensor<float, ContextLength, ContextLength> mask;

    /// Draws qkv, then proj, from `gen`, qkv with a bias under `qkv_bias`; `dropout_p` is the attention
    /// weights' dropout. Throws `std::invalid_argument` for `dropout_p` outside [0, 1].
    explicit multi_head_attention_combined_qkv(double dropout_p, bool qkv_bias = false,
                                               torch::generator& gen = torch::default_generator())
        : qkv(gen, qkv_bias), proj(gen), dropout(dropout_p), mask(triu<1>(ones<ContextLength, ContextLength>())) {}
    /// Allocates the projections without drawing them, for weights that will be loaded.
    multi_head_attention_combined_qkv(skip_init_t, double dropout_p, bool qkv_bias = false)
        : qkv(skip_init, qkv_bias), proj(skip_init), dropout(dropout_p),
          mask(triu<1>(ones<ContextLength, ContextLength>())) {}

    /// `module.train(mode)`: sets the dropout's mode.
    void train(bool mode = true) noexcept { dropout.train(mode); }
    /// `module.eval()`: turns the dropout off.
    void eval() noexcept { dropout.eval(); }

    /// The forward pass, the notebook's `forward(x)`: `(batch, num_tokens, DIn)` to `(batch, num_tokens, DOut)`,
    /// the dropout drawn from `gen` in training mode.
    template <class Layout, Axis... X>
    auto operator()(const basic_tensor<float, Layout, X...>& x, torch::generator& gen = torch::default_generator()) const {
        constexpr bool ok = DOut::extent % NumHeads::extent == 0 && detail::input_ok<3, DIn, ContextLength, X...>();
        return diag::checked<ok>(
            [&]<class b, class num_tokens, class E>(const basic_tensor<float, Layout, b, num_tokens, E>& x) {
                using num_keys = key<num_tokens>;
                // (b, num_tokens, 3 * d_out) -> (b, num_tokens, 3, num_heads, head_dim) -> (3, b, num_heads, num_tokens, head_dim)
                auto qkv_heads = qkv(x).template view<b, num_tokens, qkv_part, NumHeads, head_dim>().template permute<2, 0, 3, 1, 4>();
                auto queries = qkv_heads.template select<qkv_part>(0);
                auto keys = qkv_heads.template select<qkv_part>(1).template rename<b, NumHeads, num_keys, head_dim>();
                auto values = qkv_heads.template select<qkv_part>(2).template rename<b, NumHeads, num_keys, head_dim>();

                // matmul(queries, keys.transpose<-2, -1>()) on the keys each block of queries sees: the causal
                // step masks the others and does not read their scores.
                const auto spans = detail::key_spans(mask, x.shape.extent(1), x.shape.extent(1));
                const auto blocks = detail::causal_blocks(spans);
                auto attn_scores = shaped::detail::matmul_spans(queries, std::move(keys).template transpose<-2, -1>(),
                                                                detail::causal_block, blocks);
                auto attn_weights = detail::causal_weights<num_tokens>(std::move(attn_scores), mask, dropout, head_dim::extent,
                                                                      gen, 0, spans.data());
                auto context_vec = shaped::detail::matmul_merge_heads(attn_weights, values);  // (b, num_tokens, num_heads, head_dim)
                return proj(std::move(context_vec).template view<b, num_tokens, DOut>());
            },
            x);
    }

    /// The parameter list, from which nn::for_each_parameter, io::load_state_dict and parameter_count follow,
    /// under PyTorch's `state_dict()` names: the buffer `mask`, then `qkv.weight` (`qkv.bias`
    /// under `qkv_bias`), `proj.weight`, `proj.bias`.
    static constexpr auto parameters() {
        return parameter_list(buffer("mask", &multi_head_attention_combined_qkv::mask),
                              submodule("qkv", &multi_head_attention_combined_qkv::qkv),
                              submodule("proj", &multi_head_attention_combined_qkv::proj));
    }
};

}  // namespace shaped::nn

#endif
